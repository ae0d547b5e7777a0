"""Tree reuse between moves: keep the subtree below the moves played.

After a move (and the opponent's reply) the finished search tree already
holds, below the node those moves lead to, everything the search found out
about the new position. `reroot` keeps exactly that subtree, re-indexed with
the node as the root, and clears every other node, so that the next search
(`tree_search.search(..., initial_tree=...)`) continues from it instead of
starting over. Every function here is pure and jit-able, batched over
games (mctx's `Tree` layout, `[B, num_nodes, ...]`).

Layout. mctx gives the node first expanded by simulation s the index s + 1,
so a node's parent always has a smaller index than the node. The kept nodes
are renumbered in their old order: the new root, the smallest index kept,
becomes `ROOT_INDEX` (0), parents keep smaller indices than their children,
and a search continuing a tree of n nodes gives its new nodes the indices
n, n + 1, ...

Capacity. A tree's number of nodes is static. A search of S simulations adds
at most S nodes, so it continues a tree of n nodes only if n + S fits in
the capacity; given more, it keeps the capacity − S most visited nodes
(`max_nodes` below). A node is visited more often than any of its children,
so these nodes form a subtree; an edge to a dropped child keeps its visit
count and value, and the child is recreated, freshly evaluated, when a
simulation next takes the edge.
"""

from __future__ import annotations

from typing import Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np

from alphago_jax.core.checks import check_int

Tree = mctx.Tree

# Fields whose cleared value is not zero (the others clear to zero).
_MINUS_ONE = {"parents": Tree.NO_PARENT,
              "action_from_parent": Tree.NO_PARENT,
              "children_index": Tree.UNVISITED}
# The per-node arrays (`[B, N, ...]`), embeddings aside.
NODE_FIELDS = ("node_visits", "raw_values", "node_values", "parents",
                "action_from_parent", "children_index",
                "children_prior_logits", "children_visits",
                "children_rewards", "children_discounts", "children_values")


def num_nodes(tree: Tree) -> chex.Array:
  """int32 `[B]`: the nodes each tree holds (every node made so far has at
  least one visit; a cleared slot has none)."""
  return jnp.sum(tree.node_visits > 0, axis=-1).astype(jnp.int32)


def capacity(tree: Tree) -> int:
  """The static number of node slots of a (batched) tree."""
  return tree.node_visits.shape[-1]


def _descendants(parents: chex.Array, node: chex.Array) -> chex.Array:
  """bool `[N]`: `node` and the nodes below it (one tree; `node` may be
  `UNVISITED`, then none). Every node walks up while its index exceeds
  `node`'s: a descendant stops on `node`, anything else below it."""
  n = parents.shape[0]
  target = jnp.where(node < 0, n, node)  # Nothing exceeds n: no walk.

  def cond(walk):
    return jnp.any(walk > target)

  def body(walk):
    return jnp.where(walk > target, parents[jnp.maximum(walk, 0)], walk)

  walk = jax.lax.while_loop(cond, body, jnp.arange(n, dtype=jnp.int32))
  return walk == target


def _most_visited(keep: chex.Array, visits: chex.Array,
                  max_nodes: int) -> chex.Array:
  """`keep` limited to its `max_nodes` most visited nodes (ties: lower
  index first, so a parent, always more visited, precedes its children)."""
  score = jnp.where(keep, visits, -1)
  order = jnp.argsort(-score, stable=True)
  rank = jnp.zeros_like(order).at[order].set(
      jnp.arange(order.shape[0], dtype=order.dtype))
  return keep & (rank < max_nodes)


def _compact(tree: Tree, keep: chex.Array) -> Tuple[Tree, chex.Array]:
  """One (unbatched) tree holding only the nodes in `keep` (closed under
  parents, its smallest index the new root), renumbered in order."""
  n = keep.shape[0]
  index = jnp.arange(n, dtype=jnp.int32)
  new_index = jnp.where(keep, jnp.cumsum(keep) - 1, -1).astype(jnp.int32)
  kept = jnp.sum(keep).astype(jnp.int32)
  # old_of_new[j]: the old index of new node j (0 past `kept`: masked).
  old_of_new = jnp.zeros((n,), jnp.int32).at[
      jnp.where(keep, new_index, n)].set(index, mode="drop")
  valid = index < kept

  def take(x, fill=0):
    mask = valid.reshape((n,) + (1,) * (x.ndim - 1))
    return jnp.where(mask, x[old_of_new], jnp.asarray(fill, x.dtype))

  def renumber(x):  # Old node indices (or -1) -> new ones (or -1).
    return jnp.where(x >= 0, new_index[jnp.maximum(x, 0)], -1)

  parents = take(renumber(tree.parents), Tree.NO_PARENT)
  updates = {f: take(getattr(tree, f), _MINUS_ONE.get(f, 0))
             for f in NODE_FIELDS}
  updates.update(
      parents=parents,
      # The new root's parent was not kept: it has none.
      action_from_parent=jnp.where(parents >= 0,
                                   updates["action_from_parent"],
                                   Tree.NO_PARENT),
      children_index=take(renumber(tree.children_index), Tree.UNVISITED),
      embeddings=jax.tree.map(take, tree.embeddings),
      # Which root actions are invalid is the next search's to say.
      root_invalid_actions=jnp.zeros_like(tree.root_invalid_actions))
  return tree.replace(**updates), kept


def _check_max_nodes(max_nodes: Optional[int]) -> None:
  check_int("max_nodes", max_nodes, 0, optional=True)


def subtree(tree: Tree, node: chex.Array, *,
            max_nodes: Optional[int] = None) -> Tuple[Tree, chex.Array]:
  """The subtree below `node`, re-rooted there.

  Args:
    tree: a batched tree `[B, N, ...]`.
    node: int `[B]`, the node of each tree to make the root; `UNVISITED`
      (any negative index) keeps nothing.
    max_nodes: keep at most this many nodes, the most visited (static;
      None: all).

  Returns:
    `(tree, kept)`: a tree of the same capacity holding the subtree (every
    kept node's statistics, children, prior logits and embedding unchanged;
    every other slot cleared as mctx clears a new tree;
    `root_invalid_actions` zero and `extra_data` passed through), and int32
    `[B]` the nodes kept (0: an empty tree, whose root the next search
    creates).
  """
  _check_max_nodes(max_nodes)
  batch, n = tree.node_visits.shape
  chex.assert_shape(node, (batch,))
  node = jnp.asarray(node, jnp.int32)
  node = jnp.where((node >= 0) & (node < n), node, Tree.UNVISITED)

  def one(t, c):
    # A slot with no visits was never made (or was cleared): not a node.
    keep = _descendants(t.parents, c) & (t.node_visits > 0)
    if max_nodes is not None and max_nodes < n:
      keep = _most_visited(keep, t.node_visits, max_nodes)
    return _compact(t, keep)

  extra = tree.extra_data
  out, kept = jax.vmap(one)(tree.replace(extra_data=None), node)
  return out.replace(extra_data=extra), kept


def follow(tree: Tree, actions: chex.Array) -> chex.Array:
  """int32 `[B]`: the node reached from each root by `actions` int `[B]`
  or `[B, K]` (K moves in turn), `UNVISITED` where a move leads out of the
  tree or is negative."""
  actions = jnp.asarray(actions)
  if actions.ndim == 1:
    actions = actions[:, None]
  batch = tree.node_visits.shape[0]
  chex.assert_rank(actions, 2)
  chex.assert_shape(actions, (batch, None))
  num_actions = tree.children_index.shape[-1]
  if not isinstance(actions, jax.core.Tracer):
    bad = np.asarray(actions) >= num_actions
    if bad.any():
      raise ValueError(f"actions must be < num_actions={num_actions} (or "
                       f"negative, to keep nothing); got "
                       f"{np.asarray(actions)[bad][0]}")
  rows = jnp.arange(batch)
  node = jnp.full((batch,), Tree.ROOT_INDEX, jnp.int32)
  for k in range(actions.shape[1]):
    a = actions[:, k].astype(jnp.int32)
    ok = (node >= 0) & (a >= 0)
    child = tree.children_index[rows, jnp.maximum(node, 0),
                                jnp.clip(a, 0, num_actions - 1)]
    node = jnp.where(ok, child, Tree.UNVISITED)
  return node


def reroot(tree: Tree, actions: chex.Array, *,
           max_nodes: Optional[int] = None) -> Tuple[Tree, chex.Array]:
  """Keeps the subtree of the position reached by `actions`.

  Args:
    tree: a finished search tree, batched `[B, N, ...]`.
    actions: int `[B]` (the move played) or `[B, K]` (the move and the
      replies that followed, e.g. our move and the opponent's); a negative
      action, or one the search never tried, keeps nothing.
    max_nodes: keep at most this many nodes, the most visited (static;
      None: all).

  Returns:
    `(tree, kept)` as `subtree`: the same capacity, the node reached as the
    root, and int32 `[B]` the number of nodes kept.
  """
  return subtree(tree, follow(tree, actions), max_nodes=max_nodes)


def find(tree: Tree, embedding) -> chex.Array:
  """int32 `[B]`: the lowest-indexed node of each tree whose embedding
  equals `embedding` (batched `[B, ...]`, exactly: meant for embeddings that
  are game states), or `UNVISITED`."""
  batch, n = tree.node_visits.shape
  same = tree.node_visits > 0
  for stored, wanted in zip(jax.tree.leaves(tree.embeddings),
                            jax.tree.leaves(embedding)):
    chex.assert_shape(wanted, (batch,) + stored.shape[2:])
    equal = stored == jnp.expand_dims(wanted, 1)
    same &= jnp.all(equal.reshape(batch, n, -1), axis=-1)
  first = jnp.argmax(same, axis=-1).astype(jnp.int32)
  return jnp.where(jnp.any(same, axis=-1), first, Tree.UNVISITED)


def clear(tree: Tree, rows: chex.Array) -> Tree:
  """`tree` with the trees of `rows` (bool `[B]`) emptied."""
  def blank(name, x):
    fill = jnp.asarray(_MINUS_ONE.get(name, 0), x.dtype)
    mask = rows.reshape(rows.shape + (1,) * (x.ndim - 1))
    return jnp.where(mask, fill, x)
  updates = {f: blank(f, getattr(tree, f)) for f in NODE_FIELDS}
  updates["embeddings"] = jax.tree.map(lambda x: blank("", x),
                                       tree.embeddings)
  return tree.replace(**updates)
