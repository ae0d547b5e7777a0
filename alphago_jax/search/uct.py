"""Classic UCT (UCB1 tree search with random rollouts) on mctx's generic search.

The tree machinery is mctx's (`mctx.search`, through our drop-in
`tree_search.search`, which only rewrites the backup to scale to big batches),
shared with PUCT and Gumbel; UCT only supplies two things:

* a selection function scoring each child with UCB1,
  `W/N + c * sqrt(ln N(s) / N(s, a))`, where W/N is the child's mean result in
  [0, 1] (win 1, draw 0.5, loss 0) from the point of view of the player who
  moves into it, unvisited legal children score +inf (so each is tried once
  before any is revisited, ties broken at random) and illegal ones -inf;
* a `recurrent_fn` that steps the game and evaluates the new node by one
  rollout to the end of the game (`rollout.rollout_fn`: uniformly random
  moves; for Go the lean playout, which never fills its own eyes, or the
  heuristic policy).

Signs follow mctx: a node's value is from the point of view of its player to
move, the reward on an edge is the mover's, and the discount is -1 between
alternating players (0 into a terminal state, which stops the backup there).
So Q(s, a) = r + discount * V(child) is always from the mover's point of
view, and W/N = (Q + 1) / 2.

N(s) is mctx's visit count of the node, which counts the evaluation made when
the node was created (the root starts at 1); textbook UCT does not count it
for the root. The difference is one visit at the root only.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import chex
import jax
import jax.numpy as jnp
import mctx
from flax import struct

from alphago_jax.core.checks import check_int
from alphago_jax.games import base as game_base
from alphago_jax.search import base
from alphago_jax.search import params as params_lib
from alphago_jax.search.rollout import hash_prng_key, rollout_fn
from alphago_jax.search.tree_search import search as tree_search


@struct.dataclass
class UCTParams:
  """The traced parameters of `uct_search`: the UCB1 constant c (float32,
  `[]` or `[P]` when stacked for a sweep)."""
  exploration: chex.Array

  BOUNDS = {"exploration": (0, None, False)}

  def check(self) -> "UCTParams":
    """Raises ValueError naming a concrete field out of range; returns self."""
    params_lib.check_params(self, self.BOUNDS)
    return self


@dataclasses.dataclass(frozen=True, kw_only=True)
class UCTStatic:
  """What fixes the compiled UCT search (see `UCTConfig`); hashable."""
  num_simulations: int
  max_depth: int | None = None
  rollout_policy: str = "random"

  def __post_init__(self):
    base.check_num_simulations(self.num_simulations)
    check_int("max_depth", self.max_depth, 1, optional=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class UCTConfig:
  """UCT hyperparameters; `split()` gives `(UCTStatic, UCTParams)`.

  Attributes:
    num_simulations: simulations (one new node, one rollout each) per move.
    exploration: the UCB1 constant c (sqrt(2) by default).
    max_depth: deepest tree path; defaults to `num_simulations`.
    rollout_policy: the rollout policy by name (`rollout.rollout_fn`):
      "random" for every game; Go also has "heuristic".
  """
  num_simulations: int
  exploration: float = math.sqrt(2.0)
  max_depth: int | None = None
  rollout_policy: str = "random"

  def __post_init__(self):
    self.static()  # Checks the static fields.
    c = self.exploration
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not (
        math.isfinite(c) and c >= 0):
      raise ValueError(
          f"exploration constant c must be finite and >= 0, got {c!r}")

  def static(self) -> UCTStatic:
    return UCTStatic(num_simulations=self.num_simulations,
                     max_depth=self.max_depth,
                     rollout_policy=self.rollout_policy)

  def params(self) -> UCTParams:
    return UCTParams(exploration=params_lib.as_float(self.exploration))

  def split(self) -> tuple[UCTStatic, UCTParams]:
    return self.static(), self.params()


def ucb1_scores(win_rate: chex.Array, visits: chex.Array,
                parent_visits: chex.Array, exploration: float) -> chex.Array:
  """UCB1 = W/N + c * sqrt(ln N(s) / N(s, a)); +inf where N(s, a) = 0.

  Args:
    win_rate: float `[A]`, W/N of each child in [0, 1].
    visits: int `[A]`, N(s, a).
    parent_visits: int `[]`, N(s).
    exploration: c.

  Returns:
    float32 `[A]`.
  """
  n = jnp.maximum(visits, 1).astype(jnp.float32)
  bonus = exploration * jnp.sqrt(
      jnp.log(jnp.asarray(parent_visits, jnp.float32)) / n)
  return jnp.where(visits > 0, win_rate + bonus, jnp.inf)


def children_win_rates(tree: mctx.Tree, node_index: chex.Array) -> chex.Array:
  """W/N in [0, 1] of the children of one node of an unbatched tree."""
  return (tree.qvalues(node_index) + 1.0) / 2.0


def ucb1_action_selection(rng_key: chex.PRNGKey, tree: mctx.Tree,
                          node_index: chex.Array, depth: chex.Array = 0, *,
                          exploration: float) -> chex.Array:
  """mctx action-selection function: the legal child with the best UCB1.

  The tree is unbatched (mctx vmaps the simulation); its embeddings are game
  states, so legality is read from the node's own state at every depth.
  """
  del depth
  legal = tree.embeddings.legal_action_mask[node_index]
  scores = ucb1_scores(children_win_rates(tree, node_index),
                       tree.children_visits[node_index],
                       tree.node_visits[node_index], exploration)
  return base.argmax_random_tiebreak(rng_key, scores, legal)


def make_transition(game: game_base.Game, state: game_base.State,
                    action: chex.Array):
  """Steps one game; returns (next_state, mover's reward, discount)."""
  mover = state.current_player
  next_state = game.step(state, action)
  reward = jnp.where(state.terminated, 0.0, next_state.rewards[mover])
  same_player = next_state.current_player == mover
  discount = jnp.where(next_state.terminated, 0.0,
                       jnp.where(same_player, 1.0, -1.0))
  return next_state, reward, discount


def rollout_recurrent_fn(game: game_base.Game, rollout_policy: str = "random"
                         ) -> mctx.RecurrentFn:
  """An mctx `recurrent_fn` evaluating new nodes by one rollout."""
  play_out = rollout_fn(game, rollout_policy)

  def one(key, action, state):
    next_state, reward, discount = make_transition(game, state, action)
    outcome = play_out(key, next_state)
    value = outcome[next_state.current_player]  # 0 at terminal states.
    return next_state, reward, discount, value

  def recurrent_fn(params, rng_key, action, embedding):
    del params
    batch = action.shape[0]
    keys = jax.random.split(rng_key, batch)
    next_state, reward, discount, value = jax.vmap(one)(keys, action,
                                                        embedding)
    out = mctx.RecurrentFnOutput(
        reward=reward, discount=discount,
        prior_logits=jnp.zeros((batch, game.num_actions), jnp.float32),
        value=value)
    return out, next_state

  return recurrent_fn


def uct_search(game: game_base.Game, key: chex.PRNGKey,
               states: game_base.State, *, config: UCTConfig | UCTStatic,
               params: UCTParams | None = None) -> base.SearchOutput:
  """Runs UCT from each root state and plays the most-visited child.

  Args:
    game: the game.
    key: PRNG key, consumed.
    states: batched states `[B]`.
    config: UCT hyperparameters, or their static part with `params`.
    params: the traced UCB1 constant; default the config's own.

  Returns:
    `SearchOutput` with `action` `[B]`, root `visit_counts` `[B, A]` and
    `win_rates` `[B, A]`.
  """
  config, params = params_lib.resolve(config, params, UCTConfig, UCTStatic,
                                     UCTParams)
  batch = base.check_batch(states)
  # Every draw inside the search (mctx's per-level key splits, UCB1
  # tie-breaks, rollouts) uses the cheap hash PRNG; see rollout.py.
  search_key, choice_key = jax.random.split(hash_prng_key(key))
  root = mctx.RootFnOutput(
      prior_logits=jnp.zeros((batch, game.num_actions), jnp.float32),
      value=jnp.zeros((batch,), jnp.float32),
      embedding=states)
  select = functools.partial(ucb1_action_selection,
                             exploration=params.exploration)
  tree = tree_search(
      params=None, rng_key=search_key, root=root,
      recurrent_fn=rollout_recurrent_fn(game, config.rollout_policy),
      root_action_selection_fn=select,
      interior_action_selection_fn=select,
      num_simulations=config.num_simulations,
      max_depth=config.max_depth,
      invalid_actions=(~states.legal_action_mask).astype(jnp.float32))
  visits = tree.children_visits[:, tree.ROOT_INDEX]
  win_rates = jnp.where(visits > 0,
                        jax.vmap(children_win_rates, (0, None))(
                            tree, tree.ROOT_INDEX), 0.0)
  action = jax.vmap(base.argmax_random_tiebreak)(
      jax.random.split(choice_key, batch), visits.astype(jnp.float32),
      states.legal_action_mask)
  return base.SearchOutput(action=action, visit_counts=visits,
                           win_rates=win_rates)


def uct_agent(game: game_base.Game, config: UCTConfig | UCTStatic,
              params: UCTParams | None = None) -> base.Agent:
  """UCT as an `Agent`: (states `[B]`, key) -> actions `[B]`; an
  `AnalysedAgent` whose winrate is the chosen move's mean result."""
  config, params = params_lib.resolve(config, params, UCTConfig, UCTStatic,
                                     UCTParams)

  def analyse(states, key):
    out = uct_search(game, key, states, config=config, params=params)
    # The chosen move's mean result, the mover's view (draws count half).
    winrate = jnp.take_along_axis(out.win_rates, out.action[:, None], 1)[:, 0]
    return out.action, winrate, out.visit_counts.sum(-1)
  return base.AnalysedAgent(analyse)
