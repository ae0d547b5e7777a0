"""Gumbel root selection over AlphaGo's λ-mixed leaves.

mctx's Gumbel MuZero policy (Gumbel-top-k sampling of the root's candidates,
then sequential halving over them, and the completed-Q improved policy)
with AlphaGo's leaf evaluation: the prior is AlphaGo's policy network and
each new node is valued V = (1 − λ) v + λ z, v from the value network and
z the mean outcome of fast rollouts (`alphago.make_leaf_value`). Gumbel
search is sound with few simulations, where PUCT's visit counts are not;
AlphaGo's mixed leaf is what the λ ablation studies. The move played is
the sequential-halving winner (mctx's `action`), as the Gumbel paper
plays it.

It registers as the variant "gumbel" (`alphago.VARIANTS`), so
`AlphaGoSearchConfig(variant="gumbel", ...)` runs it wherever AlphaGo's
search runs: `alphago_search`, the agents, the ablation runner
(`alphago-jax sweep --variant gumbel`) and the GTP players. The static part
(simulations, considered actions, rollout policy and count, which
evaluators exist) is an `AlphaGoStatic`; λ, the rollout temperature, the
symmetry flag and the Gumbel scale are traced, so one compiled search
serves every value of them.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import mctx

from alphago_jax.core.types import PolicyFn, ValueFn
from alphago_jax.games import base as game_base
from alphago_jax.search.alphago import (VARIANTS, AlphaGoParams,
                                        AlphaGoSearchOutput, AlphaGoStatic,
                                        AlphaGoVariant, make_recurrent_fn,
                                        make_root, recurrent_params,
                                        root_statistics)
from alphago_jax.search.rollout import hash_prng_key


def gumbel_alphago_search(game: game_base.Game, policy_fn: PolicyFn,
                          value_fn: ValueFn | None, variables,
                          key: chex.PRNGKey, states: game_base.State, *,
                          static: AlphaGoStatic, params: AlphaGoParams,
                          tree=None, max_num_considered_actions: int = 16,
                          gumbel_scale=1.0) -> AlphaGoSearchOutput:
  """Runs the search from each root state `[B]`; the variant "gumbel" of
  `alphago.alphago_search`, which resolves and checks the config first.

  Args:
    game, policy_fn, value_fn, variables, key, states: as
      `alphago.alphago_search`.
    static: the shape-fixing settings; tree reuse and virtual loss are
      PUCT's and refused (`alphago.check_variant`).
    params: the traced settings; λ (`mixing`), `rollout_temperature` and
      `random_symmetry` apply, `c_puct` and `virtual_loss` do not.
    tree: must be None (no tree reuse).
    max_num_considered_actions: root candidates sequential halving starts
      from (static).
    gumbel_scale: scale of the root's Gumbel noise (traced; 0 is
      deterministic).

  Returns:
    `AlphaGoSearchOutput` `[B]`: `action` the sequential-halving winner,
    `action_weights` the improved policy (softmax of the prior logits plus
    the completed, transformed Q), `visit_counts`, `q_values` (raw, mover's
    view, 0 where unvisited) and `root_value` from the root, and
    `search_tree` mctx's tree (for principal variations).
  """
  if tree is not None:
    raise ValueError("gumbel_alphago_search does not continue trees")
  root_key, search_key = jax.random.split(hash_prng_key(key))
  root = make_root(game, policy_fn, value_fn, static, variables, params,
                   root_key, states)
  out = mctx.gumbel_muzero_policy(
      params=recurrent_params(variables, params),
      rng_key=search_key, root=root,
      recurrent_fn=make_recurrent_fn(game, policy_fn, value_fn, static),
      num_simulations=static.num_simulations,
      invalid_actions=~states.legal_action_mask,
      max_depth=static.max_depth,
      max_num_considered_actions=max_num_considered_actions,
      gumbel_scale=gumbel_scale)
  tree = out.search_tree
  visits, q = root_statistics(tree)
  return AlphaGoSearchOutput(
      action=out.action.astype(jnp.int32),
      visit_counts=visits,
      action_weights=out.action_weights.astype(jnp.float32),
      q_values=q,
      root_value=tree.node_values[:, tree.ROOT_INDEX].astype(jnp.float32),
      search_tree=tree)


VARIANTS.register("gumbel", AlphaGoVariant(
    search=gumbel_alphago_search,
    reads=("mixing", "rollout_temperature", "random_symmetry"),
    reuses_trees=False, virtual_loss=False,
    description="Gumbel root selection (sequential halving over 16 "
                "sampled candidates, Gumbel scale 1), the winner played"))
