"""A GTP referee: two engines play a game, our rules engine judges it.

`referee_game(black, white, ...)` sets up both engines (`boardsize`,
`clear_board`, `komi`, optionally `time_settings`), then asks the side to
move for `genmove` and relays the move to the other side with `play`.
Every move is checked by our own rules engine (`games.go`, positional
superko), independently of both engines; the game ends by two passes, a
resignation, the move cap, a lost clock, or a forfeit, and is scored
Tromp-Taylor by our engine (stones on the board all count as alive).

A forfeit is the mover's loss: an illegal or malformed move, a protocol
failure or dead engine, or an engine refusing a move our rules allow (the
refusing side forfeits). With a time control the referee keeps each side's
clock from the wall time of its `genmove`s, sends `time_left` before each,
and a side that overruns it loses on time.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from alphago_jax.games.go import BLACK, WHITE, Go, compiled_rules
from alphago_jax.games.sgf import GameRecord, result_string
from alphago_jax.engines.gtp_client import GTPClient, GTPConnectionError, GTPError
from alphago_jax.games.vertex import vertex_to_action

_NAMES = ("black", "white")


@dataclasses.dataclass(frozen=True)
class RefereeResult:
  """One refereed game.

  Attributes:
    size, komi: the game's board and komi.
    moves: `((colour, action), ...)` as played (BLACK 0, WHITE 1; N² is
      pass).
    winner: BLACK, WHITE, or None for a draw.
    reason: "score" (two passes), "move cap", "resign", "time" or
      "forfeit".
    score: Tromp-Taylor `black - white - komi` of the final board (also
      after a resignation or forfeit, for information).
    detail: what happened, for forfeits and time losses.
    seconds: `[2]` thinking seconds (wall time of `genmove`) per colour.
  """
  size: int
  komi: float
  moves: Tuple[Tuple[int, int], ...]
  winner: Optional[int]
  reason: str
  score: float
  detail: str = ""
  seconds: Tuple[float, float] = (0.0, 0.0)

  @property
  def result(self) -> str:
    """SGF/GTP result text: `B+3.5`, `W+R`, `B+T`, `W+F`, `0`."""
    if self.reason in ("score", "move cap"):
      return result_string(self.score)
    letter = {"resign": "R", "time": "T", "forfeit": "F"}[self.reason]
    return f"{'BW'[self.winner]}+{letter}"

  def record(self, black_name: Optional[str] = None,
             white_name: Optional[str] = None) -> GameRecord:
    """The game as an SGF `GameRecord` (`games.sgf.to_sgf` writes it)."""
    return GameRecord(size=self.size, komi=self.komi, result=self.result,
                      black_name=black_name, white_name=white_name,
                      moves=self.moves, rules="Tromp-Taylor")


@dataclasses.dataclass
class _Clock:
  """One side's Canadian byo-yomi clock."""
  left: float
  stones: int  # 0: main time.
  byo_time: float
  byo_stones: int

  def spend(self, seconds: float) -> bool:
    """Charges one move; False when the time ran out."""
    self.left -= seconds
    if self.stones == 0 and self.left < 0 and self.byo_stones > 0:
      self.left += self.byo_time  # Into byo-yomi; this is its first stone.
      self.stones = self.byo_stones
    if self.left < 0:  # Lost; a side not held to it starts a new period.
      if self.byo_stones > 0:
        self.left, self.stones = self.byo_time, self.byo_stones
      else:
        self.left = 0.0
      return False
    if self.stones > 0:
      self.stones -= 1
      if self.stones == 0:
        self.left, self.stones = self.byo_time, self.byo_stones
    return True


def referee_game(black: GTPClient, white: GTPClient, *, size: int = 9,
                 komi: float = 7.5, max_moves: Optional[int] = None,
                 time_settings: Optional[Tuple[int, int, int]] = None,
                 enforce: Tuple[bool, bool] = (True, True),
                 log: Optional[Callable[[str], None]] = None
                 ) -> RefereeResult:
  """Plays one game between two GTP engines and judges it by our rules.

  Args:
    black, white: the engines (`GTPClient`s; anything with `send`,
      `genmove` and `play` works).
    size, komi: the game.
    max_moves: move cap (default 2·N², our game's); the game is then
      scored on the board.
    time_settings: `(main, byo_yomi_time, byo_yomi_stones)`, whole seconds
      and stones as GTP has them, sent to both engines and enforced (the
      clock itself runs on wall time); None for no limit.
    enforce: per colour, whether overrunning the clock loses (an engine
      under test beside a reference one that ignores clocks).
    log: called with one line per move.

  Returns:
    `RefereeResult`.
  """
  if time_settings is not None and (
      len(time_settings) != 3 or any(
          isinstance(t, bool) or not isinstance(t, int) or t < 0
          for t in time_settings)):
    raise ValueError(f"referee: time_settings must be three integers >= 0 "
                     f"(GTP's), got {time_settings!r}")
  game = Go(size=size, komi=komi, superko=True, max_moves=max_moves)
  step, init, board_score = compiled_rules(game)
  engines = (black, white)
  state = init()
  moves: List[Tuple[int, int]] = []
  seconds = [0.0, 0.0]
  clocks = None

  def finish(winner, reason, detail=""):
    score = float(board_score(state)) - float(komi)
    return RefereeResult(size=size, komi=float(komi), moves=tuple(moves),
                         winner=winner, reason=reason, score=score,
                         detail=detail, seconds=tuple(seconds))

  for colour, engine in enumerate(engines):
    try:
      engine.send(f"boardsize {size}")
      engine.send("clear_board")
      engine.send(f"komi {float(komi)}")
      if time_settings is not None:
        main, byo, stones = time_settings
        engine.send(f"time_settings {main} {byo} {stones}")
    except (GTPError, GTPConnectionError) as e:
      return finish(1 - colour, "forfeit", f"{_NAMES[colour]} refused the "
                    f"game setup: {e}")
  if time_settings is not None:
    main, byo, stones = time_settings
    clocks = [_Clock(main, 0, byo, int(stones)) if main > 0 else
              _Clock(byo, int(stones), byo, int(stones)) for _ in range(2)]

  while not bool(state.terminated):
    mover = int(state.current_player)
    name = _NAMES[mover]
    engine, other = engines[mover], engines[1 - mover]
    try:
      if clocks is not None:
        c = clocks[mover]
        # GTP's whole seconds, rounded down: never more than is left.
        engine.send(f"time_left {name} {max(math.floor(c.left), 0)} "
                    f"{c.stones}")
      start = time.perf_counter()
      answer = engine.genmove(name)
      elapsed = time.perf_counter() - start
    except (GTPError, GTPConnectionError) as e:
      return finish(1 - mover, "forfeit", f"{name} failed to move: {e}")
    seconds[mover] += elapsed
    if clocks is not None and not clocks[mover].spend(elapsed) and enforce[
        mover]:
      return finish(1 - mover, "time", f"{name} overran its clock at move "
                    f"{len(moves) + 1} ({elapsed:.2f} s)")
    if answer == "RESIGN":
      return finish(1 - mover, "resign", f"{name} resigned")
    try:
      action = vertex_to_action(answer, size)
    except ValueError as e:
      return finish(1 - mover, "forfeit", f"{name} answered {answer!r}: {e}")
    if not bool(np.asarray(state.legal_action_mask)[action]):
      return finish(1 - mover, "forfeit", f"{name} played {answer}, illegal "
                    f"under our rules at move {len(moves) + 1}")
    state = step(state, action)
    moves.append((mover, action))
    if log:
      log(f"{len(moves):3d} {name} {answer} ({elapsed:.2f} s)")
    try:  # The last move too: both boards end as ours.
      other.play(name, answer)
    except (GTPError, GTPConnectionError) as e:
      return finish(mover, "forfeit", f"{_NAMES[1 - mover]} refused "
                    f"{name}'s legal move {answer}: {e}")
  score = float(board_score(state)) - float(komi)
  reason = "score" if int(state.passes) >= 2 else "move cap"
  winner = BLACK if score > 0 else WHITE if score < 0 else None
  return finish(winner, reason)


def referee_match(make_engine: Sequence[Callable[[], GTPClient]], *,
                  games: int, size: int = 9, komi: float = 7.5,
                  max_moves: Optional[int] = None,
                  time_settings: Optional[Tuple[int, int, int]] = None,
                  log: Optional[Callable[[str], None]] = None
                  ) -> List[RefereeResult]:
  """`games` refereed games between two engines, colours alternating
  (engine 0 is Black in even games). Each game gets fresh engines from
  `make_engine[i]()`, closed after it.

  Returns:
    One `RefereeResult` per game; engine 0 is Black in results 0, 2, ...
  """
  if len(make_engine) != 2:
    raise ValueError(f"referee_match: needs 2 engine factories, got "
                     f"{len(make_engine)}")
  results = []
  for g in range(games):
    first, second = (0, 1) if g % 2 == 0 else (1, 0)
    a = make_engine[first]()
    try:
      b = make_engine[second]()
      try:
        results.append(referee_game(a, b, size=size, komi=komi,
                                    max_moves=max_moves,
                                    time_settings=time_settings, log=log))
      finally:
        b.close()
    finally:
      a.close()
  return results
