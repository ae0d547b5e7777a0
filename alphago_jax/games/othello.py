"""8×8 Othello (Reversi) as a pure JAX game core.

Rules (standard Othello, as pgx's `othello` plays them):

* Actions `0 .. 63` are squares, numbered row by row from the top-left corner
  (`action = row * 8 + col`, row 0 is rank 1, column 0 is file `a`); action
  64 is pass. This is Go's `N² + pass` layout, so `games.symmetry` and
  `training.augment.dihedral_augment(8)` apply: the rules commute with the 8
  symmetries of the square (a symmetry may swap the colours of the centre
  start discs, which changes positions, not rules).
* The start has four centre discs: White on d4 and e5 (squares 27 and 36),
  Black on e4 and d5 (28 and 35). Black (player 0) moves first.
* A move places a disc of the mover's colour on an empty square from which
  at least one straight line (of the 8 directions) runs over one or more
  opponent discs and ends on a disc of the mover's; every such run is
  flipped to the mover's colour.
* A player with no such move must pass (action 64, then its only legal
  action); pass is illegal while a placing move exists.
* The game ends after two passes in a row, when the board is full, or when
  the player to move has no discs left (then neither side can move; pgx ends
  it at once too). The player with more discs wins (+1 / -1); equal counts
  are a draw (0).

The legal mask and the flips are computed with shifted masks, without
Python control flow on traced values: a set of squares is a bool `[64]`
mask, moved one square along a direction by a flat roll that clears the
squares it wraps around to, and runs of opponent discs are grown by 6 such
steps (the longest run a line holds) for every square at once. The 8
directions are a `lax.fori_loop`: under `vmap` on a CPU that compiles to a
small loop body several times faster than the same steps unrolled over the
directions, which XLA fuses into one large, partly recomputed kernel.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.games import base

SIZE = 8
NUM_SQUARES = SIZE * SIZE
PASS = NUM_SQUARES
BLACK, WHITE = 0, 1
EMPTY = -1

DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1),
              (0, 1), (1, -1), (1, 0), (1, 1))


def _arrivals() -> np.ndarray:
  """bool `[8, 64]`: the squares a one-square move in direction `d` can
  reach; a flat roll by `_STEP[d]` wraps around to the others."""
  row, col = np.divmod(np.arange(NUM_SQUARES), SIZE)
  dr = np.array([d[0] for d in DIRECTIONS])[:, None]
  dc = np.array([d[1] for d in DIRECTIONS])[:, None]
  return ((dr != 1) | (row != 0)) & ((dr != -1) | (row != SIZE - 1)) & (
      (dc != 1) | (col != 0)) & ((dc != -1) | (col != SIZE - 1))


# numpy constants, so that importing the package starts no JAX backend.
_STEP = np.array([SIZE * dr + dc for dr, dc in DIRECTIONS], np.int32)
_ARRIVE = _arrivals()


# pgx's start position.
_START = np.full(NUM_SQUARES, EMPTY, np.int8)
_START[[28, 35]] = BLACK
_START[[27, 36]] = WHITE


@struct.dataclass
class OthelloState(base.State):
  """Othello state for one game.

  Attributes:
    board: int8 `[64]`, `-1` empty, otherwise the colour of the disc there
      (0 Black, 1 White); player `p` plays colour `p`.
    passed: bool `[]`, the last move was a pass (a second one ends the game).
  """
  board: chex.Array
  passed: chex.Array


def _shift(x: chex.Array, d: chex.Array) -> chex.Array:
  """bool `[64]`: the squares of `x` moved one square in direction `d` (an
  int32 scalar, may be traced); what would leave the board is dropped (a
  flat roll, with the squares it wraps around cleared)."""
  return jnp.roll(x, jnp.asarray(_STEP)[d]) & jnp.asarray(_ARRIVE)[d]


def _run(start: chex.Array, theirs: chex.Array,
         d: chex.Array) -> chex.Array:
  """bool `[64]`: the opponent discs `theirs` in an unbroken line in
  direction `d` that begins next to a square of `start`."""
  run = _shift(start, d) & theirs
  for _ in range(SIZE - 3):  # runs of up to 6 discs (a static unroll)
    run = run | (_shift(run, d) & theirs)
  return run


def _legal_squares(board: chex.Array, mover: chex.Array) -> chex.Array:
  """bool `[64]`: the empty squares where `mover` flips at least one disc:
  those just past a run of opponent discs that starts next to a disc of
  the mover, in some direction."""
  mine, theirs = board == mover, board == 1 - mover

  def direction(d, ends):
    return ends | _shift(_run(mine, theirs, d), d)

  ends = jax.lax.fori_loop(0, len(DIRECTIONS), direction,
                           jnp.zeros(NUM_SQUARES, jnp.bool_))
  return ends & (board == EMPTY)


def _flips(board: chex.Array, mover: chex.Array,
           action: chex.Array) -> chex.Array:
  """bool `[64]`: the discs a disc of `mover` on `action` flips (none for
  pass): in each direction, the run of opponent discs from `action` if a
  disc of the mover closes it."""
  placed = jnp.arange(NUM_SQUARES) == action
  mine, theirs = board == mover, board == 1 - mover

  def direction(d, flips):
    run = _run(placed, theirs, d)
    closed = jnp.any(_shift(run, d) & mine)
    return flips | (run & closed)

  return jax.lax.fori_loop(0, len(DIRECTIONS), direction,
                           jnp.zeros(NUM_SQUARES, jnp.bool_))


@dataclasses.dataclass(frozen=True)
class Othello(base.Game):
  """8×8 Othello. Takes no options."""

  @property
  def name(self) -> str:
    return "othello"

  @property
  def size(self) -> int:
    """Board side N (the augmentation's `[N, N, C]` / `[N² + 1]` layout)."""
    return SIZE

  @property
  def num_points(self) -> int:
    return NUM_SQUARES

  @property
  def num_actions(self) -> int:
    return NUM_SQUARES + 1

  @property
  def pass_action(self) -> int:
    return PASS

  @property
  def observation_shape(self) -> Tuple[int, ...]:
    return (SIZE, SIZE, 2)

  def init(self, key: chex.PRNGKey) -> OthelloState:
    del key  # Deterministic start.
    return self.from_board(_START, to_play=BLACK)

  def _step(self, state: OthelloState,
            action: base.Action) -> OthelloState:
    mover = state.current_player
    board = state.board
    placed = jnp.arange(NUM_SQUARES) == action              # none for pass
    changed = placed | _flips(board, mover, action)
    board = jnp.where(changed, mover.astype(jnp.int8), board)
    is_pass = action == PASS
    nxt = 1 - mover
    squares = _legal_squares(board, nxt)
    terminated = (jnp.all(board != EMPTY) | ~jnp.any(board == nxt)
                  | (state.passed & is_pass))
    mask = jnp.concatenate([squares, ~jnp.any(squares)[None]]) & ~terminated
    return state.replace(
        board=board,
        passed=is_pass,
        current_player=nxt,
        legal_action_mask=mask,
        rewards=jnp.where(terminated, self._outcome(board), 0.0).astype(
            jnp.float32),
        terminated=terminated,
        step_count=state.step_count + 1)

  @staticmethod
  def _outcome(board: chex.Array) -> chex.Array:
    """float32 `[2]`: +1 / -1 to the colour with more discs, 0 / 0 if equal."""
    diff = jnp.sum(board == BLACK) - jnp.sum(board == WHITE)
    sign = jnp.sign(diff).astype(jnp.float32)
    return jnp.stack([sign, -sign])

  def observe(self, state: OthelloState) -> chex.Array:
    """float32 `[8, 8, 2]`: the mover's discs, then the opponent's."""
    me = state.board == state.current_player
    them = state.board == 1 - state.current_player
    return jnp.stack([me, them], axis=-1).reshape(
        SIZE, SIZE, 2).astype(jnp.float32)

  def discs(self, state: OthelloState) -> chex.Array:
    """int32 `[2]`: Black's and White's disc counts."""
    return jnp.stack([jnp.sum(state.board == BLACK),
                      jnp.sum(state.board == WHITE)]).astype(jnp.int32)

  def from_board(self, board: Sequence[int], *, to_play: int = BLACK,
                 passed: bool = False) -> OthelloState:
    """A non-terminated state with `board` (64 values: -1 empty, 0 Black,
    1 White) and `to_play` to move, for tests and analysis. Its legal mask
    follows the rules (only pass where `to_play` cannot place); the step
    count is 0. Set `passed` if the previous move was a pass."""
    board = jnp.asarray(np.asarray(board, np.int8).reshape(NUM_SQUARES))
    squares = _legal_squares(board, jnp.int32(to_play))
    return OthelloState(
        current_player=jnp.int32(to_play),
        legal_action_mask=jnp.concatenate(
            [squares, ~jnp.any(squares)[None]]),
        rewards=jnp.zeros(2, jnp.float32),
        terminated=jnp.bool_(False),
        step_count=jnp.int32(0),
        board=board,
        passed=jnp.bool_(passed))

  def from_ascii(self, text: str, *, to_play: int = BLACK) -> OthelloState:
    """`from_board` from 8 lines of `X` (Black), `O` (White) and `.`, the
    first line row 0 (rank 1); whitespace inside a line is ignored."""
    rows = [line.replace(" ", "") for line in text.strip().splitlines()]
    chars = {".": EMPTY, "X": BLACK, "O": WHITE}
    if len(rows) != SIZE or any(len(r) != SIZE for r in rows) or any(
        ch not in chars for r in rows for ch in r):
      raise ValueError(f"othello: expected 8 lines of 8 of 'X', 'O', '.', "
                       f"got {text!r}")
    return self.from_board([chars[ch] for r in rows for ch in r],
                           to_play=to_play)

  def to_ascii(self, state: OthelloState) -> str:
    """Board as 8 lines of `X` (Black), `O` (White) and `.`, row 0 first."""
    chars = {EMPTY: ".", BLACK: "X", WHITE: "O"}
    cells = [chars[int(v)] for v in np.asarray(state.board)]
    return "\n".join("".join(cells[r * SIZE:(r + 1) * SIZE])
                     for r in range(SIZE))
