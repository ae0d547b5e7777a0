"""`alphago-jax sweep`: an ablation of AlphaGo's search parameters on 9×9,
a round robin of the variants and matches against GNU Go, with an Elo table
anchored on GNU Go (`evaluation.ablation`).

    alphago-jax sweep lambda --output runs/lambda
    alphago-jax sweep c-puct --mixing 0.5 --output runs/c-puct
    alphago-jax sweep custom --grid c_puct=1,5 mixing=0,1 --output DIR
    alphago-jax sweep custom --grid num_simulations=16,64 c_puct=1,5 --output DIR
    alphago-jax sweep lambda --variant gumbel --output runs/lambda-gumbel
    alphago-jax sweep --resume runs/lambda
    alphago-jax sweep lambda --output runs/lambda --ray HEAD:6379

Presets: `lambda` (λ ∈ {0, 0.25, 0.5, 0.75, 1} at c_puct 5) and `c-puct`
(c_puct ∈ {0.5, 1, 2, 5, 10} at the given λ, default 0.5); `custom` takes
`--grid FIELD=V1,V2,... [FIELD=...]` (the variants are every combination)
over `AlphaGoParams` fields (c_puct, mixing, virtual_loss,
rollout_temperature, random_symmetry: one compiled search runs them all)
and the static fields num_simulations, rollouts_per_leaf and
leaves_per_step (positive integers): each of their configurations compiles
its own search and plays its own jobs, with the keys and seeds of a sweep
of that configuration alone, plus one round-robin job per pair of
configurations. `--variant` picks the search
(`search.alphago.VARIANTS`: puct, gumbel). Any other
option overrides the preset. `--quick` is a smoke run (4 simulations, GNU
Go level 1 only, one job of each kind, games cut at 12 plies).

Writes `config.json`, `jobs/`, `results.csv`, `elo.csv`, `table.md` and
`plot.png` into the output directory. A killed run continues where it
stopped when the same command (or `--resume DIR`) is run again; finished
jobs are never replayed. The same command started twice plays with two
processes: each takes the next job nobody plays. `--ray ADDRESS` plays the
jobs on a Ray cluster instead (the optional extra `ray`; docs/ablations.md,
"On a cluster of several machines"): the same jobs with the same keys and
seeds, so the same results, each written here as it comes back.
"""

from __future__ import annotations

import dataclasses
import os
from typing import List, Literal, Optional, Tuple

import tyro

from alphago_jax.cli import parsing
from alphago_jax.core import ray_jobs
from alphago_jax.engines import find_gnugo
from alphago_jax.evaluation import ablation, ablation_report

EXAMPLES = """examples:
  alphago-jax sweep lambda --output runs/lambda
  alphago-jax sweep c-puct --mixing 0.5 --output runs/c-puct
  alphago-jax sweep custom --grid c_puct=1,5 --mixing 0 --output runs/x --quick
  alphago-jax sweep custom --grid num_simulations=16,64 c_puct=1,5 --output runs/sims
  alphago-jax sweep lambda --variant gumbel --output runs/lambda-gumbel
  alphago-jax sweep --resume runs/lambda
  alphago-jax sweep lambda --output runs/lambda --ray HEAD:6379"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SweepArgs:
  """An ablation of AlphaGo's search parameters against GNU Go.

  Attributes:
    preset: lambda, c-puct, or custom (with --grid).
    output: the run directory (created; the same command resumes it).
    resume: continue the run in this directory with its own config.json.
    grid: FIELD=V1,V2,... over an AlphaGoParams field (c_puct, mixing,
      virtual_loss, rollout_temperature, random_symmetry: 0 or 1) or a
      static one (num_simulations, rollouts_per_leaf, leaves_per_step:
      integers; each value compiles its own search); several for a grid
      over every combination.
    quick: a smoke run (few games and simulations, GNU Go level 1 only,
      short games).
    simulations: simulations per move.
    c_puct: c_puct on raw Q in [-1, 1] where not swept.
    mixing: λ, the rollouts' weight in the leaf value, where not swept.
    virtual_loss: n_vl where not swept (with --leaves-per-step > 1).
    rollout_temperature: the rollout policy's temperature where not swept.
    random_symmetry: the networks see each position under a random board
      symmetry (AlphaGo's practice) where not swept.
    rollouts_per_leaf: playouts per leaf.
    rollout_policy: random, heuristic, pattern (p_π of 19x19 KGS games)
      or pattern-9x9 (p_π of 9x9 GNU Go games).
    leaves_per_step: leaves per step under virtual loss.
    reuse_tree: each game's search continues the subtree of its previous
      search below the moves played since (as the GTP engine does).
    network: AlphaZero run directory or checkpoint name (prior and value).
    komi: komi.
    gnugo_levels: GNU Go levels to play (none: round robin only).
    gnugo_games: games of each variant against each GNU Go level.
    round_robin_games: games of each pair of variants.
    chunk: games per colour per pair in one round-robin job.
    max_moves: cut games after this many plies (scored as they stand).
    random_opening_moves: random plies at the start of every game.
    seed: seed of the search keys and GNU Go seeds.
    variant: the search variant: puct (AlphaGo's) or gumbel (Gumbel root
      selection over the same leaves), or any registered one.
    max_jobs: stop after this many jobs (the run stays resumable).
    plot: draw plot.png.
    ray: play the jobs on the Ray cluster at this address (HOST:PORT of
      `ray start --head`, or auto on a node of the cluster); needs the
      extra `ray`.
  """
  preset: tyro.conf.Positional[
      Optional[Literal["lambda", "c-puct", "custom"]]] = None
  output: Optional[str] = None
  resume: Optional[str] = None
  grid: Tuple[str, ...] = ()
  quick: bool = False
  simulations: Optional[int] = None
  c_puct: Optional[float] = None
  mixing: Optional[float] = None
  virtual_loss: Optional[float] = None
  rollout_temperature: Optional[float] = None
  random_symmetry: bool = False
  rollouts_per_leaf: Optional[int] = None
  rollout_policy: Optional[str] = None
  leaves_per_step: Optional[int] = None
  reuse_tree: bool = False
  network: Optional[str] = None
  komi: Optional[float] = None
  gnugo_levels: Optional[Tuple[int, ...]] = None
  gnugo_games: Optional[int] = None
  round_robin_games: Optional[int] = None
  chunk: Optional[int] = None
  max_moves: Optional[int] = None
  random_opening_moves: Optional[int] = None
  seed: Optional[int] = None
  variant: Optional[str] = None
  max_jobs: Optional[int] = None
  plot: bool = True
  ray: Optional[str] = None


# Options that are AblationConfig fields under another name.
_RENAMED = {"simulations": "num_simulations"}
_NOT_CONFIG = ("preset", "output", "resume", "grid", "quick", "max_jobs",
               "plot", "ray")


def parse_grid(items) -> Tuple[Tuple[str, Tuple[float, ...]], ...]:
  """`("c_puct=1,5", ...)` -> `(("c_puct", (1.0, 5.0)), ...)`."""
  out = []
  for item in items:
    name, sep, values = item.partition("=")
    if not sep or not name or not values:
      raise ValueError(f"--grid {item!r}: expected FIELD=V1,V2,...")
    try:
      parsed = tuple(float(v) for v in values.split(","))
    except ValueError:
      raise ValueError(f"--grid {item!r}: values must be numbers") from None
    out.append((name.strip(), parsed))
  return tuple(out)


def build_config(args: SweepArgs):
  """`(stage, AblationConfig)` from the command line."""
  overrides = {_RENAMED.get(f.name, f.name): getattr(args, f.name)
               for f in dataclasses.fields(args)
               if f.name not in _NOT_CONFIG
               and getattr(args, f.name) is not None
               and getattr(args, f.name) is not False}  # An unset flag.
  if args.grid:
    overrides["grid"] = parse_grid(args.grid)
  stage = args.preset
  if stage == "custom":
    if not args.grid:
      raise ValueError("custom needs --grid FIELD=V1,V2,...")
    return stage, ablation.custom(quick=args.quick, **overrides)
  return stage, ablation.preset(stage, quick=args.quick, **overrides)


def command_for(stage: str, config) -> List[str]:
  """The `alphago-jax sweep` arguments (before --output) that build
  `config`: the preset and the fields that differ from its values, so
  that `build_config` of them gives `config` back."""
  if stage == "custom":  # The dataclass's defaults (no grid).
    base = {f.name: f.default for f in dataclasses.fields(config)}
  else:
    base = dataclasses.asdict(ablation.preset(stage))
  argv = [stage]
  if config.grid != base["grid"]:
    argv += ["--grid"] + [f"{name}={','.join(repr(v) for v in values)}"
                          for name, values in config.grid]
  for f in dataclasses.fields(SweepArgs):
    name = _RENAMED.get(f.name, f.name)
    if f.name in _NOT_CONFIG or getattr(config, name) == base[name]:
      continue
    value = getattr(config, name)
    if value is None:  # No flag says None where the preset has a value.
      raise ValueError(f"{name}=None cannot be given to alphago-jax sweep")
    flag = parsing.flag(f.name)
    if isinstance(value, bool):
      argv.append(flag if value else "--no-" + flag[2:])
      continue
    values = value if isinstance(value, tuple) else (value,)
    argv += [flag] + [repr(v) if isinstance(v, float) else str(v)
                      for v in values]
  return argv


def main(argv: List[str]) -> int:
  args = parsing.parse(SweepArgs, argv, prog="alphago-jax sweep",
                       examples=EXAMPLES, summary=__doc__.split("\n\n")[0])
  try:
    if args.resume is not None:
      if args.preset is not None or args.output is not None:
        raise ValueError("--resume DIR takes no preset and no --output")
      stage, config = ablation.read_config(args.resume)
      output = args.resume
    else:
      if args.preset is None:
        raise ValueError("give a preset (lambda, c-puct, custom) and "
                         "--output, or --resume DIR")
      if args.output is None:
        raise ValueError("--output is required")
      stage, config = build_config(args)
      output = args.output
    if args.max_jobs is not None and args.max_jobs < 0:
      raise ValueError(f"--max-jobs must be >= 0, got {args.max_jobs}")
    if args.ray is not None and not args.ray.strip():
      raise ValueError("--ray needs the cluster's address (HOST:PORT, or "
                       "auto on one of its nodes)")
    if config.gnugo_levels and find_gnugo() is None:
      raise ValueError("GNU Go is not installed (apt-get install gnugo), "
                       "or run the round robin alone: --gnugo-levels")
  except ValueError as e:
    return parsing.fail(str(e))
  print(f"sweep {stage}: {config.num_variants} variants "
        f"({', '.join(config.variant_names())}), "
        f"{config.games_planned()} games -> {output}", flush=True)
  try:
    summary = ablation.run_ablation(
        config, output, stage=stage, max_jobs=args.max_jobs,
        plot=args.plot, log=lambda line: print(line, flush=True),
        ray_address=args.ray)
  except (ValueError, FileNotFoundError, ray_jobs.JobError) as e:
    return parsing.fail(str(e))
  print(ablation_report.table_markdown(summary))
  if summary.complete:
    state = "done"
  elif args.max_jobs is None:
    state = "the rest is being played by another process"
  else:
    state = "unfinished (run the same command again to resume)"
  print(f"{summary.games_played}/{summary.games_planned} games, {state}; "
        f"results in {os.path.join(output, 'table.md')}")
  return 0
