"""Networks that play without search: the scores their greedy move maximises.

Each function takes a loaded `loaders.Network` and returns `scores(game,
states [B]) -> [B, A]` over the moves the policy games' move rule allows
(`training.policy_games.sensible_mask`: no own-eye fill, pass only when
nothing else is left), `MASKED_LOGIT` elsewhere; the argmax is the move.
This is the rule the policy networks were trained and measured under.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from alphago_jax.core.types import MASKED_LOGIT
from alphago_jax.games import go_patterns
from alphago_jax.games.go import BLACK
from alphago_jax.models import rollout_policy
from alphago_jax.models.value import ValueNet, make_value_fn
from alphago_jax.search.alphazero import evaluate_states
from alphago_jax.training import policy_games
from alphago_jax.zoo.loaders import Network


def policy_scores(net: Network, *, ensemble: bool = False):
  """p_σ or p_ρ: its logits; with `ensemble`, of its mean policy over the
  8 board symmetries."""
  logits_fn = policy_games.policy_logits_fn(net.model, net.game,
                                            ensemble=ensemble)

  def scores(game, states):
    mask = policy_games.sensible_mask(game, states)
    return jnp.where(mask, logits_fn(net.variables, states), MASKED_LOGIT)
  return scores


def alphazero_policy(net: Network):
  """An AlphaZero ResNet's `(logits [B, A], values [B])` (every legal move,
  as its search sees them)."""
  def policy(game, states):
    return evaluate_states(game, net.evaluate, net.variables, states)
  return policy


def value_scores(net: Network):
  """v_θ: each move's successor, valued for the mover (a child's value is
  the opponent's, so negated); a move that ends the game is scored
  instead."""
  value_fn = make_value_fn(ValueNet(net.model))

  def scores(game, states):
    def one(state):
      children = jax.vmap(game.step, in_axes=(None, 0))(
          state, jnp.arange(game.num_actions))
      planes = policy_games.planes_of(game, children, net.model.features)
      mine = -value_fn(net.variables, planes.astype(jnp.float32))
      return jnp.where(children.terminated,
                       children.rewards[:, state.current_player], mine)
    after = jax.vmap(one)(states)
    return jnp.where(policy_games.sensible_mask(game, states), after,
                     MASKED_LOGIT)
  return scores


def last_point(state):
  """int32 `[]`: the point the last move was played on, read from the two
  newest boards of `state.history` (-1 after a pass, at the start, or
  with fewer than two history planes): p_π's response features need it
  and a `GoState` does not keep it otherwise."""
  if state.history.shape[0] < 2:
    return jnp.int32(-1)
  last_colour = jnp.where(state.current_player == BLACK, -1, 1)
  placed = (state.history[0] == last_colour) & (state.history[1] == 0)
  return jnp.where(jnp.any(placed), jnp.argmax(placed), -1).astype(jnp.int32)


def rollout_scores(net: Network):
  """p_π: its pattern logits (pass 0), on any board size (its features are
  local)."""
  weights = jnp.asarray(net.variables)

  def scores(game, states):
    playout = go_patterns.playout_for(game.size)

    def one(state):
      ids = go_patterns.point_features(
          net.model, playout, state.board,
          state.current_player.astype(jnp.int32), last_point(state))
      return rollout_policy.pattern_logits(weights, ids)
    points = jax.vmap(one)(states)
    full = jnp.concatenate([points, jnp.zeros_like(points[:, :1])], axis=1)
    return jnp.where(policy_games.sensible_mask(game, states), full,
                     MASKED_LOGIT)
  return scores
