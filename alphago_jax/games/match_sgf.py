"""One SGF per played game: a match's games as records a viewer opens.

Every match writes its games through this module (`PlayedGame`,
`write_games`), so that each SGF says the same things the same way:

* the root: `GM[1]FF[4]CA[UTF-8]SZ KM RU PB PW RE`, GN (the match and the
  game's number) and a root comment C with both players' settings, the
  match's settings and the seed, so that a reader can tell what played and
  how to play the game again;
* RE as SGF FF[4] specifies: `B+3.5` / `W+0.5` for a game scored on the
  board (Tromp-Taylor, `black - white - komi`), `0` for a draw, `B+R` /
  `W+R` for a resignation, `B+F` / `W+F` for a forfeit (an illegal move, a
  dead engine), `B+T` / `W+T` on time, `Void` for a game not finished;
* per move, when the mover searched: `C[winrate 0.54 visits 64]`, the
  search's value of the position for the player who moved (in [0, 1]) and
  its root visits, and Sabaki's `SBKV` (Black's winrate in percent) so that
  Sabaki draws the winrate graph.

Go only: SGF is the Go world's record format, and the viewers (Sabaki, Lizzie)
read only Go from it. Tic-tac-toe and Othello games are kept as JSON lines
by the commands that play them.

Files are written atomically (`core.atomic_files.write_atomic`): a killed
match leaves whole SGFs or none.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.games.go import BLACK, WHITE, Go
from alphago_jax.games.sgf import record_from_actions, result_string, to_sgf

GAMES_DIR = "games"

# How a game ended, as the matches report it -> the RE suffix after `B+`.
_REASON_LETTER = {"resign": "R", "forfeit": "F", "time": "T"}
REASONS = ("score", "move cap", "resign", "forfeit", "time", "unplayed")

Settings = Tuple[Tuple[str, str], ...]


def _settings(name: str, value: Union[Mapping[str, Any], Sequence, None]
              ) -> Settings:
  """`((key, text), ...)` of a mapping or pairs, values as text (`%g` for
  floats)."""
  if value is None:
    return ()
  items = value.items() if isinstance(value, Mapping) else value
  out = []
  for item in items:
    if not isinstance(item, (tuple, list)) or len(item) != 2:
      raise ValueError(f"match_sgf: {name} must be a mapping or (key, value) "
                       f"pairs, got the entry {item!r}")
    key, v = item
    if isinstance(v, float):
      v = f"{v:g}"
    out.append((str(key), str(v)))
  return tuple(out)


def _describe(settings: Settings) -> str:
  return ", ".join(f"{k}={v}" for k, v in settings)


def rules_name(game: Go) -> str:
  """RU of a game played in `game`: Tromp-Taylor area scoring, with
  positional superko unless the game has simple ko only."""
  return "Tromp-Taylor" if game.superko else "Tromp-Taylor, simple ko"


def result_text(reason: str, *, winner: Optional[int] = None,
                score: Optional[float] = None) -> str:
  """SGF RE of a finished game.

  Args:
    reason: how it ended: "score" (two passes) or "move cap" (scored on the
      board), "resign", "forfeit", "time", "unplayed".
    winner: BLACK or WHITE: needed for "resign", "forfeit" and "time".
    score: Tromp-Taylor `black - white - komi`: needed for "score" and
      "move cap".
  """
  if reason not in REASONS:
    raise ValueError(f"match_sgf: reason must be one of {REASONS}, got "
                     f"{reason!r}")
  if reason == "unplayed":
    return "Void"
  if reason in ("score", "move cap"):
    if score is None or not math.isfinite(float(score)):
      raise ValueError(f"match_sgf: a game ended by {reason!r} needs a "
                       f"finite score, got {score!r}")
    return result_string(float(score))
  if winner not in (BLACK, WHITE):
    raise ValueError(f"match_sgf: a game ended by {reason!r} needs the "
                     f"winner (BLACK 0 or WHITE 1), got {winner!r}")
  return f"{'BW'[winner]}+{_REASON_LETTER[reason]}"


@dataclasses.dataclass(frozen=True)
class Player:
  """One side of a game.

  Attributes:
    name: PB / PW (an agent spec, a variant's name, `gnugo-10`).
    settings: `((key, value), ...)` (a mapping is accepted): what decides
      how it plays (simulations, c_puct, level, network), for the root
      comment.
  """
  name: str
  settings: Settings = ()

  def __post_init__(self):
    if not isinstance(self.name, str) or not self.name:
      raise ValueError(f"match_sgf: a player's name must be a non-empty "
                       f"string, got {self.name!r}")
    object.__setattr__(self, "settings",
                       _settings(f"{self.name}'s settings", self.settings))

  def describe(self) -> str:
    return (f"{self.name} ({_describe(self.settings)})" if self.settings
            else self.name)


def _optional_array(name: str, values, length: int, dtype) -> Optional[
    Tuple[Optional[float], ...]]:
  """A per-move sequence as a tuple, NaN (or None) entries as None."""
  if values is None:
    return None
  arr = [None if v is None else float(v) for v in np.asarray(
      values, object).reshape(-1)]
  if len(arr) != length:
    raise ValueError(f"match_sgf: {name} has {len(arr)} entries for "
                     f"{length} moves")
  out = []
  for i, v in enumerate(arr):
    if v is None or math.isnan(v):
      out.append(None)
    elif dtype is int:
      if v < 0 or v != int(v):
        raise ValueError(f"match_sgf: {name}[{i}] = {v!r} is not a "
                         f"non-negative count")
      out.append(int(v))
    else:
      if not 0.0 <= v <= 1.0:
        raise ValueError(f"match_sgf: {name}[{i}] = {v!r} is not a winrate "
                         f"in [0, 1]")
      out.append(v)
  return tuple(out)


@dataclasses.dataclass(frozen=True)
class PlayedGame:
  """One finished game of a match, as its SGF records it.

  Attributes:
    game: the `Go` it was played in (size, komi, superko: SZ, KM, RU).
    actions: engine actions from the empty board, Black first (`N²` is a
      pass); a resignation is not a move. Arrays are accepted, and the
      `-1` padding after a batched game's end is dropped.
    black, white: the `Player`s.
    result: RE (`result_text`).
    seed: the seed the match's keys (and an engine's seeds) derive from.
    match: the match's name, for GN (`"gnugo10-000"`, `"arena"`).
    index: the game's number in the match (GN, the file name).
    settings: `((key, value), ...)` of the match (games, move cap, random
      opening plies, an engine's seed for this game), for the root comment.
    winrates: per action, the mover's search value in [0, 1] of the
      position it moved from, or None (NaN) where it did not search.
    visits: per action, the mover's root visits, or None (NaN).
  """
  game: Go
  actions: Tuple[int, ...]
  black: Player
  white: Player
  result: str
  seed: Optional[int] = None
  match: Optional[str] = None
  index: Optional[int] = None
  settings: Settings = ()
  winrates: Optional[Tuple[Optional[float], ...]] = None
  visits: Optional[Tuple[Optional[int], ...]] = None

  def __post_init__(self):
    if not isinstance(self.game, Go):
      raise TypeError(f"match_sgf: SGF records Go games only, got "
                      f"{type(self.game).__name__} (tic-tac-toe and Othello "
                      f"games are kept as JSON lines)")
    acts = np.asarray(self.actions).reshape(-1)
    if acts.size and not np.issubdtype(acts.dtype, np.integer):
      raise ValueError(f"match_sgf: actions must be integers, got "
                       f"{acts.dtype}")
    played = acts[acts >= 0] if acts.size else acts
    if acts.size and (acts[:played.size] < 0).any():
      raise ValueError("match_sgf: actions: a -1 (game over) before the last "
                       "move")
    n2 = self.game.num_points
    if played.size and played.max() > n2:
      raise ValueError(f"match_sgf: actions must be in [0, {n2}] ({n2} is "
                       f"pass), got {int(played.max())}")
    actions = tuple(int(a) for a in played)
    object.__setattr__(self, "actions", actions)
    for side in ("black", "white"):
      if not isinstance(getattr(self, side), Player):
        raise TypeError(f"match_sgf: {side} must be a Player, got "
                        f"{getattr(self, side)!r}")
    if not isinstance(self.result, str) or not self.result:
      raise ValueError(f"match_sgf: result must be an SGF RE string "
                       f"(result_text), got {self.result!r}")
    object.__setattr__(self, "settings",
                       _settings("settings", self.settings))
    # Per-move values cover the moves played: padding past the end is cut.
    for name, dtype in (("winrates", float), ("visits", int)):
      values = getattr(self, name)
      if values is not None:
        values = np.asarray(values, object).reshape(-1)
        if len(values) >= len(actions) and len(values) == acts.size:
          values = values[:len(actions)]
      object.__setattr__(self, name,
                         _optional_array(name, values, len(actions), dtype))

  @property
  def name(self) -> str:
    """GN: `match #index` (or whichever is known)."""
    parts = [p for p in (self.match, None if self.index is None
                         else f"game {self.index}") if p]
    return ", ".join(parts) or f"{self.black.name} vs {self.white.name}"

  def comment(self) -> str:
    """The root comment: players, match settings, seed, rules."""
    lines = [f"Black: {self.black.describe()}",
             f"White: {self.white.describe()}"]
    if self.match is not None:
      lines.append(f"Match: {self.match}" + (
          f", game {self.index}" if self.index is not None else ""))
    if self.settings:
      lines.append(f"Settings: {_describe(self.settings)}")
    if self.seed is not None:
      lines.append(f"Seed: {self.seed}")
    lines.append(f"Rules: {rules_name(self.game)} (area scoring, every "
                 f"stone on the board counts as alive), komi "
                 f"{self.game.komi:g}")
    return "\n".join(lines)

  def move_comments(self) -> Optional[List[Optional[str]]]:
    """Per move, `winrate W visits N` (what is known), or None when no
    move has either."""
    if self.winrates is None and self.visits is None:
      return None
    out = []
    for i in range(len(self.actions)):
      parts = []
      if self.winrates is not None and self.winrates[i] is not None:
        parts.append(f"winrate {self.winrates[i]:.2f}")
      if self.visits is not None and self.visits[i] is not None:
        parts.append(f"visits {self.visits[i]}")
      out.append(" ".join(parts) or None)
    return out

  def black_winrates(self) -> Optional[List[Optional[float]]]:
    """Per move, Black's winrate (the mover's, turned to Black's)."""
    if self.winrates is None:
      return None
    return [None if w is None else (w if i % 2 == 0 else 1.0 - w)
            for i, w in enumerate(self.winrates)]

  def sgf(self) -> bytes:
    """The game's SGF (FF[4], UTF-8)."""
    record = record_from_actions(
        self.game, self.actions, result=self.result,
        black_name=self.black.name, white_name=self.white.name,
        rules=rules_name(self.game))
    return to_sgf(record, comment=self.comment(), game_name=self.name,
                  move_comments=self.move_comments(),
                  black_winrates=self.black_winrates())


def file_name(game: PlayedGame, position: int) -> str:
  """`<match>-<index:04d>.sgf` (`game-` without a match name; the game's
  position in the list without an index)."""
  index = position if game.index is None else game.index
  stem = game.match if game.match else "game"
  stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)
  return f"{stem}-{index:04d}.sgf"


def write_games(folder: str, games: Sequence[PlayedGame]) -> List[str]:
  """Writes one SGF per game into `folder` (created), each atomically;
  returns their paths.

  Raises:
    ValueError: two games would get one file name (give each an index).
  """
  games = list(games)
  for g in games:
    if not isinstance(g, PlayedGame):
      raise TypeError(f"write_games takes PlayedGames, got "
                      f"{type(g).__name__}")
  names = [file_name(g, i) for i, g in enumerate(games)]
  if len(set(names)) != len(names):
    dup = sorted({n for n in names if names.count(n) > 1})
    raise ValueError(f"write_games: several games would be written to "
                     f"{dup[:3]} (give the games distinct indices)")
  os.makedirs(folder, exist_ok=True)
  paths = []
  for name, g in zip(names, games):
    path = os.path.join(folder, name)
    write_atomic(path, g.sgf())
    paths.append(path)
  return paths
