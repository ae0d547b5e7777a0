"""Exact game-tree search for small games: minimax, alpha-beta, a solved table.

The searches run on the host, over a memoised transition graph built from the
game's own JAX `step` (each distinct position is expanded once, all actions at
a time, by one jitted call). Values are negamax values: the best total reward
the player to move can force from a position, in [-1, 1]; a terminal
position is worth 0 because its outcome was paid on the edge into it.

`minimax` and `alphabeta` count the nodes they visit (terminal ones
included), so the pruning gain is visible. `solve` memoises the whole graph
and `solver_agent` turns the result into a jittable perfect-play `Agent`
(a lookup by `Game.position_key`).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Dict, List, NamedTuple, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games import base as game_base
from alphago_jax.search import base
from alphago_jax.search.rollout import random_legal_action


class Edge(NamedTuple):
  action: int
  reward: float  # The mover's reward on this move.
  sign: int  # +1 if the same player moves next, -1 if the other one does.
  child: bytes


@dataclasses.dataclass
class Node:
  state: game_base.State  # Host (NumPy) copy of the state.
  player: int
  terminal: bool
  edges: List[Edge] | None = None  # Filled on first expansion.


def _node_key(state: game_base.State) -> bytes:
  # Rewards belong to the edge into a position, not to the position.
  leaves = jax.tree.leaves(state.replace(rewards=np.zeros(2, np.float32)))
  return b"".join(np.ascontiguousarray(x).tobytes() for x in leaves)


class GameGraph:
  """Memoised transition graph of a small game, explored on the host."""

  def __init__(self, game: game_base.Game):
    self.game = game
    actions = jnp.arange(game.num_actions, dtype=jnp.int32)
    self._expand = jax.jit(
        lambda s: jax.vmap(game.step, in_axes=(None, 0))(s, actions))
    self.nodes: Dict[bytes, Node] = {}
    self.root = self.add(jax.device_get(game.init(jax.random.key(0))))

  def add(self, state: game_base.State) -> bytes:
    """Registers a (host) state; returns its key."""
    key = _node_key(state)
    if key not in self.nodes:
      self.nodes[key] = Node(state=state, player=int(state.current_player),
                             terminal=bool(state.terminated))
    return key

  def edges(self, key: bytes) -> List[Edge]:
    """Legal moves out of a position (empty for a terminal one)."""
    node = self.nodes[key]
    if node.edges is None:
      node.edges = []
      if not node.terminal:
        children = jax.device_get(self._expand(node.state))
        legal = np.flatnonzero(node.state.legal_action_mask)
        for a in legal:
          child = jax.tree.map(lambda x, a=a: x[a], children)
          sign = 1 if int(child.current_player) == node.player else -1
          node.edges.append(Edge(int(a), float(child.rewards[node.player]),
                                 sign, self.add(child)))
    return node.edges


def _recursion_guard():
  # Trees are shallow for the games this is meant for; make sure Python's
  # default limit never is the thing that stops a deeper one.
  if sys.getrecursionlimit() < 10_000:
    sys.setrecursionlimit(10_000)


def minimax(graph: GameGraph, key: bytes | None = None) -> Tuple[float, int]:
  """Plain (negamax) minimax, no memo. Returns (value, nodes visited)."""
  _recursion_guard()

  def visit(k):
    edges = graph.edges(k)
    if not edges:
      return 0.0, 1
    best, count = -math.inf, 1
    for e in edges:
      v, n = visit(e.child)
      count += n
      best = max(best, e.reward + e.sign * v)
    return best, count

  return visit(graph.root if key is None else key)


def alphabeta(graph: GameGraph, key: bytes | None = None,
              alpha: float = -math.inf, beta: float = math.inf
              ) -> Tuple[float, int]:
  """Negamax alpha-beta (fail-soft). Exact value for the full window.

  Returns:
    (value, nodes visited).
  """
  _recursion_guard()

  def visit(k, alpha, beta):
    edges = graph.edges(k)
    if not edges:
      return 0.0, 1
    best, count = -math.inf, 1
    for e in edges:
      # The child's value v enters as q = r + sign * v; map the window on q
      # to a window on v.
      if e.sign < 0:
        v, n = visit(e.child, e.reward - beta, e.reward - alpha)
        q = e.reward - v
      else:
        v, n = visit(e.child, alpha - e.reward, beta - e.reward)
        q = e.reward + v
      count += n
      best = max(best, q)
      alpha = max(alpha, best)
      if alpha >= beta:
        break
    return best, count

  return visit(graph.root if key is None else key, alpha, beta)


@dataclasses.dataclass(frozen=True)
class Solution:
  """Exact values of every position reachable from the start.

  Attributes:
    graph: the explored graph.
    values: position key -> negamax value for the player to move.
  """
  graph: GameGraph
  values: Dict[bytes, float]

  def action_values(self, key: bytes) -> Dict[int, float]:
    """Exact value of each legal move from a position, for its mover."""
    return {e.action: e.reward + e.sign * self.values[e.child]
            for e in self.graph.edges(key)}

  def best_actions(self, key: bytes) -> List[int]:
    q = self.action_values(key)
    best = max(q.values())
    return [a for a, v in q.items() if v == best]


def solve(game: game_base.Game) -> Solution:
  """Memoised negamax over the whole reachable graph of a small game."""
  _recursion_guard()
  graph = GameGraph(game)
  values: Dict[bytes, float] = {}

  def visit(k):
    if k not in values:
      edges = graph.edges(k)
      values[k] = max((e.reward + e.sign * visit(e.child) for e in edges),
                      default=0.0)
    return values[k]

  visit(graph.root)
  return Solution(graph=graph, values=values)


def solver_agent(game: game_base.Game,
                 solution: Solution | None = None) -> base.Agent:
  """A perfect-play `Agent`: a uniformly random choice among optimal moves.

  Positions are looked up by `game.position_key` in a sorted table, so the
  agent is jittable. A position missing from the table (unreachable by legal
  play) falls back to a random legal move.
  """
  solution = solution or solve(game)
  rows = {}
  for k, node in solution.graph.nodes.items():
    if node.terminal:
      continue
    pk = int(game.position_key(node.state))
    mask = np.zeros(game.num_actions, bool)
    mask[solution.best_actions(k)] = True
    if pk in rows and not np.array_equal(rows[pk], mask):
      raise ValueError(f"{game.name}: position_key is not injective on "
                       "reachable positions; cannot build a solver table")
    rows[pk] = mask
  order = sorted(rows)
  table_keys = jnp.asarray(order, dtype=jnp.int32)
  table_best = jnp.asarray(np.stack([rows[k] for k in order]))

  def lookup(key, state):
    pk = game.position_key(state)
    i = jnp.clip(jnp.searchsorted(table_keys, pk), 0, len(order) - 1)
    mask = jnp.where(table_keys[i] == pk, table_best[i],
                     state.legal_action_mask)
    return random_legal_action(key, mask & state.legal_action_mask)

  def agent(states, key):
    batch = base.check_batch(states)
    return jax.vmap(lookup)(jax.random.split(key, batch), states)

  return agent
