"""Intervals of per-position means that treat games as the draws
(`core.stats.clustered_mean_interval`), against independent answers: the
ordinary interval when every game has one position, the interval of the
game means when a game's positions are all alike, a small example by
hand and the coverage of simulated games; and the per-position scores
the evaluation scripts feed it, against the summed evaluations."""

import math

import jax
import numpy as np
import pytest
from scipy import stats as scipy_stats

from alphago_jax.core import stats
from alphago_jax.models import rollout_policy as rollout_model
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.training import rollout_policy as rp
from alphago_jax.training import supervised as sl

from helpers import ROOT
from record_files import prepare_pro9


def _normal(values):
  """The ordinary 95% interval of a mean of independent values, by scipy:
  the mean ± z · s/√n, s the sample standard deviation."""
  values = np.asarray(values, np.float64)
  return scipy_stats.norm.interval(0.95, loc=values.mean(),
                                   scale=scipy_stats.sem(values))


def test_one_position_a_game_is_the_ordinary_interval():
  rng = np.random.default_rng(0)
  values = rng.random(57) < 0.4
  games = rng.permutation(1000)[:57].astype(str)  # distinct, any order
  mean, lo, hi = stats.clustered_mean_interval(values, games)
  assert mean == pytest.approx(values.mean())
  assert (lo, hi) == pytest.approx(_normal(values), rel=1e-9)


def test_alike_positions_in_games_of_one_size_give_the_game_means_interval():
  rng = np.random.default_rng(1)
  game_means = rng.random(23)
  k = 7
  order = rng.permutation(23 * k)  # positions of a game need not be adjacent
  values = np.repeat(game_means, k)[order]
  games = np.repeat(np.arange(23), k)[order]
  mean, lo, hi = stats.clustered_mean_interval(values, games)
  assert mean == pytest.approx(game_means.mean())
  assert (lo, hi) == pytest.approx(_normal(game_means), rel=1e-9)
  # By position, the same data would look √k times surer than it is.
  naive = _normal(values)
  assert (hi - lo) / (naive[1] - naive[0]) == pytest.approx(
      math.sqrt(k * (23 * k - 1) / (23 * k - k)), rel=1e-9)


def test_a_small_example_by_hand():
  # Games a (1, 0, 1), b (0) and c (1, 1): S = 2, 0, 2; n = 3, 1, 2.
  # mean = 4/6 = 2/3; S_g − mean·n_g = 0, −2/3, 2/3;
  # var = 3/2 · (8/9) / 6² = 1/27; half = z / √27.
  values = [1, 0, 1, 0, 1, 1]
  games = ["a", "a", "a", "b", "c", "c"]
  mean, lo, hi = stats.clustered_mean_interval(values, games)
  half = stats.Z95 / math.sqrt(27)
  assert (mean, lo, hi) == pytest.approx((2 / 3, 2 / 3 - half,
                                          2 / 3 + half), rel=1e-12)
  assert hi > 1  # a normal interval: documented, not clipped


def test_games_as_draws_cover_the_true_rate_where_positions_do_not():
  """Simulated evaluations: 40 games of 30 positions, each game's hit
  rate drawn around 0.5 (a game is easier or harder as a whole)."""
  rng = np.random.default_rng(2)
  num_games, per_game, reps = 40, 30, 1000
  games = np.repeat(np.arange(num_games), per_game)
  clustered = by_position = 0
  for _ in range(reps):
    rate = np.clip(0.5 + 0.15 * rng.standard_normal(num_games), 0, 1)
    hits = (rng.random((num_games, per_game)) < rate[:, None]).ravel()
    _, lo, hi = stats.clustered_mean_interval(hits, games)
    clustered += lo <= 0.5 <= hi
    lo, hi = stats.wilson_interval(int(hits.sum()), hits.size)
    by_position += lo <= 0.5 <= hi
  assert 0.93 <= clustered / reps <= 0.97
  assert by_position / reps < 0.8


@pytest.fixture(scope="module")
def test_split(tmp_path_factory):
  return prepare_pro9(tmp_path_factory).split("test")


def test_policy_scores_are_the_evaluations_position_by_position(test_split):
  config = PolicyNetConfig.tiny(board_size=9)
  variables = init_policy_variables(PolicyNet(config), jax.random.key(0))
  summed = sl.evaluate_policy(variables, config, test_split, batch_size=128,
                              limit=300)
  scores = sl.policy_scores(variables, config, test_split, batch_size=128,
                            limit=300)
  assert {k: len(v) for k, v in scores.items()} == {
      "top1": 300, "top5": 300, "nll": 300, "game": 300}
  assert int(scores["top1"].sum()) == summed["top1_hits"]
  assert int(scores["top5"].sum()) == summed["top5_hits"]
  assert scores["nll"].mean() == pytest.approx(summed["nll"], rel=1e-5)
  np.testing.assert_array_equal(scores["game"], test_split.game[:300])
  assert len(np.unique(scores["game"])) > 1


def test_rollout_scores_are_the_evaluations_position_by_position(test_split):
  weights, features, _ = rollout_model.load_weights(
      f"{ROOT}/checkpoints/rollout9")
  summed = rp.evaluate(weights, features, test_split, batch_size=128,
                       limit=300)
  scores = rp.position_scores(weights, features, test_split,
                              batch_size=128, limit=300)
  assert int(scores["top1"].sum()) == summed["top1_hits"] > 0
  assert int(scores["top5"].sum()) == summed["top5_hits"]
  assert int(scores["labelled"].sum()) == summed["labelled"]
  assert scores["nll"].sum() / summed["labelled"] == pytest.approx(
      summed["nll"], rel=1e-5)
  np.testing.assert_array_equal(scores["game"], test_split.game[:300])
