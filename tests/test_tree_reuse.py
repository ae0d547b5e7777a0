"""Tree reuse between moves: the kept subtree against a plain-Python walk of
the original tree, continuing an empty tree against a fresh search, visit
counts after a continued search, and AlphaGo's search finding the position
in its previous tree."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from alphago_jax.search import alphago, tree_reuse, tree_search

from test_alphago_search import GAME, policy_fn, roots, value_fn

# A toy model with 3 actions whose embedding is the path from the root
# written in bijective base 3 (unique per node), and whose prior, value and
# reward are fixed functions of it: real mctx trees, cheap to compile.
A = 3
B = 3
SIMS = 40


def toy_recurrent_fn(params, key, action, embedding):
  del params, key
  code = embedding * A + action.astype(jnp.int32) + 1
  x = code.astype(jnp.float32)
  prior = jnp.stack([jnp.sin(1.3 * x + k) for k in range(A)], -1)
  out = mctx.RecurrentFnOutput(reward=0.1 * jnp.cos(x),
                               discount=-jnp.ones_like(x),
                               prior_logits=prior, value=jnp.sin(0.7 * x))
  return out, code


def toy_root():
  code = jnp.zeros((B,), jnp.int32)
  x = jnp.arange(B, dtype=jnp.float32)
  return mctx.RootFnOutput(
      prior_logits=jnp.stack([jnp.cos(x + k) for k in range(A)], -1),
      value=0.3 * jnp.sin(x), embedding=code)


def select_root(key, tree, node, depth=0):
  """PUCT on raw Q, first index on ties (few ops: quick to compile)."""
  del key, depth
  visits = tree.children_visits[node].astype(jnp.float32)
  q = jnp.where(visits > 0, tree.qvalues(node), 0.0)
  prior = jax.nn.softmax(tree.children_prior_logits[node])
  n = tree.node_visits[node].astype(jnp.float32)
  return jnp.argmax(q + prior * jnp.sqrt(n) / (1 + visits)).astype(jnp.int32)


select = select_root


@functools.lru_cache(maxsize=None)
def toy_search(leaves_per_step=1, simulations=SIMS):
  def run(key, initial_tree):
    common = dict(params=(), rng_key=key, root=toy_root(),
                  recurrent_fn=toy_recurrent_fn,
                  num_simulations=simulations, initial_tree=initial_tree)
    if leaves_per_step == 1:
      return tree_search.search(root_action_selection_fn=select_root,
                                interior_action_selection_fn=select,
                                **common)
    return tree_search.search_with_virtual_loss(
        action_selection_fn=select_root, leaves_per_step=leaves_per_step,
        **common)
  return jax.jit(run)


EMPTY = {"parents": -1, "action_from_parent": -1, "children_index": -1}
CAPACITY = 2 * SIMS


def empty_tree(capacity=CAPACITY):
  """A batch of B empty trees (no node made yet: mctx's initial values)."""
  node, edge = (B, capacity), (B, capacity, A)
  fields = {f: np.full(edge if f.startswith("children") else node,
                       EMPTY.get(f, 0),
                       np.int32 if f in ("node_visits", "children_visits")
                       or f in EMPTY else np.float32)
            for f in tree_reuse.NODE_FIELDS}
  return mctx.Tree(**fields, embeddings=np.zeros(node, np.int32),
                   root_invalid_actions=np.zeros((B, A), np.float32),
                   extra_data=None)


@functools.lru_cache(maxsize=None)
def first_tree():
  """A search of SIMS simulations in trees of CAPACITY nodes."""
  return jax.device_get(toy_search()(jax.random.key(0), empty_tree()))


_subtree = jax.jit(tree_reuse.subtree, static_argnames="max_nodes")


def reroot(tree, actions, max_nodes=None):
  """`tree_reuse.reroot` with one compiled `subtree` for the toy trees."""
  return _subtree(tree, tree_reuse.follow(tree, actions),
                  max_nodes=max_nodes)


def row(tree, b):
  return jax.tree.map(lambda x: np.asarray(x[b]), tree)


def reachable(t, node, num_actions=A):
  """{path (tuple of actions): node index} below `node` (plain Python)."""
  found, stack = {}, [((), node)]
  while stack:
    path, n = stack.pop()
    found[path] = n
    for a in range(num_actions):
      child = int(t.children_index[n, a])
      if child >= 0:
        stack.append((path + (a,), child))
  return found


NODE_STATS = ("node_visits", "raw_values", "node_values", "embeddings")
EDGE_STATS = ("children_visits", "children_values", "children_prior_logits",
              "children_rewards", "children_discounts")


def assert_same_node(old, i, new, j, where):
  for f in NODE_STATS:
    assert getattr(old, f)[i] == getattr(new, f)[j], (where, f)
  for f in EDGE_STATS:
    np.testing.assert_array_equal(getattr(old, f)[i], getattr(new, f)[j],
                                  err_msg=f"{where} {f}")


def assert_cleared_from(t, n):
  assert (t.node_visits[n:] == 0).all() and (t.node_values[n:] == 0).all()
  assert (t.parents[n:] == -1).all() and (t.action_from_parent[n:] == -1
                                          ).all()
  assert (t.children_index[n:] == -1).all()
  assert (t.children_visits[n:] == 0).all()
  assert (t.children_prior_logits[n:] == 0).all()
  assert (t.embeddings[n:] == 0).all()


def assert_is_subtree(old, node, new, kept):
  """`new` holds exactly the subtree of `old` below `node`, root first."""
  want = reachable(old, node)
  got = reachable(new, 0)
  assert set(got) == set(want) and kept == len(want)
  for path, i in want.items():
    j = got[path]
    assert_same_node(old, i, new, j, path)
    if path:
      assert new.action_from_parent[j] == path[-1]
      assert new.parents[j] == got[path[:-1]] < j
  assert new.parents[0] == -1 and new.action_from_parent[0] == -1
  assert sorted(got.values()) == list(range(kept))
  assert_cleared_from(new, kept)


def test_reroot_keeps_exactly_the_chosen_subtree():
  tree = first_tree()
  visits = np.asarray(tree.children_visits[:, 0])
  # Row 0: the most visited move; row 1: the least visited tried one; row
  # 2: a negative action, which keeps nothing.
  tried = np.where(visits > 0, visits, 10**9)
  actions = np.array([visits[0].argmax(), tried[1].argmin(), -1])
  new, kept = jax.device_get(reroot(tree, actions))
  for b in range(2):
    old = row(tree, b)
    node = int(old.children_index[0, actions[b]])
    assert kept[b] == old.children_visits[0, actions[b]] > 0
    assert_is_subtree(old, node, row(new, b), kept[b])
  assert kept[2] == 0
  assert_cleared_from(row(new, 2), 0)
  # A move and the reply: the grandchild's subtree, the same as rerooting
  # twice; a reply the search never tried keeps nothing.
  old = row(tree, 0)
  a = int(actions[0])
  child = int(old.children_index[0, a])
  replies = old.children_visits[child]
  reply = int(replies.argmax())
  untried = [r for r in range(A) if old.children_index[child, r] < 0]
  pairs = np.array([[a, reply]] * B if not untried else
                   [[a, reply], [a, reply], [a, untried[0]]])
  pair_tree, pair_kept = jax.device_get(reroot(tree, pairs))
  assert_is_subtree(old, int(old.children_index[child, reply]),
                    row(pair_tree, 0), pair_kept[0])
  twice, twice_kept = jax.device_get(
      reroot(reroot(tree, pairs[:, 0])[0], pairs[:, 1]))
  np.testing.assert_array_equal(twice_kept, pair_kept)
  for x, y in zip(jax.tree.leaves(twice), jax.tree.leaves(pair_tree)):
    np.testing.assert_array_equal(x, y)
  if untried:
    assert pair_kept[2] == 0


def test_truncated_reroot_keeps_the_most_visited_nodes():
  tree = first_tree()
  old = row(tree, 0)
  a = int(old.children_visits[0].argmax())
  node = int(old.children_index[0, a])
  limit = 5
  full = reachable(old, node)
  assert len(full) > limit
  new, kept = jax.device_get(reroot(tree, np.full((B,), a),
                                    max_nodes=limit))
  new = row(new, 0)
  assert kept[0] == limit
  got = reachable(new, 0)
  assert len(got) == limit and set(got) <= set(full)
  # The 5 most visited of the subtree (ties to the lower old index).
  by_visits = sorted(full.values(),
                     key=lambda i: (-old.node_visits[i], i))[:limit]
  assert sorted(full[p] for p in got) == sorted(by_visits)
  for path, j in got.items():
    # Statistics unchanged, also of edges whose child was dropped.
    assert_same_node(old, full[path], new, j, path)
  assert_cleared_from(new, limit)


# Virtual loss (K = 2) compiles two more searches: slow suite.
LEAVES = [1, pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("leaves_per_step", LEAVES)
def test_continuing_an_empty_tree_is_a_fresh_search(leaves_per_step):
  key = jax.random.key(3)
  fresh = jax.device_get(toy_search(leaves_per_step)(key, None))
  assert tree_reuse.capacity(fresh) == SIMS + 1
  nothing, kept = reroot(first_tree(), -np.ones((B,), np.int32))
  assert (np.asarray(kept) == 0).all()
  got = jax.device_get(toy_search(leaves_per_step)(key, nothing))
  assert tree_reuse.capacity(got) == 2 * SIMS
  # The same tree in the first SIMS + 1 slots, the rest never used.
  first = jax.tree.map(lambda x: x[:, :SIMS + 1], got)
  for name in tree_reuse.NODE_FIELDS + ("embeddings",):
    np.testing.assert_array_equal(getattr(first, name),
                                  getattr(fresh, name), err_msg=name)
  for b in range(B):
    assert_cleared_from(row(got, b), SIMS + 1)


def test_a_tree_too_full_to_continue_starts_afresh():
  # The whole first tree (SIMS + 1 nodes) in 2·SIMS slots leaves room for
  # SIMS − 1 new nodes only: the search starts afresh, as `start_tree`
  # says, rather than writing past the end.
  key = jax.random.key(3)
  got = jax.device_get(toy_search()(key, first_tree()))
  fresh = jax.device_get(toy_search()(key, None))
  np.testing.assert_array_equal(got.node_visits[:, :SIMS + 1],
                                fresh.node_visits)
  assert (got.node_visits[:, SIMS + 1:] == 0).all()


@pytest.mark.parametrize("leaves_per_step", LEAVES)
def test_continued_search_adds_its_simulations(leaves_per_step):
  tree = first_tree()
  actions = np.asarray(tree.children_visits[:, 0]).argmax(-1)
  start, kept = jax.device_get(reroot(tree, actions))
  root_visits = np.asarray(start.node_visits[:, 0])
  out = jax.device_get(toy_search(leaves_per_step)(jax.random.key(5),
                                                   start))
  assert tree_reuse.capacity(out) == 2 * SIMS
  # The root's visits: the kept ones plus one per new simulation.
  np.testing.assert_array_equal(out.node_visits[:, 0], root_visits + SIMS)
  np.testing.assert_array_equal(
      out.children_visits[:, 0].sum(-1),
      np.asarray(start.children_visits[:, 0]).sum(-1) + SIMS)
  nodes = np.asarray(tree_reuse.num_nodes(out))
  assert (nodes > kept).all() and (nodes <= kept + SIMS).all()
  for b in range(B):
    t = row(out, b)
    # Kept nodes stay where they were; new ones follow them, and each
    # path's embedding is its own code (the parent links are right).
    np.testing.assert_array_equal(t.embeddings[:kept[b]],
                                  row(start, b).embeddings[:kept[b]])
    for path, j in reachable(t, 0).items():
      code = int(np.asarray(start.embeddings)[b, 0])
      for a in path:
        code = code * A + a + 1
      assert t.embeddings[j] == code
      if leaves_per_step == 1:
        # 1 (its creation) + its edges' visits; under virtual loss a leaf
        # reached twice in a step is evaluated twice, so it has more.
        assert t.node_visits[j] == 1 + t.children_visits[j].sum()


def test_find_locates_a_node_by_its_embedding():
  tree = first_tree()
  t = row(tree, 1)
  some = [0] + [int(i) for i in np.flatnonzero(t.node_visits > 0)[-2:]]
  codes = np.array([t.embeddings[i] for i in some], np.int32)
  b1 = jax.tree.map(lambda x: x[np.array([1, 1, 1])], tree)
  np.testing.assert_array_equal(tree_reuse.find(b1, codes), some)
  missing = np.full((B,), 10**6, np.int32)
  assert (np.asarray(tree_reuse.find(tree, missing)) == -1).all()


def test_bad_arguments_are_named():
  tree = first_tree()
  with pytest.raises(ValueError, match="num_actions=3"):
    tree_reuse.reroot(tree, np.full((B,), 3))
  with pytest.raises(ValueError, match="max_nodes"):
    tree_reuse.reroot(tree, np.zeros((B,), np.int32), max_nodes=-1)
  with pytest.raises(ValueError, match="needs at least 81"):
    tree_search.start_tree(toy_root(), 80, jnp.zeros((B, A)), None, tree)


# -- AlphaGo's search on tic-tac-toe ------------------------------------------

AG_SIMS = 24
PLAIN = alphago.AlphaGoStatic(num_simulations=AG_SIMS, use_rollouts=False)
REUSE = dataclasses.replace(PLAIN, reuse_tree=True)
PARAMS = alphago.AlphaGoParams(c_puct=jnp.float32(1.0),
                               mixing=jnp.float32(0.0))
VARS = (None, jnp.float32(0.0))


@functools.lru_cache(maxsize=None)
def ag_search(static):
  def run(key, states, tree):
    return alphago.alphago_search(GAME, policy_fn, value_fn, VARS, key,
                                  states, config=static, params=PARAMS,
                                  tree=tree)
  return jax.jit(run)


@functools.lru_cache(maxsize=None)
def ag_first():
  """The first search, from an all-empty tree (one compiled program for
  every reuse test)."""
  shapes = jax.eval_shape(
      lambda: alphago.alphago_search(GAME, policy_fn, value_fn, VARS,
                                     jax.random.key(0), roots(),
                                     config=REUSE, params=PARAMS))
  empty = jax.tree.map(lambda x: np.zeros(x.shape, x.dtype),
                       shapes.search_tree)
  return jax.device_get(ag_search(REUSE)(jax.random.key(0), roots(), empty))


def test_alphago_reuse_finds_the_position_after_a_move_pair():
  # The search is given its whole previous tree and finds the position
  # after our move and the reply in it by comparing game states.
  first = ag_first()
  assert tree_reuse.capacity(first.search_tree) == 2 * AG_SIMS
  assert (first.reused_nodes == 0).all()
  visits = np.asarray(first.search_tree.children_visits)
  ours = np.asarray(first.action)
  rows = np.arange(4)
  child = np.asarray(first.search_tree.children_index)[rows, 0, ours]
  reply = visits[rows, child].argmax(-1)  # The reply the search expected.
  states = jax.vmap(GAME.step)(jax.vmap(GAME.step)(roots(), ours), reply)
  grandchild = np.asarray(first.search_tree.children_index)[rows, child,
                                                             reply]
  assert (grandchild > 0).all()
  key = jax.random.key(1)
  by_state = jax.device_get(ag_search(REUSE)(key, states,
                                             first.search_tree))
  # It kept the grandchild's whole subtree (counted in plain Python).
  kept = [len(reachable(row(first.search_tree, b), grandchild[b],
                        num_actions=9)) for b in rows]
  np.testing.assert_array_equal(by_state.reused_nodes, kept)
  # Visits: the kept root's plus the new simulations.
  kept_visits = visits[rows, grandchild].sum(-1)
  np.testing.assert_array_equal(by_state.visit_counts.sum(-1),
                                kept_visits + AG_SIMS)


def test_alphago_reuse_with_nothing_kept_is_the_plain_search():
  first = ag_first()
  key = jax.random.key(2)
  # The roots again: the search finds them at its roots and keeps all; the
  # empty board is nowhere in trees of the other roots, so a tree rolled
  # by one row keeps nothing.
  other = jax.tree.map(lambda x: np.roll(x, 1, axis=0), first.search_tree)
  out = jax.device_get(ag_search(REUSE)(key, roots(), other))
  plain = jax.device_get(ag_search(PLAIN)(key, roots(), None))
  empty_board = 2  # ROOTS[2] is [] in test_alphago_search.
  assert out.reused_nodes[empty_board] == 0
  assert plain.search_tree is None and plain.reused_nodes is None
  for f in ("action", "visit_counts", "q_values", "root_value"):
    np.testing.assert_array_equal(getattr(out, f)[empty_board],
                                  getattr(plain, f)[empty_board], err_msg=f)


def test_alphago_reuse_config_errors():
  with pytest.raises(ValueError, match="reuse_tree=False"):
    alphago.AlphaGoStatic(num_simulations=8, max_reused_nodes=4)
  with pytest.raises(ValueError, match="max_reused_nodes"):
    alphago.AlphaGoStatic(num_simulations=8, reuse_tree=True,
                          max_reused_nodes=0)
  assert alphago.AlphaGoSearchConfig(
      num_simulations=8, reuse_tree=True,
      max_reused_nodes=3).static().tree_capacity == 11
  tree = ag_first().search_tree
  with pytest.raises(ValueError, match="reuse_tree=False"):
    alphago.alphago_search(GAME, policy_fn, value_fn, VARS,
                           jax.random.key(0), roots(), config=PLAIN,
                           params=PARAMS, tree=tree)
  small = dataclasses.replace(REUSE, max_reused_nodes=4)
  with pytest.raises(ValueError, match="this search's trees have 28"):
    alphago.alphago_search(GAME, policy_fn, value_fn, VARS,
                           jax.random.key(0), roots(), config=small,
                           params=PARAMS, tree=tree)
