"""A batched arena: two agents play many games at once, in one compiled loop."""

from __future__ import annotations

from typing import Callable, Optional, Tuple

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

  def both_seats(states, seat_keys):
    gained = jnp.zeros((num_games, 2), jnp.float32)
    for seat, (agent, k) in enumerate(zip(agents, seat_keys)):
      actions = agent(states, k)
      moving = (states.current_player == seat) & ~states.terminated
      stepped = jax.vmap(game.step)(states, actions)
      gained = gained + jnp.where(moving[:, None], stepped.rewards, 0.0)
      states = game_base.select(moving, stepped, states)
    return states, gained

  @jax.jit
  def run(key):
    states, total = play_loop(game, both_seats, key, num_games=num_games,
                              max_rounds=max_moves)
    return GameResults(returns=total, lengths=states.step_count,
                       terminated=states.terminated)

  return run(key)


def play_loop(game: game_base.Game,
              round_fn: Callable[[game_base.State, Tuple[chex.PRNGKey,
                                                         chex.PRNGKey]],
                                 Tuple[game_base.State, chex.Array]],
              key: chex.PRNGKey, *, num_games: int,
              max_rounds: Optional[int] = None
              ) -> Tuple[game_base.State, chex.Array]:
  """The batched game loop under every match: fresh games `[num_games]`
  advanced by `round_fn` until all have ended (or `max_rounds` rounds).

  Traceable, no jit inside (callers jit it, or vmap it over parameters).

  Args:
    game: the game.
    round_fn: `(states [N], (key_a, key_b)) -> (states [N], rewards [N,
      2])`: one round of moves (who moves and how is the caller's), the
      rewards it paid to each seat; terminal games must stay as they are.
    key: PRNG key, consumed: one key for the initial states, then per
      round a fresh pair for `round_fn`.
    num_games: N.
    max_rounds: stop after this many rounds; None plays every game out.

  Returns:
    `(states [N], returns float32 [N, 2])`: the final states and each
    seat's total reward.
  """
  def cond(carry):
    states, _, _, n = carry
    going = ~jnp.all(states.terminated)
    if max_rounds is not None:
      going &= n < max_rounds
    return going

  def body(carry):
    states, key, total, n = carry
    key, *round_keys = jax.random.split(key, 3)
    states, gained = round_fn(states, tuple(round_keys))
    return states, key, total + gained, n + 1

  init_key, loop_key = jax.random.split(key)
  states = jax.vmap(game.init)(jax.random.split(init_key, num_games))
  carry = (states, loop_key, jnp.zeros((num_games, 2), jnp.float32),
           jnp.int32(0))
  states, _, total, _ = jax.lax.while_loop(cond, body, carry)
  return states, total


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
