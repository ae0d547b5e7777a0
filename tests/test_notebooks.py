"""The notebooks run: their code cells, in order, in one namespace. The tour's
numbers are checked against independent references: a pure-Python negamax
and the seed's published table."""

import ast
import functools
import json
import os
import re

import numpy as np
import pytest

import python_uct
from test_experiments import load

NOTEBOOKS = os.path.join(os.path.dirname(__file__), os.pardir, "notebooks")


def code_cells(path):
  with open(path) as f:
    nb = json.load(f)
  return ["".join(c["source"]) for c in nb["cells"]
          if c["cell_type"] == "code"]


@functools.lru_cache(maxsize=None)
def negamax(board, player):
  """Exact value for `player` (1 = X, 2 = O) to move, on the pure-Python
  boards of benchmarks/python_uct.py."""
  if python_uct.winner(board):
    return -1  # The last mover won.
  moves = python_uct.moves(board)
  if not moves:
    return 0
  return max(-negamax(python_uct.play(board, m, player), 3 - player)
             for m in moves)


def printed(out, label):
  """The Python literal printed after `label` on its own line."""
  return ast.literal_eval(re.search(f"^{re.escape(label)}(.*)$", out,
                                    re.M).group(1).strip())


def record(out, opponent):
  m = re.search(f"vs {opponent}: (\\d+) wins, (\\d+) draws, (\\d+) losses",
                out)
  return tuple(int(x) for x in m.groups())


def check_tour(ns, out):
  # The position: X at 4, 8; O at 0, 2; X to move.
  board = tuple(int(v) + 1 for v in np.asarray(ns["state"].board))
  assert board == (2, 0, 2, 0, 1, 0, 0, 0, 1), board
  # Exact move values against an independent negamax: 1 draws (blocks O's
  # top row), the rest lose.
  exact = {m: -negamax(python_uct.play(board, m, 1), 2)
           for m in python_uct.moves(board)}
  assert exact == {1: 0, 3: -1, 5: -1, 6: -1, 7: -1}
  assert ns["solution"].action_values(ns["key"]) == exact
  # UCT-500 blocks in all 64 games.
  np.testing.assert_array_equal(ns["out"].action, 1)
  # Minimax and alpha-beta agree, alpha-beta visiting fewer nodes; the empty
  # board is a draw.
  (v_mm, n_mm), (v_ab, n_ab) = (printed(out, "minimax  (value, nodes):"),
                                printed(out, "alphabeta (value, nodes):"))
  assert v_mm == v_ab == 0 and n_ab < n_mm
  assert printed(out, "empty board:")[0] == negamax((0,) * 9, 1) == 0
  # UCT-100 against random: consistent with the seed's published row (the
  # 95% Newcombe test of experiments/mcts_vs_random.py).
  assert ns["rec"].games == 128
  assert load("mcts_vs_random").consistent(100, ns["rec"]), ns["rec"]
  # The 4-iteration network with search, as X: perfect play never loses, so
  # it wins none; it loses some ("still loses to perfect play"); and it beats
  # random "most of the time": wins above a random X's published 117 of 200
  # (95% Newcombe interval of the difference above 0).
  wins, _, losses = record(out, "perfect")
  assert wins == 0 and losses > 0, out
  wins, draws, losses = record(out, "random")
  lo, _ = ns["evaluation"].difference_interval(
      wins, wins + draws + losses, 117, 200)
  assert lo > 0, out


@pytest.mark.parametrize("name", sorted(
    n for n in os.listdir(NOTEBOOKS) if n.endswith(".ipynb")))
def test_notebook_runs(name, capsys):
  namespace = {"__name__": "__notebook__"}
  for i, source in enumerate(code_cells(os.path.join(NOTEBOOKS, name))):
    try:
      exec(compile(source, f"{name}[cell {i}]", "exec"), namespace)  # pylint: disable=exec-used
    except Exception as e:
      raise AssertionError(f"{name}: code cell {i} failed: {e!r}") from e
  out = capsys.readouterr().out
  assert out, "the notebook printed nothing"
  if name == "tour_tictactoe.ipynb":
    check_tour(namespace, out)
