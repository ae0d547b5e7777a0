"""Trains AlphaGo's supervised policy network p_σ on game records.

Builds (or reuses) the position cache of --data, then trains on its train
split; OUTPUT gets config.json (with the dataset's identity under
`held_out`: data files, filters, split, and the hashes of the held-out
games), held_out_games.json (the validation and test games' keys),
command.json (these options, resolved),
metrics.jsonl (train loss and accuracy every --log-every steps, top-1/top-5
on a fixed subset of the validation split (--monitor-split) every
--eval-every steps: the accuracy-vs-samples curve; the test split is read
once, by `experiments/alphago/eval_policy.py`), tensorboard/ and orbax checkpoints (every
--checkpoint-minutes and on stopping; SIGTERM and Ctrl-C stop cleanly,
kill -9 loses at most the minutes since the last one). A run stops at its
sample budget, after --hours in this call, or once its training time over
all calls reaches --max-train-hours; rerun with --resume to continue it
exactly where it stopped (the run's config.json wins over the flags, but
--total-samples re-plans the schedule's horizon).

Presets: `cpu` (default: 6 layers of 64 filters, the 46 planes without
ladders, Adam with a cosine decay, sized for a 2-core CPU) and `paper` (13
layers of 192 filters on all 48 planes, for an accelerator). --quick: 300
records, a 3-layer 8-filter net, 40 steps. The last line is `RESULT
step=<s> samples=<n> validation_top1=<x> validation_top5=<y> devices=<d>`
(`test_top1=` for a run with --monitor-split test).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Literal, Optional

import jax

from alphago_jax.cli import stages
from alphago_jax.cli.stages import groups
from alphago_jax.data import held_out, run_dataset
from alphago_jax.games import go_features
from alphago_jax.models import policy
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import supervised as sl

STAGE = "sl-policy"
EXAMPLES = """examples:
  alphago-jax train sl-policy --data ../shared/data/kgs-6d --output runs/sl19 [--cache /tmp/caches] [--hours 2]
  alphago-jax train sl-policy --data ../shared/data/kgs-6d --output runs/sl19 --resume [--total-samples N]
  alphago-jax train sl-policy --data data/gnugo9 --cache /tmp/caches --size 9 --min-rank none --fractions 0.9 0.05 0.05 --min-ply 4 --total-samples 600000 --output runs/sl9
  alphago-jax train sl-policy --data ../shared/data/kgs-6d --output runs/sl48 --ladders --init-from runs/sl19   (all 48 planes; the ladders read once into the cache)
  alphago-jax train sl-policy --preset paper --data D --output O   (13x192, for an accelerator)
  alphago-jax train sl-policy --quick --data D --output O   (a smoke test)"""

# On a busy shared CPU one device's thread can be descheduled for a while;
# XLA's CPU all-reduce would then abort the process after 40 s. A true
# deadlock still ends the process (a resume loses at most a checkpoint
# interval) rather than holding the machine for an hour.
PATIENT_COLLECTIVES = {
    "xla_cpu_collective_call_warn_stuck_timeout_seconds": 120,
    "xla_cpu_collective_call_terminate_timeout_seconds": 600,
    "xla_cpu_collective_timeout_seconds": 600,
}


def patient_collectives() -> None:
  """Adds `PATIENT_COLLECTIVES` to `XLA_FLAGS` (those not set there
  already); before the first JAX operation."""
  flags = os.environ.get("XLA_FLAGS", "")
  extra = [f"--{k}={v}" for k, v in PATIENT_COLLECTIVES.items()
           if k not in flags]
  os.environ["XLA_FLAGS"] = " ".join([flags] + extra).strip()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Own(groups.Optimization, groups.Network):
  """The stage's own options: the records read and the network, the
  fields of `Network` and `Optimization` and these (a base of `Options`,
  so that --help lists them between the records and the schedule).

  Attributes:
    limit: read at most this many records (default all; --quick 300).
    quick: a smoke test: 300 records, a tiny net, 40 steps.
    trunk: plain 3x3 convolutions (the paper's) or residual blocks
      (default: the preset's).
    optimizer: adam or sgd (default: the preset's).
    total_samples: training positions of the run, the schedule's horizon
      (default: the preset's); with --resume, re-plans it.
    schedule: the learning rate's: cosine decay, wsd (constant, then a
      linear decay over the last --decay-fraction: a horizon re-planned
      before the decay moves no rate) or constant (default: the preset's).
    decay_fraction: wsd's decay, a share of the horizon (default 0.2).
    init_from: start the run from this policy checkpoint (a run or
      checkpoint directory) instead of a random network: the same network,
      or a shallower plain one of the same width, which identity layers
      make deeper (`models.deepen_policy`), on the same planes or some of
      them, the others getting zero weights (`models.widen_inputs`):
      either way its moves are unchanged at the start. The optimizer
      starts fresh. Refused when this run's training split holds any of
      the parent run's test games, or when those cannot be verified (its
      held_out_games.json, or its split rebuilt from its config.json).
    ladders: the paper's 48 planes, the 46 and the two ladder planes
      (the `paper` preset's always). They are read once, when the position
      cache is built (`data.ladders`), not in every training step.
  """
  limit: Optional[int] = None
  quick: bool = False
  trunk: Optional[Literal["plain", "residual"]] = None
  optimizer: Optional[Literal["adam", "sgd"]] = None
  schedule: Optional[Literal["cosine", "wsd", "constant"]] = None
  decay_fraction: Optional[float] = None
  init_from: Optional[str] = None
  ladders: bool = False

  def __post_init__(self):
    super().__post_init__()
    for name, allowed in (("trunk", (None, "plain", "residual")),
                          ("optimizer", (None, "adam", "sgd")),
                          ("schedule", (None, "cosine", "wsd", "constant"))):
      if getattr(self, name) not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got "
                         f"{getattr(self, name)!r}")
    stages.check_optional_ints(self, {"limit": 1})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options(groups.Schedule, Own, groups.GameRecords):
  """What a supervised-policy run computes (recorded in command.json): the
  fields of `GameRecords`, `Own` and `Schedule`."""
  # Records made before these fields existed ran without an initial
  # checkpoint, without the ladder planes and monitored the test split.
  ADDED_FIELDS = {"init_from": None, "ladders": False,
                  "monitor_split": "test"}

  def resolved(self) -> "Options":
    """Every default filled in from the preset's and the machine's (what
    command.json records, so that a repeat keeps them when those change)."""
    config = build_config(self)
    return dataclasses.replace(
        self, layers=config.model.num_layers, filters=config.model.filters,
        trunk=config.model.trunk, optimizer=config.optimizer,
        lr=config.learning_rate, batch_size=config.batch_size,
        total_samples=config.total_samples, schedule=config.schedule,
        decay_fraction=config.decay_fraction,
        ladders=reads_ladders(config.model),
        limit=self.limit or (300 if self.quick else None),
        **self.schedule_defaults(self.quick))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command(stages.TrainingCommand[Options]):
  """A call of the stage.

  Attributes:
    coordinator: multi-host: address:port of process 0.
    num_processes: multi-host: the number of processes.
    process_id: multi-host: this process's index.
  """
  coordinator: Optional[str] = None
  num_processes: int = 1
  process_id: int = 0

  def __post_init__(self):
    super().__post_init__()
    stages.check_int("num_processes", self.num_processes, 1)
    stages.check_int("process_id", self.process_id, 0)


def build_config(options):
  """The library's `SupervisedConfig` of `options`' preset and overrides."""
  if options.quick:
    config = sl.SupervisedConfig(
        model=PolicyNetConfig.tiny(board_size=options.size), batch_size=32,
        learning_rate=3e-3, warmup_steps=0, schedule="constant",
        total_samples=40 * 32)
  elif options.preset == "paper":
    config = sl.SupervisedConfig(
        model=dataclasses.replace(PolicyNetConfig.paper(),
                                  board_size=options.size),
        batch_size=256, learning_rate=5e-4, warmup_steps=2000,
        total_samples=100_000_000)
  else:
    config = sl.SupervisedConfig(
        model=dataclasses.replace(PolicyNetConfig.cpu(),
                                  board_size=options.size))
  model = config.model
  if options.ladders:
    model = dataclasses.replace(
        model, features=go_features.ALPHAGO_POLICY_FEATURES)
  model = stages.with_given(model, num_layers=options.layers,
                            filters=options.filters, trunk=options.trunk)
  return stages.with_given(
      config, model=model, batch_size=options.batch_size,
      learning_rate=options.lr, optimizer=options.optimizer,
      schedule=options.schedule, decay_fraction=options.decay_fraction,
      total_samples=options.total_samples)


def reads_ladders(model) -> bool:
  """Whether a policy network's inputs include the ladder planes (its
  run then needs a cache that holds them)."""
  return go_features.reads_ladders(model.features)


def starting_network(path: str, model):
  """The variables of the policy checkpoint at `path` as a `model`
  network (as they are, or deepened by identity layers), and its step.

  Raises:
    FileNotFoundError, CheckpointMismatchError: no policy checkpoint there.
    ValueError: its network cannot become `model` (the message names both).
  """
  source, variables, step = sl.load_policy(ckpt.steps_directory(path))
  if (source.num_layers < model.num_layers
      and dataclasses.replace(source, num_layers=model.num_layers) == model):
    source, variables = policy.deepen_policy(source, variables,
                                             num_layers=model.num_layers)
    how = f"deepened to {model.num_layers} layers by identity layers"
  else:
    how = "as it is"
  new_planes = [n for n in model.features if n not in source.features]
  if (new_planes and set(source.features) <= set(model.features)
      and dataclasses.replace(source, features=model.features) == model):
    source, variables = policy.widen_inputs(source, variables,
                                            features=model.features)
    how += f", with zero weights on the new planes {new_planes}"
  if source != model:
    raise ValueError(
        f"{path} holds a {source.num_layers}x{source.filters} "
        f"{source.trunk} network on {source.num_planes} planes "
        f"({source.board_size}x{source.board_size}), which cannot start a "
        f"{model.num_layers}x{model.filters} {model.trunk} network on "
        f"{model.num_planes} planes ({model.board_size}x"
        f"{model.board_size}): give the same network, or a shallower plain "
        f"one of the same width and board on the same planes or some of "
        f"them")
  stages.log(f"starting network: {path} step {step}, {how}")
  return variables, step


def check_parent(path: str, cache, *, data: str,
                 cache_root: Optional[str]) -> None:
  """Refuses (StageError, before anything is written) a run whose
  training split, in `cache`, holds a test game of the run it starts from
  (`path`, a run or checkpoint directory), or a parent whose test games
  cannot be verified (`data.held_out.check_parent`)."""
  parent = ckpt.run_directory(path)
  try:
    checked = held_out.check_parent(
        parent, held_out.split_keys(cache, "train"), data=data,
        cache_root=cache_root, log=stages.log)
  except held_out.HeldOutError as e:
    raise stages.StageError(f"--init-from: {e}") from None
  stages.log(f"held out: none of the {checked} test games of {parent} is "
             f"in this run's training split")


def run(command: Command) -> int:
  """Trains (or resumes) the run of `command`; the exit status."""
  patient_collectives()

  def before_jax():
    if command.coordinator:
      jax.distributed.initialize(command.coordinator, command.num_processes,
                                 command.process_id)

  call = stages.begin(STAGE, command, before_jax=before_jax)
  options, saved, log = call.options, call.saved, stages.log
  if call.resuming:
    config = sl.SupervisedConfig.from_json(saved["config"])
    dataset, seed = saved["dataset"], saved["seed"]
    # Only a --total-samples given in this call re-plans (the resolved
    # options hold the preset's).
    horizon = command.options.total_samples
    if horizon is not None and horizon != config.total_samples:
      # Re-planning the horizon (a run that must end within its time
      # budget) changes only the schedule's shape from here on; the
      # optimizer state does not depend on it.
      log(f"schedule horizon {config.total_samples} -> {horizon} samples")
      config = dataclasses.replace(config, total_samples=horizon)
  else:
    try:
      config = build_config(options)
      dataset = run_dataset.dataset_from_args(
          options, limit=options.limit,
          ladders=reads_ladders(config.model))
    except ValueError as e:
      raise stages.refused(str(e)) from None
    seed = options.seed
  # The starting network before anything is written: a refused one
  # leaves no run behind. A resume starts from its checkpoint instead.
  init_variables = init_step = None
  if call.resuming:
    init_step = saved.get("init_from_step")
  elif options.init_from is not None:
    try:
      init_variables, init_step = starting_network(options.init_from,
                                                   config.model)
    except (FileNotFoundError, ckpt.CheckpointMismatchError,
            ValueError) as e:
      raise stages.StageError(f"--init-from: {e}") from None
  # A resume without --cache reads the cache the run started with.
  cache_root = options.cache if options.cache is not None or not \
      call.resuming else saved.get("cache")
  split = call.monitor_split()
  cache, train, monitored = stages.open_splits(options.data, cache_root,
                                               dataset, split)
  log(f"cache {cache.path}: {len(train)} train, {len(monitored)} {split} "
      f"positions")
  if options.init_from is not None and not call.resuming:
    check_parent(options.init_from, cache, data=options.data,
                 cache_root=cache_root)
  identity, held_files = held_out.run_files(
      cache, min_ply=int(dataset.get("min_ply", 0)))
  # The paths as given, not absolute: run directories get committed.
  call.record({
      "config": config.to_json(), "dataset": dataset, "data": options.data,
      "cache": cache_root, "seed": seed,
      **({} if init_step is None else {"init_from_step": init_step}),
      **identity}, files=held_files)
  state, history = call.train(
      sl.train_supervised, config, train, seed=seed,
      eval_positions=sl.eval_subset(monitored, options.eval_positions),
      output_dir=command.output, mesh=stages.data_mesh(),
      eval_every=options.eval_every, init_variables=init_variables)
  evals = [r for r in history if "eval_top1" in r]
  last = evals[-1] if evals else {}
  print(f"RESULT step={int(state.iteration)} "
        f"samples={int(state.iteration) * config.batch_size} "
        f"{split}_top1={last.get('eval_top1', float('nan')):.4f} "
        f"{split}_top5={last.get('eval_top5', float('nan')):.4f} "
        f"devices={jax.device_count()}")
  return 0


stages.register(__name__)
