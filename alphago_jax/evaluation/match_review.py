"""Where a game against GNU Go was decided: before GNU Go's first pass, or
while the board was played out after it.

GNU Go passes once it judges the game over; our matches then go on until
both pass, and are scored Tromp-Taylor, so dead stones must really be
captured. A player without search that plays on by a fixed move rule
could throw a won game away there. `review_game` replays a record into
GNU Go up to its first pass (after the random opening plies, which GNU Go
did not choose) and asks its `final_score`, which judges dead stones: if
that count equals the final result, the game was decided in play; if it
names the other winner, it was decided after GNU Go's pass.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from typing import Dict, Iterable, List, Optional, Sequence

from alphago_jax.games import sgf as sgf_lib
from alphago_jax.games.go import Go
from alphago_jax.gtp.gnugo_player import GnuGoPlayer

GNUGO_NAME = "GNU Go"


@dataclasses.dataclass(frozen=True)
class Review:
  """One game's review.

  Attributes:
    source: the record's file.
    gnugo_colour: 0 when GNU Go had Black, 1 for White.
    plies: moves in the record (passes included).
    winner: 0 Black, 1 White, None for a draw.
    result: the final `black - white - komi`, None for a resignation.
    first_pass: the ply (0-based) of GNU Go's first pass after the
      opening plies, None when it never passed.
    count_at_pass: GNU Go's `final_score` right after that pass, as
      `black - white - komi`; None when it never passed.
  """
  source: str
  gnugo_colour: int
  plies: int
  winner: Optional[int]
  result: Optional[float]
  first_pass: Optional[int]
  count_at_pass: Optional[float]

  @property
  def count_is_result(self) -> bool:
    """GNU Go's count at its first pass equals the final score."""
    return self.count_at_pass is not None and self.count_at_pass == (
        self.result)

  @property
  def decided_after_pass(self) -> bool:
    """The leader by GNU Go's count at its first pass did not win."""
    if self.count_at_pass is None or self.count_at_pass == 0:
      return False
    leader = 0 if self.count_at_pass > 0 else 1
    return leader != self.winner


def _gnugo_colour(record: sgf_lib.GameRecord) -> int:
  names = [record.black_name or "", record.white_name or ""]
  sides = [i for i, n in enumerate(names) if GNUGO_NAME in n]
  if len(sides) != 1:
    raise ValueError(f"{record.source}: expected GNU Go on exactly one side "
                     f"(a player named {GNUGO_NAME!r}), got PB "
                     f"{names[0]!r}, PW {names[1]!r}")
  return sides[0]


def first_pass(record: sgf_lib.GameRecord, *, opening_plies: int = 0
               ) -> Optional[int]:
  """The ply (0-based) of GNU Go's first pass after `opening_plies`, or
  None when it never passed there."""
  colour = _gnugo_colour(record)
  return next((i for i, (c, a) in enumerate(record.moves)
               if i >= opening_plies and c == colour
               and a == record.pass_action), None)


def review_game(record: sgf_lib.GameRecord, *, opening_plies: int = 0,
                level: int = 10, seed: int = 0) -> Review:
  """Reviews one finished game of a match against GNU Go.

  Args:
    record: the game (no setup stones, Black first, strictly alternating).
    opening_plies: plies played at random by the match (GNU Go's passes
      among them are not its own).
    level, seed: the GNU Go that counts (its count reads dead stones).

  Raises:
    ValueError: no result, GNU Go on neither or both sides, setup stones
      or moves that do not alternate; the message names the record.
  """
  winner, result = record.winner, sgf_lib.result_score(record.result)
  if winner is None and result is None:
    raise ValueError(f"{record.source}: no result ({record.result!r})")
  if record.setup_black or record.setup_white:
    raise ValueError(f"{record.source}: setup stones; a match game starts "
                     f"on the empty board")
  colours = [c for c, _ in record.moves]
  if colours != [i % 2 for i in range(len(colours))]:
    raise ValueError(f"{record.source}: moves do not alternate from Black")
  gnugo_colour = _gnugo_colour(record)
  game = Go(size=record.size, komi=record.komi)
  actions = [a for _, a in record.moves]
  first = first_pass(record, opening_plies=opening_plies)
  count = None
  if first is not None:
    with GnuGoPlayer(game, level, seed=seed) as player:
      player.replay(actions[:first + 1])
      count = player.final_score()
  return Review(source=str(record.source), gnugo_colour=gnugo_colour,
                plies=len(actions), winner=winner, result=result,
                first_pass=first, count_at_pass=count)


def review_games(records: Iterable[sgf_lib.GameRecord], *,
                 opening_plies: int = 0, level: int = 10, seed: int = 0,
                 workers: int = 2) -> List[Review]:
  """`review_game` of each record, `workers` GNU Go processes at once, in
  the records' order."""
  records = list(records)
  if workers < 1:
    raise ValueError(f"review_games: workers must be >= 1, got {workers}")
  with concurrent.futures.ThreadPoolExecutor(workers) as pool:
    return list(pool.map(
        lambda r: review_game(r, opening_plies=opening_plies, level=level,
                              seed=seed), records))


def summarize(reviews: Sequence[Review]) -> Dict[str, int]:
  """Counts over reviews, from the side of GNU Go's opponent: `games`,
  `won`, `gnugo_passed` (GNU Go passed after the opening),
  `count_is_result` (its count then equals the final score),
  `lost_when_ahead` / `won_when_behind` (the count named GNU Go's
  opponent / GNU Go the leader, and the other side won)."""
  passed = [r for r in reviews if r.first_pass is not None]
  flips = [r for r in passed if r.decided_after_pass]
  return {
      "games": len(reviews),
      "won": sum(r.winner is not None and r.winner != r.gnugo_colour
                 for r in reviews),
      "gnugo_passed": len(passed),
      "count_is_result": sum(r.count_is_result for r in passed),
      "lost_when_ahead": sum(r.winner == r.gnugo_colour for r in flips),
      "won_when_behind": sum(r.winner is not None
                             and r.winner != r.gnugo_colour
                             for r in flips),
  }
