"""Hypothesis properties of UCT trees on random tic-tac-toe positions."""

import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
from hypothesis import given, settings, strategies as st

from alphago_jax import games
from alphago_jax.search.uct import rollout_recurrent_fn, ucb1_action_selection
from alphago_jax.search import tree_search

import profiles

GAME = games.make("tictactoe")
N_SIMS = 40


@functools.lru_cache(None)
def _search():
  select = functools.partial(ucb1_action_selection, exploration=1.4)

  @jax.jit
  def run(key, states):
    root = mctx.RootFnOutput(prior_logits=jnp.zeros((1, 9)),
                             value=jnp.zeros(1), embedding=states)
    return tree_search.search(
        None, key, root=root, recurrent_fn=rollout_recurrent_fn(GAME),
        root_action_selection_fn=select, interior_action_selection_fn=select,
        num_simulations=N_SIMS)
  return run


@settings(max_examples=profiles.examples(25), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), plies=st.integers(0, 6))
def test_tree_invariants(seed, plies):
  rng = np.random.default_rng(seed)
  s = GAME.init(jax.random.key(0))
  for _ in range(plies):
    if bool(s.terminated):
      break
    s = GAME.step(s, int(rng.choice(np.flatnonzero(s.legal_action_mask))))
  if bool(s.terminated):
    return
  tree = jax.device_get(_search()(jax.random.key(seed),
                                  jax.tree.map(lambda x: x[None], s)))
  visits, cv = tree.node_visits[0], tree.children_visits[0]
  assert visits[0] == N_SIMS + 1  # Root: its evaluation plus each simulation.
  expanded = visits > 0
  # Every expanded node was visited once on creation plus once per visit of
  # a child; each child's count equals the visits of the node it points to.
  np.testing.assert_array_equal(visits[expanded], 1 + cv[expanded].sum(-1))
  idx = tree.children_index[0]
  has_child = idx >= 0
  np.testing.assert_array_equal(cv[has_child], visits[idx[has_child]])
  # Nothing illegal is ever expanded, at any depth.
  legal = tree.embeddings.legal_action_mask[0]
  assert not np.any(has_child[expanded] & ~legal[expanded]
                    & ~tree.embeddings.terminated[0][expanded][:, None])
  # Values are means of results in [-1, 1].
  assert np.all(np.abs(tree.node_values[0]) <= 1 + 1e-6)
