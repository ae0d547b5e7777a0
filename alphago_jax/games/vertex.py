"""The project's one GTP vertex codec.

A GTP vertex is a column letter (`A` to `Z` without `I`) and a row number
counted from the bottom (`A1` is the lower-left corner), or `pass`; case
does not matter. Our Go actions number the points row by row from the
*top*-left (`action = row * N + col`, row 0 is GTP row N) and `N²` is pass,
so `A9` on 9×9 is action 0 and `J1` is action 80.
"""

from __future__ import annotations

import re

import numpy as np

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP skips I.
MAX_SIZE = 25  # GTP's largest board: 25 columns A-Z without I.
PASS = "pass"

_VERTEX = re.compile(r"([A-HJ-Z])([1-9][0-9]?)")


def normalize_vertex(vertex: str) -> str:
  """Upper-case GTP vertex (`"d4" -> "D4"`, `"Pass" -> "PASS"`), on any
  board up to 25×25.

  Raises:
    ValueError: not a vertex (the message names it).
  """
  if not isinstance(vertex, str):
    raise ValueError(f"gtp: a vertex must be a string, got {vertex!r}")
  v = vertex.strip().upper()
  if v == "PASS":
    return v
  m = _VERTEX.fullmatch(v)
  if not m or not 1 <= int(m.group(2)) <= MAX_SIZE:
    raise ValueError(f"gtp: malformed vertex {vertex!r} (expected a column "
                     f"A-Z without I and a row 1-25, or 'pass')")
  return v


def _check_size(size) -> int:
  if isinstance(size, (bool, np.bool_)) or not isinstance(
      size, (int, np.integer)) or not 1 <= size <= MAX_SIZE:
    raise ValueError(f"gtp: board size must be an integer from 1 to "
                     f"{MAX_SIZE}, got {size!r}")
  return int(size)


def vertex_to_action(vertex: str, size: int) -> int:
  """Our action of a GTP vertex on a `size`×`size` board (`pass` -> N²).

  Raises:
    ValueError: malformed, or off the board (the message says which).
  """
  size = _check_size(size)
  v = normalize_vertex(vertex)
  if v == "PASS":
    return size * size
  m = _VERTEX.fullmatch(v)
  col, row_number = COLUMNS.index(m.group(1)), int(m.group(2))
  if col >= size or row_number > size:
    raise ValueError(f"gtp: vertex {vertex!r} is off the {size}x{size} "
                     f"board")
  return (size - row_number) * size + col


def action_to_vertex(action: int, size: int) -> str:
  """GTP vertex of our action on a `size`×`size` board (`N²` -> `"pass"`).

  Raises:
    ValueError: the action is not in `[0, N²]`.
  """
  size = _check_size(size)
  if isinstance(action, (bool, np.bool_)):
    raise ValueError(f"gtp: an action must be an integer, got {action!r}")
  a = int(action)
  if not 0 <= a <= size * size:
    raise ValueError(f"gtp: action {a} is out of range [0, "
                     f"{size * size + 1})")
  if a == size * size:
    return PASS
  row, col = divmod(a, size)
  return f"{COLUMNS[col]}{size - row}"
