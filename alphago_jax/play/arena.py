"""A batched arena: two agents play many games at once, in one compiled loop."""

from __future__ import annotations

from typing import Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.core.checks import check_int
from alphago_jax.core.stats import wilson_interval
from alphago_jax.games import base as game_base
from alphago_jax.core.types import Agent


@struct.dataclass
class GameResults:
  """Outcomes of a batch of finished games.

  Attributes:
    returns: float32 `[B, 2]`, each player's total reward (+1 / 0 / -1).
    lengths: int32 `[B]`, moves played.
    terminated: bool `[B]`, False only for games stopped by `max_moves`.
  """
  returns: chex.Array
  lengths: chex.Array
  terminated: chex.Array


def play(game: game_base.Game, agents: Tuple[Agent, Agent],
         key: chex.PRNGKey, *, num_games: int,
         max_moves: int | None = None) -> GameResults:
  """Plays `num_games` games, `agents[0]` as player 0, `agents[1]` as 1.

  Each loop iteration gives each seat one half-move in the games where it is
  to move, so strictly alternating games advance every game on every call of
  either agent.

  Args:
    game: the game.
    agents: the two agents, by seat.
    key: PRNG key, consumed.
    num_games: batch size B >= 1.
    max_moves: stop unfinished games after this many loop iterations (each
      iteration is one move per seat); None plays every game to its end.
  """
  check_int("num_games", num_games, 1)
  check_int("max_moves", max_moves, 1, optional=True)

  def cond(carry):
    states, _, _, n = carry
    going = ~jnp.all(states.terminated)
    if max_moves is not None:
      going &= n < max_moves
    return going

  def body(carry):
    states, key, total, n = carry
    key, *seat_keys = jax.random.split(key, 3)
    for seat, (agent, k) in enumerate(zip(agents, seat_keys)):
      actions = agent(states, k)
      moving = (states.current_player == seat) & ~states.terminated
      stepped = jax.vmap(game.step)(states, actions)
      total = total + jnp.where(moving[:, None], stepped.rewards, 0.0)
      states = game_base.select(moving, stepped, states)
    return states, key, total, n + 1

  @jax.jit
  def run(key):
    init_key, loop_key = jax.random.split(key)
    states = jax.vmap(game.init)(jax.random.split(init_key, num_games))
    carry = (states, loop_key, jnp.zeros((num_games, 2), jnp.float32),
             jnp.int32(0))
    states, _, total, _ = jax.lax.while_loop(cond, body, carry)
    return GameResults(returns=total, lengths=states.step_count,
                       terminated=states.terminated)

  return run(key)


OUTCOMES = ("wins", "draws", "losses")


class Tally:
  """Rates and 95% Wilson intervals over `wins`, `draws` and `losses`,
  for any record that has those three counts."""
  wins: int
  draws: int
  losses: int

  @property
  def games(self) -> int:
    return self.wins + self.draws + self.losses

  def rate(self, outcome: str) -> float:
    return self._count(outcome) / self.games

  def interval(self, outcome: str) -> Tuple[float, float]:
    """95% Wilson interval of the rate of "wins", "draws" or "losses"."""
    return wilson_interval(self._count(outcome), self.games)

  def _count(self, outcome: str) -> int:
    if outcome not in OUTCOMES:
      raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    return getattr(self, outcome)


@struct.dataclass
class Record(Tally):
  """Win/draw/loss counts of one side."""
  wins: int
  draws: int
  losses: int


def tally(returns) -> Record:
  """The record of one side's returns `[N]` (> 0 won, 0 drawn, < 0 lost)."""
  r = np.asarray(jax.device_get(returns))
  return Record(wins=int((r > 0).sum()), draws=int((r == 0).sum()),
                losses=int((r < 0).sum()))


def record(results: GameResults, player: int = 0) -> Record:
  """Win/draw/loss of `player` over finished games (unfinished: draws)."""
  return tally(results.returns[:, player])
