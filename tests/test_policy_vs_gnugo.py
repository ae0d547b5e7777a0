"""`experiments/alphago/policy_vs_gnugo.py`: each game's SGF result and the
forfeit count, on hand-made match outcomes."""

import os
import sys

import numpy as np

from alphago_jax.evaluation.gnugo_match import Outcomes
from alphago_jax.games import sgf
from alphago_jax.games.go import Go

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "experiments", "alphago"))

import policy_vs_gnugo  # pylint: disable=wrong-import-position


def _outcomes():
  # Games 0-2: ours Black; 3-5: ours White.
  # 0: a scored win by 3.5 (B+3.5); 1: we forfeited (illegal move): White
  # wins, W+F; 2: GNU Go forfeited: we (Black) win, B+F; 3: GNU Go resigned:
  # we (White) win, W+R; 4: GNU Go (Black) forfeited: W+F; 5: unplayed.
  return Outcomes(
      agent_black=np.array([True, True, True, False, False, False]),
      returns=np.array([1.0, -1.0, 1.0, 1.0, 1.0, 0.0], np.float32),
      lengths=np.array([60, 11, 12, 40, 9, 3]),
      resigned=np.array([False, False, False, True, False, False]),
      capped=np.zeros(6, bool),
      score=np.array([3.5, -0.5, 8.5, -2.5, 1.5, 0.0], np.float32),
      moves=np.full((6, 1), -1, np.int32),
      forfeited=np.array([False, True, True, False, True, False]),
      unplayed=np.array([False, False, False, False, False, True]))


def test_results_name_forfeits_resignations_and_scores():
  out = _outcomes()
  assert [policy_vs_gnugo.game_result(out, i) for i in range(6)] == [
      "B+3.5", "W+F", "B+F", "W+R", "W+F", None]


def test_forfeits_are_counted_by_side():
  assert policy_vs_gnugo.forfeits(_outcomes()) == (1, 2)


def test_sgf_files_carry_the_forfeit(tmp_path):
  out = _outcomes()
  policy_vs_gnugo._write_sgfs(str(tmp_path), Go(size=9), out, 10, "p")  # pylint: disable=protected-access
  results = {}
  for name in sorted(os.listdir(tmp_path)):
    if name.endswith(".sgf"):
      with open(tmp_path / name, encoding="utf-8") as f:
        results[name] = sgf.parse_sgf(f.read()).result
  assert results == {"level10-000-black.sgf": "B+3.5",
                     "level10-001-black.sgf": "W+F",
                     "level10-002-black.sgf": "B+F",
                     "level10-003-white.sgf": "W+R",
                     "level10-004-white.sgf": "W+F"}
  assert os.listdir(tmp_path / "unplayed") == ["level10-005-white.sgf"]
