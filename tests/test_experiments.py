"""The experiments behind the README's tables, small enough for the suite."""

import importlib.util
import os
import statistics

import pytest

EXPERIMENTS = os.path.join(os.path.dirname(__file__), os.pardir,
                           "experiments")


def load(name):
  spec = importlib.util.spec_from_file_location(
      name, os.path.join(EXPERIMENTS, f"{name}.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


@pytest.fixture(scope="module")
def mcts_vs_random():
  return load("mcts_vs_random")


def test_uct_vs_random_agrees_with_the_published_table(mcts_vs_random):
  # The README's seed table at 50 games a row (seed 0) instead of 200.
  m = mcts_vs_random
  # 12 two-sample tests (4 rows x 3 outcomes): Bonferroni, so that a correct
  # implementation fails with probability <= 5% whatever the seed.
  z = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * 12))
  rows = {n: rec for n, rec, _ in m.run(num_games=50, seed=0,
                                         simulations=sorted(m.PUBLISHED))}
  for n, rec in rows.items():
    assert rec.games == 50
    assert m.consistent(n, rec, z), (n, rec)
  # It has power at this size: random play is told apart from every
  # published UCT row, and every UCT record from the published random row.
  for n in (10, 100, 1000):
    assert not m.consistent(n, rows[0], z), (n, rows[0])
    assert not m.consistent(0, rows[n], z), (n, rows[n])
