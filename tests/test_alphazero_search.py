"""Network-guided search on mctx: config checks, signs, masking, agents."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from alphago_jax import models, search
from alphago_jax.models.resnet import MASKED_LOGIT
from alphago_jax.search.alphazero import (AlphaZeroStatic, evaluate_states,
                                          make_recurrent_fn, qtransform_raw)

from ttt_positions import GAME, batch, position


def zero_net(variables, obs, legal):
  """A uniform prior and a value of 0 everywhere."""
  del variables, legal
  n = obs.shape[0]
  return jnp.zeros((n, GAME.num_actions)), jnp.zeros((n,))


# X at 0, 1; O at 3, 4; X to move: 2 wins, anything else lets O win at 5.
WIN_IN_ONE = [0, 3, 1, 4]
# X at 0, 1 threatens 2; O to move must block there.
MUST_BLOCK = [0, 4, 1]


@functools.lru_cache(maxsize=None)
def compiled_search(static, net):
  # One compilation per static part, network and batch shape for the whole
  # module: the traced parameters (temperature, noise, c_puct) are inputs.
  return jax.jit(lambda key, states, params: search.alphazero_search(
      GAME, net, None, key, states, config=static, params=params))


def run_search(moves, config, n=8, seed=0, net=None):
  static, params = config.split()
  return compiled_search(static, net or zero_net)(
      jax.random.key(seed), batch(position(moves), n), params)


# The searches below are shared by several tests (one compilation each).
GUMBEL = search.AlphaZeroSearchConfig(num_simulations=32,
                                      policy="gumbel").for_evaluation()
PUCT = search.AlphaZeroSearchConfig(num_simulations=200, policy="puct",
                                    temperature_moves=0,
                                    dirichlet_fraction=0.0)
PUCT_RAW_Q = dataclasses.replace(PUCT, num_simulations=32, normalize_q=False)


@pytest.mark.parametrize("config", [GUMBEL, PUCT, PUCT_RAW_Q],
                         ids=["gumbel", "puct-normalised", "puct-raw-q"])
def test_zero_network_search_plays_the_win_in_one(config):
  out = run_search(WIN_IN_ONE, config)
  np.testing.assert_array_equal(out.action, 2)
  np.testing.assert_array_equal(np.argmax(out.action_weights, -1), 2)
  legal = np.asarray(position(WIN_IN_ONE).legal_action_mask)
  assert np.all(np.asarray(out.action_weights)[:, ~legal] == 0)
  np.testing.assert_allclose(out.action_weights.sum(-1), 1.0, atol=1e-5)


def test_zero_network_puct_blocks_the_threat():
  # Needs the opponent's reply, one ply deeper: the -1 discount at work.
  out = run_search(MUST_BLOCK, PUCT)
  np.testing.assert_array_equal(out.action, 2)
  # Every other move loses, so the root is worth less than a win.
  assert np.all(out.root_value < 0.5)


def test_recurrent_fn_signs():
  rec = make_recurrent_fn(GAME, zero_net)
  states = batch(position(WIN_IN_ONE), 2)
  out, nxt = rec(None, jax.random.key(0), jnp.array([2, 8]), states)
  # Winning move: the mover's reward +1, then nothing (discount 0, value 0).
  np.testing.assert_allclose(out.reward, [1.0, 0.0])
  np.testing.assert_allclose(out.discount, [0.0, -1.0])
  np.testing.assert_allclose(out.value, [0.0, 0.0])
  assert bool(nxt.terminated[0]) and not bool(nxt.terminated[1])
  # Illegal children of the new node (occupied cells) get the masked logit.
  occupied = ~np.asarray(nxt.legal_action_mask[1])
  assert np.all(np.asarray(out.prior_logits[1])[occupied] ==
                MASKED_LOGIT)


# Positions where O has lost in every line (raw Q of every legal move is
# -1 soon) are where an unmasked illegal child would win the argmax.
MUZERO_ROOTS = ([], [4], [0, 4, 1], WIN_IN_ONE, [4, 0, 2, 6, 3])


@functools.lru_cache(maxsize=None)
def muzero_search(qtransform):
  """mctx's own PUCT search (64 simulations, `zero_net`) from
  MUZERO_ROOTS; shared by the tests below (one compilation each)."""
  states = jax.tree.map(lambda *x: jnp.stack(x),
                        *[position(m) for m in MUZERO_ROOTS])
  logits, value = evaluate_states(GAME, zero_net, None, states)
  out = jax.jit(lambda k: mctx.muzero_policy(
      params=None, rng_key=k,
      root=mctx.RootFnOutput(prior_logits=logits, value=value,
                             embedding=states),
      recurrent_fn=make_recurrent_fn(GAME, zero_net),
      num_simulations=64, invalid_actions=~states.legal_action_mask,
      qtransform=qtransform))(jax.random.key(0))
  return states, out


@pytest.mark.parametrize("qtransform", [
    mctx.qtransform_by_parent_and_siblings, qtransform_raw],
    ids=["normalised", "raw"])
def test_no_illegal_child_is_ever_expanded(qtransform):
  _, out = muzero_search(qtransform)
  tree = out.search_tree
  visits = np.asarray(tree.children_visits)
  legal = np.asarray(tree.embeddings.legal_action_mask)
  terminal = np.asarray(tree.embeddings.terminated)
  exists = np.asarray(tree.node_visits) > 0
  live = exists & ~terminal
  assert np.all(visits[live][~legal[live]] == 0)


# A fixed random linear map from the observation to 9 logits and a value.
LINEAR_W = np.random.default_rng(0).normal(
    size=(int(np.prod(GAME.observation_shape)), GAME.num_actions + 1)
).astype(np.float32)


def linear_net(variables, obs, legal):
  """Priors that differ by move, so Gumbel's improved policy is not uniform
  (under `zero_net` it is, whatever the noise)."""
  del variables, legal
  x = obs.reshape(obs.shape[0], -1).astype(jnp.float32) @ LINEAR_W
  return x[:, :-1], jnp.tanh(x[:, -1])


@pytest.mark.parametrize("gumbel_scale", [0.0, 1.0])
def test_gumbel_noise_alone_makes_the_search_random(gumbel_scale):
  # Sampling on at move 0: the move played is Gumbel's own choice,
  # argmax(g + logits + sigma(q)), the one the noise g acts on directly.
  config = dataclasses.replace(GUMBEL, gumbel_scale=gumbel_scale,
                               temperature_moves=1)
  # 8 copies of the empty board per call, two keys: 16 searches.
  outs = [run_search([], config, seed=seed, net=linear_net)
          for seed in (1, 2)]
  visits = np.concatenate([np.asarray(o.visit_counts) for o in outs])
  actions = np.concatenate([np.asarray(o.action) for o in outs])
  assert np.all(visits.sum(-1) == 32)
  if gumbel_scale == 0:
    # Every search is the same search: same visits, weights and move...
    np.testing.assert_array_equal(visits, visits[:1].repeat(16, 0))
    np.testing.assert_array_equal(actions, actions[0])
    np.testing.assert_array_equal(outs[0].action_weights,
                                  outs[1].action_weights)
    # ...and a non-trivial one: sequential halving favoured some moves and
    # the improved policy is far from uniform (1/9 each under `zero_net`).
    assert visits[0].max() >= 3 * visits[0].min()
    assert np.max(outs[0].action_weights[0]) > 0.5
  else:
    # Different noise: different root visits and moves.
    assert len(np.unique(visits, axis=0)) > 1
    assert len(np.unique(actions)) > 1


# The dirichlet and temperature tests share one compiled search: PUCT's
# 24 simulations under `linear_net`; temperature and noise are parameters.
PUCT_24 = dataclasses.replace(PUCT, num_simulations=24)
SAMPLING = dataclasses.replace(PUCT_24, temperature=1.0, temperature_moves=3)


def test_temperature_samples_early_moves():
  # The search of test_temperature_stops_after_k_moves.
  out = run_search([], SAMPLING, net=linear_net)
  assert len(np.unique(np.asarray(out.action))) > 1
  greedy = run_search([], PUCT)
  # Greedy picks a most-visited move.
  best = np.asarray(greedy.visit_counts).max(-1)
  picked = np.take_along_axis(np.asarray(greedy.visit_counts),
                              np.asarray(greedy.action)[:, None], 1)[:, 0]
  np.testing.assert_array_equal(picked, best)


def test_for_evaluation_switches_noise_off():
  c = search.AlphaZeroSearchConfig(num_simulations=8, policy="puct",
                                   resign_threshold=-0.9).for_evaluation()
  assert c.dirichlet_fraction == 0 and c.gumbel_scale == 0
  assert c.temperature_moves == 0 and c.resign_threshold is None


@pytest.mark.parametrize("kwargs,match", [
    (dict(num_simulations=0), "num_simulations"),
    (dict(num_simulations=1.5), "num_simulations"),
    (dict(num_simulations=8, temperature=-1.0), "temperature"),
    (dict(num_simulations=8, policy="uct"), "policy"),
    (dict(num_simulations=8, dirichlet_fraction=1.5), "dirichlet_fraction"),
    (dict(num_simulations=8, max_num_considered_actions=0),
     "max_num_considered_actions"),
    (dict(num_simulations=8, resign_threshold=-2.0), "resign_threshold"),
    (dict(num_simulations=8, resign_disabled_fraction=-0.1),
     "resign_disabled_fraction"),
])
def test_bad_config(kwargs, match):
  with pytest.raises(ValueError, match=match):
    search.AlphaZeroSearchConfig(**kwargs)


def test_too_many_considered_actions_for_the_game():
  config = search.AlphaZeroSearchConfig(num_simulations=8,
                                        max_num_considered_actions=10)
  with pytest.raises(ValueError, match="max_num_considered_actions=10"):
    search.network_agent(GAME, zero_net, None, config)
  with pytest.raises(ValueError, match="exceeds"):
    search.alphazero_search(GAME, zero_net, None, jax.random.key(0),
                            batch(position([]), 2), config=config)


def test_agents_play_legal_moves():
  net = models.make_network(GAME, models.ResNetConfig.tiny())
  variables = models.init_variables(GAME, net, jax.random.key(0))
  evaluate = models.make_evaluate_fn(net)
  config = search.AlphaZeroSearchConfig(num_simulations=4,
                                        max_num_considered_actions=4)
  roots = [position(m) for m in ([], [4], [0, 4, 1], [4, 0, 2, 6, 3],
                                 [0, 1, 2, 4, 3, 5, 7, 6])]
  states = jax.tree.map(lambda *x: jnp.stack(x), *roots)
  legal = np.asarray(states.legal_action_mask)
  for agent in (search.policy_agent(GAME, evaluate, variables),
                search.network_agent(GAME, evaluate, variables, config)):
    for seed in range(3):
      actions = np.asarray(jax.jit(agent)(states, jax.random.key(seed)))
      assert legal[np.arange(len(roots)), actions].all()
  # The last position has one empty cell (8): both must play it.
  assert int(actions[-1]) == 8


def test_qtransform_raw_is_alphagos_q():
  # On a real tree: raw mean values in [-1, 1] for visited legal children
  # (no normalisation: a child whose every line wins scores 1), 0 for
  # unvisited ones, and illegal children far below both.
  assert search.AlphaZeroSearchConfig(num_simulations=8).normalize_q
  root = MUZERO_ROOTS.index(WIN_IN_ONE)
  states, out = muzero_search(qtransform_raw)
  states = jax.tree.map(lambda x: x[root:root + 1], states)
  tree = jax.tree.map(lambda x: x[root], out.search_tree)
  q = np.asarray(qtransform_raw(tree, tree.ROOT_INDEX))
  raw = np.asarray(tree.qvalues(tree.ROOT_INDEX))
  visits = np.asarray(tree.children_visits[tree.ROOT_INDEX])
  legal = np.asarray(states.legal_action_mask[0])
  seen = legal & (visits > 0)
  np.testing.assert_allclose(q[seen], raw[seen])
  assert np.all(np.abs(q[seen]) <= 1)
  assert q[2] == 1.0  # the winning move, a terminal win for X
  np.testing.assert_array_equal(q[legal & (visits == 0)], 0.0)
  assert np.all(q[~legal] <= -1e8)


@pytest.mark.parametrize("fraction", [0.0, 0.25])
def test_dirichlet_noise_changes_the_search_only_when_mixed_in(fraction):
  config = dataclasses.replace(PUCT_24, dirichlet_fraction=fraction)
  # Not the empty board: there the linear net's priors are all equal and
  # mctx's random tie-break alone picks the first child.
  visits = np.concatenate([
      np.asarray(run_search([4], config, seed=seed, net=linear_net)
                 .visit_counts) for seed in (1, 2)])
  if fraction == 0:
    np.testing.assert_array_equal(visits, visits[:1].repeat(16, 0))
  else:
    assert len(np.unique(visits, axis=0)) > 4


def test_temperature_stops_after_k_moves():
  # k = 3: move 0 samples, a root at move 3 plays its most visited move.
  early = run_search([], SAMPLING, net=linear_net)
  assert len(np.unique(np.asarray(early.action))) > 1
  late = run_search([0, 4, 8], SAMPLING, net=linear_net)
  counts = np.asarray(late.visit_counts)
  picked = np.take_along_axis(counts, np.asarray(late.action)[:, None],
                              1)[:, 0]
  np.testing.assert_array_equal(picked, counts.max(-1))


def test_changing_parameters_does_not_recompile():
  # The static part is a jit constant, the parameters an argument: one
  # trace for every value, each value used, and the same result as a config
  # with the value baked in.
  traces = []
  static, base = search.AlphaZeroSearchConfig(
      num_simulations=8, policy="puct", temperature_moves=9).split()

  @jax.jit
  def run(params, key, states):
    traces.append(1)
    return search.alphazero_search(GAME, linear_net, None, key, states,
                                   config=static, params=params)
  states = jax.tree.map(lambda *x: jnp.stack(x),
                        *[position(m) for m in ([], [4], [0, 4, 1])])
  key = jax.random.key(5)
  f32 = np.float32
  outs = {c: run(base.replace(c_puct=f32(c)), key, states)
          for c in (0.05, 1.25, 20.0)}
  run(base.replace(dirichlet_fraction=f32(0.0), temperature=f32(0.5),
                   gumbel_scale=f32(0.0)), key, states)
  assert len(traces) == 1
  assert not np.array_equal(outs[0.05].visit_counts, outs[20.0].visit_counts)
  baked = jax.jit(functools.partial(
      search.alphazero_search, GAME, linear_net, None,
      config=search.AlphaZeroSearchConfig(num_simulations=8, policy="puct",
                                          temperature_moves=9,
                                          c_puct=20.0)))(key, states)
  np.testing.assert_array_equal(baked.visit_counts, outs[20.0].visit_counts)
  np.testing.assert_array_equal(baked.action, outs[20.0].action)


def test_config_splits_into_static_and_params():
  config = search.AlphaZeroSearchConfig(num_simulations=8, policy="puct",
                                        c_puct=2.0, resign_threshold=-0.8)
  static, params = config.split()
  assert static == AlphaZeroStatic(num_simulations=8, policy="puct")
  assert hash(static) == hash(dataclasses.replace(config, c_puct=3.0
                                                  ).static())
  assert float(params.c_puct) == 2.0
  assert float(params.resign_threshold) == np.float32(-0.8)
  assert float(params.c_puct_base) >= 1e30  # None: constant c_puct
  assert float(config.for_evaluation().params().resign_threshold) < -1
  ev = params.for_evaluation()
  assert float(ev.dirichlet_fraction) == 0 and float(ev.gumbel_scale) == 0
  assert float(ev.temperature_moves) == 0 and float(ev.c_puct) == 2.0


@pytest.mark.parametrize("field,value", [
    ("c_puct", -1.0), ("dirichlet_fraction", 1.5), ("dirichlet_alpha", 0.0),
    ("temperature", float("nan")), ("resign_disabled_fraction", 2.0)])
def test_bad_concrete_params_are_named(field, value):
  static, params = search.AlphaZeroSearchConfig(num_simulations=8).split()
  bad = params.replace(**{field: np.float32(value)})
  with pytest.raises(ValueError, match=field):
    search.alphazero_search(GAME, zero_net, None, jax.random.key(0),
                            batch(position([]), 2), config=static,
                            params=bad)


def test_static_part_needs_params():
  static = search.AlphaZeroSearchConfig(num_simulations=8).static()
  with pytest.raises(ValueError, match="explicit params"):
    search.alphazero_search(GAME, zero_net, None, jax.random.key(0),
                            batch(position([]), 2), config=static)


@functools.lru_cache(maxsize=None)
def _both_gumbels(config):
  """Jitted `(key, states, params) -> (ours, mctx's)`: alphazero_search and
  mctx's own gumbel_muzero_policy on the same roots, key, network
  (`linear_net`) and Gumbel scale. `config` is the static part: one
  compilation for every gumbel_scale."""
  def both(key, states, params):
    ours = search.alphazero_search(GAME, linear_net, None, key, states,
                                   config=config, params=params)
    search_key = jax.random.split(key, 3)[0]
    logits, value = evaluate_states(GAME, linear_net, None, states)
    theirs = mctx.gumbel_muzero_policy(
        params=None, rng_key=search_key,
        root=mctx.RootFnOutput(prior_logits=logits, value=value,
                               embedding=states),
        recurrent_fn=make_recurrent_fn(GAME, linear_net),
        num_simulations=config.num_simulations,
        invalid_actions=~states.legal_action_mask,
        max_num_considered_actions=config.num_considered_actions(GAME),
        gumbel_scale=params.gumbel_scale)
    return ours, theirs
  return jax.jit(both)


def _gumbel_on(moves_list, config, seed):
  states = jax.tree.map(lambda *x: jnp.stack(x),
                        *[position(m) for m in moves_list])
  static, params = config.split()
  return _both_gumbels(static)(jax.random.key(seed), states, params)


OPENINGS = [[], [4], [0, 4], [4, 0, 8], [0, 3, 1], [2, 4, 6, 0]]


@pytest.mark.parametrize("gumbel_scale", [0.0, 1.0])
def test_gumbel_halving_plays_mctxs_sequential_halving_winner(gumbel_scale):
  # Past the temperature moves too: the move is mctx's `action` on every
  # root, a move the search visited most among its candidates.
  config = search.AlphaZeroSearchConfig(
      num_simulations=8, policy="gumbel", gumbel_scale=gumbel_scale,
      temperature_moves=0, max_num_considered_actions=4)
  for seed in range(3):
    ours, theirs = _gumbel_on(OPENINGS, config, seed)
    np.testing.assert_array_equal(ours.action, theirs.action)
    visits = np.asarray(ours.visit_counts)
    picked = visits[np.arange(len(OPENINGS)), np.asarray(ours.action)]
    assert (picked > 0).all()


def test_gumbel_argmax_plays_the_improved_policys_greedy_move():
  config = search.AlphaZeroSearchConfig(
      num_simulations=8, policy="gumbel", gumbel_scale=0.0,
      temperature_moves=0, max_num_considered_actions=4,
      gumbel_move="argmax")
  ours, theirs = _gumbel_on(OPENINGS, config, 0)
  weights = np.asarray(theirs.action_weights)
  np.testing.assert_array_equal(ours.action, weights.argmax(-1))
  # Here that is a move the search never visited on some root (after [4]),
  # which the sequential-halving winner never is.
  visits = np.asarray(ours.visit_counts)
  assert (visits[np.arange(len(OPENINGS)), np.asarray(ours.action)] == 0
          ).any()


def test_bad_gumbel_move():
  with pytest.raises(ValueError, match="gumbel_move"):
    search.AlphaZeroSearchConfig(num_simulations=8, gumbel_move="best")
