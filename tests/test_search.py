"""UCT, pure Monte Carlo and the solver agent on tic-tac-toe."""

import functools
import math

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

import python_uct
from alphago_jax import search
from alphago_jax.search.uct import UCTParams, rollout_recurrent_fn, ucb1_action_selection, ucb1_scores
from alphago_jax.search.solver import alphabeta, solve
from alphago_jax.search.base import argmax_random_tiebreak
from alphago_jax.search import tree_search, uct

from ttt_positions import GAME, batch, position
from alphago_jax.core import stats
from alphago_jax import play


def test_ucb1_scores_by_hand():
  # Parent N = 100; A: W/N = 0.6 over 50 visits; B: W/N = 0.8 over 4.
  scores = ucb1_scores(jnp.array([0.6, 0.8]), jnp.array([50, 4]),
                              100, math.sqrt(2))
  a = 0.6 + math.sqrt(2) * math.sqrt(math.log(100) / 50)  # 1.0292
  b = 0.8 + math.sqrt(2) * math.sqrt(math.log(100) / 4)  # 2.3174
  np.testing.assert_allclose(scores, [a, b], rtol=1e-6)
  assert abs(a - 1.0292) < 1e-4 and abs(b - 2.3174) < 1e-4


def test_ucb1_selection_on_a_hand_built_tree_picks_b():
  # Root with two children as above, built through mctx's own tree; values
  # are stored from the child's mover's view, so W/N = 0.6 is V = -0.2.
  # Built and searched by two compiled programs (eagerly, each operation
  # would compile on its own).
  @jax.jit
  def hand_tree():
    state = batch(position([]), 1)
    root = mctx.RootFnOutput(prior_logits=jnp.zeros((1, 9)),
                             value=jnp.zeros(1), embedding=state)
    from mctx._src import search as ms
    tree = ms.instantiate_tree_from_root(root, 2, jnp.zeros((1, 9)), None)
    t = jax.tree.map(lambda x: x[0], tree)
    return t.replace(
        node_visits=t.node_visits.at[0].set(100),
        children_visits=t.children_visits.at[0, 3].set(50).at[0, 5].set(4),
        children_values=t.children_values.at[0, 3].set(-0.2).at[0, 5].set(
            -0.6),
        children_discounts=t.children_discounts.at[0].set(-1.0),
        embeddings=t.embeddings.replace(
            legal_action_mask=t.embeddings.legal_action_mask.at[0].set(
                jnp.zeros(9, bool).at[3].set(True).at[5].set(True))))
  rates, action = jax.jit(lambda t: (
      uct.children_win_rates(t, 0)[jnp.array([3, 5])],
      ucb1_action_selection(jax.random.key(0), t, 0,
                            exploration=math.sqrt(2))))(hand_tree())
  np.testing.assert_allclose(rates, [0.6, 0.8], rtol=1e-6)
  assert int(action) == 5


def test_tree_search_builds_the_same_tree_as_mctx_search():
  states = jax.vmap(GAME.init)(jax.random.split(jax.random.key(0), 8))
  root = mctx.RootFnOutput(prior_logits=jnp.zeros((8, 9)),
                           value=jnp.zeros(8), embedding=states)
  select = functools.partial(ucb1_action_selection, exploration=1.4)
  kwargs = dict(root=root, recurrent_fn=rollout_recurrent_fn(GAME),
                root_action_selection_fn=select,
                interior_action_selection_fn=select, num_simulations=60)
  ours = jax.jit(lambda k: tree_search.search(None, k, **kwargs))(
      jax.random.key(7))
  ref = jax.jit(lambda k: mctx.search(None, k, **kwargs))(jax.random.key(7))
  for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(ref)):
    np.testing.assert_array_equal(a, b)


# X: 0, 1; O: 3, 4; X to move: 2 wins. (O threatens 5.)
WIN_IN_ONE = ([0, 3, 1, 4], 2)
# X: 0, 8; O: 4, X plays... O to move must block: X 0, O 4, X 1 -> O blocks 2.
MUST_BLOCK = ([0, 4, 1], 2)


def flipped_ucb1(rng_key, tree, node_index, depth=0, *, exploration):
  """UCB1 with the backup sign flipped: scores the opponent's wins."""
  legal = tree.embeddings.legal_action_mask[node_index]
  scores = ucb1_scores(1.0 - uct.children_win_rates(tree, node_index),
                              tree.children_visits[node_index],
                              tree.node_visits[node_index], exploration)
  return argmax_random_tiebreak(rng_key, scores, legal)


@functools.lru_cache(maxsize=None)
def _uct_actions(n, selection):
  """UCT's moves, jitted once per budget and selection (called eagerly, the
  search compiles its loops op by op: ten times the cost). Traced on its
  first call, inside `run_uct`'s patch of the selection."""
  del selection  # the cache key: what `run_uct` patches in
  return jax.jit(lambda key, states: search.uct_search(
      GAME, key, states, config=search.UCTConfig(num_simulations=n)).action)


def run_uct(state, n, selection=None):
  states = batch(state, 64)
  if selection is not None:
    old = uct.ucb1_action_selection
    uct.ucb1_action_selection = selection
  try:
    out = _uct_actions(n, selection)(jax.random.key(1), states)
  finally:
    if selection is not None:
      uct.ucb1_action_selection = old
  return np.asarray(out)


@functools.lru_cache(maxsize=None)
def _solved():
  """The exact solver's table and its agent, jitted; shared by the cases."""
  sol = solve(GAME)
  return sol, jax.jit(search.solver_agent(GAME, sol))


_monte_carlo = jax.jit(lambda key, states: search.monte_carlo_search(
    GAME, key, states,
    config=search.MonteCarloConfig(rollouts_per_action=200)).action)


@pytest.mark.parametrize("moves,expected", [WIN_IN_ONE, MUST_BLOCK])
def test_every_search_finds_the_win_or_the_block(moves, expected):
  s = position(moves)
  assert np.all(run_uct(s, 300) == expected)
  mc = _monte_carlo(jax.random.key(2), batch(s, 64))
  assert np.all(np.asarray(mc) == expected)
  sol, solver = _solved()
  ab = solver(batch(s, 64), jax.random.key(3))
  assert np.all(np.asarray(ab) == expected)
  key = sol.graph.add(jax.device_get(s))
  v, _ = alphabeta(sol.graph, key)
  assert sol.action_values(key)[expected] == v


@pytest.mark.parametrize("moves,expected", [WIN_IN_ONE, MUST_BLOCK])
def test_a_flipped_backup_sign_is_caught(moves, expected):
  # The deliberately wrong variant: the same test fails for it.
  actions = run_uct(position(moves), 300, selection=flipped_ucb1)
  assert np.mean(actions == expected) < 0.5


def test_python_reference_agrees_on_the_win():
  import random
  board = (1, 1, 0, 2, 2, 0, 0, 0, 0)
  assert python_uct.uct_move(board, 1, 300, random.Random(0)) == 2


@pytest.mark.slow  # 96 games at 1000 simulations: 15 s on 2 cores
def test_uct_1000_draws_as_x_but_loses_some_games_as_o():
  # Random-rollout UCT at 1000 simulations is not perfect as O: it loses
  # mostly after an edge opening answered in a corner that loses (X 5, O 0,
  # X 2); the independent pure-Python textbook UCT (benchmarks/python_uct.py)
  # loses the same way, and at 5000 simulations ours loses none (the slow
  # test below), so this is the budget, not a bug. Fixed keys: the exact
  # counts are the README's.
  perfect = search.solver_agent(GAME)
  uct1000 = search.uct_agent(GAME, search.UCTConfig(num_simulations=1000))
  as_x = play.record(play.play(
      GAME, (uct1000, perfect), jax.random.key(4), num_games=48), player=0)
  as_o = play.record(play.play(
      GAME, (perfect, uct1000), jax.random.key(5), num_games=48), player=1)
  assert (as_x.wins, as_x.draws, as_x.losses) == (0, 48, 0), as_x
  assert (as_o.wins, as_o.draws, as_o.losses) == (0, 46, 2), as_o


@pytest.mark.slow
def test_uct_5000_never_loses_to_alphabeta_as_o():
  # The budget, not the implementation, explains the O losses above.
  perfect = search.solver_agent(GAME)
  uct5000 = search.uct_agent(GAME, search.UCTConfig(num_simulations=5000))
  as_o = play.record(play.play(
      GAME, (perfect, uct5000), jax.random.key(6), num_games=256), player=1)
  assert as_o.losses == 0, as_o


# The default suite compares 100 with 300 simulations; the slow one with
# 1000 (three times the cost of both others together).
@pytest.mark.parametrize("most", [300, pytest.param(1000,
                                                     marks=pytest.mark.slow)])
def test_anytime_losses_do_not_rise_with_simulations(most):
  n_games = 400
  losses = {}
  for i, n in enumerate((10, 100, most)):
    agent = search.uct_agent(GAME, search.UCTConfig(num_simulations=n))
    rec = play.record(play.play(
        GAME, (agent, search.random_agent), jax.random.key(10 + i),
        num_games=n_games))
    losses[n] = rec.losses
  # 10 -> 100: a significant fall (95% interval of the drop above 0).
  lo, _ = stats.difference_interval(losses[10], n_games, losses[100],
                                         n_games)
  assert lo > 0, losses
  # 100 -> most: no rise of 2 points or more (non-inferiority: the rise's
  # whole 95% interval is below 0.02). "The interval reaches 0" would pass
  # on too few games; this needs evidence (0 of 400 vs 0 of 400: 0.0095).
  _, hi = stats.difference_interval(losses[most], n_games, losses[100],
                                         n_games)
  assert hi < 0.02, losses


@pytest.mark.parametrize("n", [0, -3, 2.5, True])
def test_bad_simulation_counts_raise(n):
  with pytest.raises(ValueError, match="num_simulations"):
    search.UCTConfig(num_simulations=n)


@pytest.mark.parametrize("c", [float("nan"), float("inf"), -1.0])
def test_bad_exploration_constant_raises(c):
  with pytest.raises(ValueError, match="exploration constant"):
    search.UCTConfig(num_simulations=10, exploration=c)


def test_batch_of_zero_raises():
  with pytest.raises(ValueError, match="num_games"):
    play.play(GAME, (search.random_agent, search.random_agent),
                    jax.random.key(0), num_games=0)
  empty = jax.tree.map(lambda x: x[:0], batch(position([]), 1))
  with pytest.raises(ValueError, match="batch size"):
    search.uct_search(GAME, jax.random.key(0), empty,
                      config=search.UCTConfig(num_simulations=5))


@pytest.mark.parametrize("depth", [0, 2.0, True])
def test_bad_uct_max_depth_raises(depth):
  with pytest.raises(ValueError, match="max_depth must be an integer >= 1 "
                                       "or None"):
    search.UCTConfig(num_simulations=10, max_depth=depth)


def test_monte_carlo_bad_rollouts_raise():
  with pytest.raises(ValueError, match="rollouts_per_action"):
    search.MonteCarloConfig(rollouts_per_action=0)


def test_uct_exploration_is_traced_one_compilation_for_all_values():
  traces = []
  static, base = search.UCTConfig(num_simulations=24).split()

  @jax.jit
  def run(params, key, states):
    traces.append(1)
    return search.uct_search(GAME, key, states, config=static, params=params)
  states = batch(position([4]), 4)
  key = jax.random.key(2)
  outs = [run(UCTParams(exploration=np.float32(c)), key, states)
          for c in (0.0, 1.4, 50.0)]
  assert len(traces) == 1
  # c = 0 is greedy on W/N, c = 50 spreads visits near uniformly.
  spread = lambda o: np.asarray(o.visit_counts).std(-1).mean()
  assert spread(outs[0]) > spread(outs[2])
  baked = jax.jit(lambda k, s: search.uct_search(
      GAME, k, s, config=search.UCTConfig(num_simulations=24,
                                          exploration=50.0)))(key, states)
  np.testing.assert_array_equal(baked.visit_counts, outs[2].visit_counts)
  with pytest.raises(ValueError, match="exploration"):
    search.uct_search(GAME, key, states, config=static,
                      params=UCTParams(exploration=np.float32(-1)))
