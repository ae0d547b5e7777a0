"""AlphaGo's search: PUCT by hand, λ's end points against the dedicated
paths, skipped evaluators really skipped, and one compilation for all
parameter values."""

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from mctx._src import search as mctx_search

from alphago_jax import games, search
from alphago_jax.search.alphago import split_evaluate
from alphago_jax.games.tictactoe import TicTacToe
from alphago_jax.search import alphago

from ttt_positions import GAME, batch, position

# A fixed random linear map: prior logits that differ by move (no ties in
# u), and a value in (-1, 1). The value variables are a scalar added to v,
# so NaN variables poison every value the network gives.
_W = np.random.default_rng(0).normal(
    size=(int(np.prod(GAME.observation_shape)), GAME.num_actions + 1)
).astype(np.float32)


def policy_fn(variables, obs, legal):
  del variables, legal
  return (obs.reshape(obs.shape[0], -1).astype(jnp.float32) @ _W)[:, :-1]


def value_fn(variables, obs):
  x = obs.reshape(obs.shape[0], -1).astype(jnp.float32) @ _W
  return jnp.tanh(x[:, -1]) + variables


def linear_net(variables, obs, legal):
  return policy_fn(None, obs, legal), value_fn(variables, obs)


class NaNRolloutTicTacToe(TicTacToe):
  """Tic-tac-toe whose every rollout says NaN: any rollout that runs and is
  mixed in shows up in the search's values."""

  def fast_random_rollout(self, key, state):
    del key, state
    return jnp.full((2,), jnp.nan, jnp.float32)


NAN_GAME = NaNRolloutTicTacToe()
GOOD, POISON = (None, jnp.float32(0.0)), (None, jnp.float32(jnp.nan))

# X wins at 2; O must block at 2; the empty board; after a centre opening.
ROOTS = [[0, 3, 1, 4], [0, 4, 1], [], [4]]
SIMS = 48
STATIC = alphago.AlphaGoStatic(num_simulations=SIMS)
VALUE_ONLY = dataclasses.replace(STATIC, use_rollouts=False)
ROLLOUT_ONLY = dataclasses.replace(STATIC, use_value=False)
TRACES = {}


def params(c_puct=1.0, mixing=0.5):
  return alphago.AlphaGoParams(c_puct=jnp.float32(c_puct),
                               mixing=jnp.float32(mixing))


@functools.lru_cache(maxsize=None)
def compiled(static, game=GAME):
  def run(params, variables, key, states):
    TRACES[(static, game)] = TRACES.get((static, game), 0) + 1
    return alphago.alphago_search(game, policy_fn, value_fn, variables, key,
                                  states, config=static, params=params)
  return jax.jit(run)


def roots(game=GAME):
  states = [position(m) for m in ROOTS]
  return jax.tree.map(lambda *x: jnp.stack(x), *states)


def run(static, p, variables=GOOD, game=GAME, seed=0):
  return compiled(static, game)(p, variables, jax.random.key(seed), roots())


def assert_same_search(a, b):
  for field in ("action", "visit_counts", "q_values", "root_value"):
    np.testing.assert_array_equal(getattr(a, field), getattr(b, field),
                                  err_msg=field)


def test_puct_scores_by_hand():
  # N(s) = 12; children: Q 0.1, -0.05, 0; P 0.75, 0.2, 0.05; N 10, 1, 0.
  q = jnp.array([0.1, -0.05, 0.0])
  prior = jnp.array([0.75, 0.2, 0.05])
  visits = jnp.array([10, 1, 0])
  root12 = math.sqrt(12)
  got = alphago.puct_scores(q, prior, visits, 12, 5.0)
  want = [0.1 + 5 * 0.75 * root12 / 11, -0.05 + 5 * 0.2 * root12 / 2,
          5 * 0.05 * root12]
  np.testing.assert_allclose(got, want, rtol=1e-6)
  np.testing.assert_allclose(want, [1.28094, 1.68205, 0.86603], atol=1e-5)


@functools.lru_cache(maxsize=None)
@jax.jit
def hand_tree():
  """The tree of `test_puct_scores_by_hand` at the root, through mctx's own
  tree: legal children 3, 5, 7; 7 unvisited with a stored value that would
  read as Q = 0.9 if unvisited children were not 0; the rest illegal with a
  huge stored Q. Built once, by one compiled program (eagerly each
  operation would compile on its own)."""
  state = batch(position([]), 1)
  logits = jnp.full((1, 9), -1e9).at[0, 3].set(math.log(0.75)).at[
      0, 5].set(math.log(0.2)).at[0, 7].set(math.log(0.05))
  root = mctx.RootFnOutput(prior_logits=logits, value=jnp.zeros(1),
                           embedding=state)
  tree = mctx_search.instantiate_tree_from_root(root, 2, jnp.zeros((1, 9)),
                                                None)
  t = jax.tree.map(lambda x: x[0], tree)
  legal = jnp.zeros(9, bool).at[jnp.array([3, 5, 7])].set(True)
  # Children values are from the child's mover's view; discount -1 makes
  # Q = -value.
  values = jnp.full(9, -0.99).at[3].set(-0.1).at[5].set(0.05).at[7].set(-0.9)
  return t.replace(
      node_visits=t.node_visits.at[0].set(12),
      children_visits=t.children_visits.at[0, 3].set(10).at[0, 5].set(1),
      children_values=t.children_values.at[0].set(values),
      children_discounts=t.children_discounts.at[0].set(-1.0),
      embeddings=t.embeddings.replace(
          legal_action_mask=t.embeddings.legal_action_mask.at[0].set(legal)))


# The selection at the root, jitted once for every key, c and n_vl (run
# eagerly, each of its operations would compile on its own).
select_at_root = jax.jit(lambda key, t, c_puct, virtual_loss: (
    alphago.alphago_action_selection(key, t, 0, c_puct=c_puct,
                                     virtual_loss=virtual_loss)))


@pytest.mark.parametrize("c_puct,want", [(5.0, 5), (1.0, 3)])
def test_selection_on_a_hand_built_tree(c_puct, want):
  # c = 5: scores 1.281, 1.682, 0.866 -> 5 (7 would win, 1.766, if its
  # stored value counted). c = 1: 0.336, 0.296, 0.173 -> 3.
  t = hand_tree()
  for seed in range(4):
    action = select_at_root(jax.random.key(seed), t, c_puct, 0.0)
    assert int(action) == want


def test_lambda_zero_is_the_value_only_search_and_runs_no_rollout():
  value_only = run(VALUE_ONLY, params(mixing=0.0))
  assert_same_search(run(STATIC, params(mixing=0.0)), value_only)
  # Every rollout is NaN in this game, yet λ = 0 stays finite and equal:
  # the rollouts did not run (or were never mixed in: see next line).
  assert_same_search(run(STATIC, params(mixing=0.0), game=NAN_GAME),
                     value_only)
  # The same program does run them at λ = 0.5: NaN everywhere.
  mixed = run(STATIC, params(mixing=0.5), game=NAN_GAME)
  assert np.all(np.isnan(mixed.root_value))
  assert np.all(np.isfinite(value_only.root_value))


def test_lambda_one_is_the_rollout_only_search_and_runs_no_value_net():
  rollout_only = run(ROLLOUT_ONLY, params(mixing=1.0))
  assert_same_search(run(STATIC, params(mixing=1.0)), rollout_only)
  assert_same_search(run(STATIC, params(mixing=1.0), POISON), rollout_only)
  assert_same_search(run(ROLLOUT_ONLY, params(mixing=1.0), POISON),
                     rollout_only)
  assert np.all(np.isnan(run(STATIC, params(mixing=0.5), POISON).root_value))
  # Rollouts alone find the win in one (the linear prior does not favour
  # it), and the root of that position is worth more than the empty board.
  assert int(rollout_only.action[0]) == 2
  assert rollout_only.root_value[0] > rollout_only.root_value[2]


def test_mixed_leaf_value_is_the_weighted_sum():
  # At the root: V = (1 - λ) v + λ z with the same rollout keys, so the
  # λ = 0.25 root value (before any simulation: a one-node search) is the
  # mix of the two end points' root values.
  static = dataclasses.replace(STATIC, num_simulations=1)
  states = roots()
  key = jax.random.key(3)
  # One program for every λ (eagerly, each operation compiles on its own).
  leaf = jax.jit(alphago.make_leaf_value(GAME, value_fn, static))
  obs = jax.vmap(GAME.observe)(states)
  v = leaf(GOOD[1], 0.0, key, states, obs)
  z = leaf(GOOD[1], 1.0, key, states, obs)
  mix = leaf(GOOD[1], 0.25, key, states, obs)
  np.testing.assert_allclose(mix, 0.75 * v + 0.25 * z, rtol=1e-6)
  np.testing.assert_allclose(v, value_fn(0.0, obs), rtol=1e-6)
  # z is a rollout outcome for the mover: -1, 0 or 1 (one rollout a leaf).
  assert set(np.asarray(z).tolist()) <= {-1.0, 0.0, 1.0}


def test_value_only_search_is_alphago_zero_puct_with_raw_q():
  # mctx's PUCT with AlphaGo's raw Q (alphazero.py, an independent path):
  # the same visit counts at every root.
  c = 1.25
  az = search.AlphaZeroSearchConfig(
      num_simulations=SIMS, policy="puct", c_puct=c, normalize_q=False,
      dirichlet_fraction=0.0, temperature_moves=0)
  theirs = jax.jit(lambda k, s: search.alphazero_search(
      GAME, linear_net, jnp.float32(0.0), k, s, config=az))(
          jax.random.key(0), roots())
  ours = run(VALUE_ONLY, params(c_puct=c, mixing=0.0))
  np.testing.assert_array_equal(ours.visit_counts, theirs.visit_counts)
  np.testing.assert_allclose(ours.root_value, theirs.root_value, atol=1e-5)


def test_changing_parameters_does_not_recompile():
  for c_puct, mixing in ((1.0, 0.5), (5.0, 0.5), (0.3, 0.2), (2.0, 1.0)):
    run(STATIC, params(c_puct, mixing))
  assert TRACES[(STATIC, GAME)] == 1
  # ...and they are used: c_puct changes the search.
  a = run(STATIC, params(0.1, 0.5)).visit_counts
  b = run(STATIC, params(10.0, 0.5)).visit_counts
  assert not np.array_equal(a, b)
  assert TRACES[(STATIC, GAME)] == 1


def test_config_split_and_defaults():
  cfg = search.AlphaGoSearchConfig(num_simulations=8)
  static, p = cfg.split()
  assert static.use_value and static.use_rollouts
  assert float(p.c_puct) == 5.0 and float(p.mixing) == 0.5
  assert not search.AlphaGoSearchConfig(num_simulations=8,
                                        mixing=0.0).static().use_rollouts
  assert not search.AlphaGoSearchConfig(num_simulations=8,
                                        mixing=1.0).static().use_value


@pytest.mark.parametrize("kwargs,match", [
    (dict(mixing=1.5), "mixing"),
    (dict(mixing=-0.1), "mixing"),
    (dict(c_puct=-1.0), "c_puct"),
    (dict(c_puct=float("nan")), "c_puct"),
    (dict(mixing=0.5, use_rollouts=False), "use_rollouts"),
    (dict(mixing=0.5, use_value=False), "use_value"),
    (dict(mixing=0.5, use_value=False, use_rollouts=False), "both False"),
    (dict(rollouts_per_leaf=0), "rollouts_per_leaf"),
    (dict(num_simulations=0), "num_simulations"),
])
def test_bad_config(kwargs, match):
  kwargs = {"num_simulations": 8, **kwargs}
  with pytest.raises(ValueError, match=match):
    search.AlphaGoSearchConfig(**kwargs)


@pytest.mark.parametrize("with_value,config,search_params,match", [
    (True, STATIC, dict(mixing=2.0), "mixing"),
    (True, STATIC, dict(c_puct=-3.0), "c_puct"),
    (True, VALUE_ONLY, dict(mixing=0.5), "needs rollouts"),
    (True, STATIC, None, "explicit params"),
    (False, STATIC, {}, "value function"),
])
def test_bad_concrete_params_are_named_before_tracing(with_value, config,
                                                      search_params, match):
  with pytest.raises(ValueError, match=match):
    alphago.alphago_search(
        GAME, policy_fn, value_fn if with_value else None, GOOD,
        jax.random.key(0), roots(), config=config,
        params=None if search_params is None else params(**search_params))


@pytest.mark.slow
def test_go9_with_the_committed_network_and_lean_playouts():
  # Until AlphaGo's own networks exist: the committed AlphaZero 9×9
  # network's policy head as the prior and its value head as v, mixed with
  # heuristic playouts: the prior is the policy head's, the leaf value at
  # λ = 0 is the value head's, at λ = 1 a playout outcome (±1), and every
  # move played is legal.
  import os  # pylint: disable=import-outside-toplevel
  from alphago_jax import training  # pylint: disable=import-outside-toplevel
  from alphago_jax.models.resnet import make_evaluate_fn, make_network
  from alphago_jax.training import snapshots
  root = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "go9")
  game = games.make("go", size=9)
  config = training.presets.go9()
  [(_, path)] = snapshots.list_snapshots(os.path.join(root, "snapshots"))
  variables, _ = snapshots.load(path, architecture=config.architecture(game))
  evaluate = make_evaluate_fn(make_network(game, config.model))
  prior, value = split_evaluate(game, evaluate)
  static = alphago.AlphaGoStatic(num_simulations=1,
                                 rollout_policy="heuristic")
  s0 = game.init(None)
  s1 = game.step(game.step(s0, 40), 30)
  states = jax.tree.map(lambda *x: jnp.stack(x), s0, s1)
  run = jax.jit(lambda p, k: alphago.alphago_search(
      game, prior, value, (variables, variables), k, states, config=static,
      params=p))
  at0 = run(params(mixing=0.0), jax.random.key(0))
  assert np.all(np.abs(np.asarray(at0.root_value)) <= 1)
  logits, v = evaluate(variables, jax.vmap(game.observe)(states),
                       states.legal_action_mask)
  # With one simulation the first child is the prior's favourite (N = 1:
  # u = c P, all Q = 0).
  np.testing.assert_array_equal(at0.action, np.argmax(logits, -1))
  at1 = run(params(mixing=1.0), jax.random.key(0))
  legal = np.asarray(states.legal_action_mask)
  assert legal[np.arange(2), np.asarray(at1.action)].all()
  leaf = alphago.make_leaf_value(game, value, static)
  obs = jax.vmap(game.observe)(states)
  np.testing.assert_allclose(
      leaf(variables, 0.0, jax.random.key(1), states, obs), v, rtol=1e-5)
  z = np.asarray(leaf(variables, 1.0, jax.random.key(1), states, obs))
  assert set(z.tolist()) <= {-1.0, 1.0}  # komi 7.5: no jigo


def test_virtual_loss_selection_by_hand():
  # The hand tree with one pending selection through child 5 and n_vl = 3:
  # N(5) = 1 + 3, Q(5) = (-0.05 - 3) / 4 = -0.7625, N(s) = 12 + 3. Scores
  # (c = 5): 0.1 + 5 * 0.75 * sqrt(15) / 11 = 1.4204, -0.7625 + 5 * 0.2 *
  # sqrt(15) / 5 = 0.0121, 5 * 0.05 * sqrt(15) = 0.9682 -> 3 (5 without).
  t = hand_tree()
  pending = jnp.zeros(t.children_visits.shape).at[0, 5].set(1.0)
  t = t.replace(extra_data=pending)
  pick = lambda vl: int(select_at_root(jax.random.key(0), t, 5.0, vl))
  assert pick(3.0) == 3
  assert pick(0.0) == 5  # no virtual loss: the plain choice


def test_one_leaf_per_step_is_the_plain_search():
  # search_with_virtual_loss with K = 1 builds mctx's tree of `search`,
  # field for field, with the same keys.
  from alphago_jax.search import tree_search  # pylint: disable=import-outside-toplevel
  states = roots()
  obs = jax.vmap(GAME.observe)(states)
  root = mctx.RootFnOutput(
      prior_logits=jnp.where(states.legal_action_mask,
                             policy_fn(None, obs, None), -1e9),
      value=value_fn(0.0, obs), embedding=states)
  rec = alphago.make_recurrent_fn(GAME, policy_fn, value_fn, VALUE_ONLY)
  select = functools.partial(alphago.alphago_action_selection, c_puct=1.0)
  kwargs = dict(params=(GOOD, (0.0, 1.0, 0.0)), rng_key=jax.random.key(4),
                root=root,
                recurrent_fn=rec, num_simulations=12)
  plain = jax.jit(lambda: tree_search.search(
      root_action_selection_fn=select, interior_action_selection_fn=select,
      **kwargs))()
  vl = jax.jit(lambda: tree_search.search_with_virtual_loss(
      action_selection_fn=functools.partial(select, virtual_loss=3.0),
      leaves_per_step=1, **kwargs))()
  np.testing.assert_array_equal(vl.extra_data, 0.0)
  for a, b in zip(jax.tree.leaves(plain.replace(extra_data=None)),
                  jax.tree.leaves(vl.replace(extra_data=None))):
    np.testing.assert_array_equal(a, b)


def test_virtual_loss_spreads_the_leaves_of_a_step():
  # One step of K = 4 leaves from each root. With n_vl = 3 and c = 1 a
  # child already chosen in the step scores at most -1 + c P / 2 < 0, every
  # unvisited one >= 0: four different children. Without virtual loss the
  # four selections see the same tree and (distinct priors, no ties) take
  # the same child.
  static = alphago.AlphaGoStatic(num_simulations=4, use_rollouts=False,
                                 leaves_per_step=4)
  run = compiled(static)
  spread = run(alphago.AlphaGoParams(c_puct=1.0, mixing=0.0,
                                     virtual_loss=3.0), GOOD,
               jax.random.key(0), roots())
  same = run(alphago.AlphaGoParams(c_puct=1.0, mixing=0.0, virtual_loss=0.0),
             GOOD, jax.random.key(0), roots())
  np.testing.assert_array_equal(spread.visit_counts.max(-1), 1)
  np.testing.assert_array_equal(spread.visit_counts.sum(-1), 4)
  # Roots 0, 1, 3 have distinct priors (root 2, the empty board, is
  # all ties for the linear map: zero observation).
  np.testing.assert_array_equal(
      np.asarray(same.visit_counts)[[0, 1, 3]].max(-1), 4)
  with pytest.raises(ValueError, match="multiple of leaves_per_step"):
    alphago.AlphaGoStatic(num_simulations=6, leaves_per_step=4)


# A network that sees every orientation of the board alike: each point's
# logit from its own planes and a weight that depends only on the point's
# distance from the centre; the value from stone counts.
_RING = np.asarray([[0.2, 0.5, 0.2], [0.5, 1.0, 0.5], [0.2, 0.5, 0.2]],
                   np.float32)


def equivariant_policy(variables, obs, legal):
  del variables, legal
  point = obs[..., 0] * 0.7 - obs[..., 1] * 1.3 + _RING
  return point.reshape(obs.shape[0], -1)


def invariant_value(variables, obs):
  del variables
  return jnp.tanh(0.3 * jnp.sum(obs[..., 0], (1, 2))
                  - 0.2 * jnp.sum(obs[..., 1], (1, 2)))


def symmetric_params(flag, mixing=0.0):
  return alphago.AlphaGoParams(c_puct=jnp.float32(1.0),
                               mixing=jnp.float32(mixing),
                               random_symmetry=jnp.float32(flag))


def test_random_symmetry_leaves_an_orientation_blind_network_unchanged():
  # Rotating the board, evaluating and mapping the prior back must give a
  # symmetric network's own prior at every node: the same tree, draw for
  # draw (the symmetry draws use keys of their own). A map back by the
  # wrong symmetry would move the centre-weighted prior to other points.
  run = jax.jit(lambda p: alphago.alphago_search(
      GAME, equivariant_policy, invariant_value, GOOD, jax.random.key(7),
      roots(), config=STATIC, params=p))
  plain, turned = run(symmetric_params(0.0)), run(symmetric_params(1.0))
  assert_same_search(plain, turned)
  # ...while the linear network, which is not symmetric, searches
  # differently once it sees turned boards.
  run = jax.jit(lambda p: alphago.alphago_search(
      GAME, policy_fn, value_fn, GOOD, jax.random.key(7), roots(),
      config=VALUE_ONLY, params=p))
  assert not np.array_equal(run(symmetric_params(0.0)).visit_counts,
                            run(symmetric_params(1.0)).visit_counts)


@pytest.mark.parametrize("game_name", ["tictactoe", "go"])
def test_network_view_is_one_of_the_eight_orientations_mapped_back(
    game_name):
  # Each row's prior is the network's prior of one transformed board,
  # carried back move by move with `transform_action` (an independent
  # table): logits[a] = seen[where a goes]. The draws differ across rows.
  from alphago_jax.games import symmetry  # pylint: disable=import-outside-toplevel
  if game_name == "go":
    game = games.make("go", size=5)
    # Jitted: Go's step run eagerly compiles its loops op by op (seconds).
    s = jax.jit(lambda: game.step(game.step(game.init(None), 7), 13))()
    weights = np.random.default_rng(1).normal(
        size=(int(np.prod(game.observation_shape)), game.num_actions))
    net = lambda obs: obs.reshape(obs.shape[0], -1) @ jnp.asarray(
        weights, jnp.float32)
  else:
    game, s = GAME, position([0, 4, 5])
    net = lambda obs: policy_fn(None, obs, None)
  size = game.observation_shape[0]
  states = batch(s, 16)
  obs = jax.jit(jax.vmap(game.observe))(states)
  legal = np.asarray(states.legal_action_mask)

  @jax.jit
  def look(random_symmetry):
    """The view's observations and legal moves, and the network's prior
    mapped back to the board; one program for both flags."""
    view = alphago._network_view(  # pylint: disable=protected-access
        game, jax.random.key(3), random_symmetry, obs, legal)
    return view.obs, view.legal, view.to_board(net(view.obs))

  view_obs, view_legal, logits = (np.asarray(x) for x in look(
      jnp.float32(1.0)))
  # Every orientation of every row, by the independent tables.
  turned = [np.asarray(symmetry.transform_observation(obs, i))
            for i in range(symmetry.NUM_SYMMETRIES)]
  seen = [np.asarray(net(t)) for t in turned]
  wheres = [np.asarray(symmetry.transform_action(np.arange(size * size), i,
                                                 size))
            for i in range(symmetry.NUM_SYMMETRIES)]
  found = set()
  for row in range(16):
    matches = []
    for i in range(symmetry.NUM_SYMMETRIES):
      where = wheres[i]
      want = seen[i][row][where]
      if np.allclose(logits[row, :size * size], want, atol=1e-5):
        matches.append(i)
        np.testing.assert_array_equal(view_obs[row], turned[i][row])
        moved = np.zeros(game.num_actions, bool)
        moved[where] = legal[row, :size * size]
        if game.num_actions > size * size:
          moved[-1] = legal[row, -1]
          assert logits[row, -1] == pytest.approx(seen[i][row, -1],
                                                  abs=1e-5)
        np.testing.assert_array_equal(view_legal[row], moved)
    assert matches, f"row {row}: no orientation gives its prior"
    found.update(matches)
  assert len(found) >= 4
  # random_symmetry = 0: the board as it stands.
  plain_obs, plain_legal, plain_logits = look(jnp.float32(0.0))
  np.testing.assert_array_equal(plain_obs, obs)
  np.testing.assert_array_equal(plain_legal, legal)
  np.testing.assert_array_equal(plain_logits, net(obs))


class FlatTicTacToe(TicTacToe):
  """Tic-tac-toe observed as a flat vector: no board to turn."""

  @property
  def observation_shape(self):
    return (18,)

  def observe(self, state):
    return super().observe(state).reshape(18)


def test_random_symmetry_errors():
  with pytest.raises(ValueError, match="random_symmetry must be 0 or 1"):
    alphago.alphago_search(GAME, policy_fn, value_fn, GOOD,
                           jax.random.key(0), roots(), config=STATIC,
                           params=symmetric_params(0.5))
  with pytest.raises(ValueError, match="random_symmetry must be a bool"):
    search.AlphaGoSearchConfig(num_simulations=8, random_symmetry=1)
  flat = FlatTicTacToe()
  states = jax.tree.map(lambda *x: jnp.stack(x), flat.init(None))
  with pytest.raises(ValueError, match="needs a square board game"):
    alphago.alphago_search(
        flat, lambda v, o, l: jnp.zeros(l.shape), lambda v, o: o[:, 0],
        GOOD, jax.random.key(0), states, config=VALUE_ONLY,
        params=symmetric_params(1.0))
  assert float(search.AlphaGoSearchConfig(
      num_simulations=8, random_symmetry=True).params().random_symmetry) == 1
