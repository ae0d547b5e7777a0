"""A Go board as text, for terminals and logs.

    board_text(9, stones, last_move=40)

      A B C D E F G H J
    9 . . . . . . . . . 9
    ...
    5 . . . .(X). . . . 5
    ...
      A B C D E F G H J

`X` is Black, `O` White, `.` empty; the last move is in parentheses. Rows
run from the top (GTP row N) down, as the engine's actions do.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.viz.board import go_columns


def board_text(size: int, stones: Sequence[int], *,
               last_move: Optional[int] = None) -> str:
  """The board as lines of text (no trailing newline).

  Args:
    size: N, 2 to 25.
    stones: int `[N*N]`: +1 Black, -1 White, 0 empty (`Go.stones`).
    last_move: the point to mark (a pass, None or off-board: no mark).
  """
  check_int("size", size, 2, 25)
  s = np.asarray(stones).reshape(-1)
  if s.shape != (size * size,) or not np.isin(s, (-1, 0, 1)).all():
    raise ValueError(f"stones must be {size * size} values in {{-1, 0, 1}}, "
                     f"got shape {s.shape}")
  width = len(str(size))
  header = " " * (width + 1) + " ".join(go_columns(size))
  lines = [header]
  for row in range(size):
    label = str(size - row).rjust(width)
    # One separator before each point and one after the last; the last
    # move's two become parentheses.
    seps = [" "] * (size + 1)
    if last_move is not None and 0 <= last_move < size * size and (
        last_move // size == row):
      col = last_move % size
      seps[col], seps[col + 1] = "(", ")"
    text = "".join(seps[c] + ".XO"[int(s[row * size + c])]
                   for c in range(size)) + seps[size]
    lines.append(f"{label}{text}{size - row}")
  lines.append(header)
  return "\n".join(lines)
