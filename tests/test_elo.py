"""Elo from scores, its interval, round-robin fits and colour-alternated
matches, against hand-computed values."""

import math

import jax
import numpy as np
import pytest

from alphago_jax import evaluation, games, search
from alphago_jax.evaluation.elo import (elo_covariance, elo_difference,
                                        elo_from_score, elo_interval,
                                        elo_intervals, expected_score, score)
from alphago_jax.core import stats
from alphago_jax import play

GAME = games.make("tictactoe")


def test_elo_from_score_by_hand():
  # 400 log10(0.75 / 0.25) = 400 log10(3) = 190.849
  assert elo_from_score(0.75) == pytest.approx(190.849, abs=1e-3)
  assert elo_from_score(0.5) == 0.0
  assert elo_from_score(0.25) == pytest.approx(-190.849, abs=1e-3)
  # 400 log10(0.9 / 0.1) = 381.697
  assert elo_from_score(0.9) == pytest.approx(381.697, abs=1e-3)
  assert elo_from_score(1.0) == math.inf
  assert elo_from_score(0.0) == -math.inf
  assert expected_score(190.849) == pytest.approx(0.75, abs=1e-6)


def test_score_counts_draws_half():
  # 6 wins, 4 draws, 10 losses: 8 points of 20 = 0.4 -> -70.437 Elo.
  assert score(6, 4, 10) == 0.4
  assert elo_difference(6, 4, 10) == pytest.approx(
      400 * math.log10(0.4 / 0.6))
  assert elo_difference(6, 4, 10) == pytest.approx(-70.437,
                                                              abs=1e-3)


@pytest.mark.parametrize("k,n,lower,upper", [
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)])
def test_wilson_interval_matches_newcombe_table_i(k, n, lower, upper):
  # Newcombe (1998), "Two-sided confidence intervals for the single
  # proportion", Table I, method 3 (Wilson score, no continuity correction).
  lo, hi = stats.wilson_interval(k, n)
  assert round(lo, 4) == lower and round(hi, 4) == upper


@pytest.mark.parametrize("k1,n1,k2,n2,lower,upper", [
    (56, 70, 48, 80, 0.0524, 0.3339), (9, 10, 3, 10, 0.1705, 0.8090)])
def test_difference_interval_matches_newcombe_table_ii(k1, n1, k2, n2, lower,
                                                       upper):
  # Newcombe (1998), "Interval estimation for the difference between
  # independent proportions", Table II, method 10 (hybrid score).
  lo, hi = stats.difference_interval(k1, n1, k2, n2)
  assert round(lo, 4) == lower and round(hi, 4) == upper
  # Swapping the samples negates the interval.
  lo2, hi2 = stats.difference_interval(k2, n2, k1, n1)
  assert lo2 == pytest.approx(-hi) and hi2 == pytest.approx(-lo)


def test_elo_interval_maps_the_wilson_interval():
  lo, hi = elo_interval(60, 0, 40)
  # Wilson 60/100: [0.5020, 0.6906] -> 400 log10(p / (1 - p)): [+1.39,
  # +139.48] Elo.
  assert lo == pytest.approx(1.39, abs=0.01)
  assert hi == pytest.approx(139.48, abs=0.01)
  assert lo < elo_difference(60, 0, 40) < hi
  # A perfect score bounds the difference from below only.
  lo, hi = elo_interval(0, 1000, 0)
  assert lo < 0 < hi and math.isfinite(lo)
  lo, hi = elo_interval(20, 0, 0)
  assert hi == math.inf and lo > 0
  lo, hi = elo_interval(0, 0, 20)
  assert lo == -math.inf and hi < 0


def test_bad_counts():
  with pytest.raises(ValueError, match="at least one game"):
    elo_interval(0, 0, 0)
  with pytest.raises(ValueError, match="wins"):
    score(-1, 2, 3)
  with pytest.raises(ValueError, match=r"\[0, 1\]"):
    elo_from_score(1.5)


def test_fit_elo_two_players_is_the_match_formula():
  points = np.array([[0, 75], [25, 0]])
  games_ = np.array([[0, 100], [100, 0]])
  r = evaluation.fit_elo(points, games_)
  np.testing.assert_allclose(r, [0.0, -400 * math.log10(3)], atol=1e-6)


def test_fit_elo_recovers_consistent_ratings():
  # Three players 0, +100, +300 with exactly the expected scores.
  true = np.array([0.0, 100.0, 300.0])
  n = 1000.0
  points = np.zeros((3, 3))
  games_ = n * (1 - np.eye(3))
  for i in range(3):
    for j in range(3):
      if i != j:
        points[i, j] = n * expected_score(true[i] - true[j])
  np.testing.assert_allclose(evaluation.fit_elo(points, games_), true,
                             atol=1e-4)


def test_prior_draws_keep_a_perfect_player_finite():
  points = np.array([[0, 10], [0, 0]])
  games_ = np.array([[0, 10], [10, 0]])
  r = evaluation.fit_elo(points, games_, prior_draws=1.0)
  # 10.5 of 11 points: 400 log10(10.5 / 0.5) = 528.9 below player 0.
  assert r[1] == pytest.approx(-400 * math.log10(21), abs=1e-4)


def test_fit_elo_rejects_inconsistent_tables():
  with pytest.raises(ValueError, match="equal games"):
    evaluation.fit_elo([[0, 3], [3, 0]], [[0, 4], [4, 0]])
  with pytest.raises(ValueError, match="symmetric"):
    evaluation.fit_elo([[0, 1], [0, 0]], [[0, 1], [2, 0]])


def test_match_alternates_colours_and_round_robin():
  solver = search.solver_agent(GAME)
  res = evaluation.match(GAME, solver, search.random_agent,
                         jax.random.key(0), games_per_colour=50)
  assert res.as_first.games == 50 and res.as_second.games == 50
  assert res.games == 100 and res.losses == 0
  # Perfect play beats random nearly always as X.
  assert res.as_first.wins >= 40
  lo, hi = res.interval("wins")
  assert lo <= res.rate("wins") <= hi
  assert res.elo > 0 and res.elo_interval[0] > 0
  assert "Elo" in res.summary()
  # The match's batch size: its two compiled loops serve again here.
  table = evaluation.round_robin(
      GAME, {"random": search.random_agent, "solver": solver},
      jax.random.key(1), games_per_colour=50)
  assert table.names == ("random", "solver")
  assert table.ratings[0] == 0 and table.ratings[1] > 100
  assert table.games[0, 1] == 100
  assert table.rows()[0][0] == "solver"
  assert "| solver |" in table.markdown()


def test_elo_covariance_two_players_is_the_delta_method():
  # 30 points of 40 against player 0: rating 400 log10(3); the variance of
  # the log-odds is 1 / (n p (1 - p)), in Elo (400 / ln 10)^2 times that.
  points = np.array([[0.0, 10.0], [30.0, 0.0]])
  games = np.array([[0.0, 40.0], [40.0, 0.0]])
  r = evaluation.fit_elo(points, games)
  assert r[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
  cov = elo_covariance(r, games)
  sd = 400 / math.log(10) / math.sqrt(40 * 0.75 * 0.25)
  assert cov[0, 0] == 0 and math.sqrt(cov[1, 1]) == pytest.approx(sd)
  lo, hi = elo_intervals(r, games)[1]
  assert (hi - lo) / 2 == pytest.approx(1.959964 * sd, rel=1e-6)


def test_elo_covariance_unconnected_player_is_infinite():
  games = np.zeros((3, 3))
  games[0, 1] = games[1, 0] = 10
  cov = elo_covariance(np.zeros(3), games)
  assert math.isfinite(cov[1, 1]) and math.isinf(cov[2, 2])


def test_clustered_mean_interval_by_hand_and_by_game():
  # Two games, one value each: mean 2, S_g − mean·n_g = ∓1, var = 2/1 · 2 / 2²
  # = 1, so ±1.96 (the usual s²/n with s² = 2).
  mean, lo, hi = stats.clustered_mean_interval([1.0, 3.0], ["a", "b"])
  assert (mean, lo, hi) == pytest.approx((2.0, 2 - stats.Z95, 2 + stats.Z95))
  # Repeating each game's value inside its game adds no information: the
  # interval is unchanged, where a by-position interval would shrink.
  values = [0.2, 0.9, 0.4, 0.7, 1.3]
  games = [0, 1, 2, 3, 4]
  once = stats.clustered_mean_interval(values, games)
  thrice = stats.clustered_mean_interval(np.repeat(values, 3),
                                         np.repeat(games, 3))
  assert thrice == pytest.approx(once)
  with pytest.raises(ValueError, match="two clusters"):
    stats.clustered_mean_interval([1.0, 2.0], [7, 7])
  with pytest.raises(ValueError, match="differ in length"):
    stats.clustered_mean_interval([1.0, 2.0], [0])


def test_records_sum_by_colour_and_name_a_bad_outcome():
  """A match's counts are its two colours' sums; its rates and Wilson
  intervals are those of the sums (7 of 20 wins: [0.181, 0.567]), and a
  misspelt outcome is named, for one colour's record as for the match."""
  first = play.Record(wins=4, draws=1, losses=5)
  second = play.Record(wins=3, draws=0, losses=7)
  res = evaluation.MatchResult(as_first=first, as_second=second)
  assert (res.wins, res.draws, res.losses, res.games) == (7, 1, 12, 20)
  assert res.rate("wins") == 7 / 20 and first.rate("draws") == 1 / 10
  lo, hi = res.interval("wins")
  assert lo == pytest.approx(0.1812, abs=1e-4)
  assert hi == pytest.approx(0.5671, abs=1e-4)
  for rec in (first, res):
    with pytest.raises(ValueError, match="outcome must be one of"):
      rec.interval("win")
