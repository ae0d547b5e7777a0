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
import numpy as np
from flax import struct

from alphago_jax.games import base

# The eight winning lines, as cell indices (numpy, so that importing the
# package does not start a JAX backend: see tests/test_cpu_devices.py).
LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8],
                  [0, 3, 6], [1, 4, 7], [2, 5, 8],
                  [0, 4, 8], [2, 4, 6]], dtype=np.int32)

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

  def fast_random_rollout(self, key: chex.PRNGKey, state: State
                          ) -> chex.Array:
    """Outcome of uniformly random play from `state`, without a move loop.

    The rollout hook of `search.random_rollout`. Random play fills the empty
    cells in a uniformly random order, so draw that order at once (ranks of
    random keys), give each cell to the player moving at its rank, and end
    the game at the first rank that completes a line. Same distribution as
    stepping random moves (up to ties among 32-bit keys, broken by cell
    index: probability < 1e-8 per rollout).

    Args:
      key: PRNG key, consumed.
      state: one (unbatched) state.

    Returns:
      float32 `[2]`: each player's total reward from `state` to the end
      (zeros if `state` is terminal).
    """
    empty = state.board == EMPTY
    # One random rank per cell instead of the generic move-by-move loop: several
    # times cheaper in batched UCT. XLA fuses
    # the key hashing into the 9 x 9 comparison below and so recomputes it
    # per pair; an optimization_barrier does not stop that on CPU, and a
    # sort-based rank was slower still.
    bits = jax.random.bits(key, (9,), jnp.uint32)
    cells = jnp.arange(9)
    # before[i, j]: empty cell j is played before cell i.
    before = (bits[None, :] < bits[:, None]) | (
        (bits[None, :] == bits[:, None]) & (cells[None, :] < cells[:, None]))
    rank = jnp.sum(before & empty[None, :], axis=1)
    time = jnp.where(empty, rank, -1)  # Filled cells: before the rollout.
    owner = jnp.where(empty, (state.current_player + rank) % 2,
                      state.board.astype(jnp.int32))
    line_owner = owner[LINES]  # [8, 3]
    complete = jnp.all(line_owner == line_owner[:, :1], axis=-1)
    # Ranks are distinct, so the earliest completed line is unique and
    # belongs to the player who moved at that rank.
    finish = jnp.where(complete, jnp.max(time[LINES], axis=-1), 9)
    first = jnp.argmin(finish)
    winner = line_owner[first, 0]
    rewards = jnp.where(finish[first] < 9,
                        jnp.where(jnp.arange(2) == winner, 1.0, -1.0), 0.0)
    return jnp.where(state.terminated, 0.0, rewards).astype(jnp.float32)

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
