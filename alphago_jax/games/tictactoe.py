"""Tic-tac-toe on the functional game API.

Cells are numbered 0..8 row by row; action `i` marks cell `i`. Player 0 is X
and moves first. Three in a row wins (+1 / -1); a full board without a line
is a draw.
"""

from __future__ import annotations

import dataclasses
from typing import Tuple

import chex
import jax
import jax.numpy as jnp
from flax import struct

from alphago_jax.games import base

# The eight winning lines, as cell indices.
LINES = jnp.array([[0, 1, 2], [3, 4, 5], [6, 7, 8],
                   [0, 3, 6], [1, 4, 7], [2, 5, 8],
                   [0, 4, 8], [2, 4, 6]], dtype=jnp.int32)

EMPTY = -1


@struct.dataclass
class State(base.State):
  """Tic-tac-toe state.

  Attributes:
    board: int8 `[9]`, `-1` empty, otherwise the player (0 = X, 1 = O) whose
      mark is there.
  """
  board: chex.Array


@dataclasses.dataclass(frozen=True)
class TicTacToe(base.Game):
  """Tic-tac-toe. Takes no options."""

  @property
  def name(self) -> str:
    return "tictactoe"

  @property
  def num_actions(self) -> int:
    return 9

  @property
  def observation_shape(self) -> Tuple[int, ...]:
    return (3, 3, 2)

  def init(self, key: chex.PRNGKey) -> State:
    del key  # Deterministic start.
    return State(
        current_player=jnp.int32(0),
        legal_action_mask=jnp.ones(9, dtype=jnp.bool_),
        rewards=jnp.zeros(2, dtype=jnp.float32),
        terminated=jnp.bool_(False),
        step_count=jnp.int32(0),
        board=jnp.full(9, EMPTY, dtype=jnp.int8))

  def _step(self, state: State, action: base.Action) -> State:
    mover = state.current_player
    board = state.board.at[action].set(mover.astype(jnp.int8))
    won = jnp.any(jnp.all(board[LINES] == mover, axis=-1))
    full = jnp.all(board != EMPTY)
    terminated = won | full
    rewards = jnp.where(won, jnp.where(jnp.arange(2) == mover, 1.0, -1.0), 0.0)
    return state.replace(
        board=board,
        current_player=1 - mover,
        legal_action_mask=(board == EMPTY) & ~terminated,
        rewards=rewards.astype(jnp.float32),
        terminated=terminated,
        step_count=state.step_count + 1)

  def observe(self, state: State) -> chex.Array:
    """float32 `[3, 3, 2]`: the mover's marks, then the opponent's."""
    me = state.board == state.current_player
    them = state.board == 1 - state.current_player
    return jnp.stack([me, them], axis=-1).reshape(3, 3, 2).astype(jnp.float32)

  def position_key(self, state: State) -> chex.Array:
    """Base-3 number of the board (0 empty, 1 X, 2 O); < 3**9."""
    digits = (state.board + 1).astype(jnp.int32)
    return jnp.sum(digits * (3 ** jnp.arange(9, dtype=jnp.int32)))


def to_ascii(state: State) -> str:
  """Board as three lines of `X`, `O` and `.` (for tests and debugging)."""
  chars = {EMPTY: ".", 0: "X", 1: "O"}
  cells = [chars[int(v)] for v in jax.device_get(state.board)]
  return "\n".join("".join(cells[r * 3:r * 3 + 3]) for r in range(3))
