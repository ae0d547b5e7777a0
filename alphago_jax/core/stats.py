"""Confidence intervals for win rates and their differences, and for
means over positions that come in games (accuracies, squared errors)."""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np

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


def clustered_mean_interval(values, clusters, z: float = Z95
                            ) -> Tuple[float, float, float]:
  """(mean, low, high): the mean of `values` with a normal interval whose
  standard error treats each cluster (e.g. a game), not each value, as the
  independent draw: positions of one game share its players, its opening
  and its outcome, so they are not independent, and an interval over
  positions is too narrow. The one interval of every per-position mean
  the evaluations report (a policy's top-1 / top-5 accuracy, a value
  network's squared error).

  The cluster-robust standard error of a mean (the ratio estimator's
  linearised variance): with S_g and n_g the sum and count of cluster g
  and G clusters, mean = ΣS_g / Σn_g and var = G/(G−1) Σ(S_g − mean·n_g)²
  / (Σn_g)². With one value a cluster this is the usual s²/n (sample
  variance over n − 1), so the interval is the ordinary normal one; with
  clusters of equal size whose values are all equal, it is the ordinary
  interval of the cluster means. Chosen over a cluster bootstrap because
  it is exact arithmetic (no resampling noise, the same digits on every
  rerun), O(n), and as good once there are tens of clusters, as held-out
  splits have (hundreds of games). A normal interval: for a proportion
  near 0 or 1 with few clusters its ends can leave [0, 1].

  Raises:
    ValueError: `values` and `clusters` of other lengths, or fewer than
      two clusters (no spread to measure).
  """
  values = np.asarray(values, dtype=np.float64).ravel()
  clusters = np.asarray(clusters).ravel()
  if values.shape != clusters.shape:
    raise ValueError(f"values {values.shape} and clusters {clusters.shape} "
                     "differ in length")
  _, index = np.unique(clusters, return_inverse=True)
  g = int(index.max()) + 1 if len(index) else 0
  if g < 2:
    raise ValueError(f"need values from at least two clusters, got {g}")
  sums = np.bincount(index, weights=values, minlength=g)
  counts = np.bincount(index, minlength=g).astype(np.float64)
  n = counts.sum()
  mean = sums.sum() / n
  var = g / (g - 1) * np.sum((sums - mean * counts) ** 2) / n ** 2
  half = z * math.sqrt(var)
  return float(mean), float(mean - half), float(mean + half)
