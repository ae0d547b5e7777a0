"""AlphaGo's search (Silver et al. 2016): PUCT with a policy prior and leaves
valued by a mix of a value network and rollouts.

Selection, at every node: a = argmax_a Q(s, a) + u(s, a) with

    u(s, a) = c_puct · P(s, a) · √N(s) / (1 + N(s, a)),

Q(s, a) the raw mean value of the child in [-1, 1] from the mover's view
(mctx's `qvalues`, no normalisation; 0 for an unvisited child: AlphaGo's
initial Q), P the prior (softmax of the policy's legal logits, computed when
the node is created) and N(s) mctx's visit count of the node. That count is
Σ_b N(s, b) + 1, the evaluation that created the node included, so a fresh
node follows the prior; with the paper's Σ_b N(s, b) every u is 0 there and
the first choice is a tie-break. Illegal actions are never selected (read
from each node's game state). The move played is the most visited.

Leaf evaluation, inside mctx's `recurrent_fn`, for the new node s_L:

    V(s_L) = (1 − λ) · v(s_L) + λ · z_L,

v the value network, z_L the mean outcome of `rollouts_per_leaf` playouts
from s_L to the end of the game (for Go, the lean playout path
`games.GoPlayout` with a rollout policy by name). Both are from the view of
the player to move at s_L; a terminal s_L is worth 0 (its outcome was paid on
the edge into it; signs and discounts as in `alphazero.py`). The root is
evaluated the same way.

λ (`mixing`) is a traced parameter. What runs:

* static flags `use_value` / `use_rollouts` (by default from λ at config
  construction: `use_value = λ < 1`, `use_rollouts = λ > 0`) decide which
  code exists: λ fixed at 0 compiles no rollout, λ fixed at 1 no value
  network;
* with both, `jax.lax.cond` on λ runs only the value network when λ = 0 and
  only the rollouts when λ = 1. Under `jax.vmap` over λ (a sweep) the cond
  becomes a select and both branches run for every value: inherent to
  batching.

Virtual loss: with `leaves_per_step` K > 1, each step selects K leaves in
the same tree, every selection seeing the earlier ones of the step as n_vl
lost visits per edge (`virtual_loss`, traced), evaluates the K leaves in one
batch and backs each up (`tree_search.search_with_virtual_loss`): AlphaGo's
way of keeping parallel evaluators on different lines, here synchronous.

Tree reuse (static `reuse_tree`, off by default): the search returns its
tree, and the next search given it (`tree=`) keeps the subtree of the node
holding its root position, found by comparing game states
(`tree_reuse.find`; nothing is kept where the position is not in the
tree), and adds `num_simulations` new simulations to it. The tree's
capacity is `num_simulations` + `max_reused_nodes` (default twice the
simulations), so that up to `max_reused_nodes` nodes are carried over, the
most visited when there are more (`tree_reuse`). A kept root keeps the prior
it was given as a child: the same network on the same position, so the
same prior as a fresh root.

Random symmetry (traced `random_symmetry`, 0 or 1): the prior and v see
each evaluated position, root and leaves, under one of the board's 8
symmetries drawn per evaluation (keys folded from the evaluation's own, so
rollouts keep theirs), the prior mapped back to the board as it stands.
Games qualify when they observe `[N, N, C]` boards and number actions `row
* N + col` (pass last or absent).

Not reproduced from the paper: the expansion threshold (AlphaGo expanded a
leaf after 40 visits; here every simulation expands one node, as mctx does),
asynchronous evaluation and the tree policy.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable, NamedTuple, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np
from flax import struct
from mctx._src import search as mctx_search

from alphago_jax.core.checks import check_bool, check_int
from alphago_jax.core.registry import Registry
from alphago_jax.games import base as game_base
from alphago_jax.games import symmetry
from alphago_jax.search import base
from alphago_jax.search import params as params_lib
from alphago_jax.search.rollout import hash_prng_key, rollout_fn
from alphago_jax.search import tree_reuse
from alphago_jax.search import tree_search
from alphago_jax.search.uct import make_transition
from alphago_jax.core.types import MASKED_LOGIT, EvaluateFn, PolicyFn, ValueFn


@struct.dataclass
class AlphaGoParams:
  """The traced parameters of `alphago_search` (float32 scalars, or `[P]`
  when stacked for a sweep).

  Attributes:
    c_puct: the exploration constant (AlphaGo: 5), on raw Q in [-1, 1].
    mixing: λ in [0, 1], the rollouts' weight in the leaf value.
    virtual_loss: n_vl, the losses each pending selection adds to the edges
      it passed (AlphaGo: 3); used only with `leaves_per_step` > 1.
    rollout_temperature: > 0, the rollout policy's logits are divided by it
      (1: the policy as trained; uniform rollouts ignore it).
    random_symmetry: 1: the networks see each evaluated position under one
      of the board's 8 symmetries, drawn at random per evaluation, the
      prior mapped back (AlphaGo's practice: the tree then averages the
      networks' orientation errors); 0: as it stands. Rollouts are
      unaffected.
  """
  c_puct: chex.Array
  mixing: chex.Array
  virtual_loss: chex.Array = 3.0
  rollout_temperature: chex.Array = 1.0
  random_symmetry: chex.Array = 0.0

  BOUNDS = {"c_puct": (0, None, False), "mixing": (0, 1, False),
            "virtual_loss": (0, None, False),
            "rollout_temperature": (0, None, True),
            "random_symmetry": (0, 1, False)}

  def check(self) -> "AlphaGoParams":
    """Raises ValueError naming a concrete field out of range; returns self."""
    params_lib.check_params(self, self.BOUNDS)
    flag = self.random_symmetry
    if params_lib.is_concrete(flag) and not np.all(
        (np.asarray(flag) == 0) | (np.asarray(flag) == 1)):
      raise ValueError(f"random_symmetry must be 0 or 1, got {flag!r}")
    return self


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlphaGoStatic:
  """What fixes the compiled search (see `AlphaGoSearchConfig`); hashable."""
  num_simulations: int
  use_value: bool = True
  use_rollouts: bool = True
  rollouts_per_leaf: int = 1
  rollout_policy: str = "random"
  max_depth: int | None = None
  leaves_per_step: int = 1
  reuse_tree: bool = False
  max_reused_nodes: int | None = None
  variant: str = "puct"

  def __post_init__(self):
    base.check_num_simulations(self.num_simulations)
    if not isinstance(self.variant, str) or not self.variant:
      raise ValueError(f"variant must be a search variant's name, got "
                       f"{self.variant!r}")
    check_bool("reuse_tree", self.reuse_tree)
    if self.max_reused_nodes is not None:
      check_int("max_reused_nodes", self.max_reused_nodes, 1)
      if not self.reuse_tree:
        raise ValueError("max_reused_nodes is set but reuse_tree=False")
    check_int("leaves_per_step", self.leaves_per_step, 1)
    if self.num_simulations % self.leaves_per_step:
      raise ValueError(
          f"num_simulations={self.num_simulations} must be a multiple of "
          f"leaves_per_step={self.leaves_per_step}")
    for name in ("use_value", "use_rollouts"):
      check_bool(name, getattr(self, name))
    if not (self.use_value or self.use_rollouts):
      raise ValueError("use_value and use_rollouts are both False: a leaf "
                       "needs a value network or rollouts")
    check_int("rollouts_per_leaf", self.rollouts_per_leaf, 1)
    if not (isinstance(self.rollout_policy, str)
            or callable(self.rollout_policy)):
      raise ValueError(f"rollout_policy must be a name or a RolloutPolicy, "
                       f"got {self.rollout_policy!r}")
    if self.max_depth is not None:
      check_int("max_depth", self.max_depth, 1)

  @property
  def tree_capacity(self) -> int:
    """Nodes of the search tree: one per simulation and the root, plus
    room for the nodes carried over with `reuse_tree`."""
    if not self.reuse_tree:
      return self.num_simulations + 1
    reused = (self.num_simulations if self.max_reused_nodes is None
              else self.max_reused_nodes)
    return self.num_simulations + reused

  def check_mixing(self, mixing) -> None:
    """λ must not ask for a leaf evaluator this program does not have
    (checked where λ is concrete)."""
    if not params_lib.is_concrete(mixing):
      return
    lam = np.asarray(mixing)
    if not self.use_rollouts and bool(np.any(lam != 0)):
      raise ValueError(f"mixing={mixing!r} needs rollouts, but "
                       "use_rollouts=False (it allows only mixing=0)")
    if not self.use_value and bool(np.any(lam != 1)):
      raise ValueError(f"mixing={mixing!r} needs the value network, but "
                       "use_value=False (it allows only mixing=1)")


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlphaGoSearchConfig:
  """AlphaGo's search; `split()` gives `(AlphaGoStatic, AlphaGoParams)`.

  Attributes:
    num_simulations: simulations (one new node each) per move.
    c_puct: exploration constant on raw Q (traced).
    mixing: λ, the rollouts' weight in V = (1 − λ) v + λ z (traced;
      AlphaGo: 0.5).
    use_value: compile the value network in; None: λ < 1.
    use_rollouts: compile rollouts in; None: λ > 0.
    rollouts_per_leaf: playouts averaged into z_L.
    rollout_policy: by name (`rollout.rollout_fn`): "random" for every game;
      Go also "heuristic", any registered policy, or a `RolloutPolicy`.
    max_depth: deepest tree path; None means num_simulations.
    leaves_per_step: K, leaves selected per step in the same tree under
      virtual loss and evaluated together (1: one simulation at a time).
    virtual_loss: n_vl (traced).
    rollout_temperature: the rollout policy's temperature (traced).
    random_symmetry: evaluate the networks under a random board symmetry
      per position (traced as 0 or 1; `AlphaGoParams`).
    reuse_tree: return the tree and continue a given one (module doc).
    max_reused_nodes: the most nodes carried over; None: num_simulations.
    variant: how the tree is searched, by name (`VARIANTS`): "puct",
      AlphaGo's PUCT (this module), or a registered variant such as
      "gumbel" (`search.gumbel_alphago`); every variant values leaves the
      same way.
  """
  num_simulations: int
  c_puct: float = 5.0
  mixing: float = 0.5
  use_value: Optional[bool] = None
  use_rollouts: Optional[bool] = None
  rollouts_per_leaf: int = 1
  rollout_policy: str = "random"
  max_depth: int | None = None
  leaves_per_step: int = 1
  virtual_loss: float = 3.0
  rollout_temperature: float = 1.0
  random_symmetry: bool = False
  reuse_tree: bool = False
  max_reused_nodes: int | None = None
  variant: str = "puct"

  def __post_init__(self):
    check_bool("random_symmetry", self.random_symmetry)
    params_lib.check_number("c_puct", self.c_puct, low=0)
    params_lib.check_number("mixing", self.mixing, low=0, high=1)
    params_lib.check_number("virtual_loss", self.virtual_loss, low=0)
    params_lib.check_number("rollout_temperature", self.rollout_temperature,
                            low=0, low_open=True)
    self.static().check_mixing(self.mixing)

  def static(self) -> AlphaGoStatic:
    """The part that fixes the compiled program."""
    use_value = (bool(self.mixing < 1) if self.use_value is None
                 else self.use_value)
    use_rollouts = (bool(self.mixing > 0) if self.use_rollouts is None
                    else self.use_rollouts)
    return AlphaGoStatic(
        num_simulations=self.num_simulations, use_value=use_value,
        use_rollouts=use_rollouts, rollouts_per_leaf=self.rollouts_per_leaf,
        rollout_policy=self.rollout_policy, max_depth=self.max_depth,
        leaves_per_step=self.leaves_per_step, reuse_tree=self.reuse_tree,
        max_reused_nodes=self.max_reused_nodes, variant=self.variant)

  def params(self) -> AlphaGoParams:
    """The traced part, as float32 scalars."""
    f = params_lib.as_float
    return AlphaGoParams(c_puct=f(self.c_puct), mixing=f(self.mixing),
                         virtual_loss=f(self.virtual_loss),
                         rollout_temperature=f(self.rollout_temperature),
                         random_symmetry=f(self.random_symmetry))

  def split(self) -> Tuple[AlphaGoStatic, AlphaGoParams]:
    return self.static(), self.params()


@struct.dataclass
class AlphaGoSearchOutput:
  """Search results for a batch of root states.

  Attributes:
    action: int32 `[B]`, the most visited legal move (ties at random).
    visit_counts: int32 `[B, num_actions]`, root visit counts.
    action_weights: float32 `[B, num_actions]`, visit proportions.
    q_values: float32 `[B, num_actions]`, raw Q of the root's children in
      [-1, 1], mover's view; 0 for unvisited ones.
    root_value: float32 `[B]`, the search's value of the root.
    search_tree: with `reuse_tree`, the tree `[B, tree_capacity, ...]` to
      give the next search; else the search's tree where the variant
      returns it (PUCT: None).
    reused_nodes: with `reuse_tree`, int32 `[B]`, the nodes the search
      started from (0: a fresh tree); else None.
  """
  action: chex.Array
  visit_counts: chex.Array
  action_weights: chex.Array
  q_values: chex.Array
  root_value: chex.Array
  search_tree: Optional[mctx.Tree] = None
  reused_nodes: Optional[chex.Array] = None


def split_evaluate(game: game_base.Game, evaluate: EvaluateFn
                   ) -> Tuple[PolicyFn, ValueFn]:
  """A policy-value network as AlphaGo's two functions: its policy head as
  the prior and its value head as v. The network runs once for each (so
  λ = 1 really skips the value head); XLA may share the common trunk."""
  def policy_fn(variables, obs, legal):
    return evaluate(variables, obs, legal)[0]

  def value_fn(variables, obs):
    # The value head does not depend on the legal mask.
    legal = jnp.ones((obs.shape[0], game.num_actions), jnp.bool_)
    return evaluate(variables, obs, legal)[1]
  return policy_fn, value_fn


def puct_scores(q: chex.Array, prior: chex.Array, visits: chex.Array,
                parent_visits: chex.Array, c_puct) -> chex.Array:
  """AlphaGo's Q + u, u = c_puct · P · √N(s) / (1 + N(s, a)).

  Args:
    q: float `[A]`, raw Q in [-1, 1] (0 for unvisited children).
    prior: float `[A]`, P(s, a).
    visits: int `[A]`, N(s, a).
    parent_visits: int `[]`, N(s).
    c_puct: the constant.

  Returns:
    float32 `[A]`.
  """
  n = jnp.asarray(parent_visits, jnp.float32)
  u = c_puct * prior * jnp.sqrt(n) / (1.0 + visits.astype(jnp.float32))
  return (q + u).astype(jnp.float32)


def alphago_action_selection(rng_key: chex.PRNGKey, tree: mctx.Tree,
                             node_index: chex.Array, depth: chex.Array = 0,
                             *, c_puct, virtual_loss=0.0) -> chex.Array:
  """mctx action-selection function: the legal child with the best Q + u.

  Unbatched tree (mctx vmaps the walk); embeddings are game states, so
  legality is read from the node's own state. Exact ties are broken
  uniformly at random.

  Virtual loss (`tree_search.search_with_virtual_loss`, which keeps the
  pending selections per edge in `tree.extra_data`): each pending selection
  through an edge counts as n_vl more visits, all lost by the mover, so
  N(s, a) += n_vl · pending, Q(s, a) = (Q · N − n_vl · pending) / (N +
  n_vl · pending), and N(s) grows by the same visits.
  """
  del depth
  visits = tree.children_visits[node_index].astype(jnp.float32)
  q = jnp.where(visits > 0, tree.qvalues(node_index), 0.0)
  parent_visits = tree.node_visits[node_index].astype(jnp.float32)
  if tree.extra_data is not None:
    extra = virtual_loss * tree.extra_data[node_index]
    vl_visits = visits + extra
    q = jnp.where(extra > 0, (q * visits - extra) / jnp.maximum(vl_visits,
                                                                1e-9), q)
    visits = vl_visits
    parent_visits = parent_visits + jnp.sum(extra)
  prior = jax.nn.softmax(tree.children_prior_logits[node_index])
  scores = puct_scores(q, prior, visits, parent_visits, c_puct)
  legal = tree.embeddings.legal_action_mask[node_index]
  return base.argmax_random_tiebreak(rng_key, scores, legal)


class NetworkView(NamedTuple):
  """What the networks see of a batch of positions (`_network_view`).

  Attributes:
    obs: `[B, ...]` observations, each row perhaps under a board symmetry.
    legal: bool `[B, A]`, the legal moves in the same frame.
    to_board: maps logits `[B, A]` in that frame back to the board's.
  """
  obs: chex.Array
  legal: chex.Array
  to_board: Callable[[chex.Array], chex.Array]


def _prior_logits(game, policy_fn, variables, states, view: NetworkView):
  """The prior's legal logits `[B, A]` on the states' own boards."""
  legal = states.legal_action_mask
  logits = policy_fn(variables, view.obs, view.legal)
  chex.assert_shape(logits, (legal.shape[0], game.num_actions))
  logits = view.to_board(logits)
  return jnp.where(legal, logits, MASKED_LOGIT).astype(jnp.float32)


def check_symmetric(game: game_base.Game, random_symmetry) -> None:
  """Raises ValueError where a concrete `random_symmetry` asks for board
  symmetries of a game without them."""
  if (symmetry.board_actions(game.observation_shape, game.num_actions)
      is None and params_lib.is_concrete(random_symmetry)
      and bool(np.any(np.asarray(random_symmetry) != 0))):
    raise ValueError(f"random_symmetry=1 needs a square board game "
                     f"([N, N, C] observations, actions row * N + col); "
                     f"{game.name} observes {game.observation_shape} with "
                     f"{game.num_actions} actions")


def _network_view(game, key, random_symmetry, obs, legal) -> NetworkView:
  """The networks' view of observations `[B, ...]` with legal moves `[B,
  A]`: each row under a random board symmetry where `random_symmetry` is 1
  (else the identity). Games without board symmetries are seen as they
  stand (`check_symmetric` rejects asking for them)."""
  with_pass = symmetry.board_actions(game.observation_shape,
                                     game.num_actions)
  if with_pass is None:
    return NetworkView(obs, legal, lambda logits: logits)
  size = game.observation_shape[0]
  draw = jax.random.randint(key, (obs.shape[0],), 0,
                            symmetry.NUM_SYMMETRIES)
  sym = jnp.where(random_symmetry > 0.5, draw, 0)
  turn = jax.vmap(functools.partial(symmetry.transform_policy, size=size,
                                    with_pass=with_pass))
  return NetworkView(
      obs=jax.vmap(symmetry.transform_observation)(obs, sym),
      legal=turn(legal, sym),
      to_board=lambda logits: turn(logits, symmetry.inverse(sym)))


def make_leaf_value(game: game_base.Game, value_fn: ValueFn | None,
                    static: AlphaGoStatic):
  """`leaf_value(value_variables, mixing, key, states [B], obs [B, ...],
  rollout_temperature=1.0)` -> float32 `[B]`: V = (1 − λ) v + λ z for the
  player to move, 0 at terminal states. Runs only the evaluators the static flags and λ need
  (see the module docstring)."""
  if static.use_value and value_fn is None:
    raise ValueError("use_value=True needs a value function (or set "
                     "mixing=1 / use_value=False)")
  play_out = rollout_fn(game, static.rollout_policy)
  reps = static.rollouts_per_leaf

  def net(variables, obs, states):
    v = value_fn(variables, obs)
    chex.assert_shape(v, (states.current_player.shape[0],))
    return v.astype(jnp.float32)

  def rollouts(key, states, temperature):
    batch = states.current_player.shape[0]
    keys = jax.random.split(key, (batch, reps))
    outcome = jax.vmap(lambda ks, s: jax.vmap(
        lambda k: play_out(k, s, temperature))(ks))(keys, states)  # [B, R, 2]
    mover = states.current_player
    z = jnp.take_along_axis(outcome, mover[:, None, None], axis=-1)[..., 0]
    return jnp.mean(z, axis=1).astype(jnp.float32)

  def leaf_value(variables, mixing, key, states, obs,
                 rollout_temperature=1.0):
    temperature = jnp.asarray(rollout_temperature, jnp.float32)
    if static.use_value and static.use_rollouts:
      lam = jnp.asarray(mixing, jnp.float32)
      value = jax.lax.cond(
          lam == 0.0, lambda: net(variables, obs, states),
          lambda: jax.lax.cond(
              lam == 1.0, lambda: rollouts(key, states, temperature),
              lambda: ((1.0 - lam) * net(variables, obs, states)
                       + lam * rollouts(key, states, temperature))))
    elif static.use_value:
      value = net(variables, obs, states)
    else:
      value = rollouts(key, states, temperature)
    return jnp.where(states.terminated, 0.0, value)

  return leaf_value


def make_recurrent_fn(game: game_base.Game, policy_fn: PolicyFn,
                      value_fn: ValueFn | None, static: AlphaGoStatic
                      ) -> mctx.RecurrentFn:
  """mctx `recurrent_fn`: step the game; the prior and V of the new node.

  mctx's `params` is `((policy_variables, value_variables), (mixing,
  rollout_temperature, random_symmetry))`.
  """
  leaf_value = make_leaf_value(game, value_fn, static)

  def recurrent_fn(params, rng_key, action, embedding):
    (policy_variables, value_variables), (mixing, temperature,
                                          random_symmetry) = params
    next_state, reward, discount = jax.vmap(
        functools.partial(make_transition, game))(embedding, action)
    # The rollouts keep rng_key itself, so a search without symmetries
    # plays the same rollouts as before they existed.
    view = _network_view(
        game, jax.random.fold_in(rng_key, 1), random_symmetry,
        jax.vmap(game.observe)(next_state), next_state.legal_action_mask)
    logits = _prior_logits(game, policy_fn, policy_variables, next_state,
                           view)
    value = leaf_value(value_variables, mixing, rng_key, next_state,
                       view.obs, temperature)
    out = mctx.RecurrentFnOutput(reward=reward.astype(jnp.float32),
                                 discount=discount.astype(jnp.float32),
                                 prior_logits=logits, value=value)
    return out, next_state

  return recurrent_fn


def recurrent_params(variables, params: AlphaGoParams):
  """mctx's `params` for `make_recurrent_fn`: the networks' variables and
  the traced settings the leaves read."""
  return variables, (params.mixing, params.rollout_temperature,
                     params.random_symmetry)


def make_root(game: game_base.Game, policy_fn: PolicyFn,
              value_fn: ValueFn | None, static: AlphaGoStatic, variables,
              params: AlphaGoParams, key: chex.PRNGKey,
              states: game_base.State) -> mctx.RootFnOutput:
  """The roots `[B]` of a search: the prior of each position (under a
  random symmetry where asked) and its value V, evaluated as a leaf is."""
  policy_variables, value_variables = variables
  leaf_value = make_leaf_value(game, value_fn, static)
  view = _network_view(
      game, jax.random.fold_in(key, 1), params.random_symmetry,
      jax.vmap(game.observe)(states), states.legal_action_mask)
  return mctx.RootFnOutput(
      prior_logits=_prior_logits(game, policy_fn, policy_variables, states,
                                 view),
      value=leaf_value(value_variables, params.mixing, key, states,
                       view.obs, params.rollout_temperature),
      embedding=states)


def root_statistics(tree: mctx.Tree) -> Tuple[chex.Array, chex.Array]:
  """`(visits, q)` of the roots' children, int32 and float32 `[B, A]`: q
  raw in [-1, 1] from the mover's view, 0 where unvisited."""
  visits = tree.children_visits[:, tree.ROOT_INDEX]
  q = jax.vmap(lambda t: t.qvalues(t.ROOT_INDEX))(tree)
  return (visits.astype(jnp.int32),
          jnp.where(visits > 0, q, 0.0).astype(jnp.float32))


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlphaGoVariant:
  """A way of searching with AlphaGo's networks and λ-mixed leaves.

  Attributes:
    search: `(game, policy_fn, value_fn, variables, key, states [B], *,
      static, params, tree) -> AlphaGoSearchOutput`, called by
      `alphago_search` with the config resolved and checked (λ, symmetry,
      batch); it reads only the `params` fields in `reads`.
    reads: the `AlphaGoParams` fields it uses (a sweep over another field
      would compare equal players).
    reuses_trees: whether it takes `reuse_tree` and a `tree` to continue.
    virtual_loss: whether it takes `leaves_per_step` > 1.
    description: one line for listings.
  """
  search: Callable[..., "AlphaGoSearchOutput"]
  reads: Tuple[str, ...]
  reuses_trees: bool
  virtual_loss: bool
  description: str


# The search variants by name (`AlphaGoStatic.variant`): the players, the
# ablation runner and `alphago-jax sweep --variant` read this table. A
# variant registers where it is defined.
VARIANTS: Registry[AlphaGoVariant] = Registry("AlphaGo search variant")


def check_variant(static: AlphaGoStatic) -> AlphaGoVariant:
  """The variant `static` names, after checking that it takes the static
  settings asked of it.

  Raises:
    ValueError: an unknown variant, or tree reuse or virtual loss asked of
      one without them.
  """
  variant = VARIANTS.get(static.variant)
  if static.reuse_tree and not variant.reuses_trees:
    raise ValueError(f"the {static.variant!r} search does not reuse trees; "
                     f"use reuse_tree=False")
  if static.leaves_per_step != 1 and not variant.virtual_loss:
    raise ValueError(f"the {static.variant!r} search has no virtual loss; "
                     f"use leaves_per_step=1")
  return variant


def alphago_search(game: game_base.Game, policy_fn: PolicyFn,
                   value_fn: ValueFn | None,
                   variables: Tuple[chex.ArrayTree, chex.ArrayTree],
                   key: chex.PRNGKey, states: game_base.State, *,
                   config: AlphaGoSearchConfig | AlphaGoStatic,
                   params: AlphaGoParams | None = None,
                   tree: mctx.Tree | None = None
                   ) -> AlphaGoSearchOutput:
  """Runs AlphaGo's search (the config's `variant`, PUCT by default) from
  each root state.

  Args:
    game: the game.
    policy_fn: the prior, `(variables, obs [B, ...], legal [B, A]) -> logits
      [B, A]` (AlphaGo's p_σ; `split_evaluate` for a policy-value network).
    value_fn: v, `(variables, obs [B, ...]) -> [B]` for the player to move;
      None when the config has no value network.
    variables: `(policy_variables, value_variables)`.
    key: PRNG key, consumed.
    states: batched root states `[B]`.
    config: a full `AlphaGoSearchConfig`, or its static part with `params`.
    params: the traced parameters; default the config's own.
    tree: with `reuse_tree`, an earlier search's `search_tree` (e.g. of the
      previous move, before or after `tree_reuse.reroot`): each row keeps
      the subtree of the node holding its root state; None: fresh trees.

  Returns:
    `AlphaGoSearchOutput` of batch B.
  """
  static, params = params_lib.resolve(config, params, AlphaGoSearchConfig,
                                      AlphaGoStatic, AlphaGoParams)
  variant = check_variant(static)
  static.check_mixing(params.mixing)
  check_symmetric(game, params.random_symmetry)
  base.check_batch(states)
  if tree is not None and not static.reuse_tree:
    raise ValueError("a tree to continue was given but reuse_tree=False")
  return variant.search(game, policy_fn, value_fn, variables, key, states,
                        static=static, params=params, tree=tree)


def puct_search(game: game_base.Game, policy_fn: PolicyFn,
                value_fn: ValueFn | None,
                variables: Tuple[chex.ArrayTree, chex.ArrayTree],
                key: chex.PRNGKey, states: game_base.State, *,
                static: AlphaGoStatic, params: AlphaGoParams,
                tree: mctx.Tree | None = None) -> AlphaGoSearchOutput:
  """AlphaGo's PUCT search, the variant "puct" (the module docstring);
  plays the most visited move. Arguments as `alphago_search`, the config
  resolved and checked."""
  batch = states.current_player.shape[0]
  if tree is not None and tree_reuse.capacity(tree) != static.tree_capacity:
    raise ValueError(f"tree has {tree_reuse.capacity(tree)} nodes; this "
                     f"search's trees have {static.tree_capacity} "
                     f"(num_simulations + max_reused_nodes)")
  # Every draw inside the search (tie-breaks, rollouts) uses the cheap hash
  # PRNG, as UCT does; see rollout.py.
  root_key, search_key, choice_key = jax.random.split(hash_prng_key(key), 3)
  root = make_root(game, policy_fn, value_fn, static, variables, params,
                   root_key, states)
  recurrent_fn = make_recurrent_fn(game, policy_fn, value_fn, static)
  invalid = (~states.legal_action_mask).astype(jnp.float32)
  initial, reused = None, None
  if static.reuse_tree:
    initial, reused = _reusable_tree(static, root, tree, states)
  common = dict(params=recurrent_params(variables, params),
                rng_key=search_key, root=root, recurrent_fn=recurrent_fn,
                num_simulations=static.num_simulations,
                max_depth=static.max_depth, invalid_actions=invalid,
                initial_tree=initial)
  if static.leaves_per_step == 1:
    select = functools.partial(alphago_action_selection,
                               c_puct=params.c_puct)
    tree = tree_search.search(root_action_selection_fn=select,
                              interior_action_selection_fn=select, **common)
  else:
    select = functools.partial(alphago_action_selection,
                               c_puct=params.c_puct,
                               virtual_loss=params.virtual_loss)
    tree = tree_search.search_with_virtual_loss(
        action_selection_fn=select, leaves_per_step=static.leaves_per_step,
        **common)
  legal = states.legal_action_mask
  visits, q = root_statistics(tree)
  action = jax.vmap(base.argmax_random_tiebreak)(
      jax.random.split(choice_key, batch), visits.astype(jnp.float32), legal)
  total = jnp.maximum(jnp.sum(visits, -1, keepdims=True), 1)
  return AlphaGoSearchOutput(
      action=action.astype(jnp.int32),
      visit_counts=visits.astype(jnp.int32),
      action_weights=(visits / total).astype(jnp.float32),
      q_values=q,
      root_value=tree.node_values[:, tree.ROOT_INDEX].astype(jnp.float32),
      search_tree=tree if static.reuse_tree else None,
      reused_nodes=reused)


VARIANTS.register("puct", AlphaGoVariant(
    search=puct_search,
    reads=tuple(f.name for f in dataclasses.fields(AlphaGoParams)),
    reuses_trees=True, virtual_loss=True,
    description="AlphaGo's PUCT selection, the most visited move played"))


def _reusable_tree(static: AlphaGoStatic, root: mctx.RootFnOutput,
                   tree: mctx.Tree | None, states: game_base.State):
  """The tree `[B, tree_capacity, ...]` to continue (each row re-rooted at
  the node holding its root state, empty where there is none) and int32
  `[B]` its nodes."""
  batch = root.value.shape[0]
  capacity = static.tree_capacity
  if tree is None:
    # A fresh tree of full capacity, so that the output can be fed back.
    fresh = mctx_search.instantiate_tree_from_root(
        root, capacity - 1, jnp.zeros_like(root.prior_logits), None)
    return fresh, jnp.zeros((batch,), jnp.int32)
  return tree_reuse.subtree(
      tree, tree_reuse.find(tree, states),
      max_nodes=capacity - static.num_simulations)


def alphago_agent(game: game_base.Game, policy_fn: PolicyFn,
                  value_fn: ValueFn | None,
                  variables: Tuple[chex.ArrayTree, chex.ArrayTree],
                  config: AlphaGoSearchConfig | AlphaGoStatic,
                  params: AlphaGoParams | None = None) -> base.Agent:
  """AlphaGo's search as an `Agent`: (states `[B]`, key) -> actions `[B]`.

  Stateless: every move searches afresh, `reuse_tree` or not. To reuse
  trees, pass each `alphago_search`'s `search_tree` to the next call (as
  `experiments/alphago/tree_reuse.py` and `gtp.AlphaGoPlayer` do).
  """
  static, params = params_lib.resolve(config, params, AlphaGoSearchConfig,
                                      AlphaGoStatic, AlphaGoParams)
  check_variant(static)
  static.check_mixing(params.mixing)
  check_symmetric(game, params.random_symmetry)
  make_leaf_value(game, value_fn, static)  # Fail here, not inside a trace.

  def agent(states, key):
    return alphago_search(game, policy_fn, value_fn, variables, key, states,
                          config=static, params=params).action
  return agent


def uniform_policy(variables, obs, legal) -> chex.Array:
  """A `PolicyFn` with a uniform prior over legal moves (no network)."""
  del variables, obs
  return jnp.zeros(legal.shape, jnp.float32)
