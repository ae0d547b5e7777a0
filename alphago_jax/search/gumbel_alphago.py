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

The static part (simulations, considered actions, rollout policy and
count, which evaluators exist) is an `AlphaGoStatic`; λ, the rollout
temperature and the Gumbel scale are traced, so one compiled search serves
every value of them.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import mctx
from flax import struct

from alphago_jax.core.types import PolicyFn, ValueFn
from alphago_jax.games import base as game_base
from alphago_jax.search import base
from alphago_jax.search.alphago import (AlphaGoStatic, _network_view,
                                        _prior_logits, make_leaf_value,
                                        make_recurrent_fn)
from alphago_jax.search.rollout import hash_prng_key


@struct.dataclass
class GumbelAlphaGoOutput:
  """What the search returns for `[B]` roots.

  Attributes:
    action: int32 `[B]`, the sequential-halving winner.
    action_weights: float32 `[B, A]`, the improved policy (softmax of the
      prior logits plus the completed, transformed Q).
    visit_counts: int32 `[B, A]`, root visits.
    root_value: float32 `[B]`, the root's value after the search, for the
      player to move.
  """
  action: chex.Array
  action_weights: chex.Array
  visit_counts: chex.Array
  root_value: chex.Array


def gumbel_alphago_search(game: game_base.Game, policy_fn: PolicyFn,
                          value_fn: ValueFn | None, variables,
                          key: chex.PRNGKey, states: game_base.State, *,
                          static: AlphaGoStatic, mixing,
                          max_num_considered_actions: int = 16,
                          gumbel_scale=1.0, rollout_temperature=1.0
                          ) -> GumbelAlphaGoOutput:
  """Runs the search from each root state `[B]`.

  Args:
    game: the game.
    policy_fn: the prior (`alphago.alphago_search`'s contract).
    value_fn: v, or None where `static.use_value` is False.
    variables: `(policy_variables, value_variables)`.
    key: PRNG key, consumed.
    states: batched root states `[B]`.
    static: the shape-fixing settings (`AlphaGoSearchConfig(...).split()[0]`);
      its PUCT-only fields (virtual loss, tree reuse) do not apply.
    mixing: λ, a traced scalar in [0, 1] allowed by `static`.
    max_num_considered_actions: root candidates sequential halving starts
      from (static).
    gumbel_scale: scale of the root's Gumbel noise (traced; 0 is
      deterministic).
    rollout_temperature: the rollout policy's temperature (traced).
  """
  if static.reuse_tree or static.leaves_per_step != 1:
    raise ValueError("gumbel_alphago_search: tree reuse and virtual loss "
                     "are PUCT settings; use reuse_tree=False and "
                     "leaves_per_step=1")
  base.check_batch(states)
  policy_variables, value_variables = variables
  root_key, search_key = jax.random.split(hash_prng_key(key))
  leaf_value = make_leaf_value(game, value_fn, static)
  no_symmetry = jnp.float32(0.0)
  view = _network_view(game, jax.random.fold_in(root_key, 1), no_symmetry,
                       jax.vmap(game.observe)(states),
                       states.legal_action_mask)
  root = mctx.RootFnOutput(
      prior_logits=_prior_logits(game, policy_fn, policy_variables, states,
                                 view),
      value=leaf_value(value_variables, mixing, root_key, states, view.obs,
                       rollout_temperature),
      embedding=states)
  out = mctx.gumbel_muzero_policy(
      params=(variables, (mixing, rollout_temperature, no_symmetry)),
      rng_key=search_key, root=root,
      recurrent_fn=make_recurrent_fn(game, policy_fn, value_fn, static),
      num_simulations=static.num_simulations,
      invalid_actions=~states.legal_action_mask,
      max_depth=static.max_depth,
      max_num_considered_actions=max_num_considered_actions,
      gumbel_scale=gumbel_scale)
  tree = out.search_tree
  return GumbelAlphaGoOutput(
      action=out.action.astype(jnp.int32),
      action_weights=out.action_weights.astype(jnp.float32),
      visit_counts=tree.children_visits[:, tree.ROOT_INDEX].astype(
          jnp.int32),
      root_value=tree.node_values[:, tree.ROOT_INDEX].astype(jnp.float32))
