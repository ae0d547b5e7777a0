"""The fast paths of UCT: hash32 PRNG, closed-form rollout, batched search.

Each fast path must keep the algorithm: the tic-tac-toe closed-form rollout
must have the outcome distribution of stepping uniformly random moves (exact
probabilities by enumeration, and the generic loop as a second reference),
the hash PRNG must look uniform and independent where UCT uses it, and the
batched `tree_search.search` must build mctx's tree bit for bit in the
configurations the UCT test does not cover.
"""

import functools
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from alphago_jax.search.uct import rollout_recurrent_fn, ucb1_action_selection
from alphago_jax.games.tictactoe import LINES
from alphago_jax.search import rollout, tree_search

from ttt_positions import GAME, position
N_ROLLOUTS = 40_000


def exact_random_play(board, player):
  """P(X wins), P(draw), P(O wins) under uniformly random play (Fractions).

  Plain Python over cells 0..8 (None empty, 0 X, 1 O); shares no code with
  the JAX game.
  """
  @functools.lru_cache(None)
  def go(b, p):
    empty = [i for i, v in enumerate(b) if v is None]
    out = [Fraction(0)] * 3
    for c in empty:
      nb = b[:c] + (p,) + b[c + 1:]
      if any(all(nb[i] == p for i in line) for line in LINES.tolist()):
        out[0 if p == 0 else 2] += Fraction(1, len(empty))
      elif all(v is not None for v in nb):
        out[1] += Fraction(1, len(empty))
      else:
        sub = go(nb, 1 - p)
        out = [o + s / len(empty) for o, s in zip(out, sub)]
    return tuple(out)
  return go(tuple(board), player)


POSITIONS = [[], [4], [0, 3, 1, 4], [0, 4, 1], [4, 0, 8, 2, 6]]


def outcome_counts(outcomes_x):
  """Counts of (X win, draw, O win) from X's total reward per rollout."""
  o = np.asarray(outcomes_x)
  return np.array([np.sum(o > 0), np.sum(o == 0), np.sum(o < 0)])


def rollouts(fn, state, key):
  keys = jax.random.split(key, N_ROLLOUTS)
  return jax.jit(jax.vmap(lambda k: fn(k, state)))(keys)[:, 0]


def chi_square_p(counts, probs):
  from scipy import stats
  probs = np.asarray([float(p) for p in probs])
  keep = probs > 0
  assert np.all(counts[~keep] == 0), (counts, probs)
  return stats.chisquare(counts[keep], counts.sum() * probs[keep]).pvalue


@pytest.mark.parametrize("moves", POSITIONS)
def test_fast_and_generic_rollouts_match_exact_random_play(moves):
  s = position(moves)
  board = [None if v < 0 else int(v) for v in np.asarray(s.board)]
  exact = exact_random_play(board, int(s.current_player))
  key = rollout.hash_prng_key(jax.random.key(len(moves)))
  fast = outcome_counts(rollouts(GAME.fast_random_rollout, s, key))
  generic = outcome_counts(rollouts(
      lambda k, st: rollout.generic_random_rollout(GAME, k, st), s,
      jax.random.fold_in(key, 1)))
  # 30 chi-square tests in all at 1e-4: a false alarm is very unlikely,
  # while a wrong distribution (e.g. a wrong mover parity) fails by far.
  for counts in (fast, generic):
    assert chi_square_p(counts, exact) > 1e-4, (moves, counts, exact)
  from scipy import stats
  table = np.stack([fast, generic])
  table = table[:, table.sum(0) > 0]
  if table.shape[1] > 1:
    assert stats.chi2_contingency(table).pvalue > 1e-4, table


def test_rollout_dispatch_uses_the_hook_only_without_max_steps():
  s = position([0, 4])
  key = jax.random.key(3)
  np.testing.assert_array_equal(rollout.random_rollout(GAME, key, s),
                                GAME.fast_random_rollout(key, s))
  np.testing.assert_array_equal(
      rollout.random_rollout(GAME, key, s, max_steps=2),
      rollout.generic_random_rollout(GAME, key, s, max_steps=2))


def test_fast_rollout_of_terminal_state_is_zero():
  s = position([0, 3, 1, 4, 2])  # X wins on the top row.
  assert bool(s.terminated)
  out = rollouts(GAME.fast_random_rollout, s, jax.random.key(0))
  assert np.all(np.asarray(out) == 0)


def test_fast_rollout_immediate_win_probability():
  # X: 0, 1; O: 3, 4; X to move. X wins at once with probability 1/5
  # (cell 2 first) plus later wins; O wins only via 5 before X plays 2.
  s = position([0, 3, 1, 4])
  exact = exact_random_play([0, 0, None, 1, 1, None, None, None, None], 0)
  assert sum(exact) == 1 and exact[0] > Fraction(1, 5)
  out = outcome_counts(rollouts(GAME.fast_random_rollout, s,
                                rollout.hash_prng_key(jax.random.key(9))))
  p = out / out.sum()
  se = np.sqrt(np.array([float(e) for e in exact]) * (1 - p) / N_ROLLOUTS)
  np.testing.assert_array_less(np.abs(p - np.array([float(e) for e in exact])),
                               5 * se + 1e-9)


def test_hash_prng_uniform_bits_and_independent_splits():
  from scipy import stats
  key = rollout.hash_prng_key(jax.random.key(0))
  u = np.asarray(jax.random.uniform(key, (200_000,)))
  assert stats.kstest(u, "uniform").pvalue > 1e-4
  # The way UCT uses it: split per game, then a few draws per key.
  keys = jax.random.split(key, 50_000)
  draws = np.asarray(jax.vmap(lambda k: jax.random.uniform(k, (9,)))(keys))
  corr = np.corrcoef(draws.T)
  off = corr[~np.eye(9, dtype=bool)]
  assert np.max(np.abs(off)) < 5 / math.sqrt(50_000), off
  # Sibling keys are not correlated either.
  first = draws[:, 0]
  assert abs(np.corrcoef(first[:-1], first[1:])[0, 1]) < 5 / math.sqrt(
      50_000)
  # Chained splits (how a search advances its key) do not repeat.
  def chain(k, _):
    k, sub = jax.random.split(k)
    return k, jax.random.bits(sub, (), jnp.uint32)
  _, words = jax.lax.scan(chain, key, None, length=20_000)
  assert len(np.unique(np.asarray(words))) > 19_990
  # 8-bit draws are uniform over 256 values.
  b = np.asarray(jax.random.bits(key, (256_000,), jnp.uint8))
  assert stats.chisquare(np.bincount(b, minlength=256)).pvalue > 1e-4


def test_hash_prng_key_is_a_pure_function_of_the_seed_key():
  a = jax.random.key_data(rollout.hash_prng_key(jax.random.key(5)))
  b = jax.random.key_data(rollout.hash_prng_key(jax.random.key(5)))
  c = jax.random.key_data(rollout.hash_prng_key(jax.random.key(6)))
  np.testing.assert_array_equal(a, b)
  assert not np.array_equal(a, c)


def _compare_with_mctx(key, num_simulations, max_depth=None, moves=(),
                       root_c=1.4, interior_c=1.4, batch=6):
  states = jax.tree.map(lambda x: jnp.repeat(x[None], batch, 0),
                        position(list(moves)))

  def run(search_fn, k, states):
    # The position is an argument: cases that differ only in it share one
    # compiled program (and the XLA cache).
    root = mctx.RootFnOutput(prior_logits=jnp.zeros((batch, 9)),
                             value=jnp.zeros(batch), embedding=states)
    return search_fn(
        None, k, root=root, recurrent_fn=rollout_recurrent_fn(GAME),
        root_action_selection_fn=functools.partial(
            ucb1_action_selection, exploration=root_c),
        interior_action_selection_fn=functools.partial(
            ucb1_action_selection, exploration=interior_c),
        num_simulations=num_simulations, max_depth=max_depth,
        invalid_actions=(~states.legal_action_mask).astype(jnp.float32))
  ours = jax.jit(functools.partial(run, tree_search.search))(key, states)
  ref = jax.jit(functools.partial(run, mctx.search))(key, states)
  for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(ref)):
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", [
    dict(num_simulations=50, max_depth=2),
    dict(num_simulations=40, root_c=0.0, interior_c=3.0),
    # The same budget and constants: one program each for the two below.
    dict(num_simulations=60, moves=(4, 0, 8)),
    dict(num_simulations=60, moves=(0, 3, 1, 4, 6, 2)),  # Three empty cells: terminal nodes in the tree.
])
def test_batched_search_builds_mctx_tree_with_hash_keys(case):
  _compare_with_mctx(rollout.hash_prng_key(jax.random.key(11)), **case)
