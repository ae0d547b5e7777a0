"""mctx's generic tree search, with a backup that scales to big batches.

`search` has exactly the signature and semantics of `mctx.search` and uses
mctx's own `Tree` and `expand`; tests check that it builds the same tree, bit
for bit. The selection walk (`simulate`) and the backup differ only in how
they are written.

Why: `mctx.search` backs up with a `jax.vmap`-ed `while_loop` whose carry is
the whole tree. Under vmap a loop with a per-game predicate becomes "run the
body for every game, then select old or new carry", and that select copies
every tree array on every step up the path. The copy grows with
batch x num_simulations: at batch 1024 and 1000 simulations it made a
simulation 100x slower than at 100 simulations. Here the loop runs on the
whole batch with one scalar predicate ("is any game still below its root?")
and writes with scatters, which XLA performs in place.

The selection walk is batched the same way, and its first step is peeled:
mctx picks the root or interior selection function with a `lax.cond` on
`depth == 0`, which under `vmap` evaluates both functions for every game at
every level. Every game starts at the root together, so the first step is
the root function for all and every later step the interior function.

`search_with_virtual_loss` is the same loop selecting K leaves per step in
one tree (earlier selections of the step visible to the selection function
as pending counts, for a virtual loss), evaluated in one batch of K·B.

Both continue an earlier tree when given `initial_tree` (tree reuse between
moves, `tree_reuse.reroot`): the tree keeps its capacity (at least
`num_simulations` + 1 nodes), the search adds `num_simulations` simulations
to what it holds, and a row holding no tree starts from `root` exactly as a
fresh search does (same keys, same tree); see `start_tree`.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import mctx
from mctx._src import search as mctx_search

from alphago_jax.search import tree_reuse

Tree = mctx.Tree


def backward(tree: Tree, leaf_index: chex.Array) -> Tree:
  """Backs the leaf values up to the root, for a batch of trees.

  Same arithmetic as mctx's backward: along the path, the value seen from a
  parent is `reward + discount * value`, node values are running means and
  visit counts are incremented.

  Args:
    tree: a batched tree `[B, ...]`.
    leaf_index: int `[B]`, the node just expanded in each tree.

  Returns:
    The updated tree.
  """
  batch = leaf_index.shape[0]
  rows = jnp.arange(batch)
  leaf_index = leaf_index.astype(jnp.int32)

  def cond(carry):
    _, _, _, index = carry
    return jnp.any(index != Tree.ROOT_INDEX)

  def body(carry):
    # `index_value` is node_values[index], carried rather than read back:
    # reading the array that the same step scatters into made XLA copy all
    # of node_values ([B, num_nodes]) on every step up the path.
    tree, leaf_value, index_value, index = carry
    active = index != Tree.ROOT_INDEX
    # Finished rows point at the root and rewrite its current values: a no-op.
    parent = jnp.where(active, tree.parents[rows, index], Tree.ROOT_INDEX)
    action = jnp.where(active, tree.action_from_parent[rows, index], 0)
    count = tree.node_visits[rows, parent]
    new_leaf_value = (tree.children_rewards[rows, parent, action] +
                      tree.children_discounts[rows, parent, action] *
                      leaf_value)
    old_parent_value = tree.node_values[rows, parent]
    parent_value = (old_parent_value * count + new_leaf_value) / (count + 1.0)
    old_child_value = tree.children_values[rows, parent, action]
    old_child_visits = tree.children_visits[rows, parent, action]
    tree = tree.replace(
        node_values=tree.node_values.at[rows, parent].set(
            jnp.where(active, parent_value, old_parent_value)),
        node_visits=tree.node_visits.at[rows, parent].set(
            jnp.where(active, count + 1, count)),
        children_values=tree.children_values.at[rows, parent, action].set(
            jnp.where(active, index_value, old_child_value)),
        children_visits=tree.children_visits.at[rows, parent, action].set(
            jnp.where(active, old_child_visits + 1, old_child_visits)))
    return (tree, jnp.where(active, new_leaf_value, leaf_value),
            jnp.where(active, parent_value, index_value),
            jnp.where(active, parent, index))

  leaf_value = tree.node_values[rows, leaf_index]
  tree, _, _, _ = jax.lax.while_loop(
      cond, body, (tree, leaf_value, leaf_value, leaf_index))
  return tree


def simulate(rng_keys: chex.PRNGKey, tree: Tree, root_action_selection_fn,
             interior_action_selection_fn, max_depth: int
             ) -> tuple[chex.Array, chex.Array]:
  """Walks each tree from its root to an unvisited action (or `max_depth`).

  The batched equivalent of mctx's `simulate` (which is vmapped over games):
  same keys, same calls, same result.

  Args:
    rng_keys: `[B]` keys, consumed.
    tree: a batched tree `[B, ...]`.
    root_action_selection_fn: mctx root selection `(key, tree, node)` for one
      (unbatched) tree.
    interior_action_selection_fn: mctx interior selection
      `(key, tree, node, depth)` for one tree.
    max_depth: deepest path.

  Returns:
    `(parent_index, action)`, int32 `[B]` each: the node reached and the
    action to expand from it.
  """
  batch = rng_keys.shape[0]
  rows = jnp.arange(batch)
  split = jax.vmap(jax.random.split)
  depth_dtype = tree.children_prior_logits.dtype

  # Level 0: every game is at its root.
  keys = split(rng_keys)
  node_index = jnp.full((batch,), Tree.ROOT_INDEX, jnp.int32)
  action = jax.vmap(root_action_selection_fn)(keys[:, 1], tree, node_index)
  next_node_index = tree.children_index[rows, node_index, action]
  depth = jnp.ones((batch,), depth_dtype)
  continuing = (next_node_index != Tree.UNVISITED) & (depth < max_depth)

  def cond(carry):
    return jnp.any(carry[-1])

  def body(carry):
    rng_key, node_index, action, next_node_index, depth, continuing = carry
    keys = split(rng_key)
    # Games that stopped keep their result; their keys are never read again.
    new_node = next_node_index
    new_action = jax.vmap(interior_action_selection_fn)(
        keys[:, 1], tree, new_node, depth)
    new_next = tree.children_index[rows, new_node, new_action]
    new_depth = depth + 1
    new_continuing = (new_next != Tree.UNVISITED) & (new_depth < max_depth)
    keep = lambda new, old: jnp.where(continuing, new, old)
    return (keys[:, 0], keep(new_node, node_index), keep(new_action, action),
            keep(new_next, next_node_index), keep(new_depth, depth),
            keep(new_continuing, continuing))

  carry = (keys[:, 0], node_index, action, next_node_index, depth,
           continuing)
  _, node_index, action, _, _, _ = jax.lax.while_loop(cond, body, carry)
  return node_index, action


def search(
    params: Any,
    rng_key: chex.PRNGKey,
    *,
    root: mctx.RootFnOutput,
    recurrent_fn: mctx.RecurrentFn,
    root_action_selection_fn,
    interior_action_selection_fn,
    num_simulations: int,
    max_depth: Optional[int] = None,
    invalid_actions: Optional[chex.Array] = None,
    extra_data: Any = None,
    loop_fn=jax.lax.fori_loop,
    initial_tree: Optional[Tree] = None) -> Tree:
  """Drop-in for `mctx.search` (same arguments, same tree); see module doc.

  `initial_tree`: an earlier search's tree re-rooted at these roots
  (`tree_reuse.reroot`) to continue, or None; see `start_tree`.
  """
  batch_size = root.value.shape[0]
  rows = jnp.arange(batch_size)
  if invalid_actions is None:
    invalid_actions = jnp.zeros_like(root.prior_logits)
  tree, held = start_tree(root, num_simulations, invalid_actions,
                          extra_data, initial_tree)
  if max_depth is None:
    max_depth = tree_reuse.capacity(tree) - 1

  def body_fun(sim, loop_state):
    rng_key, tree = loop_state
    rng_key, simulate_key, expand_key = jax.random.split(rng_key, 3)
    parent_index, action = simulate(
        jax.random.split(simulate_key, batch_size), tree,
        root_action_selection_fn, interior_action_selection_fn, max_depth)
    # The node first expanded by simulation `sim` gets index `held + sim`
    # (`sim + 1` in a fresh tree).
    next_node_index = tree.children_index[rows, parent_index, action]
    next_node_index = jnp.where(next_node_index == Tree.UNVISITED,
                                held + sim, next_node_index)
    tree = mctx_search.expand(params, expand_key, tree, recurrent_fn,
                              parent_index, action, next_node_index)
    return rng_key, backward(tree, next_node_index)

  _, tree = loop_fn(0, num_simulations, body_fun, (rng_key, tree))
  return tree


def start_tree(root: mctx.RootFnOutput, num_simulations: int,
               invalid_actions: chex.Array, extra_data: Any,
               tree: Optional[Tree]) -> Tuple[Tree, chex.Array]:
  """The tree a search of `num_simulations` starts from, and int32 `[B]`
  the nodes it holds (new nodes take the next indices).

  Without `tree`: mctx's fresh tree of `num_simulations` + 1 nodes, the
  root from `root`. With one (`[B, N, ...]`, N >= `num_simulations` + 1,
  each row empty or rooted at its root state, as `tree_reuse.reroot` leaves
  it): each row continues its tree if it holds at most N −
  `num_simulations` nodes, so that every new node fits (`reroot`'s
  `max_nodes` keeps the most visited); an empty row, or one holding more,
  gets a fresh root from `root`, exactly as without `tree`. Either way the
  root's invalid actions are `invalid_actions` and `extra_data` is
  `extra_data`.
  """
  batch_size = root.value.shape[0]
  if tree is None:
    fresh = mctx_search.instantiate_tree_from_root(
        root, num_simulations, root_invalid_actions=invalid_actions,
        extra_data=extra_data)
    return fresh, jnp.ones((batch_size,), jnp.int32)
  size = tree_reuse.capacity(tree)
  if size < num_simulations + 1:
    raise ValueError(f"initial_tree has {size} nodes; a search of "
                     f"{num_simulations} simulations needs at least "
                     f"{num_simulations + 1}")
  chex.assert_shape(tree.children_index,
                    (batch_size, size, root.prior_logits.shape[-1]))
  fresh = mctx_search.instantiate_tree_from_root(
      root, size - 1, root_invalid_actions=invalid_actions,
      extra_data=extra_data)
  held = tree_reuse.num_nodes(tree)
  use = (held > 0) & (held <= size - num_simulations)
  pick = lambda new, old: jnp.where(
      use.reshape(use.shape + (1,) * (new.ndim - 1)), old, new)
  fields = {f: pick(getattr(fresh, f), getattr(tree, f))
            for f in tree_reuse.NODE_FIELDS}
  fields["embeddings"] = jax.tree.map(pick, fresh.embeddings,
                                      tree.embeddings)
  return fresh.replace(**fields), jnp.where(use, held, 1)


def _add_pending(pending: chex.Array, tree: Tree, parent: chex.Array,
                 action: chex.Array) -> chex.Array:
  """Adds one pending traversal to every edge on the path root -> `parent`
  -> `action`, for a batch of trees. `pending` is float `[B, nodes, A]`."""
  batch = parent.shape[0]
  rows = jnp.arange(batch)
  pending = pending.at[rows, parent, action].add(1.0)

  def cond(carry):
    return jnp.any(carry[1] != Tree.ROOT_INDEX)

  def body(carry):
    pending, node = carry
    active = node != Tree.ROOT_INDEX
    up = jnp.where(active, tree.parents[rows, node], Tree.ROOT_INDEX)
    a = jnp.where(active, tree.action_from_parent[rows, node], 0)
    pending = pending.at[rows, up, a].add(jnp.where(active, 1.0, 0.0))
    return pending, jnp.where(active, up, node)

  return jax.lax.while_loop(cond, body, (pending, parent))[0]


def search_with_virtual_loss(
    params: Any,
    rng_key: chex.PRNGKey,
    *,
    root: mctx.RootFnOutput,
    recurrent_fn: mctx.RecurrentFn,
    action_selection_fn,
    num_simulations: int,
    leaves_per_step: int,
    max_depth: Optional[int] = None,
    invalid_actions: Optional[chex.Array] = None,
    initial_tree: Optional[Tree] = None) -> Tree:
  """`search` selecting K = `leaves_per_step` leaves per step in the same
  tree, evaluating them in one `recurrent_fn` call of batch K·B, then
  backing each up.

  While a step selects, `tree.extra_data` holds float `[B, nodes, A]`: the
  number of this step's earlier selections through each edge, so that
  `action_selection_fn` (one function for root and interior, mctx's
  signature) can apply a virtual loss and spread the K leaves. It is zero
  outside selection. Two selections of a step may reach the same unexpanded
  edge; the second then re-evaluates the node the first created (mctx's
  treatment of a revisited leaf). With K = 1 this is `search`, key for key.

  Args:
    num_simulations: a multiple of `leaves_per_step`.
    initial_tree: as `search` (its `extra_data` is replaced).
    Others: as `search`.

  Returns:
    The tree (its `extra_data` zero).
  """
  k = leaves_per_step
  if num_simulations % k:
    raise ValueError(f"num_simulations={num_simulations} is not a multiple "
                     f"of leaves_per_step={k}")
  batch_size = root.value.shape[0]
  rows = jnp.arange(batch_size)
  if invalid_actions is None:
    invalid_actions = jnp.zeros_like(root.prior_logits)
  num_actions = root.prior_logits.shape[-1]
  nodes = (num_simulations + 1 if initial_tree is None
           else tree_reuse.capacity(initial_tree))
  zeros = jnp.zeros((batch_size, nodes, num_actions), jnp.float32)
  tree, held = start_tree(root, num_simulations, invalid_actions, zeros,
                          initial_tree)
  if max_depth is None:
    max_depth = nodes - 1

  def step(i, loop_state):
    rng_key, tree = loop_state
    rng_key, simulate_key, expand_key = jax.random.split(rng_key, 3)
    keys = (simulate_key[None] if k == 1
            else jax.random.split(simulate_key, k))

    def select(j, carry):
      tree, parents, actions = carry
      parent, action = simulate(
          jax.random.split(keys[j], batch_size), tree, action_selection_fn,
          action_selection_fn, max_depth)
      tree = tree.replace(
          extra_data=_add_pending(tree.extra_data, tree, parent, action))
      return (tree, parents.at[j].set(parent), actions.at[j].set(action))

    empty = jnp.zeros((k, batch_size), jnp.int32)
    tree, parents, actions = jax.lax.fori_loop(0, k, select,
                                               (tree, empty, empty))
    tree = tree.replace(extra_data=zeros)
    embedding = jax.tree.map(
        lambda x: x[rows[None], parents].reshape((k * batch_size,)
                                                 + x.shape[2:]),
        tree.embeddings)
    out, next_embedding = recurrent_fn(params, expand_key,
                                       actions.reshape(-1), embedding)
    per_leaf = lambda x: x.reshape((k, batch_size) + x.shape[1:])
    out, next_embedding = jax.tree.map(per_leaf, (out, next_embedding))

    def expand_one(j, tree):
      parent, action = parents[j], actions[j]
      index = tree.children_index[rows, parent, action]
      index = jnp.where(index == Tree.UNVISITED, held + i * k + j, index)
      # mctx's expand with this leaf's precomputed evaluation.
      ready = jax.tree.map(lambda x: x[j], (out, next_embedding))
      tree = mctx_search.expand(params, None, tree, lambda *_: ready, parent,
                                action, index)
      return backward(tree, index)

    return rng_key, jax.lax.fori_loop(0, k, expand_one, tree)

  _, tree = jax.lax.fori_loop(0, num_simulations // k, step, (rng_key, tree))
  return tree
