"""Elo ratings: from a match score, with an interval, and fitted to a round
robin's results.

The Elo model says a player rated D points above another scores
s = 1 / (1 + 10^(-D / 400)) per game (a draw counts half), so
D = 400 log10(s / (1 - s)). The interval of D maps the 95% Wilson interval
of the score through that (monotone) formula; it is infinite on the side of
a perfect or zero score, where the data cannot bound D.

A round robin's results (`tournament.round_robin` plays one) are fitted by
maximum likelihood in the Bradley-Terry model (draws as half a win and half
a loss) with Hunter's MM iteration.
`prior_draws` adds that many virtual draws to every pair that played, so an
undefeated or winless player gets a finite rating (as BayesElo does).
"""

from __future__ import annotations

import dataclasses
import math
from typing import List, Sequence, Tuple

import numpy as np

from alphago_jax.core.stats import Z95, wilson_interval


def elo_from_score(score: float) -> float:
  """Elo difference implied by a mean score in [0, 1] (+-inf at 1 and 0)."""
  if not 0.0 <= score <= 1.0:
    raise ValueError(f"score must be in [0, 1], got {score!r}")
  if score == 1.0:
    return math.inf
  if score == 0.0:
    return -math.inf
  return 400.0 * math.log10(score / (1.0 - score))


def expected_score(elo_difference: float) -> float:
  """Mean score of a player `elo_difference` points above its opponent."""
  return 1.0 / (1.0 + 10.0 ** (-elo_difference / 400.0))


def _check_counts(wins, draws, losses):
  for name, v in (("wins", wins), ("draws", draws), ("losses", losses)):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
      raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
  if wins + draws + losses == 0:
    raise ValueError("need at least one game")


def score(wins: int, draws: int, losses: int) -> float:
  """Mean points per game (win 1, draw 1/2)."""
  _check_counts(wins, draws, losses)
  return (wins + 0.5 * draws) / (wins + draws + losses)


def elo_difference(wins: int, draws: int, losses: int) -> float:
  """Elo difference of a player with this record over its opponent."""
  return elo_from_score(score(wins, draws, losses))


def elo_interval(wins: int, draws: int, losses: int, z: float = Z95
                 ) -> Tuple[float, float]:
  """95% interval of the Elo difference (Wilson interval of the score)."""
  _check_counts(wins, draws, losses)
  n = wins + draws + losses
  points = wins + 0.5 * draws
  lo, hi = wilson_interval(points, n, z)
  # Wilson's bounds reach 0 or 1 only up to rounding; the data cannot bound
  # the Elo difference on the side of a perfect or a zero score.
  return (-math.inf if points == 0 else elo_from_score(lo),
          math.inf if points == n else elo_from_score(hi))


def fit_elo(points: np.ndarray, games: np.ndarray, *,
            prior_draws: float = 0.0, iterations: int = 10_000,
            tolerance: float = 1e-10) -> np.ndarray:
  """Maximum-likelihood Elo ratings from pairwise results.

  Args:
    points: float `[K, K]`, points[i, j] = points player i scored against j
      (win 1, draw 1/2).
    games: `[K, K]` symmetric, games played between i and j.
    prior_draws: virtual draws added to every pair with games.
    iterations, tolerance: MM iteration limits.

  Returns:
    float64 `[K]` ratings with player 0 at 0. A player with no points (or
    all of them) and no prior draws drifts towards -inf (+inf).
  """
  points = np.asarray(points, np.float64)
  games = np.asarray(games, np.float64)
  k = points.shape[0]
  if points.shape != (k, k) or games.shape != (k, k):
    raise ValueError(f"points and games must be [K, K], got {points.shape} "
                     f"and {games.shape}")
  if not np.allclose(games, games.T) or np.any(np.diag(games) != 0):
    raise ValueError("games must be symmetric with a zero diagonal")
  if not np.allclose(points + points.T, games):
    raise ValueError("points[i, j] + points[j, i] must equal games[i, j]")
  played = games > 0
  points = points + 0.5 * prior_draws * played
  games = games + prior_draws * played
  wins = points.sum(axis=1)
  gamma = np.ones(k)
  for _ in range(iterations):
    denom = (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
    new = np.where(denom > 0, wins / np.maximum(denom, 1e-300), gamma)
    new = np.maximum(new, 1e-300)
    new /= new[0]
    if np.max(np.abs(np.log(new) - np.log(gamma))) < tolerance:
      gamma = new
      break
    gamma = new
  return 400.0 * np.log10(gamma)


def elo_covariance(ratings, games, *, prior_draws: float = 0.0
                   ) -> np.ndarray:
  """Covariance `[K, K]` (Elo squared) of `fit_elo` ratings, player 0 held
  at 0, from the Bradley-Terry observed information at the fit.

  Pass the `prior_draws` of the fit: the virtual games count as data. A
  player unconnected to player 0 gets an infinite variance.
  """
  ratings = np.asarray(ratings, np.float64)
  games = np.asarray(games, np.float64)
  k = ratings.shape[0]
  if games.shape != (k, k):
    raise ValueError(f"games must be [K, K] with K={k}, got {games.shape}")
  n = games + prior_draws * (games > 0)
  scale = math.log(10.0) / 400.0  # Elo -> natural-log strength.
  p = 1.0 / (1.0 + np.exp(-scale * (ratings[:, None] - ratings[None, :])))
  w = n * p * p.T
  info = np.diag(w.sum(axis=1)) - w
  reached = np.zeros(k, bool)  # Players linked to player 0 by games.
  reached[0] = True
  for _ in range(k):
    reached |= (n[reached] > 0).any(axis=0)
  cov = np.full((k, k), np.inf)
  cov[0, :] = cov[:, 0] = 0.0
  idx = np.flatnonzero(reached)[1:]
  if idx.size:
    cov[np.ix_(idx, idx)] = np.linalg.inv(info[np.ix_(idx, idx)]) / scale**2
  return cov


def elo_intervals(ratings, games, *, prior_draws: float = 0.0,
                  z: float = Z95) -> List[Tuple[float, float]]:
  """95% (normal) intervals of `fit_elo` ratings relative to player 0."""
  sd = np.sqrt(np.diag(elo_covariance(ratings, games,
                                      prior_draws=prior_draws)))
  return [(float(r - z * s), float(r + z * s)) for r, s in zip(ratings, sd)]


@dataclasses.dataclass(frozen=True)
class EloTable:
  """A round robin's results and fitted ratings.

  Attributes:
    names: the players, in order.
    ratings: Elo `[K]`, first player at 0.
    points: `[K, K]` points of i against j.
    games: `[K, K]` games between i and j.
  """
  names: Tuple[str, ...]
  ratings: np.ndarray
  points: np.ndarray
  games: np.ndarray

  def rows(self) -> List[Tuple[str, float, float]]:
    """(name, rating, overall score), best first."""
    totals = self.points.sum(1) / np.maximum(self.games.sum(1), 1)
    order = np.argsort(-self.ratings, kind="stable")
    return [(self.names[i], float(self.ratings[i]), float(totals[i]))
            for i in order]

  def markdown(self) -> str:
    lines = ["| player | Elo | score |", "|---|---|---|"]
    lines += [f"| {n} | {r:+.0f} | {100 * s:.1f}% |"
              for n, r, s in self.rows()]
    return "\n".join(lines)


def elo_table(names: Sequence[str], points, games, *,
              prior_draws: float = 1.0) -> EloTable:
  """Fits ratings to a results matrix (see `fit_elo`)."""
  points = np.asarray(points, np.float64)
  games = np.asarray(games, np.float64)
  ratings = fit_elo(points, games, prior_draws=prior_draws)
  return EloTable(names=tuple(names), ratings=ratings, points=points,
                  games=games)
