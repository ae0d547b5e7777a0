"""One conformance suite for every registered game and the lean Go playout.

As pgx's `api_test` does for every pgx game: each game in `games.available()`
(built with the small options below, defaults otherwise) must keep the
contract of `games.base`:

* shapes and dtypes of every state field are fixed by `init` and kept by
  `step`; `observe` gives `observation_shape`, float32;
* rewards are zero-sum on every transition, and the sum along a game is its
  outcome;
* a terminated state absorbs: stepping it returns it unchanged, rewards
  zeroed;
* illegal actions: outside `jit` a ValueError; inside `jit` the mover loses
  at once;
* `jit` and `vmap` give the same states as eager calls.

The lean playout (`games.go_playout`) passes the same checks where they
apply: it takes no actions (its policy samples), so "illegal moves are
handled" means no policy can make one.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games
from alphago_jax.games import go_playout
from alphago_jax.games.go_playout import GoPlayout

SMALL = {"go": dict(size=5, history_length=2)}
EAGER_MOVES = 5


@functools.lru_cache(maxsize=None)
def make(name):
  return games.make(name, **SMALL.get(name, {}))


@functools.lru_cache(maxsize=None)
def jitted(fn):
  return jax.jit(fn)


def signature(tree):
  return jax.tree.map(lambda x: (jnp.shape(x), jnp.asarray(x).dtype), tree)


def assert_same(a, b):
  assert jax.tree.structure(a) == jax.tree.structure(b)
  for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def random_actions(game, state, key, n, step):
  """n random legal actions (passes avoided where possible) and states."""
  out, states = [], [state]
  for i in range(n):
    mask = np.asarray(state.legal_action_mask)
    if bool(state.terminated):
      break
    choices = np.flatnonzero(mask)
    if len(choices) > 1 and game.name == "go":
      choices = choices[choices != game.num_actions - 1]
    a = int(jax.random.choice(jax.random.fold_in(key, i), choices))
    state = step(state, jnp.int32(a))
    out.append(a)
    states.append(state)
  return out, states


@pytest.fixture(params=games.available())
def game(request):
  return make(request.param)


def play_to_end(game, key, cap=400):
  step = jitted(game.step)
  s = game.init(key)
  total = np.zeros(2)
  for i in range(cap):
    if bool(s.terminated):
      break
    mask = np.asarray(s.legal_action_mask)
    a = int(jax.random.choice(jax.random.fold_in(key, i),
                              np.flatnonzero(mask)))
    s = step(s, jnp.int32(a))
    r = np.asarray(s.rewards)
    assert r[0] == -r[1], r
    total += r
  assert bool(s.terminated)
  return s, total


def test_shapes_and_dtypes(game):
  s = game.init(jax.random.key(0))
  assert s.current_player.dtype == jnp.int32 and s.current_player.shape == ()
  assert s.legal_action_mask.dtype == jnp.bool_
  assert s.legal_action_mask.shape == (game.num_actions,)
  assert s.rewards.dtype == jnp.float32 and s.rewards.shape == (2,)
  assert s.terminated.dtype == jnp.bool_ and s.terminated.shape == ()
  assert s.step_count.dtype == jnp.int32 and s.step_count.shape == ()
  obs = game.observe(s)
  assert obs.shape == game.observation_shape and obs.dtype == jnp.float32
  _, states = random_actions(game, s, jax.random.key(1), 6,
                             jitted(game.step))
  for t in states:
    assert signature(t) == signature(s)
    assert game.observe(t).shape == game.observation_shape


def test_rewards_zero_sum_and_terminal_states_absorb(game):
  for seed in range(3):
    s, total = play_to_end(game, jax.random.key(seed))
    assert total[0] == -total[1] and abs(total[0]) <= 1
    assert not np.any(np.asarray(s.legal_action_mask))
    for a in (0, game.num_actions - 1):
      t = jitted(game.step)(s, jnp.int32(a))
      assert_same(t, s.replace(rewards=jnp.zeros_like(s.rewards)))


def test_illegal_actions_follow_the_contract(game):
  s = game.init(jax.random.key(0))
  with pytest.raises(ValueError):
    game.step(s, jnp.int32(game.num_actions))
  with pytest.raises(ValueError):
    game.step(s, jnp.int32(-1))
  # The first legal action (a placement in every game so far): played
  # once, its point is occupied, so playing it again is illegal.
  a = int(np.flatnonzero(np.asarray(s.legal_action_mask))[0])
  s = jitted(game.step)(s, jnp.int32(a))
  assert not bool(s.legal_action_mask[a])
  with pytest.raises(ValueError, match="illegal"):
    game.step(s, jnp.int32(a))
  mover = int(s.current_player)
  t = jitted(game.step)(s, jnp.int32(a))
  assert bool(t.terminated)
  assert float(t.rewards[mover]) == -1.0 and float(t.rewards[1 - mover]) == 1.0


def test_jit_and_vmap_match_eager(game):
  s0 = game.init(jax.random.key(0))
  actions, eager_states = random_actions(game, s0, jax.random.key(2),
                                         EAGER_MOVES, game.step)
  jit_step = jitted(game.step)
  s = s0
  for a, want in zip(actions, eager_states[1:]):
    s = jit_step(s, jnp.int32(a))
    assert_same(s, want)
  # A batch of two copies of the line, one shifted by a move, under vmap.
  vstep = jax.jit(jax.vmap(game.step))
  batch = jax.tree.map(lambda x: jnp.stack([x, x]), s0)
  for a in actions:
    batch = vstep(batch, jnp.array([a, a], jnp.int32))
  for i in range(2):
    assert_same(jax.tree.map(lambda x: x[i], batch), eager_states[-1])
  obs = jax.vmap(game.observe)(batch)
  np.testing.assert_array_equal(obs[0], game.observe(eager_states[-1]))


# -- The lean Go playout ----------------------------------------------------

def _greedy_illegal(playout, state):
  """A policy that puts all its weight on points no move may take (stones),
  to check that the playout keeps only legal moves whatever it is told."""
  return jnp.where(state.board != 0, 1e9, 0.0).astype(jnp.float32)


go_playout.register_policy("conformance_greedy_illegal", _greedy_illegal)


@pytest.fixture(params=["random", "heuristic", "conformance_greedy_illegal"])
def playout(request):
  return GoPlayout(make("go"), request.param)


def test_playout_shapes_dtypes_and_absorbing_end(playout):
  game = playout.game
  s = playout.init(jax.random.key(0), game.init(jax.random.key(0)))
  step = jitted(playout.step)
  t = s
  for _ in range(game.move_cap + 1):
    t = step(t)
    assert signature(t) == signature(s)
  assert bool(t.done)
  assert_same(step(t), t)
  out = jax.jit(playout.outcome)(t)
  assert out.dtype == jnp.float32 and out.shape == (2,)
  assert float(out[0]) == -float(out[1])


def test_playout_moves_stay_legal_whatever_the_policy(playout):
  game = dataclasses.replace(playout.game, superko=False)
  s = playout.init(jax.random.key(3), game.init(jax.random.key(0)))
  full = game.init(jax.random.key(0))
  step, gstep = jitted(playout.step), jitted(game.step)
  while not bool(s.done):
    t = step(s)
    a = int(t.last_move)
    assert bool(full.legal_action_mask[a]), a
    full = gstep(full, jnp.int32(a))
    s = t
  assert bool(full.terminated)


def test_playout_jit_and_vmap_match_eager(playout):
  game = playout.game
  keys = jax.random.split(jax.random.key(4), 2)
  start = game.init(jax.random.key(0))
  eager = [playout.init(k, start) for k in keys]
  for _ in range(EAGER_MOVES):
    eager = [playout.step(s) for s in eager]
  batch = jax.vmap(lambda k: playout.init(k, start))(keys)
  batch = jax.jit(jax.vmap(
      lambda s: jax.lax.fori_loop(0, EAGER_MOVES,
                                  lambda i, t: playout.step(t), s)))(batch)
  for i in range(2):
    assert_same(jax.tree.map(lambda x: x[i], batch), eager[i])
  # Whole rollouts: jit(vmap) against one game at a time under jit.
  outs = jax.jit(jax.vmap(playout.rollout, (0, None)))(keys, start)
  for i in range(2):
    np.testing.assert_array_equal(outs[i],
                                  jax.jit(playout.rollout)(keys[i], start))
