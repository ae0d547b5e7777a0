"""Types shared by every search and agent."""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
from flax import struct

from alphago_jax.core.checks import check_int
from alphago_jax.games import base as game_base

from alphago_jax.core.types import Agent  # noqa: F401  (re-exported)
from alphago_jax.core.types import AnalysedAgent  # noqa: F401  (re-exported)
from alphago_jax.core.types import CarryingAgentFn


@dataclasses.dataclass(frozen=True)
class CarryingAgent:
  """An agent that carries per-game state between its moves (a search tree
  to reuse), for the host-stepped matches (`evaluation.gnugo_match`).

  Attributes:
    fn: `(states [B], key, carry [B, ...]) -> (actions [B], carry [B,
      ...])`; `carry=None` means nothing carried for any game. The match
      keeps each game's carry and gives it back on that game's next move
      only; a game's first carry is all zeros, shaped as what `fn` returns
      given None (`jax.eval_shape`), which `fn` must also read as nothing
      carried. A `jax.tree_util.Partial` compiles with its bound arrays as
      arguments.
    analysed: `fn` returns `((actions, winrates, visits), carry)`: with
      its actions, what `AnalysedAgent.analyse` returns (the search's
      winrate in [0, 1] for the mover and its root visits), for the game
      records.
  """
  fn: CarryingAgentFn
  analysed: bool = False


@struct.dataclass
class SearchOutput:
  """What a search returns for a batch of root states.

  Attributes:
    action: int32 `[B]`, the move chosen.
    visit_counts: int32 `[B, num_actions]`, root visit counts (for pure
      Monte Carlo, the number of rollouts per action).
    win_rates: float32 `[B, num_actions]`, the mean result W/N in [0, 1] of
      each root action from the mover's point of view (draw = 0.5); 0 for
      actions never tried.
  """
  action: chex.Array
  visit_counts: chex.Array
  win_rates: chex.Array


def argmax_random_tiebreak(key: chex.PRNGKey, scores: chex.Array,
                           mask: chex.Array) -> chex.Array:
  """Index of the largest `scores` among `mask`, ties broken uniformly.

  Args:
    key: PRNG key.
    scores: float `[N]`.
    mask: bool `[N]`; if all False, the tie is broken over all indices.

  Returns:
    int32 `[]`.
  """
  scores = jnp.where(mask, scores, -jnp.inf)
  best = scores == jnp.max(scores)
  noise = jax.random.uniform(key, scores.shape)
  return jnp.argmax(jnp.where(best, noise, -1.0)).astype(jnp.int32)


def check_num_simulations(num_simulations) -> None:
  check_int("num_simulations", num_simulations, 1)


def check_batch(states: game_base.State) -> int:
  """Returns the batch size of `states`, rejecting unbatched or empty input."""
  shape = jnp.shape(states.current_player)
  if len(shape) != 1:
    raise ValueError(
        "search takes a batch of states with a leading batch axis; got "
        f"current_player of shape {shape} (use jax.tree.map(lambda x: x[None], "
        "state) for a single game)")
  if shape[0] == 0:
    raise ValueError("batch size must be at least 1, got 0")
  return shape[0]
