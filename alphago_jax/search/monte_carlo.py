"""Pure Monte Carlo move selection: equal rollouts per legal move (random,
or for Go any policy of the lean playout path)."""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp

from alphago_jax.core.checks import check_int
from alphago_jax.games import base as game_base
from alphago_jax.search import base
from alphago_jax.search.rollout import hash_prng_key, rollout_fn


@dataclasses.dataclass(frozen=True, kw_only=True)
class MonteCarloConfig:
  """Attributes:
    rollouts_per_action: rollouts after each legal move.
    rollout_policy: the rollout policy by name (`rollout.rollout_fn`).
  """
  rollouts_per_action: int
  rollout_policy: str = "random"

  def __post_init__(self):
    check_int("rollouts_per_action", self.rollouts_per_action, 1)


def _one(game: game_base.Game, key: chex.PRNGKey, state: game_base.State,
         rollouts: int, play_out) -> base.SearchOutput:
  mover = state.current_player
  actions = jnp.arange(game.num_actions, dtype=jnp.int32)

  def action_value(key, action):
    child = game.step(state, action)
    keys = jax.random.split(key, rollouts)
    future = jax.vmap(lambda k: play_out(k, child))(keys)
    # Mean result for the mover in [-1, 1]: the move's reward plus the rest.
    return child.rewards[mover] + jnp.mean(future[:, mover])

  key, choice_key = jax.random.split(key)
  values = jax.vmap(action_value)(jax.random.split(key, game.num_actions),
                                  actions)
  legal = state.legal_action_mask
  win_rates = jnp.where(legal, (values + 1.0) / 2.0, 0.0)
  action = base.argmax_random_tiebreak(choice_key, win_rates, legal)
  visits = jnp.where(legal, rollouts, 0).astype(jnp.int32)
  return base.SearchOutput(action=action, visit_counts=visits,
                           win_rates=win_rates)


def monte_carlo_search(game: game_base.Game, key: chex.PRNGKey,
                       states: game_base.State, *, config: MonteCarloConfig
                       ) -> base.SearchOutput:
  """For each state `[B]`, the legal move with the best mean rollout result."""
  batch = base.check_batch(states)
  # The rollouts draw from the cheap hash PRNG; see rollout.py.
  keys = jax.random.split(hash_prng_key(key), batch)
  play_out = rollout_fn(game, config.rollout_policy)
  return jax.vmap(lambda k, s: _one(game, k, s, config.rollouts_per_action,
                                    play_out))(keys, states)


def monte_carlo_agent(game: game_base.Game,
                      config: MonteCarloConfig) -> base.Agent:
  def agent(states, key):
    return monte_carlo_search(game, key, states, config=config).action
  return agent
