"""The intervals of `core.stats`, against independent answers: scipy's
Wilson interval, Newcombe's published table for the difference of two
proportions, and means worked by hand. It imports nothing of the JAX
stack, so it runs in a second: the mutation run (tools/mutation) runs it
once per mutant of `core/stats.py`."""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from alphago_jax.core import stats


def _scipy_wilson(k, n, confidence=0.95):
  ci = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=confidence,
                                                 method="wilson")
  return ci.low, ci.high


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (0, 7), (3, 7), (7, 7),
                                 (1, 2), (17, 40), (39, 40), (500, 1000)])
def test_wilson_interval_is_scipys(k, n):
  assert stats.wilson_interval(k, n) == pytest.approx(_scipy_wilson(k, n),
                                                      abs=1e-12)


def test_wilson_interval_takes_its_z():
  # z = 1 is the 68.27% interval (the normal's mass within one sigma).
  confidence = 2 * scipy_stats.norm.cdf(1.0) - 1
  assert stats.wilson_interval(3, 10, z=1.0) == pytest.approx(
      _scipy_wilson(3, 10, confidence), abs=1e-12)
  assert stats.Z95 == pytest.approx(scipy_stats.norm.ppf(0.975), abs=1e-15)


def test_wilson_interval_ends_stay_in_the_unit_interval():
  """All wins or none: the score interval's end there is 1 or 0 up to
  rounding, and never outside [0, 1]."""
  for n in range(1, 200):
    lo, hi = stats.wilson_interval(n, n)
    assert hi <= 1.0 and hi == pytest.approx(1.0, abs=1e-15) and 0 < lo < 1
    lo, hi = stats.wilson_interval(0, n)
    assert lo >= 0.0 and lo == pytest.approx(0.0, abs=1e-15) and 0 < hi < 1


@pytest.mark.parametrize("k,n", [(0, 0), (0, -1), (-1, 5), (6, 5)])
def test_wilson_interval_rejects_bad_counts(k, n):
  with pytest.raises(ValueError, match="trial|outside"):
    stats.wilson_interval(k, n)


@pytest.mark.parametrize("k1,n1,k2,n2,lower,upper", [
    (5, 56, 0, 29, -0.0381, 0.1926), (0, 10, 0, 20, -0.1611, 0.2775),
    (0, 10, 0, 10, -0.2775, 0.2775), (10, 10, 0, 20, 0.6791, 1.0),
    (10, 10, 0, 10, 0.6075, 1.0)])
def test_difference_interval_at_the_boundaries_matches_newcombe(
    k1, n1, k2, n2, lower, upper):
  # Newcombe (1998), "Interval estimation for the difference between
  # independent proportions", Table II, method 10: the examples with a
  # proportion at 0 or 1 (tests/test_elo.py has the other two).
  lo, hi = stats.difference_interval(k1, n1, k2, n2)
  assert (round(lo, 4), round(hi, 4)) == (lower, upper)


@pytest.mark.parametrize("k1,n1,k2,n2", [(3, 11, 8, 13), (12, 20, 2, 5),
                                         (40, 90, 41, 60)])
def test_difference_interval_is_newcombes_square_and_add_of_scipys_wilson(
    k1, n1, k2, n2):
  """Method 10 by its definition, from scipy's Wilson intervals (l, u):
  d ∓ √((p1 − l1)² + (u2 − p2)²) below and √((u1 − p1)² + (p2 − l2)²)
  above, with uneven samples so that each term's side matters."""
  p1, p2 = k1 / n1, k2 / n2
  (l1, u1), (l2, u2) = _scipy_wilson(k1, n1), _scipy_wilson(k2, n2)
  want = (p1 - p2 - math.hypot(p1 - l1, u2 - p2),
          p1 - p2 + math.hypot(u1 - p1, p2 - l2))
  assert stats.difference_interval(k1, n1, k2, n2) == pytest.approx(
      want, abs=1e-12)
  # A narrower z narrows it the same way.
  confidence = 2 * scipy_stats.norm.cdf(1.0) - 1
  (l1, u1), (l2, u2) = (_scipy_wilson(k1, n1, confidence),
                        _scipy_wilson(k2, n2, confidence))
  want = (p1 - p2 - math.hypot(p1 - l1, u2 - p2),
          p1 - p2 + math.hypot(u1 - p1, p2 - l2))
  assert stats.difference_interval(k1, n1, k2, n2, z=1.0) == pytest.approx(
      want, abs=1e-12)


def test_clustered_mean_interval_unequal_games_by_hand():
  # Games x (2, 4), y (1) and z (0, 0, 3) at indices out of order:
  # S = 6, 1, 3; n = 2, 1, 3; mean = 10/6 = 5/3;
  # S − mean·n = 6 − 10/3, 1 − 5/3, 3 − 5 = 8/3, −2/3, −2;
  # Σ² = 64/9 + 4/9 + 36/9 = 104/9; var = 3/2 · 104/9 / 36 = 13/27.
  values = [0, 2, 1, 0, 4, 3]
  games = ["z", "x", "y", "z", "x", "z"]
  mean, lo, hi = stats.clustered_mean_interval(values, games)
  half = stats.Z95 * math.sqrt(13 / 27)
  assert (mean, lo, hi) == pytest.approx((5 / 3, 5 / 3 - half,
                                          5 / 3 + half), rel=1e-12)
  # z = 1: one standard error each side.
  _, lo, hi = stats.clustered_mean_interval(values, games, z=1.0)
  assert (lo, hi) == pytest.approx((5 / 3 - math.sqrt(13 / 27),
                                    5 / 3 + math.sqrt(13 / 27)), rel=1e-12)


def test_clustered_mean_interval_of_two_games_and_its_errors():
  # Two games are enough: (1, 1) and (4): S = 2, 4, n = 2, 1, mean = 2,
  # S − mean·n = −2, 2; var = 2/1 · 8 / 9 = 16/9.
  mean, lo, hi = stats.clustered_mean_interval(np.array([[1.0, 1.0, 4.0]]),
                                               np.array([[5, 5, 9]]))
  assert (mean, lo, hi) == pytest.approx(
      (2.0, 2 - stats.Z95 * 4 / 3, 2 + stats.Z95 * 4 / 3), rel=1e-12)
  with pytest.raises(ValueError, match="at least two clusters, got 0"):
    stats.clustered_mean_interval([], [])
  with pytest.raises(ValueError, match="at least two clusters, got 1"):
    stats.clustered_mean_interval([1.0, 2.0, 3.0], ["g", "g", "g"])
