"""Minimax and alpha-beta: exact values, agreement, pruning."""

import math

import pytest

from alphago_jax import games
from alphago_jax.search.solver import alphabeta, minimax, solve

GAME = games.make("tictactoe")


@pytest.fixture(scope="module")
def solution():
  return solve(GAME)


def test_empty_board_is_a_draw(solution):
  value, nodes = minimax(solution.graph)
  assert value == 0.0
  assert nodes == 549946  # The full tic-tac-toe game tree, root included.
  assert solution.values[solution.graph.root] == 0.0


def test_alphabeta_agrees_with_minimax_everywhere_and_prunes(solution):
  graph = solution.graph
  assert len(graph.nodes) == 5478
  for key in graph.nodes:
    v, _ = alphabeta(graph, key)
    assert v == solution.values[key]
  v_mm, n_mm = minimax(graph)
  v_ab, n_ab = alphabeta(graph)
  assert v_mm == v_ab == 0.0
  assert n_ab < n_mm / 10


def test_win_in_one_is_worth_one(solution):
  # X: 0, 1; O: 3, 4; X to move wins at 2.
  g = solution.graph
  key = g.root
  for a in (0, 3, 1, 4):
    key = next(e.child for e in g.edges(key) if e.action == a)
  assert solution.values[key] == 1.0
  assert 2 in solution.best_actions(key)
  assert math.isclose(solution.action_values(key)[2], 1.0)
