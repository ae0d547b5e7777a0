"""Ablations of AlphaGo's search parameters on Go, anchored on GNU Go.

An ablation is a list of variants of `search.alphago_search`, each a value
of its traced `AlphaGoParams` (a grid over one field or several: λ is
`mixing`, then `c_puct`, `virtual_loss`) and, where the grid sweeps them, of
the static fields that fix the compiled search (`STATIC_FIELDS`:
num_simulations, ...), every other setting shared. The variants play

* a round robin among themselves, and
* a match against GNU Go at each given level (`gtp.GnuGoPlayer`: Chinese
  rules, positional superko like our engine, `--capture-all-dead`),

colours alternated, every move checked by our engine (`gnugo_match`),
optionally after a few random opening plies so that deterministic players
do not replay one game. Games are scored Tromp-Taylor by our engine; where
both sides passed, GNU Go's `final_score` is asked as well and the agreement
counted (GNU Go judges dead stones, Tromp-Taylor counts every stone on the
board, so the two can differ). One Elo table is fitted over all games
(`elo.fit_elo`, one virtual draw per pair that played, so that a winless
player keeps a finite rating), anchored on the lowest GNU Go level (level 1
= 0 by default), with 95% intervals from the fit's covariance.

Q is AlphaGo's raw mean value in [-1, 1] (`search.alphago`), so c_puct is on
the paper's scale, not on mctx's normalised Q.

**One program.** The games of a call are K groups of G, group k searched
with the k-th of K stacked parameter values, one value after another with
`lax.map` inside one compiled program (`variant_agent`). Not `vmap`: a
traced λ picks the leaf evaluator with `lax.cond`, which vmap turns into a
select that runs the value network and the rollouts, each in more than one
branch, for every value. The agents are `jax.tree_util.Partial`s over the
network weights and the K values, so every match, any values on either
side, reuses the search compiled for its shape (`gnugo_match`).

**Jobs.** Games run in jobs of one batch each: a round-robin job plays
`chunk` games per colour of every pair (K = P(P − 1)/2 groups), a GNU Go
job `groups_per_variant` × `chunk` per colour of every variant at one level
(K = P × groups_per_variant). With P odd, groups_per_variant = (P − 1)/2,
so both kinds have the same shape and the whole ablation compiles once.

**Static configurations.** Variants that differ in a static field cannot
share a program: each static configuration (`static_groups`) is one
compiled search, and plays the jobs above over its own P variants, those
of a sweep of that configuration alone (the same job keys, GNU Go seeds
and groups, names prefixed with its values: `sims16-rr-000`), so each
variant's games are the same in the grid and in that sweep. The round
robin between two configurations plays in jobs of their own, one job per
pair of configurations (`sims16-vs-sims64-rr-000`: every variant of one
against every variant of the other, each side its own compiled search).
A grid of traced fields alone is one configuration with unprefixed jobs.

**Run directory.** `config.json` (the `AblationConfig`, version and
commit), `jobs/<job>.json` (one per finished job: its games, each move
with the winrate and root visits of the variant that searched it
(`play_job`), written atomically when the job ends; `<job>.lock`,
holding `PID@HOST`, while a process plays it, so that several processes
of one machine can share a run; a lock from another machine is never
taken over),
`games/<job>-<game>.sgf` (one SGF per game, `evaluation.ablation_games`,
written just before the job's record) and, rewritten from the finished
jobs after each one, `results.csv` (one row per pairing), `elo.csv`,
`table.md` and `plot.png`. A job's key and GNU Go seeds derive from the
seed, its level and its index alone, so a killed run restarted with the
same config replays the unfinished job from its start and plays exactly
the games of an uninterrupted run, none counted twice.

**On a cluster.** `run_ablation(..., ray_address=...)` (`alphago-jax sweep
--ray ADDRESS`) plays the same jobs as tasks on a Ray cluster
(`core.ray_jobs`): the workers only play; this process writes each job's
SGFs and record as it comes back, so every file is written by one process
on one machine, as by a local run, and a worker killed mid-job leaves
nothing behind (Ray replays its job from the start, with the same keys).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
import os
import resource
import socket
import time
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.core import config_codec, ray_jobs, rundir
from alphago_jax.core.atomic_files import (read_json, temporary_writer,
                                           write_atomic)
from alphago_jax.core.checks import check_int
from alphago_jax.evaluation import ablation_games
from alphago_jax.evaluation.ablation_report import (PARAMETERS, Summary,
                                                    gnugo_name, summarize,
                                                    write_outputs)
from alphago_jax.evaluation.gnugo_match import agent_match, gnugo_match
from alphago_jax.games import match_sgf
from alphago_jax.search import alphago
from alphago_jax.search import sweep as sweep_lib
from alphago_jax.search.base import AnalysedAgent, CarryingAgent
from alphago_jax.zoo.alphago_networks import load_alphago_networks
from alphago_jax.zoo import loaders
from alphago_jax.zoo.checkpoints import checkpoints_root

JOBS_DIR = "jobs"
# `AlphaGoStatic` fields a grid may sweep, each with its tag in job names.
# They fix the compiled search's shapes, so variants that differ in them
# compile and play separately (`static_groups`). Not sweepable:
# rollout_policy and variant (names, and the grid's values are numbers;
# the variant also decides which fields the grid may sweep), use_value and
# use_rollouts (implied by the λ values), reuse_tree (the report and SGFs
# describe one tree-reuse setting per ablation).
STATIC_FIELDS = ("num_simulations", "rollouts_per_leaf", "leaves_per_step")
STATIC_TAGS = {"num_simulations": "sims", "rollouts_per_leaf": "rollouts",
               "leaves_per_step": "leaves"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AblationConfig:
  """Everything that decides an ablation's games.

  Attributes:
    grid: `((field, (value, ...)), ...)`: the variants are every combination
      (first field slowest) of these `AlphaGoParams` fields (floats) and
      `STATIC_FIELDS` (positive integers; each configuration of them is
      compiled and played separately, `static_groups`).
    c_puct, mixing, virtual_loss, rollout_temperature, random_symmetry: the
      parameters not in `grid` (`random_symmetry` a bool; in a grid, 0 or
      1).
    num_simulations: simulations per move (where not in `grid`).
    rollouts_per_leaf: playouts averaged into z at each leaf (where not in
      `grid`).
    rollout_policy: playout policy by name ("random", "heuristic",
      "pattern", "pattern-9x9", or one registered with
      `go_playout.register_policy`).
    leaves_per_step: K leaves per step under virtual loss (1: none; where
      not in `grid`).
    reuse_tree: each game's search continues its previous search's subtree
      below the moves played since (`variant_agent`; trees hold
      2 × num_simulations nodes).
    network: an AlphaZero run directory (its policy head is the prior, its
      value head v), or `POLICY+VALUE`, AlphaGo's policy and value networks
      (`load_network`); paths or names under `zoo.checkpoints_root()`.
    komi: komi; the board size is the network's.
    gnugo_levels: GNU Go levels each variant plays (may be empty).
    gnugo_games: games of each variant against each level (both colours).
    round_robin_games: games of each pair of variants (0: no round robin).
    chunk: games per colour of one pair in one round-robin job; one GNU Go
      job plays `groups_per_variant` × chunk per colour for each variant.
    max_moves: stop a game after this many plies and score the board as it
      stands; None plays to two passes or the game's move cap.
    random_opening_moves: plies played uniformly at random first.
    seed: the keys of the search and the GNU Go seeds derive from it.
    variant: the search variant every player uses (`alphago.VARIANTS`:
      "puct", "gumbel"); the grid may only sweep parameters it reads.
  """
  # Runs recorded before these fields existed ran at their defaults.
  ADDED_FIELDS: ClassVar[Tuple[str, ...]] = ("rollout_temperature",
                                             "reuse_tree", "random_symmetry",
                                             "variant")

  grid: Tuple[Tuple[str, Tuple[float, ...]], ...]
  c_puct: float = 5.0
  mixing: float = 0.5
  virtual_loss: float = 3.0
  rollout_temperature: float = 1.0
  random_symmetry: bool = False
  num_simulations: int = 64
  rollouts_per_leaf: int = 1
  rollout_policy: str = "random"
  leaves_per_step: int = 1
  reuse_tree: bool = False
  network: str = "go9"
  komi: float = 7.5
  gnugo_levels: Tuple[int, ...] = (1, 10)
  gnugo_games: int = 100
  round_robin_games: int = 40
  chunk: int = 5
  max_moves: Optional[int] = None
  random_opening_moves: int = 2
  seed: int = 0
  variant: str = "puct"

  def __post_init__(self):
    if not isinstance(self.grid, (tuple, list)) or not self.grid:
      raise ValueError(f"grid must name at least one parameter, got "
                       f"{self.grid!r}")
    grid = []
    for item in self.grid:
      if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise ValueError(f"grid: each entry must be (field, values), got "
                         f"{item!r}")
      name, values = item
      if name not in PARAMETERS and name not in STATIC_FIELDS:
        raise ValueError(
            f"grid: no field {name!r} can be swept; fields: "
            f"{', '.join(PARAMETERS)} (AlphaGoParams) and "
            f"{', '.join(STATIC_FIELDS)} (static: compiled separately)")
      if name in (n for n, _ in grid):
        raise ValueError(f"grid: {name!r} is given twice")
      if not isinstance(values, (tuple, list)) or not values:
        raise ValueError(f"grid: no values given for {name!r}")
      for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (
            not math.isfinite(v)):
          raise ValueError(f"grid: {name} values must be finite numbers, "
                           f"got {v!r}")
        if name in STATIC_FIELDS and (v != int(v) or v < 1):
          raise ValueError(f"grid: {name} values must be positive "
                           f"integers, got {v!r}")
      values = tuple(int(v) if name in STATIC_FIELDS else float(v)
                     for v in values)
      if len(set(values)) != len(values):
        raise ValueError(f"grid: {name} has a repeated value: {values}")
      grid.append((name, values))
    object.__setattr__(self, "grid", tuple(grid))
    alphago.AlphaGoSearchConfig(num_simulations=self.num_simulations,
                                c_puct=self.c_puct, mixing=self.mixing,
                                virtual_loss=self.virtual_loss,
                                rollout_temperature=self.rollout_temperature,
                                random_symmetry=self.random_symmetry,
                                use_value=True, use_rollouts=True)
    reads = alphago.check_variant(self.static()).reads
    for name, _ in self.grid:
      if name in PARAMETERS and name not in reads:
        raise ValueError(f"grid: the {self.variant!r} search does not read "
                         f"{name!r}; it reads {', '.join(reads)}")
    self.values()  # Checks every grid value's range (naming the field).
    for group in range(len(self.static_groups())):
      self.static(group)  # Checks every static configuration.
    if not isinstance(self.network, str) or not self.network:
      raise ValueError(f"network must be a directory or a name, got "
                       f"{self.network!r}")
    if isinstance(self.komi, bool) or not isinstance(
        self.komi, (int, float)) or not math.isfinite(self.komi):
      raise ValueError(f"komi must be a finite number, got {self.komi!r}")
    if not isinstance(self.gnugo_levels, (tuple, list)):
      raise ValueError(f"gnugo_levels must be a list of levels, got "
                       f"{self.gnugo_levels!r}")
    for level in self.gnugo_levels:
      check_int("gnugo_levels", level, 0, 10)
    if len(set(self.gnugo_levels)) != len(self.gnugo_levels):
      raise ValueError(f"gnugo_levels has a repeated level: "
                       f"{self.gnugo_levels}")
    object.__setattr__(self, "gnugo_levels", tuple(self.gnugo_levels))
    check_int("chunk", self.chunk, 1)
    check_int("gnugo_games", self.gnugo_games, 0)
    check_int("round_robin_games", self.round_robin_games, 0)
    per_job = 2 * self.groups_per_variant * self.chunk
    if self.gnugo_levels and (self.gnugo_games == 0
                              or self.gnugo_games % per_job):
      raise ValueError(
          f"gnugo_games={self.gnugo_games} must be a positive multiple of "
          f"{per_job} (2 colours x {self.groups_per_variant} groups per "
          f"variant x chunk={self.chunk})")
    if self.round_robin_games % (2 * self.chunk):
      raise ValueError(
          f"round_robin_games={self.round_robin_games} must be a multiple "
          f"of {2 * self.chunk} (2 colours x chunk={self.chunk})")
    if self.round_robin_games and self.num_variants < 2:
      raise ValueError("round_robin_games > 0 needs at least 2 variants "
                       "in the grid")
    if not self.gnugo_levels and not self.round_robin_games:
      raise ValueError("nothing to play: give gnugo_levels or "
                       "round_robin_games > 0")
    if self.max_moves is not None:
      check_int("max_moves", self.max_moves, 1)
    check_int("random_opening_moves", self.random_opening_moves, 0)
    check_int("seed", self.seed, 0)

  # -- Variants --------------------------------------------------------------

  def base_params(self) -> alphago.AlphaGoParams:
    return alphago.AlphaGoSearchConfig(
        num_simulations=self.num_simulations, c_puct=self.c_puct,
        mixing=self.mixing, virtual_loss=self.virtual_loss,
        rollout_temperature=self.rollout_temperature,
        random_symmetry=self.random_symmetry,
        use_value=True, use_rollouts=True).params()

  def values(self) -> Tuple[alphago.AlphaGoParams, List[Dict[str, float]]]:
    """`(params [P], labels)`: the variants' stacked parameters and, per
    variant, `{field: value}` of the fields in the grid (static fields
    included; `params` holds the traced ones)."""
    traced = {n: v for n, v in self.grid if n not in STATIC_FIELDS}
    params, traced_labels = sweep_lib.grid(self.base_params(), traced)
    if len(traced) == len(self.grid):
      return params, traced_labels
    index = {tuple(label.items()): i for i, label in enumerate(traced_labels)}
    names = [n for n, _ in self.grid]
    labels = [dict(zip(names, combo)) for combo in
              itertools.product(*(v for _, v in self.grid))]
    picks = np.asarray([index[tuple((n, label[n]) for n in traced)]
                        for label in labels])
    return jax.tree.map(lambda x: np.asarray(x)[picks], params), labels

  @property
  def num_variants(self) -> int:
    return math.prod(len(v) for _, v in self.grid)

  def variant_names(self) -> List[str]:
    """`"mixing=0.25"`, `"c_puct=1,mixing=0.5"`, `"num_simulations=16,
    c_puct=1"`, ...: one per variant, every grid field named."""
    return [",".join(f"{k}={v:g}" for k, v in label.items())
            for label in self.values()[1]]

  def static_groups(self) -> List[Tuple[Dict[str, int], Tuple[int, ...]]]:
    """Per static configuration (in the order of its first variant):
    `({static field: value}, its variants' indices)`. Each is one compiled
    search; its variants are vmapped together as in a grid without static
    fields. Without static fields in the grid: one group of every
    variant."""
    groups: Dict[Tuple, List[int]] = {}
    for i, label in enumerate(self.values()[1]):
      key = tuple((n, v) for n, v in label.items() if n in STATIC_FIELDS)
      groups.setdefault(key, []).append(i)
    return [(dict(k), tuple(v)) for k, v in groups.items()]

  def group_of(self, variant: int) -> int:
    """The index of the static group holding `variant`."""
    for g, (_, members) in enumerate(self.static_groups()):
      if variant in members:
        return g
    raise ValueError(f"no variant {variant}")

  @property
  def variants_per_group(self) -> int:
    """Variants sharing one static configuration: the product of the
    traced fields' value counts."""
    return math.prod(len(v) for n, v in self.grid if n not in STATIC_FIELDS)

  def static(self, group: int = 0) -> alphago.AlphaGoStatic:
    """The compiled part of static group `group` (`static_groups`): the
    value network only if some variant has λ < 1, rollouts only if some
    has λ > 0 (every group holds the same λ values)."""
    lam = np.asarray(self.values()[0].mixing)
    fields = dict(num_simulations=self.num_simulations,
                  rollouts_per_leaf=self.rollouts_per_leaf,
                  leaves_per_step=self.leaves_per_step)
    fields.update(self.static_groups()[group][0])
    try:
      return alphago.AlphaGoStatic(
          use_value=bool(np.any(lam < 1)), use_rollouts=bool(np.any(lam > 0)),
          rollout_policy=self.rollout_policy, reuse_tree=self.reuse_tree,
          variant=self.variant, **fields)
    except ValueError as e:
      swept = {n: v for n, v in fields.items() if n in dict(self.grid)}
      if not swept:
        raise
      raise ValueError(f"grid: the variants with "
                       f"{', '.join(f'{n}={v}' for n, v in swept.items())}: "
                       f"{e}") from None

  @property
  def groups_per_variant(self) -> int:
    """Groups of `chunk` games per colour each variant plays in one GNU Go
    job: (P − 1)/2 for P variants per static configuration, so that a
    GNU Go job has as many groups as its round robin has pairs."""
    return max(1, (self.variants_per_group - 1) // 2)

  def pairs(self) -> List[Tuple[int, int]]:
    return list(itertools.combinations(range(self.num_variants), 2))

  def anchor(self) -> str:
    """The player rated 0: the lowest GNU Go level, else the first
    variant."""
    if self.gnugo_levels:
      return gnugo_name(min(self.gnugo_levels))
    return self.variant_names()[0]

  def games_planned(self) -> int:
    """Games of the whole ablation."""
    return sum(2 * len(j.sides) * self.chunk for j in plan(self))

  def players(self) -> List[str]:
    """Variants, then GNU Go levels (ascending)."""
    return self.variant_names() + [gnugo_name(l)
                                   for l in sorted(self.gnugo_levels)]


# -- The search of many variants in one program --------------------------------

def group_moves(game, policy_fn, value_fn, static: alphago.AlphaGoStatic,
                variables, params: alphago.AlphaGoParams,
                states, key: chex.PRNGKey, trees=None):
  """Moves of AlphaGo's search for K groups of games, group k searched with
  the k-th parameter value, and what each search saw of its position.

  Args:
    game, policy_fn, value_fn, static: as `alphago_search`.
    variables: network weights, used for the prior and for v.
    params: `AlphaGoParams` stacked `[K]`.
    states: `[K * G]`, group k's games at `[k * G, (k + 1) * G)`.
    key: PRNG key.
    trees: with `static.reuse_tree`, each game's earlier search tree `[K *
      G, ...]` (all zeros or None: nothing to continue); else None.

  Returns:
    `(actions int32, winrates float32, visits int32)`, each `[K * G]`: the
    move, the search's root value for the mover as a winrate in [0, 1]
    (`(root_value + 1) / 2`) and its root visits (the root's children's,
    num_simulations for a fresh tree, more where it continued one); with
    `static.reuse_tree`, `((actions, winrates, visits), search trees [K *
    G, ...])`.
  """
  k = params.mixing.shape[0]
  n = states.current_player.shape[0]
  if n % k:
    raise ValueError(f"group_moves: {n} games do not split into {k} equal "
                     f"groups")
  if trees is not None and not static.reuse_tree:
    raise ValueError("group_moves: trees given but reuse_tree=False")
  group = lambda x: x.reshape((k, n // k) + x.shape[1:])
  grouped = jax.tree.map(group, states)
  # A field given as one scalar holds for every group.
  params = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (k,)),
                        params)
  keys = jax.random.split(key, k)

  def one(args):
    p, s, group_key, tree = args
    out = alphago.alphago_search(
        game, policy_fn, value_fn, (variables, variables), group_key, s,
        config=static, params=p, tree=tree)
    winrate = jnp.clip((out.root_value + 1.0) / 2.0, 0.0, 1.0)
    moves = (out.action, winrate, out.visit_counts.sum(-1))
    return (moves, out.search_tree) if static.reuse_tree else moves
  # lax.map, not vmap: see the module docstring.
  out = jax.lax.map(one, (params, grouped, keys,
                          None if trees is None else jax.tree.map(group,
                                                                  trees)))
  flat = lambda x: x.reshape((n,) + x.shape[2:])
  if not static.reuse_tree:
    return jax.tree.map(flat, out)
  moves, searched = out
  return jax.tree.map(flat, moves), jax.tree.map(flat, searched)


@functools.lru_cache(maxsize=None)
def _group_fn(game, policy_fn, value_fn, static):
  # One function object per search, so that every Partial over it shares
  # one compiled program.
  return functools.partial(group_moves, game, policy_fn, value_fn, static)


def variant_agent(game, policy_fn, value_fn, static, variables,
                  params: alphago.AlphaGoParams):
  """An `AnalysedAgent` playing K variants on K equal groups of its games
  (`group_moves`: each move with its search's winrate and root visits), or
  with `static.reuse_tree` an analysed `search.CarryingAgent` whose carry
  is each game's search tree; the weights and values are arguments of its
  compiled program (the `analyse` function, or the carrying one, is a
  `jax.tree_util.Partial`), so any values of the same K share it."""
  chex.assert_rank(params.mixing, 1)
  fn = jax.tree_util.Partial(_group_fn(game, policy_fn, value_fn, static),
                             variables, params)
  if static.reuse_tree:
    return CarryingAgent(fn, analysed=True)
  return AnalysedAgent(fn)


@dataclasses.dataclass(frozen=True)
class Network:
  """Loaded networks as AlphaGo's prior and value (`variables` is passed as
  both the policy's and the value's)."""
  name: str
  game: Any
  policy_fn: Any
  value_fn: Any
  variables: Any


@functools.lru_cache(maxsize=4)
def load_network(network: str, komi: float) -> Network:
  """The networks `network` names, its game with `komi`.

  `network` is an AlphaZero run directory (its policy head the prior, its
  value head v), or `POLICY+VALUE`: AlphaGo's p_σ or p_ρ as the prior and
  v_θ as v (`zoo.alphago_networks`); each a path or a name under
  `zoo.checkpoints_root()`. A lone policy network, `POLICY+`, has no v
  (λ = 1 only).
  """

  def resolve(name):
    directory = name if os.path.isdir(name) else os.path.join(
        checkpoints_root(), name)
    if not os.path.isdir(directory):
      raise FileNotFoundError(f"ablation: network {name!r} is neither a "
                              f"directory nor under {checkpoints_root()}")
    return directory

  if "+" in network:
    policy, value = network.split("+", 1)
    nets = load_alphago_networks(resolve(policy),
                                 resolve(value) if value else None,
                                 komi=float(komi))
    return Network(name=nets.name, game=nets.game, policy_fn=nets.policy_fn,
                   value_fn=nets.value_fn, variables=nets.variables)
  directory = resolve(network)
  net = loaders.load(directory, expect=("alphazero",))
  game = dataclasses.replace(net.game, komi=float(komi))
  policy_fn, value_fn = alphago.split_evaluate(game, net.evaluate)
  return Network(name=net.name, game=game, policy_fn=policy_fn,
                 value_fn=value_fn, variables=net.variables)


# -- Jobs ----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Job:
  """One batch of games.

  Attributes:
    name: `rr-007`, `gnugo10-003`, `sims16-rr-007`,
      `sims16-vs-sims64-rr-000` (`plan`): also its file name.
    level: the GNU Go level; None for a round-robin job.
    index: the job's number among those of its kind (with the key, its
      seeds); the round-robin jobs between static configurations are
      numbered after those within one (`plan`).
    sides: per group, `(variant, opponent)`: the opponent's variant index,
      or -1 for GNU Go.
  """
  name: str
  level: Optional[int]
  index: int
  sides: Tuple[Tuple[int, int], ...]

  def key(self, seed: int) -> chex.PRNGKey:
    kind = 0 if self.level is None else 1 + self.level
    return jax.random.fold_in(jax.random.fold_in(jax.random.key(seed), kind),
                              self.index)

  def gnugo_seed(self, seed: int) -> int:
    """GNU Go's seed of the job's first game (game i: this + i)."""
    level = 99 if self.level is None else self.level
    state = np.random.SeedSequence([seed, level, self.index]).generate_state(1)
    return int(state[0] % (1 << 30))


def group_prefix(config: AblationConfig, group: int) -> str:
  """The job-name prefix of static group `group`: `sims16-`, ..., empty
  for a grid without static fields (so its job names are those of a
  single compiled search)."""
  label = config.static_groups()[group][0]
  return "".join(f"{STATIC_TAGS[n]}{v}-" for n, v in label.items())


def plan(config: AblationConfig) -> List[Job]:
  """Every job of the ablation, interleaved (round robin, then each level,
  job by job) so that a partial run covers every pairing.

  Each static group (`AblationConfig.static_groups`) plays its own jobs,
  those of a sweep of its static configuration alone: the same names
  (prefixed with the group's static values, `group_prefix`), sides,
  keys and GNU Go seeds, so a variant's games are those it plays in that
  sweep. The round robin between two groups is a job of its own per pair
  of groups (`sims16-vs-sims64-rr-000`): every variant of the first
  against every one of the second, each side its own compiled search; its
  key is a round-robin job's, numbered after the groups' own
  (index = n × (1 + pair) + i, n the round-robin jobs per pairing)."""
  groups = config.static_groups()
  rr_jobs = config.round_robin_games // (2 * config.chunk)
  per_job = 2 * config.groups_per_variant * config.chunk
  cross = list(itertools.combinations(range(len(groups)), 2))
  kinds = []  # (level, [(name prefix, sides, index offset)], jobs)
  if config.round_robin_games:
    rr = [(group_prefix(config, g), tuple(itertools.combinations(members, 2)),
           0) for g, (_, members) in enumerate(groups) if len(members) > 1]
    rr += [(f"{group_prefix(config, g)}vs-{group_prefix(config, h)}",
            tuple((a, b) for a in groups[g][1] for b in groups[h][1]),
            rr_jobs * (1 + q)) for q, (g, h) in enumerate(cross)]
    kinds.append((None, rr, rr_jobs))
  for level in config.gnugo_levels:
    kinds.append((level, [
        (group_prefix(config, g),
         tuple((v, -1) for v in members
               for _ in range(config.groups_per_variant)), 0)
        for g, (_, members) in enumerate(groups)],
        config.gnugo_games // per_job))
  jobs = []
  for index in range(max(n for _, _, n in kinds)):
    for level, batches, n in kinds:
      if index >= n:
        continue
      for prefix, sides, offset in batches:
        name = prefix + (f"rr-{index:03d}" if level is None
                         else f"gnugo{level}-{index:03d}")
        jobs.append(Job(name=name, level=level, index=offset + index,
                        sides=sides))
  return jobs


def _children_cpu() -> float:
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime + usage.ru_stime


def _move_statistics(winrates: np.ndarray, visits: np.ndarray
                     ) -> Dict[str, List[Optional[float]]]:
  """A game's per-move search statistics as its record keeps them: the
  mover's winrate to 3 decimals and its root visits, null for a move no
  search chose (GNU Go's, a random opening ply)."""
  return {"winrates": [round(float(w), 3) if np.isfinite(w) else None
                       for w in winrates],
          "visits": [int(v) if v >= 0 else None for v in visits]}


def play_job(config: AblationConfig, job: Job,
             network: Optional[Network] = None) -> Dict[str, Any]:
  """Plays one job; returns its record (what `jobs/<name>.json` holds):
  the network's name, wall and CPU seconds, and per game the players,
  `black_result` (+1 Black won, -1 White won, 0 draw), Tromp-Taylor
  `score`, GNU Go's `gnugo_score` (None unless both passed), `plies`,
  `capped`, `resigned`, `forfeited`, the moves as GTP vertices, per move
  the `winrates` (the mover's search winrate in [0, 1], 3 decimals) and
  root `visits` of the variant that chose it (null for GNU Go's moves and
  the random opening plies), and `game`, its index in the job's batch
  (GNU Go's seed is the job's plus it)."""
  if network is None:
    network = load_network(config.network, config.komi)
  game = network.game
  # A job's sides on each side share one static group (`plan`).
  static = config.static(config.group_of(job.sides[0][0]))
  params, _ = config.values()
  names = config.variant_names()
  pick = lambda idx: jax.tree.map(lambda x: x[np.asarray(idx)], params)
  agent = variant_agent(game, network.policy_fn, network.value_fn, static,
                        network.variables, pick([a for a, _ in job.sides]))
  per_colour = len(job.sides) * config.chunk
  start, cpu, children = time.perf_counter(), time.process_time(), (
      _children_cpu())
  if job.level is None:
    opponent = variant_agent(game, network.policy_fn, network.value_fn,
                             config.static(config.group_of(job.sides[0][1])),
                             network.variables,
                             pick([b for _, b in job.sides]))
    out = agent_match(game, agent, opponent, job.key(config.seed),
                      games_per_colour=per_colour, max_moves=config.max_moves,
                      random_opening_moves=config.random_opening_moves,
                      agent_groups=len(job.sides))
  else:
    out = gnugo_match(game, agent, job.key(config.seed), level=job.level,
                      games_per_colour=per_colour,
                      max_moves=config.max_moves,
                      seed=job.gnugo_seed(config.seed),
                      random_opening_moves=config.random_opening_moves,
                      final_scores=True, agent_groups=len(job.sides))
  seconds = time.perf_counter() - start
  games, unplayed = [], 0
  for i in range(2 * per_colour):
    if out.unplayed is not None and out.unplayed[i]:
      unplayed += 1  # Its GNU Go died or refused a move: no result.
      continue
    a, b = job.sides[(i % per_colour) // config.chunk]
    ours = names[a]
    theirs = gnugo_name(job.level) if b < 0 else names[b]
    ours_black = i < per_colour
    result = float(out.returns[i]) * (1 if ours_black else -1)
    gnugo = (None if out.gnugo_score is None
             or not np.isfinite(out.gnugo_score[i])
             else float(out.gnugo_score[i]))
    played = out.moves[i] >= 0
    moves = [int(m) for m in out.moves[i][played]]
    games.append({
        "game": i,
        "black": ours if ours_black else theirs,
        "white": theirs if ours_black else ours,
        "black_result": int(np.sign(result)),
        "score": float(out.score[i]), "gnugo_score": gnugo,
        "plies": int(out.lengths[i]), "capped": bool(out.capped[i]),
        "resigned": bool(out.resigned[i]),
        "forfeited": bool(out.forfeited[i]),
        "moves": " ".join(game.action_to_vertex(m) for m in moves),
        **_move_statistics(out.winrates[i][played], out.visits[i][played])})
  return {"job": job.name, "network": network.name,
          "board_size": int(game.size), "seconds": seconds,
          "cpu_seconds": time.process_time() - cpu,
          "gnugo_cpu_seconds": _children_cpu() - children, "games": games,
          "unplayed": unplayed}


# -- The resumable run ---------------------------------------------------------

def _check_config(run_dir: str, config: AblationConfig, stage: str) -> None:
  """Writes config.json in a new run directory; in an existing one, checks
  that it holds this config (so a resumed run is the same run)."""
  path = os.path.join(run_dir, rundir.CONFIG_FILE)
  if not os.path.exists(path):
    rundir.write_config(run_dir, command="sweep", stage=stage, config=config)
    return
  try:
    with open(path, encoding="utf-8") as f:
      record = json.load(f)
    stored = record["config"]
    command = record["command"]
  except (OSError, ValueError, KeyError, TypeError) as e:
    raise ValueError(f"ablation: {path} is not a readable run config ({e})"
                     ) from None
  if command != "sweep":
    raise ValueError(f"ablation: {run_dir} is a {command!r} run, not a "
                     f"sweep; use another output directory")
  mine = config_codec.to_json(config)
  if stored != mine:
    fields = sorted(k for k in set(stored) | set(mine)
                    if stored.get(k) != mine.get(k))
    detail = "; ".join(f"{k}: {json.dumps(stored.get(k))} there, "
                       f"{json.dumps(mine.get(k))} here" for k in fields)
    raise ValueError(f"ablation: {run_dir} holds another ablation ({detail})"
                     f"; resume it with its own settings or use another "
                     f"output directory")


def read_config(run_dir: str) -> Tuple[str, AblationConfig]:
  """`(stage, config)` of an ablation's run directory."""
  path = os.path.join(run_dir, rundir.CONFIG_FILE)
  record = read_json(
      path, error=ValueError,
      missing=f"ablation: {path}: no such file (not a run directory)",
      unreadable=lambda e: f"ablation: {path}: not JSON ({e})")
  if not isinstance(record, dict) or record.get("command") != "sweep":
    raise ValueError(f"ablation: {path} is not a sweep's run config")
  return record.get("stage", "custom"), config_codec.from_json(
      AblationConfig, record.get("config"), f"{path}: config")


def _alive(pid: int) -> bool:
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True
  return True


def load_summary(run_dir: str) -> Summary:
  """The `Summary` of the jobs finished in a run directory (a finished or
  an interrupted run, or a copy of one), without loading its network."""
  _, config = read_config(run_dir)
  return summarize(config, finished_jobs(run_dir, config).values())


def finished_jobs(run_dir: str, config: AblationConfig,
                  network: Optional[str] = None) -> Dict[str, Dict]:
  """The finished jobs' records in `run_dir/jobs`; temporary files left by
  a killed write (their writer's process is gone) are removed."""
  directory = os.path.join(run_dir, JOBS_DIR)
  names = {j.name: j for j in plan(config)}
  done = {}
  if not os.path.isdir(directory):
    return done
  for entry in sorted(os.listdir(directory)):
    path = os.path.join(directory, entry)
    if entry.endswith(".lock"):
      continue  # A job being played (or a killed run's: `_claim`).
    pid = temporary_writer(entry)
    if pid is not None:
      if not _alive(pid):
        try:
          os.remove(path)
        except FileNotFoundError:
          pass
      continue
    stem, ext = os.path.splitext(entry)
    if ext != ".json" or stem not in names:
      raise ValueError(f"ablation: {path} is not a job of this ablation")
    try:
      with open(path, encoding="utf-8") as f:
        record = json.load(f)
      games = record["games"]
      job = names[stem]
      expected = 2 * len(job.sides) * config.chunk
      # Games whose GNU Go died are counted, not kept (records written
      # before the count existed only left them out).
      unplayed = record.get("unplayed")
      if record["job"] != stem or not (
          len(games) + unplayed == expected if isinstance(unplayed, int)
          else unplayed is None and len(games) <= expected):
        raise ValueError(f"{len(games)} games and {unplayed} not played, "
                         f"expected {expected}")
    except (OSError, ValueError, KeyError, TypeError) as e:
      raise ValueError(f"ablation: {path} is damaged ({e}); delete it to "
                       f"replay the job") from None
    if network is not None and record["network"] != network:
      raise ValueError(f"ablation: {path} was played by {record['network']}"
                       f", this run loads {network}")
    done[stem] = record
  return done


def _held(holder: str) -> bool:
  """Whether a lock's holder, `PID@HOST` (or a bare PID, this machine's),
  may still be playing: a live process here, or any process on another
  machine (whose processes this one cannot see: such a lock is left for
  its own machine, or a person, to remove)."""
  pid, _, host = holder.partition("@")
  if host and host != socket.gethostname():
    return True
  return pid.isdigit() and _alive(int(pid))


def _claim(run_dir: str, name: str) -> Optional[str]:
  """Takes job `name` for this process: creates `jobs/<name>.lock` holding
  `PID@HOST`, replacing a lock whose process here is gone. Returns its
  path, or None when the job is held (`_held`)."""
  path = os.path.join(run_dir, JOBS_DIR, f"{name}.lock")
  for _ in range(2):
    try:
      fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
      try:
        with open(path, encoding="utf-8") as f:
          holder = f.read().strip()
      except FileNotFoundError:
        continue  # Released meanwhile: try again.
      if _held(holder):
        return None
      try:  # Left by a killed run.
        os.remove(path)
      except FileNotFoundError:
        pass
      continue
    with os.fdopen(fd, "w", encoding="utf-8") as f:
      f.write(f"{os.getpid()}@{socket.gethostname()}")
    return path
  return None


def play_remote(argument: Tuple[AblationConfig, Job]) -> Dict[str, Any]:
  """`play_job` of `(config, job)` on a cluster node (`core.ray_jobs`):
  the node loads the network itself (once per worker process)."""
  config, job = argument
  return play_job(config, job)


def _store_job(run_dir: str, config: AblationConfig, job: Job,
               record: Dict[str, Any]) -> None:
  """Writes a played job: its SGFs first (a job whose record exists has
  its games written), then `jobs/<job>.json`, atomically."""
  match_sgf.write_games(os.path.join(run_dir, match_sgf.GAMES_DIR),
                        ablation_games.job_games(config, job, record))
  write_atomic(os.path.join(run_dir, JOBS_DIR, f"{job.name}.json"),
               json.dumps(record, allow_nan=False) + "\n")


def _report_job(run_dir: str, config: AblationConfig, network: str,
                record: Dict[str, Any], where: str, plot: bool,
                log: Callable[[str], None]) -> None:
  """Rewrites the outputs from every job finished on disk and logs the
  job just written."""
  summary = summarize(config, finished_jobs(run_dir, config,
                                            network).values())
  write_outputs(summary, run_dir, plot=plot)
  games = max(1, len(record["games"]))
  log(f"{where} {record['job']}: {len(record['games'])} games in "
      f"{record['seconds']:.0f} s (our CPU "
      f"{record['cpu_seconds'] / games:.2f} s/game, GNU Go "
      f"{record['gnugo_cpu_seconds'] / games:.2f} s/game); "
      f"{summary.games_played}/{summary.games_planned} games")


def run_ablation(config: AblationConfig, run_dir: str, *,
                 stage: str = "custom", max_jobs: Optional[int] = None,
                 log: Callable[[str], None] = print, plot: bool = True,
                 ray_address: Optional[str] = None) -> Summary:
  """Plays the ablation's unfinished jobs in `run_dir`, writing the outputs
  after each (module docstring).

  Several processes may run the same ablation in one run directory at
  once: each takes the next job that is neither finished nor held by
  another live process (`jobs/<job>.lock`), and writes the outputs from
  every job finished on disk.

  With `ray_address`, the jobs are played on that Ray cluster instead
  (`core.ray_jobs`): this process claims every unfinished job, sends them
  all, and writes each record as it comes back, exactly as a local run
  would have written it (the same keys and seeds), so the outputs are the
  same. A job whose worker dies is played again from its start.

  Args:
    config: the ablation.
    run_dir: the run directory (created; an existing one must hold the
      same config).
    stage: the preset's name, recorded in config.json.
    max_jobs: stop after playing this many jobs (None: all).
    log: progress lines.
    plot: also draw plot.png.
    ray_address: a Ray cluster's address (None: play here).

  Returns:
    the `Summary` of every job finished on disk.
  """
  if max_jobs is not None:
    check_int("max_jobs", max_jobs, 0)
  network = load_network(config.network, config.komi)
  # A bad rollout policy fails here, before the run directory exists.
  alphago.make_leaf_value(network.game, network.value_fn, config.static())
  os.makedirs(os.path.join(run_dir, JOBS_DIR), exist_ok=True)
  _check_config(run_dir, config, stage)
  jobs = plan(config)
  done = finished_jobs(run_dir, config, network.name)
  if done:
    log(f"resuming {run_dir}: {len(done)} of {len(jobs)} jobs done")
  if ray_address is not None:
    _run_on_ray(config, run_dir, network.name, jobs, done, max_jobs,
                ray_address, log, plot)
  else:
    _run_here(config, run_dir, network, jobs, done, max_jobs, log, plot)
  summary = summarize(config, finished_jobs(run_dir, config,
                                            network.name).values())
  write_outputs(summary, run_dir, plot=plot)
  return summary


def _run_here(config, run_dir, network, jobs, done, max_jobs, log, plot):
  played = 0
  for n, job in enumerate(jobs):
    if job.name in done:
      continue
    if max_jobs is not None and played >= max_jobs:
      break
    path = os.path.join(run_dir, JOBS_DIR, f"{job.name}.json")
    lock = _claim(run_dir, job.name)
    if lock is None:
      log(f"[{n + 1}/{len(jobs)}] {job.name}: played by another process")
      continue
    try:
      if os.path.exists(path):
        continue  # Finished by another process since we last looked.
      record = play_job(config, job, network)
      _store_job(run_dir, config, job, record)
    finally:
      os.remove(lock)
    played += 1
    _report_job(run_dir, config, network.name, record,
                f"[{n + 1}/{len(jobs)}]", plot, log)


def _run_on_ray(config, run_dir, network_name, jobs, done, max_jobs,
                address, log, plot):
  # The driver holds the lock of every job it sent until the job's record
  # is written, so that local processes sharing the run directory on this
  # machine leave them alone.
  locks, sent = {}, {}
  try:
    for job in jobs:
      if job.name in done:
        continue
      if max_jobs is not None and len(sent) >= max_jobs:
        break
      lock = _claim(run_dir, job.name)
      if lock is None:
        log(f"{job.name}: played by another process")
        continue
      if os.path.exists(os.path.join(run_dir, JOBS_DIR, f"{job.name}.json")):
        os.remove(lock)  # Finished by another process since we looked.
        continue
      locks[job.name], sent[job.name] = lock, job
    count = [0]

    def write(name, record):
      if record.get("job") != name or record.get("network") != network_name:
        raise ray_jobs.JobError(
            f"job {name}: the cluster returned job {record.get('job')!r} "
            f"played by {record.get('network')!r}, expected {network_name}")
      _store_job(run_dir, config, sent[name], record)
      os.remove(locks.pop(name))
      count[0] += 1
      _report_job(run_dir, config, network_name, record,
                  f"[{count[0]}/{len(sent)}]", plot, log)

    ray_jobs.run(play_remote, [(name, (config, job))
                               for name, job in sent.items()],
                 write, address=address, log=log)
  finally:
    for lock in locks.values():
      try:
        os.remove(lock)
      except FileNotFoundError:
        pass


# -- Presets -------------------------------------------------------------------

LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)
C_PUCTS = (0.5, 1.0, 2.0, 5.0, 10.0)
PRESETS = ("lambda", "c-puct")
# A smoke run: a few simulations, GNU Go level 1, one job of each kind
# (`preset` sizes gnugo_games to it), games cut short.
QUICK = dict(num_simulations=4, gnugo_levels=(1,), round_robin_games=2,
             chunk=1, max_moves=12)


def custom(*, quick: bool = False, **fields) -> AblationConfig:
  """An `AblationConfig` from `fields`; `quick` fills in `QUICK` (and
  gnugo_games for one GNU Go job) where `fields` does not say otherwise."""
  if quick:
    given = set(fields)
    fields = {**QUICK, **fields}
    if "gnugo_games" not in given:
      grid = fields.get("grid") or ()
      try:  # Variants per static configuration.
        p = math.prod(len(values) for name, values in grid
                      if name not in STATIC_FIELDS)
      except (TypeError, ValueError):
        p = 1  # A malformed grid: AblationConfig names the problem.
      fields["gnugo_games"] = 2 * max(1, (p - 1) // 2) * fields["chunk"]
  return AblationConfig(**fields)


def preset(name: str, *, quick: bool = False, **overrides) -> AblationConfig:
  """The λ or c_puct ablation ("lambda": λ ∈ {0, 0.25, 0.5, 0.75, 1} at
  c_puct 5; "c-puct": c_puct ∈ {0.5, 1, 2, 5, 10} at λ = `mixing`);
  `quick`: a smoke run (`QUICK`); `overrides`: any `AblationConfig`
  field."""
  if name not in PRESETS:
    raise ValueError(f"unknown preset {name!r}; presets: "
                     f"{', '.join(PRESETS)}")
  grid = ((("mixing", LAMBDAS),) if name == "lambda"
          else (("c_puct", C_PUCTS),))
  return custom(quick=quick, **{"grid": grid, **overrides})
