"""Our players as a GTP (version 2) engine on stdin/stdout.

    python -m alphago_jax.gtp                      # the default presets
    python -m alphago_jax.gtp --preset strongest-9x9

Three layers, each testable alone:

* `GTPEngine`: the protocol. It parses a command line (ids, comments,
  control characters as GTP 2 says), dispatches it, and formats the answer
  (`=id text` or `?id message`, then an empty line). It owns the position (a
  stack of our `Go` states under positional superko, for `undo`) and the
  clock, and asks a *player* only "your move here, within this many
  seconds". Nothing a controller sends makes it raise: bad input is a `?`
  answer, and an unexpected error inside a command is `? internal error`
  with the traceback on stderr.
* a player (`Player` below; `gtp.players` has the network-backed ones,
  `gtp.presets` names them).
* `serve` / `main`: the stdin/stdout loop and the command line.

Commands: protocol_version, name, version, known_command, list_commands,
boardsize, clear_board, komi, play, genmove, undo, showboard, final_score
(Tromp-Taylor on the current board, as `B+3.5`), time_settings, time_left,
quit; for GUIs and tournaments:

* `final_status_list alive|dead|seki`: the stones of that status, one
  chain a line (`gtp.status`: dead only where provable, inside the
  opponent's pass-alive territory; seki by unfillable shared liberties).
* `fixed_handicap N`, `place_free_handicap N` (the answer: the vertices
  placed), `set_free_handicap V...`: Black setup stones on an empty board
  (`gtp.handicap`), White to move; not moves, so `undo` keeps them.
* `loadsgf FILE [MOVE_NUMBER]` (GNU Go's: board size, komi, setup stones
  and the main line up to before move MOVE_NUMBER; answers the colour to
  move) and `printsgf [FILE]` (the game as SGF: the answer, or the file).
* Leela Zero's `lz-analyze` / `lz-genmove_analyze` and KataGo's
  `kata-analyze` / `kata-genmove_analyze` (`gtp.analysis`: `info move D4
  visits 12 winrate 5432 prior 1234 order 0 pv D4 C3`, or KataGo's `...
  winrate 0.543200 prior 0.123400 lcb 0.510000 ...`; `minmoves`,
  `maxmoves`, and `avoid` / `allow` at the root).

Rules as our engine's (`games.go`): Tromp-Taylor with positional superko,
suicide illegal. A move for the side *not* to move (GTP allows it, e.g. for
handicap stones) is preceded by a pass of the side to move: the position is
the same, only the move count differs. After two passes the game is over:
`play` answers `? illegal move` and `genmove` passes. The move cap is
`--max-moves` (4·N² by default), far beyond real games.

Time: `time_settings main byo_time byo_stones` (Canadian byo-yomi; byo_time
> 0 with 0 stones means no limit, GTP's convention) and `time_left colour
seconds stones`. Without them the player thinks with its full budget. With
them each move gets a share of the time left (main time over the moves
likely left, plus the byo-yomi period over its stones), less a reserve, and
the player picks the search size it predicts fits; the engine keeps its own
clock between `time_left` updates.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import queue
import re
import sys
import threading
import time
import traceback
from typing import (Callable, Dict, Iterator, List, Optional, Protocol,
                    Sequence, TextIO, Tuple)

import jax
import numpy as np

from alphago_jax import __version__
from alphago_jax.games import vertex as vertex_codec
from alphago_jax.games import sgf
from alphago_jax.games.go import BLACK, WHITE, Go, GoState, compiled_rules
from alphago_jax.games.sgf import result_string
from alphago_jax.gtp import analysis, handicap, status
from alphago_jax.zoo import presets
from alphago_jax.zoo.players import Decision

ENGINE_NAME = "alphago-jax"
PROTOCOL_VERSION = "2"
# The board a default engine starts on, before any `boardsize`.
DEFAULT_BOARD_SIZE = 9
MOVE_CAP_FACTOR = 4  # Default move cap: 4·N², beyond any real game.
# Time management: the share of a move's allotted time it may plan to use
# (searches vary by some 10% and a busy machine slows them more), and a
# fixed reserve for the pipe and the engine's own work (Leela Zero and
# KataGo call it the lag buffer).
TIME_SAFETY = 0.6
LAG_BUFFER_S = 0.1
MIN_MOVES_LEFT = 8
GTP_INT_MAX = 2**31 - 1  # GTP 2's `int`: 0 <= x <= 2^31 - 1.

_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
_ID = re.compile(r"[0-9]+")  # ASCII digits only (str.isdigit takes "²").


class Player(Protocol):
  """What the engine needs from a player (see `zoo.players`).

  Attributes:
    name: shown by `version`.
    game: the Go game the player's network plays (board size, history
      planes); the engine plays `game` with its own komi and move cap.
  """
  name: str
  game: Go

  def prepare(self, game: Go, *, timed: bool = False) -> None:
    """Compiles for `game` (called outside timed moves)."""

  def genmove(self, game: Go, state: GoState, key, *,
              seconds: Optional[float] = None) -> Decision:
    """The move for the side to move, within `seconds` (None: no limit)."""

  def analyses(self, game: Go, state: GoState, key) -> Iterator[Decision]:
    """Ever deeper analyses of `state` (finite)."""


class GTPFailure(Exception):
  """A command failed; the message is the GTP error text."""


def _colour(token: str) -> int:
  c = _COLOURS.get(token.lower())
  if c is None:
    raise GTPFailure(f"syntax error (invalid color {token!r})")
  return c


def _number(token: str, what: str, *, integer: bool = False,
            minimum: Optional[float] = None) -> float:
  try:
    value = int(token) if integer else float(token)
  except ValueError:
    raise GTPFailure(f"syntax error ({what} {token!r} is not a"
                     f"{'n integer' if integer else ' number'})") from None
  # GTP's integers are 31-bit (and one too big for a float would make
  # `math.isfinite` raise).
  in_range = abs(value) <= GTP_INT_MAX if integer else math.isfinite(value)
  if not in_range or (minimum is not None and value < minimum):
    raise GTPFailure(f"syntax error ({what} {token!r} out of range)")
  return value


def _args(args: Sequence[str], count: int) -> None:
  if len(args) != count:
    raise GTPFailure(f"syntax error (expected {count} argument"
                     f"{'s' if count != 1 else ''}, got {len(args)})")


def preprocess(line: str) -> str:
  """GTP 2 §2.1: control characters other than tab and newline removed,
  `#` comments cut, tabs as spaces; returns the command text stripped of
  spaces and the newline (empty for a line to ignore). Only those count
  as white space: a line of other Unicode spaces is a command, and gets
  an answer a controller waits for."""
  line = "".join(ch for ch in line if ch in "\t\n" or (
      ord(ch) >= 32 and ord(ch) != 127))
  line = line.split("#", 1)[0].replace("\t", " ")
  return line.strip(" \n")


def words_of(text: str) -> List[str]:
  """The words of a preprocessed line: separated by spaces alone."""
  return [w for w in text.split(" ") if w]


def check_version(text: str) -> str:
  """`text` stripped, if it can be a `version` answer (one line of
  printable text, no `#`: GTP would cut it there); else ValueError."""
  if (not isinstance(text, str) or not text.strip() or "\n" in text.strip()
      or preprocess(text) != text.strip()):
    raise ValueError(f"gtp: a version must be one line of printable text "
                     f"without '#', got {text!r}")
  return text.strip()


# -- The clock ----------------------------------------------------------------

@dataclasses.dataclass
class Clock:
  """Canadian byo-yomi as GTP describes it; `limited` is False until
  `time_settings` sets a limit.

  `left[c]` is colour c's seconds left in its current period and
  `stones[c]` the stones to play in it (0: main time).
  """
  main: float = 0.0
  byo_time: float = 0.0
  byo_stones: int = 0
  limited: bool = False
  safety: float = TIME_SAFETY
  lag_buffer: float = LAG_BUFFER_S
  left: List[float] = dataclasses.field(default_factory=lambda: [0.0, 0.0])
  stones: List[int] = dataclasses.field(default_factory=lambda: [0, 0])

  def settings(self, main: float, byo_time: float, byo_stones: int) -> None:
    self.main, self.byo_time, self.byo_stones = main, byo_time, byo_stones
    # GTP: byo-yomi time with no stones means no time limit.
    self.limited = not (byo_time > 0 and byo_stones == 0)
    for c in (BLACK, WHITE):
      if main > 0 or byo_stones == 0:
        self.left[c], self.stones[c] = main, 0
      else:
        self.left[c], self.stones[c] = byo_time, byo_stones

  def update(self, colour: int, seconds: float, stones: int) -> None:
    self.left[colour], self.stones[colour] = seconds, stones

  def budget(self, colour: int, empty_points: int) -> Optional[float]:
    """Seconds the next move of `colour` may think (None: no limit)."""
    if not self.limited:
      return None
    left, stones = self.left[colour], self.stones[colour]
    if stones > 0:
      share = left / stones
    else:
      moves = max(MIN_MOVES_LEFT, empty_points / 3)
      share = left / moves
      if self.byo_stones > 0:  # Byo-yomi follows: each period is renewed.
        share += self.byo_time / self.byo_stones
    return max(0.0, self.safety * share - self.lag_buffer)

  def charge(self, colour: int, seconds: float) -> None:
    """Counts `seconds` of thought against `colour` (our own clock, kept
    until the next `time_left`)."""
    if not self.limited:
      return
    self.left[colour] -= seconds
    if self.stones[colour] > 0:
      self.stones[colour] -= 1
      if self.stones[colour] == 0:  # A new byo-yomi period.
        self.left[colour], self.stones[colour] = self.byo_time, self.byo_stones
    elif self.left[colour] <= 0 and self.byo_stones > 0:
      # Main time spent: into byo-yomi; this move was its first stone.
      self.left[colour] += self.byo_time
      self.stones[colour] = self.byo_stones - 1
      if self.stones[colour] == 0:
        self.left[colour], self.stones[colour] = self.byo_time, self.byo_stones


# -- The engine -----------------------------------------------------------------

class GTPEngine:
  """The GTP protocol around a player.

  Args:
    player: a `Player`.
    komi: the starting komi.
    max_moves: the move cap (None: `MOVE_CAP_FACTOR`·N²).
    seed: seed of the PRNG keys given to the player.
    time_safety, lag_buffer: a timed move plans to use `time_safety` of
      its share of the clock, less `lag_buffer` seconds.
    prepare: compile the player when the board or komi changes (off only
      for fakes in tests).
    version: what `version` answers; None: the package version and the
      player's name. Lizzie 0.7 reads the answer as a Leela Zero version
      and freezes on one below 0.15 (see `--gtp-version`).
    log: where diagnostics go (default stderr).
    player_for_size: `size -> player` for a `boardsize` the player does not
      play (ValueError: none plays it); None: such a size is refused.
  """

  def __init__(self, player: Player, *, komi: float = 7.5,
               max_moves: Optional[int] = None, seed: int = 0,
               time_safety: float = TIME_SAFETY,
               lag_buffer: float = LAG_BUFFER_S, prepare: bool = True,
               version: Optional[str] = None,
               log: Optional[Callable[[str], None]] = None,
               player_for_size: Optional[Callable[[int], Player]] = None):
    if not isinstance(getattr(player, "game", None), Go):
      raise ValueError(f"gtp: the player needs a Go `game`, got {player!r}")
    self.player = player
    self._player_for_size = player_for_size
    self.max_moves = max_moves
    self.key = jax.random.key(seed)
    self._prepare = prepare
    self.version = None if version is None else check_version(version)
    self._log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    if not 0 < time_safety <= 1 or not 0 <= lag_buffer < math.inf:
      raise ValueError(f"gtp: time_safety must be in (0, 1] and lag_buffer "
                       f">= 0, got {time_safety!r} and {lag_buffer!r}")
    self.clock = Clock(safety=time_safety, lag_buffer=lag_buffer)
    self.quit = False
    self.commands: Dict[str, Callable[[List[str]], str]] = {
        "protocol_version": lambda a: self._no_args(a, PROTOCOL_VERSION),
        "name": lambda a: self._no_args(a, ENGINE_NAME),
        "version": self.cmd_version,
        "known_command": self.cmd_known_command,
        "list_commands": self.cmd_list_commands,
        "boardsize": self.cmd_boardsize,
        "clear_board": self.cmd_clear_board,
        "komi": self.cmd_komi,
        "play": self.cmd_play,
        "genmove": self.cmd_genmove,
        "undo": self.cmd_undo,
        "showboard": self.cmd_showboard,
        "final_score": self.cmd_final_score,
        "time_settings": self.cmd_time_settings,
        "time_left": self.cmd_time_left,
        "quit": self.cmd_quit,
        "final_status_list": self.cmd_final_status_list,
        "fixed_handicap": self.cmd_fixed_handicap,
        "place_free_handicap": self.cmd_place_free_handicap,
        "set_free_handicap": self.cmd_set_free_handicap,
        "loadsgf": self.cmd_loadsgf,
        "printsgf": self.cmd_printsgf,
        # Streaming: see `execute`.
        "lz-analyze": None,
        "lz-genmove_analyze": None,
        "kata-analyze": None,
        "kata-genmove_analyze": None,
    }
    self._new_game(player.game.size, float(komi))

  # -- Position ---------------------------------------------------------------

  def _make_game(self, size: int, komi: float) -> Go:
    cap = self.max_moves or MOVE_CAP_FACTOR * size * size
    return dataclasses.replace(self.player.game, size=size, komi=komi,
                               superko=True, max_moves=cap)

  def _new_game(self, size: int, komi: float) -> None:
    self.game = self._make_game(size, komi)
    self._ready()
    self._set_position(self._step_fn()[1]())

  def _set_position(self, initial: GoState, handicap_stones: int = 0
                    ) -> None:
    """Starts the history at `initial` (the empty board, or setup
    stones: handicap, a loaded record's AB/AW), which `undo` never
    removes."""
    self.states: List[GoState] = [initial]
    self.actions: List[int] = []  # states[i + 1] = step(states[i], a[i]).
    self.marks: List[int] = []  # len(states) before each move, for undo.
    self.handicap = handicap_stones

  def _ready(self) -> None:
    """Compiles what a move needs now, so no timed move pays for it."""
    if self._prepare:
      step, init = self._step_fn()
      step(init(), self.game.pass_action)
      jax.random.split(jax.random.key(0))  # Its first call compiles.
      self.player.prepare(self.game, timed=self.clock.limited)

  def _step_fn(self) -> Tuple[Callable, Callable]:
    return compiled_rules(self.game)[:2]

  @property
  def state(self) -> GoState:
    return self.states[-1]

  def _next_key(self):
    self.key, sub = jax.random.split(self.key)
    return sub

  def _for_colour(self, colour: int) -> Optional[List[GoState]]:
    """The states to push so that `colour` is to move: none, or a pass of
    the side to move. None when that pass would end the game."""
    state = self.state
    if int(state.current_player) == colour:
      return []
    if bool(state.terminated) or int(state.passes) >= 1:
      return None
    passed = self._step_fn()[0](state, self.game.pass_action)
    return None if bool(passed.terminated) else [passed]

  def _play(self, colour: int, action: int) -> bool:
    """Plays `action` for `colour` if legal; False (nothing changed) if
    not."""
    if bool(self.state.terminated):
      return False
    pushed = self._for_colour(colour)
    if pushed is None:
      return False
    before = pushed[-1] if pushed else self.state
    if not bool(np.asarray(before.legal_action_mask)[action]):
      return False
    after = self._step_fn()[0](before, action)
    self.marks.append(len(self.states))
    self.states.extend(pushed + [after])
    self.actions.extend([self.game.pass_action] * len(pushed) + [action])
    return True

  # -- Commands ---------------------------------------------------------------

  def _no_args(self, args, answer: str) -> str:
    _args(args, 0)
    return answer

  def cmd_version(self, args) -> str:
    _args(args, 0)
    if self.version is not None:
      return self.version
    return f"{__version__} ({self.player.name})"

  def cmd_known_command(self, args) -> str:
    _args(args, 1)
    return "true" if args[0] in self.commands else "false"

  def cmd_list_commands(self, args) -> str:
    _args(args, 0)
    return "\n".join(sorted(self.commands))

  def cmd_boardsize(self, args) -> str:
    _args(args, 1)
    size = int(_number(args[0], "board size", integer=True))
    self._switch_size(size)
    self._new_game(size, self.game.komi)
    return ""

  def _switch_size(self, size: int) -> None:
    """Serves a player of `size` (this one, or `player_for_size`'s);
    GTPFailure "unacceptable size" when none plays it."""
    if size != self.player.game.size and self._player_for_size is not None:
      try:
        player = self._player_for_size(size)
      except ValueError as e:
        self._log(f"gtp: {e}")
        raise GTPFailure("unacceptable size") from None
      self._log(f"gtp: {size}x{size}: serving {player.name}")
      self.player = player
    if size != self.player.game.size:
      self._log(f"gtp: {self.player.name} plays only "
                f"{self.player.game.size}x{self.player.game.size}, not "
                f"{size}x{size}")
      raise GTPFailure("unacceptable size")

  def cmd_clear_board(self, args) -> str:
    _args(args, 0)
    self._new_game(self.game.size, self.game.komi)
    return ""

  def cmd_komi(self, args) -> str:
    _args(args, 1)
    komi = _number(args[0], "komi")
    # States do not hold komi (the final score is recomputed when asked).
    self.game = self._make_game(self.game.size, komi)
    self._ready()
    return ""

  def _vertex(self, token: str) -> Tuple[int, bool]:
    """(action, on board); a malformed vertex is a syntax error."""
    try:
      vertex_codec.normalize_vertex(token)
    except ValueError:
      raise GTPFailure(f"syntax error (invalid vertex {token!r})") from None
    try:
      return vertex_codec.vertex_to_action(token, self.game.size), True
    except ValueError:
      return -1, False

  def cmd_play(self, args) -> str:
    _args(args, 2)
    colour = _colour(args[0])
    action, on_board = self._vertex(args[1])
    if not on_board or not self._play(colour, action):
      self._log(f"gtp: illegal move: {' '.join(args)}")
      raise GTPFailure("illegal move")
    return ""

  def _think(self, colour: int) -> Tuple[Optional[Decision], Optional[str]]:
    """Asks the player for `colour`'s move and plays it: (decision, the
    vertex answered). A finished game passes without asking."""
    pushed = self._for_colour(colour)
    if pushed is None or bool(self.state.terminated):
      return None, vertex_codec.PASS
    state = pushed[-1] if pushed else self.state
    empties = int(np.sum(np.asarray(state.board) == 0))
    seconds = self.clock.budget(colour, empties)
    start = time.perf_counter()
    decision = self.player.genmove(self.game, state, self._next_key(),
                                   seconds=seconds)
    elapsed = time.perf_counter() - start
    self.clock.charge(colour, elapsed)
    self._log(f"gtp: {'BW'[colour]} {self._describe(decision)} in "
              f"{elapsed:.2f} s (budget "
              f"{'none' if seconds is None else f'{seconds:.2f} s'})")
    if decision.resign:
      return decision, "resign"
    action = int(decision.action)
    legal = np.asarray(state.legal_action_mask)
    if not 0 <= action < self.game.num_actions or not legal[action]:
      self._log(f"gtp: the player chose illegal action {action}; passing")
      action = self.game.pass_action
    played = self._play(colour, action)
    assert played, "a legal move was refused"
    return decision, self.game.action_to_vertex(action)

  def _describe(self, d: Decision) -> str:
    v = self.game.action_to_vertex(d.action) if not d.resign else "resign"
    w = "" if d.winrate is None else f", winrate {d.winrate:.3f}"
    return f"{v} ({d.simulations} simulations{w})"

  def cmd_genmove(self, args) -> str:
    _args(args, 1)
    _, vertex = self._think(_colour(args[0]))
    return vertex

  def cmd_undo(self, args) -> str:
    _args(args, 0)
    if not self.marks:
      raise GTPFailure("cannot undo")
    mark = self.marks.pop()
    del self.states[mark:]
    del self.actions[mark - 1:]
    return ""

  def cmd_showboard(self, args) -> str:
    _args(args, 0)
    n = self.game.size
    stones = np.asarray(self.game.stones(self.state)).reshape(n, n)
    letters = " ".join(vertex_codec.COLUMNS[:n])
    lines = [f"   {letters}"]
    for r in range(n):
      row = " ".join(".XO"[v] for v in stones[r])
      lines.append(f"{n - r:2d} {row} {n - r}")
    lines.append(f"   {letters}")
    state = self.state
    to_move = "game over" if bool(state.terminated) else (
        f"{'Black' if int(state.current_player) == BLACK else 'White'} "
        f"to play")
    lines.append(f"move {int(state.step_count)}, {to_move}, komi "
                 f"{self.game.komi:g}")
    return "\n" + "\n".join(lines)

  def cmd_final_score(self, args) -> str:
    _args(args, 0)
    board_score = float(compiled_rules(self.game)[2](self.state))  # b - w
    return result_string(board_score - self.game.komi)

  def cmd_time_settings(self, args) -> str:
    _args(args, 3)
    main = _number(args[0], "main time", minimum=0)
    byo_time = _number(args[1], "byo-yomi time", minimum=0)
    stones = int(_number(args[2], "byo-yomi stones", integer=True,
                         minimum=0))
    was = self.clock.limited
    self.clock.settings(main, byo_time, stones)
    if self.clock.limited and not was:
      self._ready()
    return ""

  def cmd_time_left(self, args) -> str:
    _args(args, 3)
    colour = _colour(args[0])
    seconds = _number(args[1], "time")
    stones = int(_number(args[2], "stones", integer=True, minimum=0))
    self.clock.update(colour, seconds, stones)
    return ""

  def cmd_quit(self, args) -> str:
    # GTP 2 gives quit no arguments, but GNU Go answers `quit now` with
    # success and exits, as here: refusing would leave the engine running
    # under a controller that means to stop it.
    self.quit = True
    return ""

  # -- Final status, handicap, SGF ---------------------------------------------

  def cmd_final_status_list(self, args) -> str:
    """The stones of one status (`gtp.status` says how it is decided),
    one chain a line."""
    _args(args, 1)
    wanted = status.STATUSES.get(args[0].lower())
    if wanted is None:
      raise GTPFailure(f"syntax error (invalid status {args[0]!r}; "
                       f"expected alive, dead or seki)")
    n = self.game.size
    stones = np.asarray(self.game.stones(self.state))
    codes = status.final_status(stones, n)
    chains = status.chains(stones, n, np.flatnonzero(
        (stones != 0) & (codes == wanted)))
    return "\n".join(" ".join(self.game.action_to_vertex(p) for p in chain)
                     for chain in chains)

  def _board_empty(self) -> bool:
    return not self.actions and not np.any(np.asarray(self.state.board))

  def _place_handicap(self, points: Sequence[int]) -> str:
    """Starts the game from Black stones on `points`, White to move (GTP:
    not moves, so `undo` keeps them); answers their vertices."""
    stones = np.zeros(self.game.num_points, np.int8)
    stones[list(points)] = 1
    self._set_position(self.game.from_board(stones, to_play=WHITE),
                       handicap_stones=len(points))
    return " ".join(self.game.action_to_vertex(p) for p in points)

  def _stone_count(self, token: str) -> int:
    return int(_number(token, "number of stones", integer=True))

  def _handicap(self, args, points_for) -> str:
    """Places `points_for(stones, size)`'s stones on the empty board."""
    _args(args, 1)
    stones = self._stone_count(args[0])
    try:
      points = points_for(stones, self.game.size)
    except ValueError as e:
      raise GTPFailure(str(e)) from None
    if not self._board_empty():
      raise GTPFailure("board not empty")
    return self._place_handicap(points)

  def cmd_fixed_handicap(self, args) -> str:
    return self._handicap(args, handicap.fixed_handicap_points)

  def cmd_place_free_handicap(self, args) -> str:
    return self._handicap(args, handicap.free_handicap_points)

  def cmd_set_free_handicap(self, args) -> str:
    if not args:
      raise GTPFailure("syntax error (expected vertices)")
    points = []
    for token in args:
      action, on_board = self._vertex(token)
      if not on_board or action == self.game.pass_action:
        raise GTPFailure(f"bad vertex list ({token} is not a point of the "
                         f"board)")
      if action in points:
        raise GTPFailure(f"bad vertex list ({token} is repeated)")
      points.append(action)
    most = self.game.num_points - 1
    if not 2 <= len(points) <= most:
      raise GTPFailure(f"bad vertex list ({len(points)} stones; from 2 to "
                       f"{most})")
    if not self._board_empty():
      raise GTPFailure("board not empty")
    self._place_handicap(points)
    return ""

  def _record(self) -> sgf.GameRecord:
    """The game as a record: the starting position's stones as AB/AW,
    then every move, the engine's passes for a colour out of turn
    included; the result once the game is over."""
    result = None
    if bool(self.state.terminated):
      result = self.cmd_final_score([])
    return sgf.record_from_actions(self.game, self.actions,
                                   initial_state=self.states[0],
                                   result=result, handicap=self.handicap)

  def cmd_printsgf(self, args) -> str:
    """The game as SGF: the answer, or written to the file named (then
    the answer is empty)."""
    if len(args) > 1:
      raise GTPFailure("syntax error (expected at most a file name)")
    data = sgf.to_sgf(self._record())
    if not args:
      return data.decode("utf-8").strip()
    try:
      with open(args[0], "wb") as f:
        f.write(data)
    except (OSError, ValueError) as e:  # ValueError: a name it cannot encode.
      raise GTPFailure(f"cannot write file ({args[0]}: "
                       f"{getattr(e, 'strerror', None) or e})") from None
    return ""

  def cmd_loadsgf(self, args) -> str:
    """GNU Go's `loadsgf FILE [MOVE_NUMBER]`: the record's board size,
    komi and setup stones, then its main line up to before move
    MOVE_NUMBER (all of it without one); answers the colour to move. A
    record that fails leaves the game as it was."""
    if not 1 <= len(args) <= 2:
      raise GTPFailure(f"syntax error (expected a file and an optional "
                       f"move number, got {len(args)} arguments)")
    path = args[0]
    until = None
    if len(args) == 2:
      until = int(_number(args[1], "move number", integer=True, minimum=1))
    try:
      with open(path, "rb") as f:
        data = f.read()
    except (OSError, ValueError) as e:
      raise GTPFailure(f"cannot load file ({path}: "
                       f"{getattr(e, 'strerror', None) or e})") from None
    try:
      record = sgf.parse_sgf(data, source=path)
    except sgf.SGFError as e:
      raise GTPFailure(f"cannot load file ({e})") from None
    saved = (self.player, self.game, self.states, self.actions, self.marks,
             self.handicap)
    try:
      self._load(record, until)
    except BaseException:
      (self.player, self.game, self.states, self.actions, self.marks,
       self.handicap) = saved
      raise
    return "black" if int(self.state.current_player) == BLACK else "white"

  def _load(self, record: sgf.GameRecord, until: Optional[int]) -> None:
    size = record.size
    try:
      self._switch_size(size)
    except GTPFailure:
      raise GTPFailure(f"cannot load file ({record.source}: unacceptable "
                       f"size {size}x{size})") from None
    self.game = self._make_game(size, record.komi)
    self._ready()
    first = sgf.engine_actions(record)[0]
    stones = np.zeros(self.game.num_points, np.int8)
    stones[list(record.setup_black)] = 1
    stones[list(record.setup_white)] = -1
    initial = self._step_fn()[1]()
    if stones.any() or first != BLACK:
      try:
        initial = self.game.from_board(stones, to_play=first)
      except ValueError as e:
        raise GTPFailure(f"cannot load file ({record.source}: setup "
                         f"stones: {e})") from None
    self._set_position(initial, record.handicap)
    moves = record.moves if until is None else record.moves[:until - 1]
    for number, (colour, action) in enumerate(moves, 1):
      if not self._play(colour, action):
        why = ("after the game ended" if bool(self.state.terminated)
               else "illegal under our rules")
        raise GTPFailure(
            f"cannot load file ({record.source}: move {number}, "
            f"{'BW'[colour]} {self.game.action_to_vertex(action)}, is "
            f"{why})")

  # -- Analysis (Leela Zero's and KataGo's) ---------------------------------

  def _analysis_position(self, request: analysis.AnalysisRequest
                         ) -> Tuple[Optional[GoState], Optional[np.ndarray]]:
    """The state to analyse (None: nothing to analyse, the game is over)
    with the request's root restrictions in its legal moves, and the
    searchable moves, bool `[A]`."""
    state = self.state
    if request.colour is not None:
      pushed = self._for_colour(request.colour)
      state = None if pushed is None else (pushed[-1] if pushed else state)
    if state is None or bool(state.terminated):
      return None, None
    legal = np.asarray(state.legal_action_mask)
    searchable = analysis.root_legal(request, int(state.current_player),
                                     legal)
    if not searchable.any():
      raise GTPFailure("avoid/allow leave no move to search")
    if (searchable != legal).any():
      state = state.replace(legal_action_mask=jax.numpy.asarray(searchable))
    return state, searchable

  def _request(self, args, kata: bool) -> analysis.AnalysisRequest:
    try:
      request = analysis.parse_request(args, self.game.size, kata=kata)
    except ValueError as e:
      raise GTPFailure(f"syntax error ({e})") from None
    if request.ignored:
      self._log(f"gtp: {', '.join(request.ignored)} not reported: our "
                f"networks predict no ownership")
    return request

  def _report(self, decision: Decision, request: analysis.AnalysisRequest,
              searchable: np.ndarray, kata: bool) -> str:
    return analysis.info_line(
        analysis.reported(decision, request, searchable), decision.winrate,
        self.game.size, kata=kata)

  def _analyze(self, cid: str, args, write, interrupted, wait,
               kata: bool) -> None:
    """`lz-analyze` / `kata-analyze`: `=id`, then an info line per
    analysis (at most one per interval) until input arrives; the caller
    ends the answer. The player's analyses are finite (searches of
    growing size, or rounds continuing one tree): once they are done, the
    deepest is repeated at the interval."""
    request = self._request(args, kata)
    state, searchable = self._analysis_position(request)
    write(f"={cid}")
    if state is None:
      return
    interval = request.interval
    latest, due = None, 0.0
    for decision in self.player.analyses(self.game, state,
                                         self._next_key()):
      latest = decision
      if time.monotonic() >= due:
        write(self._report(latest, request, searchable, kata))
        due = time.monotonic() + interval
      if interrupted():
        return
    if latest is None:
      return
    while not wait(max(0.0, due - time.monotonic())):
      # The analysis is as deep as it goes: repeat it at the interval.
      write(self._report(latest, request, searchable, kata))
      due = time.monotonic() + interval

  def _genmove_analyze(self, cid: str, args, write, kata: bool) -> None:
    """`lz-genmove_analyze` / `kata-genmove_analyze COLOUR ...`: the move's
    search as one info line, then `play VERTEX`."""
    colour_args = [a for a in args if a.lower() in _COLOURS]
    if len(colour_args) != 1 or args[0].lower() not in _COLOURS:
      raise GTPFailure(f"syntax error ({'kata' if kata else 'lz'}"
                       f"-genmove_analyze needs a color)")
    request = self._request(args, kata)
    if request.avoid or request.allow is not None:
      raise GTPFailure("syntax error (avoid and allow are for analysis, "
                       "not genmove_analyze)")
    decision, vertex = self._think(request.colour)
    write(f"={cid}")
    if decision is not None and not decision.resign:
      everything = np.ones(self.game.num_actions, bool)
      write(self._report(decision, request, everything, kata))
    write(f"play {vertex}")

  # -- Dispatch ---------------------------------------------------------------

  def execute(self, line: str, write: Callable[[str], None],
              interrupted: Callable[[], bool] = lambda: True,
              wait: Callable[[float], bool] = lambda s: True) -> bool:
    """Runs one command line, writing its whole answer through `write`
    (one call per line of text, without newlines; the closing empty line
    included as ""). Returns False when the line was empty or a comment
    (no answer). `interrupted()` says whether input is waiting (it stops
    `lz-analyze`); `wait(s)` sleeps up to s seconds, returning True early
    when input arrives."""
    text = preprocess(line)
    if not text:
      return False
    words = words_of(text)
    cid = ""
    if _ID.fullmatch(words[0]):
      cid = words.pop(0)
    if not words:
      self._answer(write, cid, False, "syntax error (no command)")
      return True
    name, args = words[0], words[1:]
    if name not in self.commands:
      self._answer(write, cid, False, "unknown command")
      return True
    try:
      if name in ("lz-analyze", "kata-analyze"):
        started = []

        def stream(line):
          started.append(True)
          write(line)
        try:
          self._analyze(cid, args, stream, interrupted, wait,
                        kata=name == "kata-analyze")
        except Exception:
          if not started:
            raise  # Answered as any failed command.
          # "=" is out: end the answer; the error goes to the log.
          self._log(f"gtp: analysis stopped by an error:\n"
                    f"{traceback.format_exc()}")
        write("")
        return True
      if name in ("lz-genmove_analyze", "kata-genmove_analyze"):
        self._genmove_analyze(cid, args, write,
                              kata=name == "kata-genmove_analyze")
        write("")
        return True
      answer = self.commands[name](args)
      self._answer(write, cid, True, answer)
    except GTPFailure as e:
      self._answer(write, cid, False, str(e))
    except Exception as e:  # Never die on a command: report and go on.
      self._log(f"gtp: internal error in {text!r}:\n"
                f"{traceback.format_exc()}")
      message = " ".join(f"{type(e).__name__}: {e}".split())
      self._answer(write, cid, False, f"internal error: {message}")
    return True

  def _answer(self, write, cid: str, ok: bool, text: str) -> None:
    lines = [l for l in str(text).split("\n")]
    head = ("=" if ok else "?") + cid + (f" {lines[0]}" if lines[0] else "")
    write(head)
    for l in lines[1:]:
      write(l if l.strip() else " ")  # An empty line would end the answer.
    write("")

  def handle(self, line: str) -> Optional[str]:
    """The answer to one line as text (None for a line with no answer);
    analysis stops after its first report."""
    out: List[str] = []
    if not self.execute(line, out.append):
      return None
    return "\n".join(out) + "\n"


# -- Serving --------------------------------------------------------------------

def serve(engine: GTPEngine, stdin, stdout: TextIO) -> int:
    """Reads commands from `stdin` (a file with a descriptor, or any
    iterable of lines) until `quit` or end of input, answering on
    `stdout`; returns 0."""
    lines: "queue.Queue[Optional[str]]" = queue.Queue()
    try:
      fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
      fd = None  # An in-memory stream (tests).

    def pump():
      try:
        if fd is None:
          for line in stdin:
            lines.put(line)
          return
        # Raw reads from the descriptor: a daemon thread blocked inside
        # the buffered `sys.stdin` would hold its lock when the engine
        # exits after `quit` with the pipe still open, and CPython aborts
        # at shutdown when it cannot take that lock.
        pending = b""
        while True:
          chunk = os.read(fd, 65536)
          if not chunk:
            break
          pending += chunk
          *complete, pending = pending.split(b"\n")
          for raw in complete:
            lines.put(raw.decode("utf-8", "replace") + "\n")
        if pending:
          lines.put(pending.decode("utf-8", "replace"))
      finally:
        lines.put(None)  # End of input.
    threading.Thread(target=pump, daemon=True).start()

    def write(text: str) -> None:
      stdout.write(text + "\n")
      stdout.flush()

    def interrupted() -> bool:
      return not lines.empty()

    def wait(seconds: float) -> bool:
      end = time.monotonic() + seconds
      while time.monotonic() < end:
        if not lines.empty():
          return True
        time.sleep(min(0.02, max(0.0, end - time.monotonic())))
      return not lines.empty()

    while not engine.quit:
      line = lines.get()
      if line is None:
        break
      engine.execute(line, write, interrupted, wait)
    return 0


EXAMPLES = """examples:
  alphago-jax gtp                 # the strongest preset of each board size
  alphago-jax gtp --list-presets
  alphago-jax gtp --preset strongest-9x9
  alphago-jax gtp --preset az-9x9 --checkpoint runs/go9 --simulations 64
  alphago-jax gtp --preset az-9x9 --gtp-version 0.17   # as Lizzie's engine
  gogui-twogtp -black "alphago-jax gtp" -white "gnugo --mode gtp" -size 9"""


def _parser() -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(
      prog="alphago-jax gtp",
      description="Serve one of our players as a GTP engine on "
                  "stdin/stdout (logs on stderr). A GUI (Sabaki, Lizzie) "
                  "or a match runner starts it as its engine command.",
      epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--preset", default=None,
                 help="named player (see --list-presets); default: the "
                      "preset marked default for the board size, the "
                      "strongest measured there (9x9 first, another on "
                      "`boardsize`)")
  p.add_argument("--checkpoint", default=None,
                 help="a directory with a network of the preset's kind "
                      "(e.g. a training run), instead of the preset's own")
  p.add_argument("--list-presets", action="store_true",
                 help="list the presets whose network exists, and exit")
  p.add_argument("--simulations", type=int, default=None,
                 help="search simulations per move (search presets)")
  p.add_argument("--seed", type=int, default=0,
                 help="seed of the player's random tie-breaks")
  p.add_argument("--komi", type=float, default=7.5,
                 help="komi until a `komi` command (default 7.5)")
  p.add_argument("--max-moves", type=int, default=None,
                 help=f"move cap (default {MOVE_CAP_FACTOR}·N²)")
  p.add_argument("--time-safety", type=float, default=TIME_SAFETY,
                 help=f"share of a move's time it plans to use (default "
                      f"{TIME_SAFETY})")
  p.add_argument("--lag-buffer", type=float, default=LAG_BUFFER_S,
                 help=f"seconds kept back per move for the pipe and the "
                      f"controller (default {LAG_BUFFER_S})")
  p.add_argument("--gtp-version", default=None, metavar="TEXT",
                 help="what the `version` command answers (default: the "
                      "package version and the player). Lizzie 0.7 reads "
                      "it as a Leela Zero version and hangs on one below "
                      "0.15: give it --gtp-version 0.17")
  p.add_argument("--resign-threshold", type=float, default=None,
                 help="resign when the winrate falls below this (default: "
                      "never)")
  return p


def _default_players(options) -> Callable[[int], Player]:
  """`size -> player` of the default preset of each board size, loaded
  once each, with the command line's `options`."""
  loaded: Dict[int, Player] = {}

  def player_for_size(size: int) -> Player:
    if size not in loaded:
      loaded[size] = presets.load_player(presets.default_preset(size).name,
                                         **options)
    return loaded[size]
  return player_for_size


def main(argv: Optional[List[str]] = None, *, stdin=None,
         stdout: Optional[TextIO] = None) -> int:
  """The GTP engine's command line; serves until `quit` or end of input.

  Returns the exit status (0; 2 for bad options, 1 when the player cannot
  be loaded). `stdin`/`stdout` default to the process's; while serving,
  anything else printed to stdout goes to stderr, so only GTP reaches the
  controller.
  """

  args = _parser().parse_args(argv)
  out = stdout or sys.stdout
  if args.list_presets:
    for p in presets.available_presets():
      out.write(f"{p.name}\t{p.board_size}x{p.board_size}\t"
                f"{p.description}\n")
    out.flush()
    return 0
  if args.max_moves is not None and args.max_moves < 1:
    print("error: --max-moves must be >= 1", file=sys.stderr)
    return 2
  if not 0 < args.time_safety <= 1 or not 0 <= args.lag_buffer < math.inf:
    print("error: --time-safety must be in (0, 1] and --lag-buffer >= 0",
          file=sys.stderr)
    return 2
  if args.gtp_version is not None:
    try:
      check_version(args.gtp_version)
    except ValueError as e:
      print(f"error: --gtp-version: {e}", file=sys.stderr)
      return 2
  if args.checkpoint is not None and args.preset is None:
    print("error: --checkpoint needs --preset, the preset whose kind of "
          "network it holds (e.g. --preset az-9x9)", file=sys.stderr)
    return 2
  options = dict(simulations=args.simulations,
                 resign_threshold=args.resign_threshold)
  player_for_size = None
  try:
    if args.preset is None:
      player_for_size = _default_players(options)
      player = player_for_size(DEFAULT_BOARD_SIZE)
    else:
      player = presets.load_player(args.preset, checkpoint=args.checkpoint,
                                   **options)
  except (ValueError, FileNotFoundError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  print(f"gtp: serving {player.description}", file=sys.stderr, flush=True)
  if stdout is None and hasattr(out, "reconfigure"):
    # Answers may quote the controller's text: where the locale cannot
    # encode it, escape it rather than die in the middle of an answer.
    out.reconfigure(errors="backslashreplace")
  saved = sys.stdout
  sys.stdout = sys.stderr  # Stray prints must not corrupt the protocol.
  try:
    engine = GTPEngine(player, komi=args.komi, max_moves=args.max_moves,
                       seed=args.seed, time_safety=args.time_safety,
                       lag_buffer=args.lag_buffer, version=args.gtp_version,
                       player_for_size=player_for_size)
    return serve(engine, stdin or sys.stdin, out)
  finally:
    sys.stdout = saved
