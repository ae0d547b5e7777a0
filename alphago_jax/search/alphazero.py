"""AlphaZero search: mctx's PUCT (`muzero_policy`) or Gumbel MuZero, guided by
a policy-value network over any `Game`.

The tree's embeddings are game states; `recurrent_fn` steps the real game
(no learned model) and evaluates the new position with the network.

Signs follow mctx and `uct.py`: a node's value is from the point of view of
its player to move, an edge's reward is the mover's, and the discount is -1
between alternating players and 0 into a terminal state, whose value is 0
(its outcome was paid on the edge into it). So Q(s, a) = r + discount * V is
the mover's view at every node.

Illegal actions: mctx masks them at the root (`invalid_actions`) but not
below it, so `recurrent_fn` gives them the logit `MASKED_LOGIT` (prior 0) at
every interior node, and the raw-Q transform scores them below any legal
action.

Parameters: `AlphaZeroSearchConfig.split()` gives the static part (what
fixes the program) and `AlphaZeroParams` (c_puct, noise, temperature,
resignation), which `alphazero_search` takes as traced arrays; see
`search.params` and `search.sweep`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar, Dict, Tuple

import chex
import jax
import jax.numpy as jnp
import mctx
from flax import struct

from alphago_jax.core.checks import check_bool, check_int
from alphago_jax.games import base as game_base
from alphago_jax.core.types import MASKED_LOGIT, EvaluateFn
from alphago_jax.search import base
from alphago_jax.search import params as params_lib
from alphago_jax.search.uct import make_transition

POLICIES = ("gumbel", "puct")
# What a Gumbel search plays: "halving", the sequential-halving winner
# (mctx's `action`, the Gumbel paper's move); "argmax", the greedy move of
# the improved policy once the temperature moves are over.
GUMBEL_MOVES = ("halving", "argmax")

# Makes mctx's pb_c = c_init + log((N + base + 1) / base) exactly c_init in
# float32: AlphaGo Zero's constant c_puct.
CONSTANT_C_BASE = 1e30


# A resignation threshold below every value: resignation off, as a number.
RESIGN_NEVER = -2.0


@struct.dataclass
class AlphaZeroParams:
  """The traced parameters of `alphazero_search` (float32 scalars, or `[P]`
  when stacked for a sweep). Meanings as in `AlphaZeroSearchConfig`; here
  `c_puct_base` is `CONSTANT_C_BASE` for a constant c_puct and
  `resign_threshold` is `RESIGN_NEVER` for no resignation."""
  c_puct: chex.Array
  c_puct_base: chex.Array
  dirichlet_alpha: chex.Array
  dirichlet_fraction: chex.Array
  temperature: chex.Array
  temperature_moves: chex.Array
  gumbel_scale: chex.Array
  resign_threshold: chex.Array
  resign_disabled_fraction: chex.Array

  BOUNDS = {
      "c_puct": (0, None, False),
      "c_puct_base": (0, None, True),
      "dirichlet_alpha": (0, None, True),
      "dirichlet_fraction": (0, 1, False),
      "temperature": (0, None, False),
      "temperature_moves": (0, None, False),
      "gumbel_scale": (0, None, False),
      "resign_threshold": (RESIGN_NEVER, 1, False),
      "resign_disabled_fraction": (0, 1, False),
  }

  def check(self) -> "AlphaZeroParams":
    """Raises ValueError naming a concrete field out of range; returns self."""
    params_lib.check_params(self, self.BOUNDS)
    return self

  def for_evaluation(self) -> "AlphaZeroParams":
    """Root noise, move sampling and resignation off (any leaf shape)."""
    like = lambda x, v: jnp.full_like(x, v, dtype=jnp.float32)
    return self.replace(
        dirichlet_fraction=like(self.dirichlet_fraction, 0.0),
        gumbel_scale=like(self.gumbel_scale, 0.0),
        temperature_moves=like(self.temperature_moves, 0.0),
        resign_threshold=like(self.resign_threshold, RESIGN_NEVER))


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlphaZeroStatic:
  """What fixes the compiled search: shapes and code paths. Hashable, so it
  can be a static argument; see `AlphaZeroSearchConfig` for the fields."""
  num_simulations: int
  policy: str = "gumbel"
  normalize_q: bool = True
  max_num_considered_actions: int | None = None
  max_depth: int | None = None
  gumbel_move: str = "halving"

  def __post_init__(self):
    base.check_num_simulations(self.num_simulations)
    if self.policy not in POLICIES:
      raise ValueError(f"policy must be one of {POLICIES}, got "
                       f"{self.policy!r}")
    if self.gumbel_move not in GUMBEL_MOVES:
      raise ValueError(f"gumbel_move must be one of {GUMBEL_MOVES}, got "
                       f"{self.gumbel_move!r}")
    check_bool("normalize_q", self.normalize_q)
    if self.max_num_considered_actions is not None:
      check_int("max_num_considered_actions",
                           self.max_num_considered_actions, 1)
    if self.max_depth is not None:
      check_int("max_depth", self.max_depth, 1)

  def num_considered_actions(self, game: game_base.Game) -> int:
    """Gumbel's starting number of actions for `game`; checks the bound."""
    m = self.max_num_considered_actions
    if m is None:
      return min(16, game.num_actions)
    if m > game.num_actions:
      raise ValueError(
          f"max_num_considered_actions={m} exceeds the {game.name} action "
          f"space of {game.num_actions}")
    return m


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlphaZeroSearchConfig:
  """Every knob of the network-guided search, and of acting on its result.

  `split()` gives the static part (`AlphaZeroStatic`: simulations, policy,
  normalize_q, considered actions, depth) and the traced `AlphaZeroParams`
  (everything else); pass both to `alphazero_search` to reuse one compiled
  search across parameter values or to sweep them (`search.sweep`).

  Attributes:
    num_simulations: simulations per move (>= 1).
    policy: "gumbel" (mctx.gumbel_muzero_policy, sequential halving at the
      root) or "puct" (mctx.muzero_policy).
    c_puct: PUCT exploration constant (mctx's pb_c_init).
    c_puct_base: MuZero's slow growth of c with visits, c_puct + log((N +
      base + 1) / base); None keeps c_puct constant, as AlphaGo Zero.
    normalize_q: PUCT only. True: Q normalised to [0, 1] by the parent and
      siblings (mctx's default); False: AlphaGo's raw Q in [-1, 1], 0 for
      unvisited children.
    dirichlet_alpha: PUCT only. Concentration of the root Dirichlet noise
      (AlphaZero: 0.3 chess, 0.03 Go; ~10 / typical number of moves).
    dirichlet_fraction: PUCT only. Weight of that noise in the root prior
      (0.25 in AlphaZero; 0 turns it off).
    temperature: tau for the first `temperature_moves` moves of a game (by
      `state.step_count`): PUCT samples the move with probability
      proportional to N^(1/tau). Afterwards, and always when tau = 0, PUCT
      plays the most visited move. Gumbel's move is set by `gumbel_move`.
    temperature_moves: k above (AlphaGo Zero: 30).
    gumbel_scale: Gumbel only. Scale of the root Gumbel noise (0 for a
      deterministic search).
    max_num_considered_actions: Gumbel only. Actions sequential halving
      starts from; None means min(16, num_actions). Must not exceed the
      game's number of actions.
    max_depth: deepest tree path; None means num_simulations.
    gumbel_move: Gumbel only. "halving": the sequential-halving winner
      (mctx's `action`, what the Gumbel paper plays: Gumbel noise is its
      exploration, `gumbel_scale` 0 makes it deterministic), on every move.
      "argmax": mctx's Gumbel-sampled action for the first
      `temperature_moves` moves, then the argmax of the improved policy,
      which can pick a move the search never visited.
    resign_threshold: self-play resigns for the mover when the root value
      falls below this; None never resigns.
    resign_disabled_fraction: share of self-play games in which resignation
      is switched off, to measure the false-resignation rate (AlphaGo Zero:
      0.1).
  """
  num_simulations: int
  policy: str = "gumbel"
  c_puct: float = 1.25
  c_puct_base: float | None = None
  normalize_q: bool = True
  dirichlet_alpha: float = 0.3
  dirichlet_fraction: float = 0.25
  temperature: float = 1.0
  temperature_moves: int = 30
  gumbel_scale: float = 1.0
  max_num_considered_actions: int | None = None
  max_depth: int | None = None
  resign_threshold: float | None = None
  resign_disabled_fraction: float = 0.1
  gumbel_move: str = "halving"

  # Runs recorded before `gumbel_move` existed played "argmax".
  ADDED_FIELDS: ClassVar[Dict[str, str]] = {"gumbel_move": "argmax"}

  def __post_init__(self):
    self.static()  # Checks the static fields.
    check = params_lib.check_number
    check("c_puct", self.c_puct, low=0)
    if self.c_puct_base is not None:
      check("c_puct_base", self.c_puct_base, low=0, low_open=True)
    check("dirichlet_alpha", self.dirichlet_alpha, low=0, low_open=True)
    check("dirichlet_fraction", self.dirichlet_fraction, low=0, high=1)
    check("temperature", self.temperature, low=0)
    check_int("temperature_moves", self.temperature_moves, 0)
    check("gumbel_scale", self.gumbel_scale, low=0)
    if self.resign_threshold is not None:
      check("resign_threshold", self.resign_threshold, low=-1, high=1)
    check("resign_disabled_fraction", self.resign_disabled_fraction, low=0,
          high=1)

  def static(self) -> AlphaZeroStatic:
    """The part that fixes the compiled program."""
    return AlphaZeroStatic(
        num_simulations=self.num_simulations, policy=self.policy,
        normalize_q=self.normalize_q,
        max_num_considered_actions=self.max_num_considered_actions,
        max_depth=self.max_depth, gumbel_move=self.gumbel_move)

  def params(self) -> AlphaZeroParams:
    """The traced part, as float32 scalars."""
    f = params_lib.as_float
    return AlphaZeroParams(
        c_puct=f(self.c_puct),
        c_puct_base=f(CONSTANT_C_BASE if self.c_puct_base is None
                      else self.c_puct_base),
        dirichlet_alpha=f(self.dirichlet_alpha),
        dirichlet_fraction=f(self.dirichlet_fraction),
        temperature=f(self.temperature),
        temperature_moves=f(self.temperature_moves),
        gumbel_scale=f(self.gumbel_scale),
        resign_threshold=f(RESIGN_NEVER if self.resign_threshold is None
                           else self.resign_threshold),
        resign_disabled_fraction=f(self.resign_disabled_fraction))

  def split(self) -> Tuple[AlphaZeroStatic, AlphaZeroParams]:
    """`(static(), params())`."""
    return self.static(), self.params()

  def for_evaluation(self) -> "AlphaZeroSearchConfig":
    """The same search with root noise and move sampling switched off."""
    return dataclasses.replace(self, dirichlet_fraction=0.0, gumbel_scale=0.0,
                               temperature_moves=0, resign_threshold=None)

  def num_considered_actions(self, game: game_base.Game) -> int:
    """Gumbel's starting number of actions for `game`; checks the bound."""
    return self.static().num_considered_actions(game)


@struct.dataclass
class AlphaZeroSearchOutput:
  """Search results for a batch of root states.

  Attributes:
    action: int32 `[B]`, the move to play (temperature schedule applied).
    action_weights: float32 `[B, num_actions]`, the policy target pi: visit
      proportions (PUCT) or Gumbel's improved policy; 0 on illegal actions.
    visit_counts: int32 `[B, num_actions]`, root visit counts.
    root_value: float32 `[B]`, the search's value of the root, mover's view.
    network_value: float32 `[B]`, the network's value of the root.
  """
  action: chex.Array
  action_weights: chex.Array
  visit_counts: chex.Array
  root_value: chex.Array
  network_value: chex.Array


def evaluate_states(game: game_base.Game, evaluate: EvaluateFn,
                    variables: chex.ArrayTree, states: game_base.State):
  """Network logits `[B, A]` (illegal masked) and values `[B]` (0 when over).
  """
  obs = jax.vmap(game.observe)(states)
  legal = states.legal_action_mask
  logits, value = evaluate(variables, obs, legal)
  # Masked here as well, so any `evaluate` (not only ours) is safe.
  logits = jnp.where(legal, logits, MASKED_LOGIT).astype(jnp.float32)
  value = jnp.where(states.terminated, 0.0, value).astype(jnp.float32)
  return logits, value


def make_recurrent_fn(game: game_base.Game,
                      evaluate: EvaluateFn) -> mctx.RecurrentFn:
  """mctx `recurrent_fn`: step the game, evaluate the child with the network.

  `params` are the network's variables; embeddings are batched game states.
  """
  def recurrent_fn(params, rng_key, action, embedding):
    del rng_key  # The game and the network are deterministic.
    next_state, reward, discount = jax.vmap(
        functools.partial(make_transition, game))(embedding, action)
    logits, value = evaluate_states(game, evaluate, params, next_state)
    out = mctx.RecurrentFnOutput(reward=reward.astype(jnp.float32),
                                 discount=discount.astype(jnp.float32),
                                 prior_logits=logits, value=value)
    return out, next_state

  return recurrent_fn


def qtransform_raw(tree: mctx.Tree, node_index: chex.Array) -> chex.Array:
  """AlphaGo's Q for PUCT: raw mean values in [-1, 1], 0 when unvisited.

  Illegal children (read from the node's game state) score -1e9, because
  with raw values an unvisited illegal child's 0 could beat legal children
  that all lose. Unbatched tree, as every mctx qtransform.
  """
  q = tree.qvalues(node_index)
  visited = tree.children_visits[node_index] > 0
  legal = tree.embeddings.legal_action_mask[node_index]
  return jnp.where(legal, jnp.where(visited, q, 0.0), -1e9)


def _greedy(key, weights, legal):
  return jax.vmap(base.argmax_random_tiebreak)(
      jax.random.split(key, weights.shape[0]), weights, legal)


def alphazero_search(game: game_base.Game, evaluate: EvaluateFn,
                     variables: chex.ArrayTree, key: chex.PRNGKey,
                     states: game_base.State, *,
                     config: AlphaZeroSearchConfig | AlphaZeroStatic,
                     params: AlphaZeroParams | None = None
                     ) -> AlphaZeroSearchOutput:
  """Runs the search from each root state and picks a move.

  Args:
    game: the game.
    evaluate: `(variables, observations, legal) -> (logits, values)`.
    variables: the network's variables.
    key: PRNG key, consumed.
    states: batched states `[B]`. Terminated ones are searched too (fixed
      shapes) and get meaningless outputs.
    config: the search: a full `AlphaZeroSearchConfig`, or its static part
      (then `params` is required).
    params: the traced parameters; default the config's own. Pass them as a
      jit argument (config static) to search many values with one
      compilation.

  Returns:
    `AlphaZeroSearchOutput` of batch B.
  """
  static, params = params_lib.resolve(config, params, AlphaZeroSearchConfig,
                                      AlphaZeroStatic, AlphaZeroParams)
  base.check_batch(states)
  search_key, act_key, tie_key = jax.random.split(key, 3)
  logits, value = evaluate_states(game, evaluate, variables, states)
  legal = states.legal_action_mask
  root = mctx.RootFnOutput(prior_logits=logits, value=value,
                           embedding=states)
  invalid = ~legal
  recurrent_fn = make_recurrent_fn(game, evaluate)
  sampling = (states.step_count < params.temperature_moves) & (
      params.temperature > 0)
  if static.policy == "gumbel":
    out = mctx.gumbel_muzero_policy(
        params=variables, rng_key=search_key, root=root,
        recurrent_fn=recurrent_fn, num_simulations=static.num_simulations,
        invalid_actions=invalid, max_depth=static.max_depth,
        max_num_considered_actions=static.num_considered_actions(game),
        gumbel_scale=params.gumbel_scale)
    if static.gumbel_move == "halving":
      action = out.action
    else:
      greedy = _greedy(tie_key, out.action_weights, legal)
      action = jnp.where(sampling, out.action, greedy)
  else:
    qtransform = (mctx.qtransform_by_parent_and_siblings
                  if static.normalize_q else qtransform_raw)
    out = mctx.muzero_policy(
        params=variables, rng_key=search_key, root=root,
        recurrent_fn=recurrent_fn, num_simulations=static.num_simulations,
        invalid_actions=invalid, max_depth=static.max_depth,
        qtransform=qtransform, dirichlet_fraction=params.dirichlet_fraction,
        dirichlet_alpha=params.dirichlet_alpha, pb_c_init=params.c_puct,
        pb_c_base=params.c_puct_base)
    tau = jnp.maximum(params.temperature, 1e-6)
    # pi^(1/tau) as logits; log 0 = -inf keeps unvisited moves out.
    sample_logits = jnp.where(out.action_weights > 0,
                              jnp.log(out.action_weights) / tau, -jnp.inf)
    sampled = jax.random.categorical(act_key, sample_logits)
    greedy = _greedy(tie_key, out.action_weights, legal)
    action = jnp.where(sampling, sampled, greedy)
  tree = out.search_tree
  visits = tree.children_visits[:, tree.ROOT_INDEX]
  weights = jnp.where(legal, out.action_weights, 0.0)
  return AlphaZeroSearchOutput(
      action=action.astype(jnp.int32),
      action_weights=weights.astype(jnp.float32),
      visit_counts=visits.astype(jnp.int32),
      root_value=tree.node_values[:, tree.ROOT_INDEX].astype(jnp.float32),
      network_value=value)


def network_agent(game: game_base.Game, evaluate: EvaluateFn,
                  variables: chex.ArrayTree,
                  config: AlphaZeroSearchConfig | AlphaZeroStatic,
                  *, for_evaluation: bool = True,
                  params: AlphaZeroParams | None = None) -> base.Agent:
  """Network + search as an `Agent` (an `AnalysedAgent`: winrate from the
  search's root value); noise and sampling off by default (on the config's
  own params or on `params`)."""
  if for_evaluation:
    if isinstance(config, AlphaZeroSearchConfig):
      config = config.for_evaluation()
    if params is not None:
      params = params.for_evaluation()
  static, params = params_lib.resolve(config, params, AlphaZeroSearchConfig,
                                      AlphaZeroStatic, AlphaZeroParams)
  static.num_considered_actions(game)  # Fail here, not inside a trace.

  def analyse(states, key):
    out = alphazero_search(game, evaluate, variables, key, states,
                           config=static, params=params)
    # The root value in [-1, 1] (mover's view) as a winrate.
    winrate = jnp.clip((out.root_value + 1.0) / 2.0, 0.0, 1.0)
    return out.action, winrate, out.visit_counts.sum(-1)
  return base.AnalysedAgent(analyse)


def policy_agent(game: game_base.Game, evaluate: EvaluateFn,
                 variables: chex.ArrayTree) -> base.Agent:
  """The raw network policy as an `Agent`: argmax of the legal logits."""
  def agent(states, key):
    base.check_batch(states)
    logits, _ = evaluate_states(game, evaluate, variables, states)
    return _greedy(key, logits, states.legal_action_mask)
  return agent
