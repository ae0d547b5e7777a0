"""Handicap stone placement for GTP's `fixed_handicap` and
`place_free_handicap` (GTP 2, section 4.1).

Fixed placement follows the GTP 2 table, the one GNU Go (the protocol's
reference implementation) plays:

* 2 to 9 stones on odd boards from 9×9; 2 to 4 on 7×7 and on even boards
  from 8×8 (an even board has no centre point, so no centre or side
  stones); none below 7×7.
* Corners on the third line on boards up to 12×12, on the fourth line
  from 13×13; side stones on the same line, centred.
* In order: lower left, upper right (2), upper left (3), lower right (4),
  then for 6 and 8 the left and right sides, for 8 also the lower and
  upper sides, and for an odd count the centre. On 19×19:

      2  D4 Q16
      3  D4 Q16 D16
      4  D4 Q16 D16 Q4
      5  D4 Q16 D16 Q4 K10
      6  D4 Q16 D16 Q4 D10 Q10
      7  D4 Q16 D16 Q4 D10 Q10 K10
      8  D4 Q16 D16 Q4 D10 Q10 K4 K16
      9  D4 Q16 D16 Q4 D10 Q10 K4 K16 K10

Free placement (`place_free_handicap`, where the engine chooses) uses the
same star points: the fixed pattern for any count it has, else its
largest pattern; GTP lets an engine place fewer stones than asked, and the
controller counts the vertices answered. Boards with no pattern (5×5, 6×6)
have no free placement either: the controller can still place stones with
`set_free_handicap`.
"""

from __future__ import annotations

from typing import Tuple

MIN_STONES = 2
MAX_STONES = 9


def max_fixed_handicap(size: int) -> int:
  """The most stones `fixed_handicap` places on a `size`×`size` board (0:
  none)."""
  if size < 7:
    return 0
  if size == 7 or size % 2 == 0:
    return 4
  return MAX_STONES


def fixed_handicap_points(stones: int, size: int) -> Tuple[int, ...]:
  """Actions (`row * N + col`, row 0 the top row) of the GTP 2 fixed
  handicap of `stones` stones on `size`×`size`, in the table's order.

  Raises:
    ValueError: no fixed placement of that many stones on that board (the
      message says what the board allows).
  """
  most = max_fixed_handicap(size)
  if not MIN_STONES <= stones <= most:
    allowed = (f"{MIN_STONES} to {most}" if most else "none")
    raise ValueError(f"invalid number of stones ({stones}; a {size}x{size} "
                     f"board takes {allowed})")
  line = 2 if size <= 12 else 3  # 0-based: the third or fourth line.
  low, mid, high = line, size // 2, size - 1 - line
  # (row from the top, column).
  corners = [(high, low), (low, high), (low, low), (high, high)]
  points = corners[:min(stones, 4)]
  if stones >= 6:
    points += [(mid, low), (mid, high)]      # Left and right sides.
  if stones >= 8:
    points += [(high, mid), (low, mid)]      # Lower and upper sides.
  if stones % 2 == 1 and stones >= 5:
    points.append((mid, mid))                # The centre.
  return tuple(r * size + c for r, c in points)


def free_handicap_points(stones: int, size: int) -> Tuple[int, ...]:
  """The engine's choice for `place_free_handicap stones`: the fixed
  pattern of `stones`, or of the most stones the board has a pattern for
  (fewer than asked, as GTP allows).

  Raises:
    ValueError: `stones` is not from 2 to N² - 1 (GTP's range), or the
      board has no pattern at all.
  """
  if not MIN_STONES <= stones <= size * size - 1:
    raise ValueError(f"invalid number of stones ({stones}; from "
                     f"{MIN_STONES} to {size * size - 1} on {size}x{size})")
  most = max_fixed_handicap(size)
  if most == 0:
    raise ValueError(f"invalid number of stones (no handicap pattern on "
                     f"{size}x{size}; place the stones with "
                     f"set_free_handicap)")
  return fixed_handicap_points(min(stones, most), size)
