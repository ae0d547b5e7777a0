"""Batched matches stepped from the host: our agent against GNU Go, or
against another JAX agent, with every compiled function reused across calls.

`gnugo_match` plays B = 2 * games_per_colour games at once: our agent (any
`Agent`, jitted here) against B GNU Go processes (`gtp.GnuGoPlayer`), Black
in the first half of the games and White in the second. Go alternates
strictly, so on every ply our agent moves in one half and GNU Go in the
other: the GNU Go moves of that half are requested concurrently (one thread
per game, each waiting on its own pipe) while our agent computes, so a ply
costs about one GNU Go move, not B of them. Our moves reach each GNU Go
board just before its next `genmove`.

Scoring is our engine's, never GNU Go's: a game ends by two passes or the
game's move cap (`Go.max_moves`, 2·N² by default) and is scored Tromp-Taylor
(`GoState.score`; stones on the board all count as alive). So GNU Go runs
with `--capture-all-dead` by default, to remove dead stones before it
passes rather than lose them to Tromp-Taylor counting. A resignation by GNU
Go is its loss (`Go.resign`). Games still going after `max_moves` plies (if
given) are scored Tromp-Taylor on the board as it stands.

With `final_scores=True`, every game that ended by two passes (both sides
agree it is over) is also scored by GNU Go's `final_score`, beside ours
(`Outcomes.score`, `Outcomes.gnugo_score`): GNU Go judges dead stones, so
the two differ where dead stones were left on the board.

A `search.CarryingAgent` (AlphaGo's search reusing its trees) gets back,
on each move, what it returned on its previous move in the same game.

An `AnalysedAgent` (or a `CarryingAgent` with `analysed`) also reports its
search's winrate and root visits for each move, kept per ply in
`Outcomes.winrates` and `Outcomes.visits` for the game records: its moves
are the `analyse` function's actions, so the games are the ones it plays
as a plain agent.

An agent given as a `jax.tree_util.Partial` is compiled once per function
and batch shape with its bound arrays (parameters, network weights) passed
as arguments, so agents that differ only in those arrays share one program.

`GTPPlayer` puts any other GTP engine in GNU Go's place (`make_player`).

`agent_match` is the same loop with a JAX agent as the opponent. Unlike
`arena.play`, which compiles its whole game loop on every call, it jits
each agent once per batch shape, so a script evaluating many networks pays
the compile of a slow opponent (UCT with rollouts) once.

`random_opening_moves` plays the first plies uniformly at random for both
sides, so that two deterministic players (a greedy network, GNU Go) do not
replay one game B times.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import math
import os
import threading
import warnings
from typing import Callable, Optional, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.play.arena import tally
from alphago_jax.engines.gtp_client import GTPClient, GTPConnectionError, GTPError
from alphago_jax.engines.gnugo_player import RESIGN, GnuGoPlayer
from alphago_jax.evaluation.match import MatchResult
from alphago_jax.games import base as game_base
from alphago_jax.search.agents import random_agent
from alphago_jax.search.base import Agent, AnalysedAgent, CarryingAgent

DEFAULT_GNUGO_ARGS = ("--capture-all-dead",)


@dataclasses.dataclass(frozen=True)
class Outcomes:
  """Per-game results of a host-stepped match, from our agent's side.

  Attributes:
    agent_black: bool `[B]`, our agent played Black (True in the first half).
    returns: float `[B]`, our agent's result: +1 win, 0 draw, -1 loss.
    lengths: int `[B]`, plies played.
    resigned: bool `[B]`, the opponent resigned (always False for agents).
    capped: bool `[B]`, stopped by `max_moves` and scored on the board.
    score: float `[B]`, Tromp-Taylor `black - white - komi` of each final
      board (None from callers that build Outcomes without it).
    gnugo_score: float `[B]`, GNU Go's `final_score` as `black - white -
      komi` where it was asked (`final_scores`) and the game ended by two
      passes, NaN elsewhere; None when not asked.
    moves: int32 `[B, T]`, the actions played, ply by ply (T the longest
      game), -1 after a game's end (a resignation is not a move).
    forfeited: bool `[B]`, the game ended on an illegal move (by our rules)
      of the mover, who lost it: `returns` says which side that was.
    unplayed: bool `[B]`, the game could not be finished (its GNU Go
      process died or refused a move): not played, left out of `result()`.
    winrates: float32 `[B, T]`, per ply as `moves`, the mover's search
      winrate in [0, 1] of the position it moved from, where the mover is
      an analysed agent (`AnalysedAgent`, or a `CarryingAgent` with
      `analysed`); NaN for GNU Go's moves, other agents', random opening
      plies and after a game's end.
    visits: int32 `[B, T]`, the mover's root visits there, -1 elsewhere.
  """
  agent_black: np.ndarray
  returns: np.ndarray
  lengths: np.ndarray
  resigned: np.ndarray
  capped: np.ndarray
  score: Optional[np.ndarray] = None
  gnugo_score: Optional[np.ndarray] = None
  moves: Optional[np.ndarray] = None
  forfeited: Optional[np.ndarray] = None
  unplayed: Optional[np.ndarray] = None
  winrates: Optional[np.ndarray] = None
  visits: Optional[np.ndarray] = None

  def result(self, games: Optional[Sequence[int]] = None) -> MatchResult:
    """Wins/draws/losses per colour (`as_first`: as Black) over `games`
    (indices; all by default), unplayed games left out."""
    idx = np.arange(len(self.returns)) if games is None else np.asarray(games)
    if self.unplayed is not None:
      idx = idx[~self.unplayed[idx]]

    black = self.agent_black[idx]
    returns = self.returns[idx]
    return MatchResult(as_first=tally(returns[black]),
                       as_second=tally(returns[~black]))


def _check_groups(groups, games_per_colour):
  check_int("agent_groups", groups, 1)
  if games_per_colour % groups:
    raise ValueError(f"agent_groups: {games_per_colour} games a colour do "
                     f"not split into {groups} equal groups")


@jax.jit
def _call_partial(agent, states, key):
  return agent(states, key)


@jax.jit
def _call_carrying_partial(fn, states, key, carry):
  return fn(states, key, carry)


def _analysed(agent) -> bool:
  """Whether the jitted agent (`_jit_agent`) also returns winrates and
  visits."""
  if isinstance(agent, CarryingAgent):
    return agent.analysed
  return isinstance(agent, AnalysedAgent)


@functools.lru_cache(maxsize=None)
def _jit_agent(agent):
  """The jitted agent: `(states, key) -> actions` for an `Agent`, `(states,
  key, carry) -> (actions, carry)` for a `CarryingAgent`; for an analysed
  one (`_analysed`), `(actions, winrates, visits)` in place of `actions`."""
  if isinstance(agent, CarryingAgent):
    if isinstance(agent.fn, jax.tree_util.Partial):
      return functools.partial(_call_carrying_partial, agent.fn)
    return jax.jit(agent.fn)
  if isinstance(agent, AnalysedAgent):
    agent = agent.analyse
  if isinstance(agent, jax.tree_util.Partial):
    # Its bound arrays are arguments: one program per function and shapes.
    return functools.partial(_call_partial, agent)
  return jax.jit(agent)  # Cached: the same agent compiles once per shape.


@functools.lru_cache(maxsize=None)
def _compiled(game: game_base.Game):
  """Jitted init and ply step of one game, shared by every match."""

  def init(key, batch):
    return jax.vmap(game.init)(jax.random.split(key, batch))

  def advance(states, actions, resign, agent_player):
    """One ply in every unfinished game; the mover resigns where `resign`."""
    moving = ~states.terminated
    stepped = jax.vmap(game.step)(states, actions)
    # Only Go can resign; elsewhere `resign` is all False.
    resigned = (jax.vmap(game.resign)(states) if hasattr(game, "resign")
                else stepped)
    new = game_base.select(moving, game_base.select(resign, resigned, stepped),
                           states)
    reward = jnp.take_along_axis(new.rewards, agent_player[:, None], 1)[:, 0]
    return new, jnp.where(moving, reward, 0.0)

  def board_score(states):
    """Tromp-Taylor `black - white - komi` of the boards as they stand (a
    finished game's final score)."""
    return jax.vmap(game.area_score)(states)

  return (jax.jit(init, static_argnums=1), jax.jit(advance),
          jax.jit(board_score) if hasattr(game, "area_score") else None)


def _half(states, lo, hi):
  return jax.tree.map(lambda x: x[lo:hi], states)


def _live_rows(live: np.ndarray, groups: int) -> Optional[np.ndarray]:
  """Rows of a half batch worth searching: the live games of each of its
  `groups` equal contiguous groups, each group padded (with copies of one
  of its rows) to m, the smallest of its size and the powers of two that
  holds its live games, so that an agent that reads its batch as groups
  still finds them; None while m is the full group (call on the half as
  it is). Few shapes compile: one per power of two below the group size.

  Args:
    live: bool `[G]`, games of the half not over.
    groups: the agent's groups (`G % groups == 0`).

  Returns:
    int `[groups * m]`, indices into the half, or None.
  """
  size = live.shape[0] // groups
  per_group = live.reshape(groups, size)
  most = int(per_group.sum(axis=1).max())
  m = 1 << max(most - 1, 0).bit_length()
  if m >= size:
    return None
  rows = []
  for k in range(groups):
    ids = np.flatnonzero(per_group[k])
    ids = ids if ids.size else np.zeros(1, np.int64)
    rows.append(k * size + np.resize(ids, m))
  return np.concatenate(rows)


@jax.jit
def _take_rows(tree, rows):
  return jax.tree.map(lambda x: x[rows], tree)


@jax.jit
def _put_rows(carry, rows, new, pick):
  """`carry` with rows `rows[pick]` replaced by `new[pick]`."""
  return jax.tree.map(lambda x, y: x.at[rows[pick]].set(y[pick]), carry,
                      new)


def _last_of_each(rows: np.ndarray) -> np.ndarray:
  """Positions in `rows` of each distinct value's last occurrence: the
  copy whose results count (numpy's `out[rows] = ...` keeps the last)."""
  _, first_from_end = np.unique(rows[::-1], return_index=True)
  return len(rows) - 1 - first_from_end


class _Mover:
  """One side's agent over its half batches: it searches only the games
  not over (`_live_rows`), its half read as `groups` equal groups. A
  `CarryingAgent`'s carry is kept per game of the whole batch; a game's row
  is given to that game's own moves only and replaced by what its search
  returned (of a padded copy, the one whose action is played)."""

  def __init__(self, agent, groups: int, batch: int):
    self.fn = _jit_agent(agent)
    self.carrying = isinstance(agent, CarryingAgent)
    self.analysed = _analysed(agent)
    self.groups = groups
    self.batch = batch
    self.carry = None

  def move(self, states, live: np.ndarray, offset: int, key):
    """Dispatches the moves of the half `states` `[G]` (rows `offset` to
    `offset + G` of the batch); returns a function giving int `[G]`
    actions, float `[G]` winrates (NaN where the agent is not analysed)
    and int `[G]` visits (-1 there), meaningless where a game is over."""
    rows = _live_rows(live, self.groups)
    if not self.carrying:
      if rows is None:
        rows = np.arange(live.shape[0])
        sub = self.fn(states, key)  # Dispatched; read when needed.
      else:
        sub = self.fn(_take_rows(states, rows), key)
    else:
      if rows is None:
        rows = np.arange(live.shape[0])
      sub_states = _take_rows(states, rows)
      if self.carry is None:
        self.carry = self._first_carry(sub_states, key)
      batch_rows = jnp.asarray(offset + rows, jnp.int32)
      sub, new = self.fn(sub_states, key, _take_rows(self.carry, batch_rows))
      self.carry = _put_rows(self.carry, batch_rows, new,
                             jnp.asarray(_last_of_each(rows), jnp.int32))

    def read():
      size = live.shape[0]
      actions = np.zeros(size, np.int32)
      winrates = np.full(size, np.nan, np.float32)
      visits = np.full(size, -1, np.int32)
      # Copies of a row carry its own action and statistics.
      if self.analysed:
        actions[rows], winrates[rows], visits[rows] = (
            np.asarray(x) for x in sub)
      else:
        actions[rows] = np.asarray(sub)
      return actions, winrates, visits
    return read

  def _first_carry(self, states, key):
    """All zeros, one row per game of the whole batch, shaped as the carry
    the agent returns when given none."""
    shapes = jax.eval_shape(self.fn, states, key, None)[1]
    return jax.tree.map(
        lambda x: jnp.zeros((self.batch,) + x.shape[1:], x.dtype), shapes)


def _play(game, agent, opponent, key, *, games_per_colour, max_moves,
          random_opening_moves, agent_groups=1):
  """The host loop; `opponent` has `moves(states, ids, ply)` -> a function
  giving (actions, resign, failed, winrates, visits) for games `ids` (all
  its to move; winrates NaN and visits -1 where it did not search), and
  `observe(ids, actions)` for the moves played in them by others.

  An illegal move (by our rules) from either side forfeits the game: the
  mover loses it. A game whose opponent failed (`failed`: its process died,
  or it refused a move) ends there and is reported unplayed; the others go
  on. Our agent searches only the games not over (`_call_live`), its
  half batch read as `agent_groups` equal groups."""
  g = games_per_colour
  batch = 2 * g
  init, advance, board_score = _compiled(game)
  mover = _Mover(agent, agent_groups, batch)
  random_fn = _jit_agent(random_agent)
  agent_player = jnp.asarray(np.repeat([0, 1], g), jnp.int32)
  init_key, key = jax.random.split(key)
  states = init(init_key, batch)
  returns = np.zeros(batch, np.float32)
  resigned = np.zeros(batch, bool)
  forfeited = np.zeros(batch, bool)
  unplayed = np.zeros(batch, bool)
  played = []  # [B] per ply, -1 where a game was over or resigned
  winrates, visits = [], []  # [B] per ply, the mover's: NaN and -1 if none
  ply = 0
  while not bool(np.all(jax.device_get(states.terminated))) and (
      max_moves is None or ply < max_moves):
    key, agent_key, opp_key = jax.random.split(key, 3)
    # Black moves at even plies: our agent in the first half of the games.
    ours, theirs = ((0, g), (g, batch)) if ply % 2 == 0 else ((g, batch),
                                                             (0, g))
    ours_ids = np.arange(*ours)
    theirs_ids = np.arange(*theirs)
    done = np.asarray(states.terminated)
    if np.any(np.asarray(states.current_player)[~done] != ply % 2):
      raise ValueError(f"match: {game.name} does not alternate strictly (a "
                       f"game has the wrong player to move at ply {ply})")
    failed = np.zeros(batch, bool)
    if ply < random_opening_moves:
      actions = np.asarray(random_fn(states, agent_key))
      resign = np.zeros(batch, bool)
      winrate = np.full(batch, np.nan, np.float32)
      visit = np.full(batch, -1, np.int32)
      opponent.observe(np.flatnonzero(~done), actions[~done])
    else:
      # The opponent's half first: GNU Go thinks while our agent computes.
      pending = opponent.moves(_half(states, *theirs), theirs_ids, ply,
                               opp_key)
      our_actions, our_winrates, our_visits = mover.move(
          _half(states, *ours), ~done[ours[0]:ours[1]], ours[0], agent_key)()
      (their_actions, their_resign, their_failed, their_winrates,
       their_visits) = pending()
      actions = np.empty(batch, np.int32)
      actions[ours[0]:ours[1]] = our_actions
      actions[theirs[0]:theirs[1]] = their_actions
      winrate = np.empty(batch, np.float32)
      winrate[ours[0]:ours[1]] = our_winrates
      winrate[theirs[0]:theirs[1]] = their_winrates
      visit = np.empty(batch, np.int32)
      visit[ours[0]:ours[1]] = our_visits
      visit[theirs[0]:theirs[1]] = their_visits
      resign = np.zeros(batch, bool)
      resign[theirs[0]:theirs[1]] = their_resign
      failed[theirs[0]:theirs[1]] = their_failed
      live = ~done[ours[0]:ours[1]]
      opponent.observe(ours_ids[live], our_actions[live])
    legal = np.asarray(states.legal_action_mask)
    bad = ~done & ~resign & ~failed & ~legal[np.arange(batch), actions]
    resigned |= resign & ~done
    forfeited |= bad
    unplayed |= failed & ~done
    gone = done | resign | bad | failed
    played.append(np.where(gone, -1, actions).astype(np.int32))
    winrates.append(np.where(gone, np.nan, winrate).astype(np.float32))
    visits.append(np.where(gone, -1, visit).astype(np.int32))
    # A forfeit or a failed game ends as a resignation of the mover (the
    # result of a failed one is discarded).
    resign = resign | bad | failed
    states, reward = advance(states, jnp.asarray(actions),
                             jnp.asarray(resign), agent_player)
    returns += np.asarray(reward)
    ply += 1
  capped = ~np.asarray(states.terminated)
  # Games without a board score (not Go) leave capped games drawn.
  score = (None if board_score is None
           else np.asarray(board_score(states), np.float32))
  if capped.any() and score is not None:
    black = np.sign(score)
    returns = np.where(capped, np.where(np.arange(batch) < g, black, -black),
                       returns).astype(np.float32)
  returns = np.where(unplayed, 0.0, returns).astype(np.float32)
  return states, Outcomes(
      agent_black=np.repeat([True, False], g), returns=returns,
      lengths=np.asarray(states.step_count), resigned=resigned,
      capped=capped, score=score,
      moves=(np.stack(played, axis=1) if played
             else np.zeros((batch, 0), np.int32)),
      forfeited=forfeited, unplayed=unplayed,
      winrates=(np.stack(winrates, axis=1) if winrates
                else np.zeros((batch, 0), np.float32)),
      visits=(np.stack(visits, axis=1) if visits
              else np.zeros((batch, 0), np.int32)))


class GTPPlayer(GnuGoPlayer):
  """Any GTP engine as a `gnugo_match` player (`make_player`): GNU Go's
  bridge (`play`, `genmove`, `close`) over the given command. Only standard
  GTP is sent, so pass `check_boards=False` (its `stones` asks for GNU Go's
  `list_stones`); our engine still judges every move.

  Args:
    game: a `Go` instance (size and komi are sent to the engine).
    command: the engine's argv.
    timeout: seconds to wait for each answer.
  """

  def __init__(self, game, command: Sequence[str], *,
               timeout: Optional[float] = 60.0):
    # pylint: disable=super-init-not-called
    # GnuGoPlayer's __init__ starts GNU Go; this starts `command` instead.
    self._attach(game, GTPClient(list(command), timeout=timeout))


class _AgentOpponent:
  """A JAX agent (or `CarryingAgent`) as the opponent; like ours, it
  searches only the games not over, its half read as `groups` groups."""

  def __init__(self, agent, groups, batch):
    self.mover = _Mover(agent, groups, batch)

  def moves(self, states, ids, ply, key):
    del ply
    moved = self.mover.move(states, ~np.asarray(states.terminated),
                            int(ids[0]), key)

    def collect():
      actions, winrates, visits = moved()
      return (actions, np.zeros(len(ids), bool), np.zeros(len(ids), bool),
              winrates, visits)
    return collect

  def observe(self, ids, actions):
    pass


class _GnuGoOpponent:
  """One GNU Go per game; our moves are queued and sent before its next
  genmove, in that game's thread. At most one genmove per core thinks at a
  time: a hundred GNU Gos thinking at once on two cores would take the
  same total time, but each answer would take fifty times as long and could
  overrun the GTP timeout."""

  def __init__(self, players, game, pool):
    self.players = players
    self.game = game
    self.pool = pool
    self.thinking = threading.BoundedSemaphore(os.cpu_count() or 1)
    self.queued = [[] for _ in players]
    self.failed = [False] * len(players)  # Died, or refused a move.

  def _genmove(self, i):
    p = self.players[i]
    for a in self.queued[i]:
      p.play(int(a))
    self.queued[i] = []
    with self.thinking:
      return p.genmove()

  def moves(self, states, ids, ply, key):
    del ply, key
    done = np.asarray(states.terminated)
    futures = {i: self.pool.submit(self._genmove, int(i))
               for i, d in zip(ids, done) if not d}

    def collect():
      actions = np.full(len(ids), self.game.pass_action, np.int32)
      resign = np.zeros(len(ids), bool)
      failed = np.zeros(len(ids), bool)
      for j, i in enumerate(ids):
        if i in futures:
          try:
            a = futures[i].result()
          except (GTPConnectionError, GTPError) as e:
            # The process died, hung or refused a move of ours: this game
            # cannot be finished; the others go on.
            warnings.warn(f"gnugo_match: game {int(i)} not played: {e}")
            self.failed[int(i)] = failed[j] = True
            continue
          if a == RESIGN:
            resign[j] = True
          else:
            actions[j] = a
      # GNU Go reports no search statistics.
      return (actions, resign, failed, np.full(len(ids), np.nan, np.float32),
              np.full(len(ids), -1, np.int32))
    return collect

  def observe(self, ids, actions):
    for i, a in zip(ids, actions):
      self.queued[int(i)].append(int(a))

  def final_scores(self, over: np.ndarray) -> np.ndarray:
    """float `[B]`: GNU Go's `final_score` of the games where `over`, NaN
    elsewhere (queued moves are sent first)."""
    def score(i):
      if not over[i]:
        return math.nan
      p = self.players[i]
      for a in self.queued[i]:
        p.play(int(a))
      self.queued[i] = []
      return p.final_score()
    return np.asarray(list(self.pool.map(score, range(len(self.players)))),
                      np.float32)

  def check_boards(self, states, skip: np.ndarray):
    """GNU Go's board must equal ours at the end of every game not in
    `skip` (forfeited or unplayed games, where the two differ by design)."""
    ours = np.asarray(jax.vmap(self.game.stones)(states))

    def check(i):
      if skip[i]:
        return ours[i]
      p = self.players[i]
      for a in self.queued[i]:
        p.play(int(a))
      self.queued[i] = []
      return p.stones()
    boards = list(self.pool.map(check, range(len(self.players))))
    for i, b in enumerate(boards):
      if not np.array_equal(b, ours[i]):
        raise RuntimeError(f"gnugo_match: GNU Go's board differs from ours "
                           f"at the end of game {i}")


def gnugo_match(game: game_base.Game, agent: Agent, key: chex.PRNGKey, *,
                level: int, games_per_colour: int,
                max_moves: Optional[int] = None, seed: int = 0,
                extra_args: Sequence[str] = DEFAULT_GNUGO_ARGS,
                random_opening_moves: int = 0, check_boards: bool = True,
                final_scores: bool = False,
                make_player: Optional[Callable[[int], object]] = None,
                agent_groups: int = 1) -> Outcomes:
  """Our `agent` against GNU Go in 2 * games_per_colour parallel games.

  Args:
    game: a `Go` game (size <= 19).
    agent: `(states [B], key) -> actions [B]`, or a `CarryingAgent`
      (each game's carry, e.g. a search tree, kept between its moves);
      jitted here, called on the games of one colour not yet over (at most
      games_per_colour states, padded to a power of two; see `_live_rows`).
    key: PRNG key, consumed.
    level: GNU Go level, 0 to 10.
    games_per_colour: games with our agent as Black, and as many as White.
    max_moves: stop after this many plies, scoring unfinished games on the
      board; None plays to the game's own end (its move cap included).
    seed: GNU Go game i runs with seed `seed + i`.
    extra_args: more GNU Go flags (default: `--capture-all-dead`).
    random_opening_moves: plies played at random by both sides first.
    check_boards: compare GNU Go's final board with ours in every game.
    final_scores: ask GNU Go's `final_score` of every game that ended by
      two passes (`Outcomes.gnugo_score`).
    make_player: `i -> player` with GnuGoPlayer's `play`, `genmove`,
      `stones`, `final_score` and `close` (tests); default GNU Go at
      `level`.
    agent_groups: `agent` reads its batch as this many equal groups (one
      per parameter value, `ablation.group_moves`); each keeps its share.

  Returns:
    `Outcomes`; `.result()` gives wins/draws/losses per colour.
  """
  check_int("games_per_colour", games_per_colour, 1)
  check_int("random_opening_moves", random_opening_moves, 0)
  _check_groups(agent_groups, games_per_colour)
  if max_moves is not None:
    check_int("max_moves", max_moves, 1)
  if not hasattr(game, "vertex_to_action"):
    raise ValueError(f"gnugo_match: needs a Go game, got {game!r}")
  if make_player is None:
    check_int("level", level, 0)
    make_player = lambda i: GnuGoPlayer(game, level, seed=seed + i,
                                        extra_args=extra_args)
  batch = 2 * games_per_colour
  players = []
  with concurrent.futures.ThreadPoolExecutor(max_workers=batch) as pool:
    try:
      players.extend(pool.map(make_player, range(batch)))
      opponent = _GnuGoOpponent(players, game, pool)
      states, outcomes = _play(
          game, agent, opponent, key, games_per_colour=games_per_colour,
          max_moves=max_moves, random_opening_moves=random_opening_moves,
          agent_groups=agent_groups)
      if check_boards:
        opponent.check_boards(states,
                              outcomes.forfeited | outcomes.unplayed)
      if final_scores:
        over = (np.asarray(states.terminated)
                & (np.asarray(states.passes) >= 2) & ~outcomes.resigned
                & ~outcomes.forfeited & ~outcomes.unplayed)
        outcomes = dataclasses.replace(
            outcomes, gnugo_score=opponent.final_scores(over))
    finally:
      for p in players:
        p.close()
  return outcomes


def agent_match(game: game_base.Game, agent: Agent, opponent: Agent,
                key: chex.PRNGKey, *, games_per_colour: int,
                max_moves: Optional[int] = None,
                random_opening_moves: int = 0,
                agent_groups: int = 1) -> Outcomes:
  """`agent` against `opponent` (both JAX agents, either may be a
  `CarryingAgent`), stepped from the host
  like `gnugo_match`; each agent compiles once per batch shape and game,
  and searches only the games not over. Both read their batches as
  `agent_groups` equal groups. The statistics of either side's analysed
  moves are kept (`Outcomes.winrates`, `Outcomes.visits`)."""
  check_int("games_per_colour", games_per_colour, 1)
  check_int("random_opening_moves", random_opening_moves, 0)
  _check_groups(agent_groups, games_per_colour)
  if max_moves is not None:
    check_int("max_moves", max_moves, 1)
  _, outcomes = _play(game, agent,
                      _AgentOpponent(opponent, agent_groups,
                                     2 * games_per_colour),
                      key, games_per_colour=games_per_colour,
                      max_moves=max_moves,
                      random_opening_moves=random_opening_moves,
                      agent_groups=agent_groups)
  return outcomes
