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

`lost_atari_run` looks for one way games are lost in play, a ladder run
out that fails: the player's own consecutive moves each extend the same
chain out of atari to exactly two liberties (the prey's move in a ladder,
which the hunter answers with atari again), and the chain's last stone is
not on the board at the end of the game. `summarize` counts the games
with a lost run of `LADDER_RUN` moves or more, which is a ladder read
wrong rather than a local fight.

`into_ladders` reads each of a player's atari extensions as AlphaGo's
ladder-escape plane does (`data.ladders`): how many of them ran into a
ladder that works, which is what that plane would have told the player.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np
from sgfmill import boards as sgfmill_boards

from alphago_jax.data import ladders as ladders_lib
from alphago_jax.data import positions as positions_lib
from alphago_jax.games import sgf as sgf_lib
from alphago_jax.games.go import Go
from alphago_jax.engines.gnugo_player import GnuGoPlayer

GNUGO_NAME = "GNU Go"
# Lost atari runs at least this long count as ladders run out that failed.
LADDER_RUN = 5


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
    lost_atari_run: GNU Go's opponent's longest atari run whose chain was
      captured (`lost_atari_run`), 0 when none.
    gnugo_lost_atari_run: the same for GNU Go.
    atari_extensions, into_ladders: GNU Go's opponent's atari extensions
      and those of them into a working ladder (`into_ladders`).
    gnugo_atari_extensions, gnugo_into_ladders: the same for GNU Go.
  """
  source: str
  gnugo_colour: int
  plies: int
  winner: Optional[int]
  result: Optional[float]
  first_pass: Optional[int]
  count_at_pass: Optional[float]
  lost_atari_run: int = 0
  gnugo_lost_atari_run: int = 0
  atari_extensions: int = 0
  into_ladders: int = 0
  gnugo_atari_extensions: int = 0
  gnugo_into_ladders: int = 0

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


def _chain(board: sgfmill_boards.Board, point: Tuple[int, int]
           ) -> Tuple[Set[Tuple[int, int]], Set[Tuple[int, int]]]:
  """The stones of the chain at `point` and its liberties."""
  colour, size = board.get(*point), board.side
  stones, liberties, todo = {point}, set(), [point]
  while todo:
    r, c = todo.pop()
    for q in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
      if 0 <= q[0] < size and 0 <= q[1] < size:
        v = board.get(*q)
        if v is None:
          liberties.add(q)
        elif v == colour and q not in stones:
          stones.add(q)
          todo.append(q)
  return stones, liberties


def lost_atari_run(record: sgf_lib.GameRecord, colour: int) -> int:
  """The longest run of `colour`'s atari extensions whose chain was lost.

  An atari extension is a move next to the player's own chain in atari (one
  liberty) after which the joined chain has exactly two liberties. A run
  is a sequence of the player's consecutive moves that are all atari
  extensions of the same chain (the opponent's moves in between do not
  break it); it is lost when its last stone is not the player's at the end
  of the record. A ladder run out that fails makes a long lost run.

  Args:
    record: a game from the empty board (setup stones are refused).
    colour: 0 Black, 1 White.

  Returns:
    The length in moves of the longest lost run, 0 when there is none.
  """
  if record.setup_black or record.setup_white:
    raise ValueError(f"{record.source}: setup stones; a match game starts "
                     f"on the empty board")
  n = record.size
  board = sgfmill_boards.Board(n)
  runs: List[Tuple[int, Tuple[int, int]]] = []  # (length, last stone)
  run, last = 0, None
  for c, a in record.moves:
    if a == record.pass_action:
      if c == colour and run:
        runs.append((run, last))
        run = 0
      continue
    point = divmod(a, n)
    name = "bw"[c]
    in_atari = set()
    if c == colour:
      for q in ((point[0] - 1, point[1]), (point[0] + 1, point[1]),
                (point[0], point[1] - 1), (point[0], point[1] + 1)):
        if (0 <= q[0] < n and 0 <= q[1] < n and board.get(*q) == name
            and len(_chain(board, q)[1]) == 1):
          in_atari.add(q)
    try:
      board.play(point[0], point[1], name)
    except ValueError as e:
      raise ValueError(f"{record.source}: move {a} of colour {c} is on an "
                       f"occupied point") from e
    if c != colour:
      continue
    extension = same_chain = False
    if in_atari and board.get(*point) == name:
      stones, liberties = _chain(board, point)
      extension = len(liberties) == 2
      same_chain = run > 0 and last in stones
    if extension and same_chain:
      run += 1
    else:
      if run:
        runs.append((run, last))
      run = 1 if extension else 0
    last = point if extension else None
  if run:
    runs.append((run, last))
  return max((k for k, p in runs if board.get(*p) != "bw"[colour]),
             default=0)


def into_ladders(record: sgf_lib.GameRecord, colour: int
                 ) -> Tuple[int, int]:
  """`colour`'s atari extensions (moves next to its own chain in atari
  that leave the joined chain exactly two liberties, as in
  `lost_atari_run`) and how many of them ran into a ladder that works: not
  on the ladder-escape plane (`data.ladders`, the reading of
  `go_features.ladder_moves`) of the position they were played in.

  Args:
    record: a game from the empty board (setup stones are refused).
    colour: 0 Black, 1 White.

  Raises:
    ValueError: setup stones, or a move the engine rejects; the message
      names the record.
  """
  return ladder_counts(record)[colour]


def ladder_counts(record: sgf_lib.GameRecord
                  ) -> Tuple[Tuple[int, int], Tuple[int, int]]:
  """`into_ladders` of both colours, `(Black's, White's)`, from one
  replay and one reading of the record's ladders (the reading is most of
  the cost of a review)."""
  if record.setup_black or record.setup_white:
    raise ValueError(f"{record.source}: setup stones; a match game starts "
                     f"on the empty board")
  try:
    arrays = positions_lib.replay_positions(record)
  except sgf_lib.SGFError as e:
    raise ValueError(str(e)) from None
  planes = ladders_lib.ladder_planes(arrays["stones"], arrays["ko"],
                                     arrays["to_play"], record.size,
                                     with_read=True)
  action = arrays["action"].astype(np.int64)

  def counts(colour):
    mine = np.flatnonzero((arrays["to_play"] == colour)
                          & (action < record.size ** 2))
    read = planes[mine, 2, action[mine]]
    escaped = planes[mine, 1, action[mine]]
    return int(read.sum()), int((read & ~escaped).sum())

  return counts(0), counts(1)


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
  ladders = ladder_counts(record)
  extensions, into = ladders[1 - gnugo_colour]
  gnugo_extensions, gnugo_into = ladders[gnugo_colour]
  return Review(source=str(record.source), gnugo_colour=gnugo_colour,
                plies=len(actions), winner=winner, result=result,
                first_pass=first, count_at_pass=count,
                lost_atari_run=lost_atari_run(record, 1 - gnugo_colour),
                gnugo_lost_atari_run=lost_atari_run(record, gnugo_colour),
                atari_extensions=extensions, into_ladders=into,
                gnugo_atari_extensions=gnugo_extensions,
                gnugo_into_ladders=gnugo_into)


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
  opponent / GNU Go the leader, and the other side won),
  `lost_with_ladder_run` (games it lost with a lost atari run of
  `LADDER_RUN` moves or more), `gnugo_ladder_runs` (games in which GNU
  Go had such a run), `atari_extensions` / `into_ladders` (summed over
  the games), `games_into_ladders` (games with at least one move into a
  working ladder) and the same three for GNU Go (`gnugo_...`)."""
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
      "lost_with_ladder_run": sum(r.winner == r.gnugo_colour
                                  and r.lost_atari_run >= LADDER_RUN
                                  for r in reviews),
      "gnugo_ladder_runs": sum(r.gnugo_lost_atari_run >= LADDER_RUN
                               for r in reviews),
      "atari_extensions": sum(r.atari_extensions for r in reviews),
      "into_ladders": sum(r.into_ladders for r in reviews),
      "games_into_ladders": sum(r.into_ladders > 0 for r in reviews),
      "gnugo_atari_extensions": sum(r.gnugo_atari_extensions
                                    for r in reviews),
      "gnugo_into_ladders": sum(r.gnugo_into_ladders for r in reviews),
      "gnugo_games_into_ladders": sum(r.gnugo_into_ladders > 0
                                      for r in reviews),
  }
