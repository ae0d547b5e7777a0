"""Players: what the GTP engine asks for a move, backed by our networks.

A player thinks about one position of our `Go` game and returns a
`Decision`: the move, and the candidates it weighed (for Leela Zero style
analysis output). It never keeps the game itself; the engine
(`gtp.engine`) owns the position, the clock and the protocol.

* `SearchPlayer`: a policy-value network with AlphaZero's search (mctx's
  Gumbel MuZero or PUCT policy, `search.alphazero`), compiled once per game
  for its full budget and run for any smaller number of simulations; given
  a time budget it plays the largest count its own timings say fits.
* `PolicyPlayer`: a network's greedy move, no search.
* `AlphaGoPlayer`: AlphaGo's search (`search.alphago`), reusing its tree
  between moves; its search size is fixed when compiled, so under a clock
  it plays the largest of a few compiled sizes (`simulation_ladder`) that
  its timings say fits.

Both compile ahead of time (`jit(...).lower(...).compile()`) when the
engine calls `prepare`, outside any timed move.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import math
import os
import sys
import time
from typing import Callable, Dict, Iterator, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.core.types import MASKED_LOGIT, EvaluateFn
from alphago_jax.games.go import Go, GoState
from alphago_jax.search import alphago
from alphago_jax.search.alphazero import (AlphaZeroSearchConfig,
                                          evaluate_states, make_recurrent_fn,
                                          qtransform_raw)
from alphago_jax.search.base import argmax_random_tiebreak

# Candidates a policy player lists in its analysis.
POLICY_CANDIDATES = 10
# Search sizes an `AlphaGoPlayer` compiles for timed play (`simulation_ladder`).
LADDER_RUNGS = 4


@dataclasses.dataclass(frozen=True)
class Candidate:
  """One move a player weighed.

  Attributes:
    action: our action (a point, or N² for pass).
    visits: search visits of the move (0 without search).
    winrate: the mover's estimated chance to win after it, in [0, 1]; None
      when the player has no value estimate.
    prior: the network's probability of the move.
    pv: the principal variation starting with `action` (actions).
  """
  action: int
  visits: int
  winrate: Optional[float]
  prior: float
  pv: Tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Decision:
  """A player's answer for one position.

  Attributes:
    action: the move to play (our action; N² is pass).
    resign: the player resigns instead of moving.
    candidates: the moves it weighed, best first (`action` first).
    winrate: the mover's estimated chance to win, in [0, 1], or None.
    simulations: search simulations spent (0 without search).
    policy: the network's prior over every action, float `[A]` (0 on
      illegal moves), or None; analysis lists unsearched moves from it.
  """
  action: int
  resign: bool = False
  candidates: Tuple[Candidate, ...] = ()
  winrate: Optional[float] = None
  simulations: int = 0
  policy: Optional[np.ndarray] = dataclasses.field(default=None,
                                                   compare=False)


def _log(message: str) -> None:
  print(message, file=sys.stderr, flush=True)


def _batch(state: GoState) -> GoState:
  return jax.tree.map(lambda x: jnp.asarray(x)[None], state)


def _check_game(player_game: Go, game: Go, name: str) -> None:
  if not isinstance(game, Go):
    raise ValueError(f"{name}: needs a Go game, got {game!r}")
  if (game.size, game.history_length) != (player_game.size,
                                         player_game.history_length):
    raise ValueError(
        f"{name}: plays {player_game.size}x{player_game.size} Go with "
        f"{player_game.history_length} history planes, got "
        f"{game.size}x{game.size} with {game.history_length}")


def _compile(fn, *args) -> Tuple[Callable, float]:
  start = time.perf_counter()
  compiled = jax.jit(fn).lower(*args).compile()
  return compiled, time.perf_counter() - start


class PolicyPlayer:
  """A network's greedy move: the legal move of highest prior, no search.

  Args:
    name: the player's name (shown by GTP `version`).
    game: the Go game the network plays (size, history planes).
    policy: `(game, states [B]) -> (logits [B, A], values [B] or None)`,
      jittable; values are the mover's, in [-1, 1].
  """

  def __init__(self, *, name: str, game: Go,
               policy: Callable[[Go, GoState], Tuple[chex.Array,
                                                     Optional[chex.Array]]]):
    self.name = name
    self.game = game
    self._policy = policy
    self._moves: Dict[Go, Callable] = {}
    self._views: Dict[Go, Optional[Callable]] = {}
    self.description = f"{name}: greedy network policy, no search"

  def _move_fn(self, game: Go) -> Callable:
    """Compiled `(state, key) -> (action, prior [A], value)`; value is
    NaN without a value head."""
    if game not in self._moves:
      policy = self._policy

      def move(state, key):
        states = _batch(state)
        logits, value = policy(game, states)
        legal = states.legal_action_mask[0]
        logits = jnp.where(legal, logits[0], MASKED_LOGIT)
        action = argmax_random_tiebreak(key, logits, legal)
        root = jnp.nan if value is None else value[0]
        return action, jax.nn.softmax(logits), jnp.float32(root)

      self._moves[game], seconds = _compile(move, game.init(None),
                                            jax.random.key(0))
      _log(f"{self.name}: compiled the policy for {game.size}x{game.size} "
           f"in {seconds:.1f} s")
    return self._moves[game]

  def _view_fn(self, game: Go) -> Optional[Callable]:
    """Compiled `state -> [A]`: the mover's value after each move, the
    network evaluating every child at once; None without a value head."""
    if game not in self._views:
      policy = self._policy
      _, has_value = jax.eval_shape(
          lambda s: policy(game, _batch(s)), game.init(None))
      if has_value is None:
        self._views[game] = None
        return None

      def view(state):
        children = jax.vmap(game.step, in_axes=(None, 0))(
            state, jnp.arange(game.num_actions))
        _, value = policy(game, children)
        # A child's value is the opponent's; a finished game is scored.
        outcome = children.rewards[:, state.current_player]
        return jnp.where(children.terminated, outcome, -value)

      self._views[game], _ = _compile(view, game.init(None))
    return self._views[game]

  def prepare(self, game: Go, *, timed: bool = False) -> None:
    """Compiles the move for `game` now (not inside a timed move)."""
    del timed
    _check_game(self.game, game, self.name)
    self._move_fn(game)

  def _decision(self, state, action, prior, root, after=None) -> Decision:
    legal = np.asarray(state.legal_action_mask)
    order = np.argsort(-np.where(legal, prior, -1.0), kind="stable")
    order = [int(a) for a in order if legal[a]][:POLICY_CANDIDATES]
    if action in order:
      order.remove(action)
    order.insert(0, action)
    win = lambda v: None if v is None or not np.isfinite(v) else float(
        (v + 1) / 2)
    candidates = tuple(
        Candidate(action=a, visits=0,
                  winrate=None if after is None else win(after[a]),
                  prior=float(prior[a]), pv=(a,)) for a in order)
    return Decision(action=action, candidates=candidates, winrate=win(root),
                    policy=np.where(legal, prior, 0.0))

  def genmove(self, game: Go, state: GoState, key: chex.PRNGKey, *,
              seconds: Optional[float] = None) -> Decision:
    """The greedy move: one network call, whatever `seconds`."""
    del seconds
    _check_game(self.game, game, self.name)
    action, prior, root = jax.device_get(self._move_fn(game)(state, key))
    return self._decision(state, int(action), np.asarray(prior), float(root))

  def analyses(self, game: Go, state: GoState, key: chex.PRNGKey
               ) -> Iterator[Decision]:
    """One analysis, with the value after each candidate where the network
    has a value head (the network's view does not deepen)."""
    _check_game(self.game, game, self.name)
    action, prior, root = jax.device_get(self._move_fn(game)(state, key))
    view = self._view_fn(game)
    after = None if view is None else np.asarray(jax.device_get(view(state)))
    yield self._decision(state, int(action), np.asarray(prior), float(root),
                         after)


def _candidates(out, legal, visits, q, prior, action: int, *, rank
                ) -> Tuple[Candidate, ...]:
  """The analysis lines of one search: every visited legal move, the move
  played first, the rest in `rank` order; winrates from Q in [-1, 1]."""
  seen = sorted((int(a) for a in np.flatnonzero(legal & (visits > 0))),
                key=rank)
  if action in seen:
    seen.remove(action)
  seen.insert(0, action)
  tree = {k: np.asarray(out[k]) for k in ("children_index",
                                          "children_visits",
                                          "node_terminated")}
  return tuple(
      Candidate(action=a, visits=int(visits[a]),
                winrate=(float((q[a] + 1) / 2) if visits[a] > 0 else None),
                prior=float(prior[a]), pv=_principal_variation(tree, a))
      for a in seen)


def _principal_variation(tree, action: int) -> Tuple[int, ...]:
  """The most visited line from the root's child `action` (host numpy),
  ending where the game does (a search expands past a finished game's
  node, where every move is a no-op)."""
  pv = [action]
  node = int(tree["children_index"][0, action])
  while node >= 0 and not tree["node_terminated"][node]:
    visits = tree["children_visits"][node]
    if visits.max() <= 0:
      break
    a = int(np.argmax(visits))
    pv.append(a)
    node = int(tree["children_index"][node, a])
  return tuple(pv)


def _record(table: collections.OrderedDict, simulations: int,
            seconds: float) -> None:
  """Remembers in `table` how long a search of `simulations` took (the
  last 3 per count, for at most 64 counts; the least recently seen go
  first)."""
  table.setdefault(simulations, collections.deque(maxlen=3)).append(seconds)
  table.move_to_end(simulations)
  while len(table) > 64:
    table.popitem(last=False)


def _predict(table: Optional[collections.OrderedDict],
             simulations: int) -> float:
  """Expected seconds of a search of `simulations` from `table`'s
  timings: interpolated between the measured counts around it (each at
  its slowest recent time, made non-decreasing in the count). Time per
  simulation grows with the tree, so a chord lies above the curve: a
  cautious guess. Below the smallest count measured, that count's time;
  above the largest, its time scaled in proportion; infinite before any
  search was timed."""
  if not table:
    return math.inf
  counts = sorted(table)
  times = np.maximum.accumulate([max(table[n]) for n in counts])
  if simulations >= counts[-1]:
    return float(times[-1] * simulations / counts[-1])
  return float(np.interp(simulations, counts, times))


class _TimedSearch:
  """A search player's timing and move choice: the recent timings of its
  searches, per game (`self._timings`: simulations -> seconds, set up by
  the player), the time a search of any size is expected to take, and
  `genmove` on top of the player's `choose_simulations`, `_run` and
  `_decision`, falling back on its policy (`self._fallback`)."""

  _timings: Dict[Go, collections.OrderedDict]
  name: str
  game: Go
  resign_threshold: Optional[float]

  def _as_played(self, game: Go) -> Go:
    """The game the player searches when the engine plays `game`."""
    return game

  def _resigns(self, winrate: Optional[float]) -> bool:
    return bool(self.resign_threshold is not None and winrate is not None
                and winrate < self.resign_threshold)

  def genmove(self, game: Go, state: GoState, key: chex.PRNGKey, *,
              seconds: Optional[float] = None) -> Decision:
    """The move of the largest search predicted to fit in `seconds` (None:
    the full budget); the policy's greedy move when not even one fits."""
    _check_game(self.game, game, self.name)
    game = self._as_played(game)
    simulations = self.choose_simulations(game, seconds)
    if simulations is None:
      decision = self._fallback.genmove(game, state, key)
      return dataclasses.replace(decision,
                                 resign=self._resigns(decision.winrate))
    out = self._run(game, state, key, simulations)
    return self._decision(state, out, simulations)

  def network_view(self, game: Go, state: GoState
                   ) -> Tuple[np.ndarray, Optional[float]]:
    """The networks' own view of `state`, without search: the policy,
    float64 `[A]` (0 on illegal moves, summing to 1), and the value for
    the mover in [-1, 1] (None without a value network)."""
    _check_game(self.game, game, self.name)
    game = self._as_played(game)
    views = self.__dict__.setdefault("_network_views", {})
    if game not in views:
      def view(variables, state):
        states = _batch(state)
        logits, value = self._network(game, variables, states)
        legal = states.legal_action_mask[0]
        prior = jax.nn.softmax(jnp.where(legal, logits[0], MASKED_LOGIT))
        return (jnp.where(legal, prior, 0.0),
                jnp.float32(jnp.nan) if value is None else value[0])
      views[game] = jax.jit(view)
    prior, value = jax.device_get(views[game](self.variables, state))
    prior = np.asarray(prior, np.float64)
    return prior / prior.sum(), (None if np.isnan(value) else float(value))

  def record_timing(self, game: Go, simulations: int,
                    seconds: float) -> None:
    """Remembers how long a search of `simulations` took (`_record`)."""
    _record(self._timings.setdefault(game, collections.OrderedDict()),
            simulations, seconds)

  def predicted_seconds(self, game: Go, simulations: int) -> float:
    """Expected seconds of a search of `simulations` (`_predict`)."""
    return _predict(self._timings.get(game), simulations)


class SearchPlayer(_TimedSearch):
  """A policy-value network with AlphaZero's search.

  The search is compiled once per game for `config.num_simulations` (the
  tree's size) and runs any smaller number of simulations, a traced value:
  mctx's simulation loop is given a traced upper bound. For PUCT that is
  exactly a smaller search; for Gumbel it is the first simulations of the
  full budget's sequential-halving schedule, and the move is the best
  scored of the most visited candidates so far (or, with `gumbel_move`
  "argmax", the greedy one of the improved policy).

  Given a time budget the player plays the largest count its own recent
  timings predict to fit (`predicted_seconds`); when not even one
  simulation fits, the network's greedy move.

  Args:
    name: the player's name.
    game: the Go game the network plays (size, history planes).
    evaluate: `(variables, observations, legal) -> (logits, values)`.
    variables: the network's variables.
    config: the search; noise and move sampling are switched off
      (`for_evaluation`), so the move is the search's greedy one.
    resign_threshold: resign when the search's root winrate for the mover
      falls below this (None: never).
  """

  def __init__(self, *, name: str, game: Go, evaluate: EvaluateFn,
               variables: chex.ArrayTree, config: AlphaZeroSearchConfig,
               resign_threshold: Optional[float] = None):
    if resign_threshold is not None and not 0 <= resign_threshold < 1:
      raise ValueError(f"resign_threshold must be in [0, 1), got "
                       f"{resign_threshold!r}")
    self.name = name
    self.game = game
    self.config = config.for_evaluation()
    self.config.num_considered_actions(game)  # Fail now, not in a trace.
    self.evaluate = evaluate
    self.variables = variables
    self.resign_threshold = resign_threshold
    self.max_simulations = self.config.num_simulations
    self.description = (f"{name}: {self.config.policy} search, up to "
                        f"{self.max_simulations} simulations a move")
    self._compiled: Dict[Go, Callable] = {}
    # Per game: simulations -> the last seconds measured for that count.
    self._timings: Dict[Go, collections.OrderedDict] = {}
    self._fallback = PolicyPlayer(
        name=name, game=game,
        policy=lambda g, states: evaluate_states(g, evaluate, variables,
                                                 states))

  def _network(self, game: Go, variables, states: GoState):
    """`(logits [B, A], values [B])` of the network on `states`."""
    return evaluate_states(game, self.evaluate, variables, states)

  # -- The compiled search ----------------------------------------------------

  def _search_fn(self, game: Go):
    config = self.config
    evaluate = self.evaluate
    top = self.max_simulations

    def think(variables, state, key, simulations):
      states = _batch(state)
      search_key, tie_key = jax.random.split(key)
      logits, value = evaluate_states(game, evaluate, variables, states)
      legal = states.legal_action_mask
      root = mctx.RootFnOutput(prior_logits=logits, value=value,
                               embedding=states)
      recurrent_fn = make_recurrent_fn(game, evaluate)
      n = jnp.clip(simulations, 1, top)

      def loop_fn(lower, upper, body, init):
        return jax.lax.fori_loop(lower, jnp.minimum(upper, n), body, init)

      if config.policy == "gumbel":
        out = mctx.gumbel_muzero_policy(
            params=variables, rng_key=search_key, root=root,
            recurrent_fn=recurrent_fn, num_simulations=top,
            invalid_actions=~legal, max_depth=config.max_depth,
            loop_fn=loop_fn,
            max_num_considered_actions=config.num_considered_actions(game),
            gumbel_scale=config.gumbel_scale)
      else:
        qtransform = (mctx.qtransform_by_parent_and_siblings
                      if config.normalize_q else qtransform_raw)
        out = mctx.muzero_policy(
            params=variables, rng_key=search_key, root=root,
            recurrent_fn=recurrent_fn, num_simulations=top,
            invalid_actions=~legal, max_depth=config.max_depth,
            loop_fn=loop_fn, qtransform=qtransform, dirichlet_fraction=0.0,
            pb_c_init=config.c_puct,
            pb_c_base=(1e30 if config.c_puct_base is None
                       else config.c_puct_base))
      # As `alphazero_search` for evaluation: Gumbel's sequential-halving
      # winner (with `gumbel_move` "halving"), else the greedy move of the
      # action weights (the improved policy, PUCT's visit shares).
      weights = jnp.where(legal, out.action_weights, 0.0)[0]
      if config.policy == "gumbel" and config.gumbel_move == "halving":
        action = out.action[0]
      else:
        action = argmax_random_tiebreak(tie_key, weights, legal[0])
      tree = out.search_tree
      root_index = tree.ROOT_INDEX
      q = tree.qvalues(jnp.full((1,), root_index))[0]
      return dict(
          action=action, weights=weights, prior=jax.nn.softmax(logits[0]),
          q=q, root_value=tree.node_values[0, root_index],
          children_visits=tree.children_visits[0],
          children_index=tree.children_index[0],
          node_terminated=tree.embeddings.terminated[0])
    return think

  def _search(self, game: Go) -> Callable:
    if game not in self._compiled:
      compiled, seconds = _compile(
          self._search_fn(game), self.variables, game.init(None),
          jax.random.key(0), jnp.int32(self.max_simulations))
      self._compiled[game] = compiled
      _log(f"{self.name}: compiled a {self.max_simulations}-simulation "
           f"search for {game.size}x{game.size} komi {game.komi:g} in "
           f"{seconds:.1f} s")
    return self._compiled[game]

  def _run(self, game: Go, state: GoState, key: chex.PRNGKey,
           simulations: int, *, record: bool = True):
    fn = self._search(game)
    start = time.perf_counter()
    out = jax.device_get(fn(self.variables, state, key,
                            jnp.int32(simulations)))
    if record:
      self.record_timing(game, simulations, time.perf_counter() - start)
    return out

  def prepare(self, game: Go, *, timed: bool = False) -> None:
    """Compiles the search and the fallback policy for `game` and times
    the search at one simulation and at the full budget."""
    del timed  # One compiled search serves every budget.
    _check_game(self.game, game, self.name)
    self._fallback.prepare(game)
    if game not in self._timings:
      state = game.init(None)
      # The first calls pay one-off costs (allocation, caches): not timed.
      for n, record in ((1, False), (self.max_simulations, False),
                        (1, True), (self.max_simulations, True)):
        self._run(game, state, jax.random.key(0), n, record=record)
      _log(f"{self.name}: 1 simulation takes "
           f"{self.predicted_seconds(game, 1):.3f} s, "
           f"{self.max_simulations} take "
           f"{self.predicted_seconds(game, self.max_simulations):.3f} s")

  # -- Moves ------------------------------------------------------------------

  def _decision(self, state: GoState, out, simulations: int) -> Decision:
    legal = np.asarray(state.legal_action_mask)
    visits = np.asarray(out["children_visits"][0])
    weights = np.asarray(out["weights"])
    q = np.asarray(out["q"])
    prior = np.asarray(out["prior"])
    action = int(out["action"])
    candidates = _candidates(
        out, legal, visits, q, prior, action,
        rank=lambda a: (-weights[a], -visits[a], a))
    winrate = float((np.asarray(out["root_value"]) + 1) / 2)
    return Decision(action=action, resign=self._resigns(winrate),
                    candidates=candidates, winrate=winrate,
                    simulations=simulations,
                    policy=np.where(legal, prior, 0.0))

  def choose_simulations(self, game: Go, seconds: Optional[float]
                         ) -> Optional[int]:
    """The most simulations predicted to fit in `seconds` (the full budget
    when None); None when not even one fits."""
    top = self.max_simulations
    if seconds is None:
      return top
    if self.predicted_seconds(game, 1) > seconds:
      return None
    lo, hi = 1, top  # The prediction grows with n: bisect.
    while lo < hi:
      mid = (lo + hi + 1) // 2
      if self.predicted_seconds(game, mid) <= seconds:
        lo = mid
      else:
        hi = mid - 1
    return lo

  def analyses(self, game: Go, state: GoState, key: chex.PRNGKey
               ) -> Iterator[Decision]:
    """Searches of 1/16, 1/8, ... of the full budget, then the full one."""
    _check_game(self.game, game, self.name)
    top = self.max_simulations
    budgets = sorted({max(1, top >> k) for k in range(4, -1, -1)})
    for n in budgets:
      key, sub = jax.random.split(key)
      yield self._decision(state, self._run(game, state, sub, n), n)


def simulation_ladder(top: int, *, step: int = 1,
                      rungs: int = LADDER_RUNGS) -> Tuple[int, ...]:
  """The searches an `AlphaGoPlayer` compiles for timed play, ascending:
  `top` simulations and its halvings, `rungs` counts at most, each a
  multiple of `step` (the search's leaves per step) and at least `step`.

  Its search fixes the simulation count in the program, so a clock gets a
  few sizes a factor 2 apart (within a factor 2 of any budget from the
  smallest up), not a compile per count."""
  if top % step:
    raise ValueError(f"simulations {top} must be a multiple of the "
                     f"leaves per step {step}")
  return tuple(sorted({max(step, (top >> k) // step * step)
                       for k in range(rungs)}))


class AlphaGoPlayer(_TimedSearch):
  """AlphaGo's search (`search.alphago`: PUCT on a policy prior, leaves
  valued by a value network and/or rollouts), reusing its tree between
  moves.

  The player keeps the tree of its last search. The next search looks for
  the position it is asked about in that tree (`tree_reuse.find`: after
  its own move and the opponent's reply, or the same position again) and
  continues from that subtree with its simulations; anything else (a new
  game, `undo`, moves it never searched) starts afresh. `analyses` keeps
  adding simulations to the same tree, so the analysis deepens for as
  long as a GUI asks.

  Without a clock it searches `num_simulations` a move. Prepared for
  timed play, it also compiles the smaller searches of its
  `simulation_ladder` and, given a time budget, plays the largest one its
  own recent timings predict to fit (as `SearchPlayer`, from the searches
  timed at `prepare` and every search since); when none fits, the
  policy's greedy move. Every search's tree has the full search's
  capacity (the smaller ones keep more reused nodes), so a tree passes
  between sizes.

  Args:
    name: the player's name.
    game: the Go game the networks play (size, history planes).
    policy_fn, value_fn: the prior and v (`search.alphago.split_evaluate`
      for a policy-value network); value_fn None for rollouts only.
    variables: `(policy_variables, value_variables)`.
    config: the search; `reuse_tree` decides whether trees are reused
      (searches return a tree either way: it gives the principal
      variations).
    resign_threshold: resign when the root winrate for the mover falls
      below this (None: never).
    analysis_rounds: searches `analyses` runs on one position.
    ladder_rungs: the most search sizes compiled for timed play.
  """

  def __init__(self, *, name: str, game: Go, policy_fn, value_fn,
               variables: Tuple[chex.ArrayTree, chex.ArrayTree],
               config, resign_threshold: Optional[float] = None,
               analysis_rounds: int = 8, ladder_rungs: int = LADDER_RUNGS):
    if resign_threshold is not None and not 0 <= resign_threshold < 1:
      raise ValueError(f"resign_threshold must be in [0, 1), got "
                       f"{resign_threshold!r}")
    for what, value in (("analysis_rounds", analysis_rounds),
                        ("ladder_rungs", ladder_rungs)):
      check_int(what, value, 1)
    self.name = name
    self.game = game
    self.reuse = bool(config.reuse_tree)
    variant = alphago.check_variant(config.static())
    # A variant that can continue trees always returns them (they give the
    # principal variations); the others return their own tree.
    self.keeps_trees = variant.reuses_trees
    self.static, self.params = dataclasses.replace(
        config, reuse_tree=self.keeps_trees).split()
    self.policy_fn, self.value_fn = policy_fn, value_fn
    self.variables = variables
    self.resign_threshold = resign_threshold
    self.analysis_rounds = analysis_rounds
    self.max_simulations = self.static.num_simulations
    self.ladder = simulation_ladder(self.max_simulations,
                                    step=self.static.leaves_per_step,
                                    rungs=ladder_rungs)
    alphago.make_leaf_value(game, value_fn, self.static)  # Fail now.
    c_puct = (f", c_puct {float(self.params.c_puct):g}"
              if "c_puct" in variant.reads else "")
    self.description = (
        f"{name}: AlphaGo search ({config.variant}), {self.max_simulations} "
        f"simulations a move (under a clock the largest of "
        f"{list(self.ladder)} that fits), λ = "
        f"{float(self.params.mixing):g}{c_puct}, "
        f"{'reusing its tree' if self.reuse else 'no tree reuse'}")
    # Per game: simulations -> the compiled search of that size.
    self._compiled: Dict[Go, Dict[int, Callable]] = {}
    # Per game: simulations -> the last seconds measured for that count.
    self._timings: Dict[Go, collections.OrderedDict] = {}
    self._trees: Dict[Go, object] = {}
    self._empties: Dict[Go, object] = {}
    self.reused_nodes: Optional[int] = None  # Of the last search.
    self._fallback = PolicyPlayer(
        name=name, game=game,
        policy=lambda g, states: (policy_fn(
            variables[0], jax.vmap(g.observe)(states),
            states.legal_action_mask), None))

  def _network(self, game: Go, variables, states: GoState):
    """`(logits [B, A], values [B] or None)` of p (and v) on `states`,
    in the board's own orientation."""
    obs = jax.vmap(game.observe)(states)
    logits = self.policy_fn(variables[0], obs, states.legal_action_mask)
    value = (None if self.value_fn is None
             else self.value_fn(variables[1], obs))
    return logits, value

  # -- The compiled searches --------------------------------------------------

  def _as_played(self, game: Go) -> Go:
    """Its own game (its observation: e.g. a `FeaturePlanesGo`'s planes)
    under the rules the engine plays (`game`: komi, superko, move cap)."""
    return dataclasses.replace(self.game, komi=game.komi,
                               superko=game.superko, max_moves=game.max_moves)

  def _static(self, simulations: int):
    """The search of `simulations` with the full search's tree capacity,
    the rest of it for reused nodes: trees fit every size."""
    if simulations == self.max_simulations:
      return self.static
    if not self.keeps_trees:
      return dataclasses.replace(self.static, num_simulations=simulations)
    return dataclasses.replace(
        self.static, num_simulations=simulations,
        max_reused_nodes=self.static.tree_capacity - simulations)

  def _think_fn(self, game: Go, simulations: int):
    static, params = self._static(simulations), self.params

    def think(variables, state, key, tree):
      states = _batch(state)
      out = alphago.alphago_search(
          game, self.policy_fn, self.value_fn, variables, key, states,
          config=static, params=params, tree=tree)
      t = out.search_tree
      legal = states.legal_action_mask[0]
      logits = jnp.where(legal, t.children_prior_logits[0, 0],
                         MASKED_LOGIT)
      reused = (jnp.int32(0) if out.reused_nodes is None
                else out.reused_nodes[0])
      return out.search_tree if self.keeps_trees else None, dict(
          action=out.action[0], visits=out.visit_counts[0],
          q=out.q_values[0], prior=jax.nn.softmax(logits),
          root_value=out.root_value[0], reused=reused,
          children_index=t.children_index[0],
          children_visits=t.children_visits[0],
          node_terminated=t.embeddings.terminated[0])
    return think

  def _empty_tree(self, game: Go):
    """A tree of the search's shape holding nothing: a fresh search."""
    shapes = jax.eval_shape(
        lambda s: self._think_fn(game, self.max_simulations)(
            self.variables, s, jax.random.key(0), None)[0],
        game.init(None))
    return jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), shapes)

  def _empty(self, game: Go):
    if not self.keeps_trees:
      return None
    if game not in self._empties:
      self._empties[game] = self._empty_tree(game)
    return self._empties[game]

  def _compile_sizes(self, game: Go, sizes) -> None:
    """Compiles the searches of `sizes` for `game` that are not yet, side
    by side (XLA compiles without holding the GIL: with a core each, the
    ladder takes about as long as one compile)."""
    compiled = self._compiled.setdefault(game, {})
    missing = [n for n in sizes if n not in compiled]
    if not missing:
      return
    empty = self._empty(game)
    args = (self.variables, game.init(None), jax.random.key(0), empty)
    workers = max(1, min(len(missing), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
      done = pool.map(lambda n: _compile(self._think_fn(game, n), *args),
                      missing)
      for n, (fn, seconds) in zip(missing, done):
        compiled[n] = fn
        _log(f"{self.name}: compiled a {n}-simulation AlphaGo search for "
             f"{game.size}x{game.size} komi {game.komi:g} in "
             f"{seconds:.1f} s")
    self._trees.setdefault(game, empty)

  def _search(self, game: Go, simulations: int) -> Callable:
    self._compile_sizes(game, (simulations,))
    return self._compiled[game][simulations]

  def _run(self, game: Go, state: GoState, key: chex.PRNGKey,
           simulations: int, *, record: bool = True):
    fn = self._search(game, simulations)
    tree = self._trees[game] if self.reuse else self._empty(game)
    start = time.perf_counter()
    tree, out = fn(self.variables, state, key, tree)
    out = jax.device_get(out)
    if record:
      self.record_timing(game, simulations, time.perf_counter() - start)
    self._trees[game] = tree
    self.reused_nodes = int(out["reused"])
    return out

  def prepare(self, game: Go, *, timed: bool = False) -> None:
    """Compiles the full search and the fallback policy for `game` (with
    `timed`, every size of the ladder), and times the smallest and the
    largest size it compiled."""
    _check_game(self.game, game, self.name)
    game = self._as_played(game)
    self._fallback.prepare(game)
    sizes = self.ladder if timed else (self.max_simulations,)
    new = [n for n in sizes if n not in self._compiled.get(game, {})]
    if not new:
      return
    self._compile_sizes(game, new)
    state = game.init(None)
    # The first call of each pays one-off costs (allocation, caches): not
    # timed. Then the smallest and largest new size are; the others are
    # interpolated.
    for n in new:
      self._run(game, state, jax.random.key(0), n, record=False)
    timed_sizes = sorted({new[0], new[-1]})
    for n in timed_sizes:
      self._run(game, state, jax.random.key(0), n)
    self._trees[game] = self._empty(game)
    _log(f"{self.name}: " + ", ".join(
        f"{n} simulations take {self.predicted_seconds(game, n):.3f} s"
        for n in timed_sizes))

  # -- Moves ------------------------------------------------------------------

  def choose_simulations(self, game: Go, seconds: Optional[float]
                         ) -> Optional[int]:
    """The largest compiled search predicted to fit in `seconds` (the full
    one when None); None when none fits."""
    if seconds is None:
      return self.max_simulations
    fits = [n for n in self._compiled.get(game, {})
            if self.predicted_seconds(game, n) <= seconds]
    return max(fits, default=None)

  def _decision(self, state: GoState, out, simulations: int) -> Decision:
    legal = np.asarray(state.legal_action_mask)
    visits = np.asarray(out["visits"])
    action = int(out["action"])
    q, prior = np.asarray(out["q"]), np.asarray(out["prior"])
    candidates = _candidates(out, legal, visits, q, prior, action,
                             rank=lambda a: (-visits[a], a))
    winrate = float((np.asarray(out["root_value"]) + 1) / 2)
    return Decision(action=action, resign=self._resigns(winrate),
                    candidates=candidates, winrate=winrate,
                    simulations=simulations,
                    policy=np.where(legal, prior, 0.0))

  def analyses(self, game: Go, state: GoState, key: chex.PRNGKey
               ) -> Iterator[Decision]:
    """`analysis_rounds` full searches of the position, each continuing
    the last one's tree when reusing (so ever more visits), else fresh."""
    _check_game(self.game, game, self.name)
    game = self._as_played(game)
    for _ in range(self.analysis_rounds):
      key, sub = jax.random.split(key)
      out = self._run(game, state, sub, self.max_simulations)
      yield self._decision(state, out, self.max_simulations)
