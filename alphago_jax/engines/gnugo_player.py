"""GNU Go as an opponent and a rules oracle, over GTP.

`gnugo()` starts GNU Go in GTP mode as a `GTPClient`. `GnuGoPlayer` bridges
our `Go` game and GNU Go on the host (never jitted): it replays our actions
on GNU Go's board and asks it for moves, e.g. as an arena opponent or as the
oracle of the Go rules tests.
"""

from __future__ import annotations

import os
import shutil
from typing import Iterable, Optional, Sequence

import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.games.sgf import result_score
from alphago_jax.engines.gtp_client import GTPClient, GTPError, colour_name

GNUGO_FALLBACK = "/usr/games/gnugo"  # Debian/Ubuntu's `gnugo` package.
RESIGN = -1  # What `GnuGoPlayer.genmove` returns when GNU Go resigns.


class GnuGoNotFoundError(FileNotFoundError):
  """No GNU Go binary was found."""


def find_gnugo() -> Optional[str]:
  """Path of the GNU Go binary: `$GNUGO`, `gnugo` on PATH, or
  /usr/games/gnugo; None if there is none."""
  for candidate in (os.environ.get("GNUGO"), shutil.which("gnugo"),
                    GNUGO_FALLBACK):
    if candidate and os.path.isfile(candidate) and os.access(candidate,
                                                             os.X_OK):
      return candidate
  return None


def gnugo(level: int = 10, extra_args: Sequence[str] = (), *,
          seed: Optional[int] = None,
          timeout: Optional[float] = 60.0) -> GTPClient:
  """A GNU Go engine in GTP mode.

  Args:
    level: playing strength, 0 (fastest) to 10 (GNU Go's default).
    extra_args: more command-line flags, e.g. `("--positional-superko",)`.
    seed: GNU Go's random seed, for reproducible `genmove`s.
    timeout: seconds to wait for each answer.
  """
  check_int("gnugo: level", level, 0, 10)
  binary = find_gnugo()
  if binary is None:
    raise GnuGoNotFoundError(
        f"gnugo: GNU Go not found (looked at $GNUGO, PATH and "
        f"{GNUGO_FALLBACK}); install it, e.g. `apt-get install gnugo`")
  command = [binary, "--mode", "gtp", "--level", str(level)]
  if seed is not None:
    command += ["--seed", str(int(seed))]
  return GTPClient(command + [str(a) for a in extra_args], timeout=timeout)


class GnuGoPlayer:
  """GNU Go as a host-side player of our `Go` game (not jittable).

  Tracks the side to move itself (Black first, alternating), so replay every
  move of the game through `play` or `genmove`. GNU Go runs with area
  (Chinese) scoring like ours, and with positional superko when the game
  uses it, so its moves are legal in our engine.

  Args:
    game: a `Go` instance (size, komi, superko are read from it).
    level: GNU Go strength, 0 to 10.
    seed: GNU Go's random seed.
    extra_args: more GNU Go flags.
  """

  def __init__(self, game, level: int = 10, *, seed: Optional[int] = None,
               extra_args: Sequence[str] = ()):
    if not 1 <= getattr(game, "size", 0) <= 19 or not hasattr(
        game, "vertex_to_action"):
      raise ValueError(f"GnuGoPlayer: needs a Go game of size <= 19 (GNU "
                       f"Go's limit), got {game!r}")
    rules = ["--chinese-rules"]
    if getattr(game, "superko", False):
      rules.append("--positional-superko")
    self._attach(game, gnugo(level, [*rules, *extra_args], seed=seed))

  def _attach(self, game, engine) -> None:
    """Plays `game` through `engine` from an empty board; closes the
    engine if it will not set the board up."""
    self.game = game
    self.engine = engine
    self.to_play = 0
    try:
      self.reset()
    except Exception:
      engine.close()
      raise

  def reset(self) -> None:
    """Empty board, Black to move."""
    self.engine.boardsize(self.game.size)
    self.engine.clear_board()
    self.engine.komi(self.game.komi)
    self.to_play = 0

  def play(self, action: int) -> None:
    """Plays our `action` (a point or pass) for the side to move."""
    self.engine.play(self.to_play, self.game.action_to_vertex(action))
    self.to_play = 1 - self.to_play

  def replay(self, actions: Iterable[int]) -> None:
    """`reset`, then plays a game's `actions` from the start (pipelined)."""
    self.reset()
    moves = []
    for a in actions:
      moves.append(f"play {colour_name(self.to_play)} "
                   f"{self.game.action_to_vertex(a)}")
      self.to_play = 1 - self.to_play
    try:
      self.engine.send_many(moves)
    except GTPError:
      self.reset()  # Unknown how far it got: leave a known position.
      raise

  def genmove(self) -> int:
    """GNU Go's move for the side to move, as our action (pass is
    `game.pass_action`; a resignation is `RESIGN`, -1, and does not change
    the side to move)."""
    vertex = self.engine.genmove(self.to_play)
    if vertex == "RESIGN":
      return RESIGN
    self.to_play = 1 - self.to_play
    return self.game.vertex_to_action(vertex)

  def stones(self) -> np.ndarray:
    """int8 `[N²]` of GNU Go's board: +1 Black, -1 White, 0 empty."""
    out = np.zeros(self.game.num_points, dtype=np.int8)
    for colour, sign in (("black", 1), ("white", -1)):
      for v in self.engine.list_stones(colour):
        out[self.game.vertex_to_action(v)] = sign
    return out

  def final_score(self) -> float:
    """GNU Go's `final_score` of the current board (it judges dead stones)
    as `black - white - komi`.

    Raises:
      ValueError: an answer that is not a score.
    """
    text = self.engine.final_score()
    score = result_score(text)
    if score is None:
      raise ValueError(f"GnuGoPlayer: unreadable final_score {text!r}")
    return score

  def legal_mask(self) -> np.ndarray:
    """bool `[N²+1]`: GNU Go's legal moves for the side to move (pass is
    always legal)."""
    out = np.zeros(self.game.num_actions, dtype=bool)
    for v in self.engine.all_legal(self.to_play):
      out[self.game.vertex_to_action(v)] = True
    out[self.game.pass_action] = True
    return out

  def close(self) -> None:
    self.engine.close()

  def __enter__(self) -> "GnuGoPlayer":
    return self

  def __exit__(self, *exc) -> None:
    self.close()
