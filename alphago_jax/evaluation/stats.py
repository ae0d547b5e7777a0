"""Confidence intervals for win rates and their differences."""

from __future__ import annotations

import math
from typing import Tuple

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95
                    ) -> Tuple[float, float]:
  """Wilson score interval for a binomial proportion (sound near 0 and 1)."""
  if n <= 0:
    raise ValueError(f"need at least one trial, got n={n}")
  if not 0 <= successes <= n:
    raise ValueError(f"successes={successes} outside [0, n={n}]")
  p = successes / n
  denom = 1 + z * z / n
  centre = (p + z * z / (2 * n)) / denom
  half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
  return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(k1: int, n1: int, k2: int, n2: int, z: float = Z95
                        ) -> Tuple[float, float]:
  """Newcombe's hybrid score interval for p1 - p2 (his method 10).

  Built from the two Wilson intervals, it behaves at 0% and 100%, where the
  Wald interval collapses.
  """
  p1, p2 = k1 / n1, k2 / n2
  l1, u1 = wilson_interval(k1, n1, z)
  l2, u2 = wilson_interval(k2, n2, z)
  d = p1 - p2
  lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
  upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
  return lower, upper
