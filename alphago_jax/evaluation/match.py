"""A colour-alternated match between two agents, with intervals and Elo."""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

import chex
import jax

from alphago_jax.evaluation import elo
from alphago_jax.play.arena import (OUTCOMES, GameResults, Record, Tally,
                                    play)
from alphago_jax.play.arena import record as record_of
from alphago_jax.games import base as game_base
from alphago_jax.search.base import Agent


@dataclasses.dataclass(frozen=True)
class MatchResult(Tally):
  """Results of `agent` against `opponent`, from `agent`'s side.

  Attributes:
    as_first: `agent`'s record when it moved first (player 0).
    as_second: its record when it moved second.
    game_results: with `match(..., record=True)`, the `GameResults` (moves and
      search statistics) of the games with `agent` first, then second;
      else None.
  """
  as_first: Record
  as_second: Record
  game_results: Optional[Tuple[GameResults, GameResults]] = dataclasses.field(
      default=None, compare=False, repr=False)

  @property
  def wins(self) -> int:
    return self.as_first.wins + self.as_second.wins

  @property
  def draws(self) -> int:
    return self.as_first.draws + self.as_second.draws

  @property
  def losses(self) -> int:
    return self.as_first.losses + self.as_second.losses

  @property
  def score(self) -> float:
    return elo.score(self.wins, self.draws, self.losses)

  @property
  def elo(self) -> float:
    """Elo difference of `agent` over `opponent` (+-inf if one never
    scored)."""
    return elo.elo_difference(self.wins, self.draws, self.losses)

  @property
  def elo_interval(self) -> Tuple[float, float]:
    return elo.elo_interval(self.wins, self.draws, self.losses)

  def summary(self) -> str:
    parts = []
    for o in OUTCOMES:
      lo, hi = self.interval(o)
      parts.append(f"{o} {100 * self.rate(o):.1f}% [{100 * lo:.1f}, "
                   f"{100 * hi:.1f}]")
    lo, hi = self.elo_interval
    return (f"{self.games} games: " + ", ".join(parts) +
            f"; Elo {self.elo:+.0f} [{lo:+.0f}, {hi:+.0f}]")


def match(game: game_base.Game, agent: Agent, opponent: Agent,
          key: chex.PRNGKey, *, games_per_colour: int,
          max_moves: int | None = None, record: bool = False) -> MatchResult:
  """Plays `games_per_colour` games with `agent` first, as many second.

  Both halves are batched games of `arena.play`, one compiled loop each;
  `record` keeps their moves and search statistics (`MatchResult.game_results`)
  without changing them.
  """
  first_key, second_key = jax.random.split(key)
  first = play(game, (agent, opponent), first_key,
               num_games=games_per_colour, max_moves=max_moves,
               record=record)
  second = play(game, (opponent, agent), second_key,
                num_games=games_per_colour, max_moves=max_moves,
                record=record)
  return MatchResult(as_first=record_of(first, 0),
                     as_second=record_of(second, 1),
                     game_results=(first, second) if record else None)
