"""Trains AlphaGo's value network v_θ on game outcomes.

Data: --data, a value-data folder (`alphago-jax train value-data`: one
self-play position a game), or --kgs, game records read into a position
cache under --cache (every position of every game, the paper's
overfitting comparison; positions of games without a result are dropped).
OUTPUT gets config.json (written atomically; with --kgs, the dataset's
identity under `held_out`, as `train sl-policy` records it, and
held_out_games.json), command.json (these
options, resolved), metrics.jsonl (train MSE every --log-every steps; MSE
on a fixed subset of the training positions and on held-out ones,
--monitor-split, default validation, every --eval-every steps; the test
split is read once, by `experiments/alphago/eval_value.py`), tensorboard/ and orbax checkpoints (every
--checkpoint-minutes and on stopping; SIGTERM and Ctrl-C stop cleanly).
Rerun with --resume to continue exactly where it stopped (the run's
config.json wins over the flags).

Presets: `cpu` (default: 6 convolutions of 64 filters, 256 hidden units,
the 47 planes without ladders, Adam) and `paper` (13 convolutions of 192
on all 49 planes). --quick: a tiny net, 40 steps of 32 (with --kgs, 300
records). The last line: `RESULT train_mse=.. validation_mse=..
positions=..` (`test_mse=` with --monitor-split test).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional, Tuple

import jax

from alphago_jax import data as data_lib
from alphago_jax.cli import stages
from alphago_jax.cli.stages import groups
from alphago_jax.data import held_out
from alphago_jax.models.value import ValueNetConfig
from alphago_jax.training import supervised as sl
from alphago_jax.training import value_data as vd
from alphago_jax.training import value_net as vn

STAGE = "value-net"
EXAMPLES = """examples:
  alphago-jax train value-net --data data/value9 --output runs/value9 [--hours 2]
  alphago-jax train value-net --output runs/value9 --resume
  alphago-jax train value-net --kgs ../shared/data/kgs-6d --cache /tmp/caches --output runs/value-kgs
  alphago-jax train value-net --quick --data D --output O   (a smoke test)"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Own(groups.Optimization, groups.Network):
  """The stage's own options: the data and the network, the fields of
  `Network` and `Optimization` and these (a base of `Options`, so that
  --help lists them before the schedule).

  Attributes:
    data: a value-data folder.
    kgs: game records (.sgf, tar(.gz) or a folder of them): every
      position, instead of a value-data folder.
    cache: with --kgs: the folder of position caches.
    quick: a smoke test: a tiny net, 40 steps.
    total_samples: positions trained on in all (default: the preset's).
    size: with --kgs: the board size kept.
    min_rank: with --kgs: both players at least this rank; 'none' for any.
    fractions: with --kgs: shares of the games per split, TRAIN VAL TEST
      (default 0.95 0.025 0.025).
  """
  data: Optional[str] = None
  kgs: Optional[str] = None
  cache: Optional[str] = None
  quick: bool = False
  size: int = 19
  min_rank: str = "6d"
  fractions: Optional[Tuple[float, float, float]] = None

  def __post_init__(self):
    super().__post_init__()
    if self.data is not None and self.kgs is not None:
      raise ValueError("data and kgs: give one source, not both")
    stages.check_int("size", self.size, 5)
    if self.fractions is not None:
      for share in self.fractions:
        stages.check_positive("fractions", share, zero=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options(groups.Schedule, Own):
  """What a value-network run computes (recorded in command.json): the
  fields of `Own` and `Schedule`, these of the schedule's in this stage's
  words.

  Attributes:
    max_train_hours: stop once the training time over all calls reaches
      this.
    log_every: steps per record (default 200; --quick 5).
    eval_every: steps between evaluations (default 2000; --quick 20).
    eval_positions: size of the fixed train and held-out subsets
      evaluated.
    monitor_split: the held-out positions of the curve (default
      validation: with --kgs the records' validation split; in a
      value-data folder, which has train and test games only, a share of
      its train games the size of its test split, held out of training);
      the test split is left to `experiments/alphago/eval_value.py`.
    cpu_devices: XLA CPU devices (default: a power of two up to the
      cores; one per core uses every core).
  """
  # Records made before --monitor-split monitored the test split.
  ADDED_FIELDS = {"monitor_split": "test"}

  def resolved(self) -> "Options":
    """Every default that depends on other options or the machine filled
    in (what command.json records)."""
    return dataclasses.replace(self, **self.schedule_defaults(self.quick))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command(stages.TrainingCommand[Options]):
  """A call of the stage (--output, --resume, --hours)."""


def build_config(options: Options, size: int):
  """The library's `ValueTrainConfig` of the run on `size`x`size`."""
  if options.quick:
    config = vn.ValueTrainConfig(
        model=ValueNetConfig.tiny(board_size=size), batch_size=32,
        learning_rate=3e-3, warmup_steps=0, schedule="constant",
        total_samples=40 * 32)
  elif options.preset == "paper":
    config = vn.ValueTrainConfig(
        model=dataclasses.replace(ValueNetConfig.paper(), board_size=size),
        batch_size=256, learning_rate=5e-4, warmup_steps=2000,
        total_samples=100_000_000)
  else:
    config = vn.ValueTrainConfig(
        model=dataclasses.replace(ValueNetConfig.cpu(), board_size=size))
  model = stages.with_given(config.model, num_layers=options.layers,
                            filters=options.filters)
  return stages.with_given(config, model=model,
                           batch_size=options.batch_size,
                           learning_rate=options.lr,
                           total_samples=options.total_samples)


def load_data(source: dict, cache_root, log, monitor: str = "test"):
  """(train, monitored, description, cache) of the run's data source: its
  train positions and those of the `monitor` split ("validation" or
  "test"), and the position cache of game records (None for a value-data
  folder). A value-data folder has no validation split: its train games
  are split, some held out (`value_data.hold_out_validation`)."""
  if source["kind"] == "value_data":
    train, test, summary = vd.load_value_data(source["path"])
    monitored = test
    if monitor == "validation":
      train, monitored = vd.hold_out_validation(train, source["path"])
    return train, monitored, (f"value data {summary['folder']}: "
                         f"{summary['games']} games, {summary['positions']} "
                         f"positions ({summary['discarded']} discarded)"), None
  dconf = source["dataset"]
  dataset = data_lib.DatasetConfig(
      filters=data_lib.Filters(**dconf["filters"]),
      fractions=tuple(dconf["fractions"]), seed=dconf["seed"],
      limit=dconf["limit"])
  cache = data_lib.prepare(source["path"], cache_root, dataset,
                           workers=min(2, os.cpu_count() or 1), log=log)
  train = vn.decided(cache.split("train"))
  monitored = vn.decided(cache.split(monitor))
  return train, monitored, f"KGS cache {cache.path}", cache


def _source(options: Options) -> dict:
  if options.data is not None:
    return {"kind": "value_data", "path": os.path.normpath(options.data)}
  filters = data_lib.Filters(
      size=options.size, min_rank=None
      if options.min_rank.lower() == "none" else options.min_rank)
  split = {} if options.fractions is None else {
      "fractions": tuple(options.fractions)}
  try:
    dataset = data_lib.DatasetConfig(
        filters=filters, seed=0, limit=300 if options.quick else None,
        **split)
  except ValueError as e:
    raise ValueError(f"--fractions: {e}") from None
  return {"kind": "kgs", "path": os.path.normpath(options.kgs),
          "dataset": dataset.to_json()}


def run(command: Command) -> int:
  """Trains (or resumes) the run of `command`; the exit status."""
  call = stages.begin(STAGE, command)
  options, saved, log = call.options, call.saved, stages.log
  if call.resuming:
    source, seed = saved["source"], saved["seed"]
    config = vn.ValueTrainConfig.from_json(saved["config"])
  else:
    if options.data is None and options.kgs is None:
      raise stages.refused("give --data (a value-data folder) or --kgs "
                           "(game records)")
    seed = options.seed
    try:
      source = _source(options)
    except ValueError as e:
      raise stages.refused(str(e)) from None
    config = None
  # A resume without --cache reads the cache the run started with.
  cache_root = options.cache if options.cache is not None or not \
      call.resuming else saved.get("cache")
  split = call.monitor_split()
  try:
    train, monitored, what, cache = load_data(source, cache_root, log,
                                              split)
  except data_lib.DataError as e:
    raise stages.StageError(str(e)) from None
  if config is None:
    try:
      config = build_config(options, train.size)
    except ValueError as e:
      raise stages.refused(str(e)) from None
  log(f"{what}; {len(train)} train, {len(monitored)} {split} positions")
  fractions = () if source["kind"] == "value_data" else tuple(
      source["dataset"]["fractions"])
  stages.check_monitored(split, len(monitored), fractions)
  if len(train) < config.batch_size:
    raise stages.StageError(
        f"{len(train)} training positions: too few for batches of "
        f"{config.batch_size}")
  # Records: the dataset's identity and held-out games (`data.held_out`).
  identity, held_files = ({}, {}) if cache is None else \
      held_out.run_files(cache)
  call.record({"config": config.to_json(), "source": source, "seed": seed,
               "cache": cache_root, **identity}, files=held_files)
  mesh = stages.data_mesh()
  eval_sets = {"train": sl.eval_subset(train, options.eval_positions),
               split: sl.eval_subset(monitored, options.eval_positions)}
  try:
    state, history = call.train(
        vn.train_value, config, train, seed=seed, eval_sets=eval_sets,
        output_dir=command.output, mesh=mesh, eval_every=options.eval_every)
  except ValueError as e:
    raise stages.StageError(str(e)) from None
  evals = [r for r in history if f"{split}_mse" in r]
  if evals:
    last = evals[-1]
  else:  # Nothing left to train (a finished run resumed): measure it.
    variables = {"params": state.params}
    last = {f"{name}_mse": vn.evaluate_value(variables, config.model,
                                             positions, mesh=mesh)["mse"]
            for name, positions in eval_sets.items()}
  train_mse = last.get("train_mse", float("nan"))
  held_mse = last.get(f"{split}_mse", float("nan"))
  log(f"step {int(state.iteration)}: train MSE {train_mse:.4f}, {split} "
      f"MSE {held_mse:.4f}")
  print(f"RESULT train_mse={train_mse:.4f} {split}_mse={held_mse:.4f} "
        f"positions={len(train)} step={int(state.iteration)} "
        f"samples={int(state.iteration) * config.batch_size} "
        f"devices={jax.device_count()}")
  return 0


stages.register(__name__)
