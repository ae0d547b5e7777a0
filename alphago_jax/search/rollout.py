"""Uniformly random playouts, the Monte Carlo evaluator of classic MCTS."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from alphago_jax.games import base


def random_legal_action(key: chex.PRNGKey, legal_action_mask: chex.Array
                        ) -> chex.Array:
  """A uniformly random legal action; 0 when none is legal.

  Args:
    key: PRNG key.
    legal_action_mask: bool `[num_actions]`.

  Returns:
    int32 `[]`.
  """
  logits = jnp.where(legal_action_mask, 0.0, -jnp.inf)
  # With no legal action every logit is -inf; categorical would return an
  # arbitrary index, so pin it to 0 (the game absorbs it anyway).
  action = jax.random.categorical(key, logits)
  return jnp.where(jnp.any(legal_action_mask), action, 0).astype(jnp.int32)


def random_rollout(game: base.Game, key: chex.PRNGKey, state: base.State,
                   max_steps: int | None = None) -> chex.Array:
  """Plays uniformly random legal moves from `state` to the end of the game.

  Args:
    game: the game.
    key: PRNG key, consumed.
    state: one (unbatched) state.
    max_steps: stop after this many moves (counts as a draw); defaults to no
      limit, for games that always end.

  Returns:
    float32 `[2]`: the total reward of each player over the rollout, i.e. the
    outcome of the game from `state` on (zeros if `state` is terminal).
  """
  def cond(carry):
    s, _, _, n = carry
    not_done = ~s.terminated
    if max_steps is not None:
      not_done &= n < max_steps
    return not_done

  def body(carry):
    s, k, total, n = carry
    k, sub = jax.random.split(k)
    s = game.step(s, random_legal_action(sub, s.legal_action_mask))
    return s, k, total + s.rewards, n + 1

  init = (state, key, jnp.zeros(2, jnp.float32), jnp.int32(0))
  _, _, total, _ = jax.lax.while_loop(cond, body, init)
  return total
