"""A straightforward pure-Python UCT for tic-tac-toe, written as a textbook would.

The peer for `uct_tictactoe.py`, and an independent reference for tests: it
shares no code with the JAX implementation. Boards are 9-tuples of
0 (empty), 1 (X, moves first) and 2 (O).
"""

from __future__ import annotations

import math
import random

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8),
         (0, 4, 8), (2, 4, 6))


def winner(board):
  for i, j, k in LINES:
    if board[i] and board[i] == board[j] == board[k]:
      return board[i]
  return 0


def moves(board):
  return [i for i, v in enumerate(board) if v == 0]


def play(board, move, player):
  b = list(board)
  b[move] = player
  return tuple(b)


class Node:
  __slots__ = ("board", "player", "parent", "move", "children", "untried",
               "terminal", "visits", "wins")

  def __init__(self, board, player, parent=None, move=None):
    self.board, self.player, self.parent, self.move = board, player, parent, move
    self.children = []
    self.terminal = bool(winner(board)) or not moves(board)
    self.untried = [] if self.terminal else moves(board)
    self.visits = 0
    self.wins = 0.0  # From the view of the player who moved into this node.


def score(result, player):
  return 0.5 if result == 0 else float(result == player)


def uct_move(board, player, num_simulations, rng=random, c=math.sqrt(2)):
  """Most-visited root move after `num_simulations` UCT simulations."""
  root = Node(board, player)
  for _ in range(num_simulations):
    node = root
    while not node.terminal and not node.untried:  # Selection.
      log_n = math.log(node.visits)
      node = max(node.children,
                 key=lambda ch: ch.wins / ch.visits +
                 c * math.sqrt(log_n / ch.visits))
    if not node.terminal:  # Expansion.
      move = node.untried.pop(rng.randrange(len(node.untried)))
      child = Node(play(node.board, move, node.player), 3 - node.player,
                   node, move)
      node.children.append(child)
      node = child
    b, p = node.board, node.player  # Random rollout.
    result = winner(b)
    while not result and 0 in b:
      b = play(b, rng.choice(moves(b)), p)
      result, p = winner(b), 3 - p
    while node is not None:  # Backup.
      node.visits += 1
      if node.parent is not None:
        node.wins += score(result, node.parent.player)
      node = node.parent
  return max(root.children, key=lambda ch: ch.visits).move
