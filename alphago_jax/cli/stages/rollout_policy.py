"""Trains AlphaGo's fast rollout policy p_π on game records.

Builds (or reuses) the position cache of --data and trains the linear
softmax over pattern features (`models.rollout_policy`) on its train
split. OUTPUT gets config.json, command.json (these options, resolved),
metrics.jsonl (train loss and top-1 every --log-every steps, top-1/top-5
on a fixed subset of the test split every --eval-every steps), orbax
checkpoints (every --checkpoint-minutes and on stopping; SIGTERM and
Ctrl-C stop cleanly) and the exported weights (`weights.npz` and their
feature set in config.json, the files `models.rollout_policy.load_policy
(OUTPUT)` reads). Rerun with --resume to continue a run exactly where it
stopped (the run's config.json wins over the flags). The last line is
`RESULT step=<s> samples=<n> test_top1=<x> test_top5=<y>`.

--quick: the first 300 records, 60 steps of 64 positions (a smoke test).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Optional

from alphago_jax import data as data_lib
from alphago_jax.cli import stages
from alphago_jax.cli.stages import groups
from alphago_jax.data import run_dataset
from alphago_jax.games import go_patterns
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import rollout_policy as rp
from alphago_jax.training.supervised import eval_subset

STAGE = "rollout-policy"
EXAMPLES = """examples:
  alphago-jax train rollout-policy --data ../shared/data/kgs-6d --output runs/rollout [--hours 2]
  alphago-jax train rollout-policy --output runs/rollout --data ../shared/data/kgs-6d --resume
  alphago-jax train rollout-policy --data data/gnugo9 --size 9 --min-rank none --fractions 0.9 0.05 0.05 --min-ply 4 --output runs/rollout9
  alphago-jax train rollout-policy --quick --data D --output O   (a smoke test)"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options(groups.GameRecords):
  """What a rollout-policy run computes (recorded in command.json): the
  fields of `GameRecords`, then these.

  Attributes:
    quick: a smoke test: 300 records, 60 steps of 64.
    batch_size: positions a step (default 256; --quick 64).
    lr: Adam's peak step size (default 0.03; --quick 0.01, constant).
    weight_decay: c of the penalty c * sum(w²) (default 0).
    total_samples: training positions of the run (default 2,000,000;
      --quick 3840).
    pattern_bits: log2 of the 3x3 pattern table size (default 17).
    response_bits: log2 of the response-pattern table size (default 16).
    seed: initialisation and batch order.
    checkpoint_minutes: minutes between checkpoints.
    log_every: steps per metrics record (default 200; --quick 10).
    eval_every: steps between test evaluations (default 2000; --quick 30).
    eval_positions: size of the fixed test subset evaluated.
  """
  quick: bool = False
  batch_size: Optional[int] = None
  lr: Optional[float] = None
  weight_decay: Optional[float] = None
  total_samples: Optional[int] = None
  pattern_bits: Optional[int] = None
  response_bits: Optional[int] = None
  seed: int = 0
  checkpoint_minutes: float = 5.0
  log_every: Optional[int] = None
  eval_every: Optional[int] = None
  eval_positions: int = 10_000

  def __post_init__(self):
    super().__post_init__()
    stages.check_optional_ints(self, {
        "batch_size": 1, "total_samples": 1, "pattern_bits": 1,
        "response_bits": 1, "log_every": 1, "eval_every": 1})
    stages.check_positive("lr", self.lr)
    stages.check_positive("weight_decay", self.weight_decay, zero=True)
    stages.check_int("seed", self.seed, 0)
    stages.check_positive("checkpoint_minutes", self.checkpoint_minutes)
    stages.check_int("eval_positions", self.eval_positions, 1)

  def resolved(self) -> "Options":
    """Every default filled in from the library's (what command.json
    records, so that a repeat keeps them when those change)."""
    config = self.train_config()
    return dataclasses.replace(
        self, batch_size=config.batch_size, lr=config.learning_rate,
        weight_decay=config.weight_decay, total_samples=config.total_samples,
        pattern_bits=config.features.pattern_bits,
        response_bits=config.features.response_bits,
        log_every=self.log_every or (10 if self.quick else 200),
        eval_every=self.eval_every or (30 if self.quick else 2000))

  def train_config(self):
    """The library's `RolloutTrainConfig` of these options."""
    features = stages.with_given(go_patterns.PatternConfig(),
                                 pattern_bits=self.pattern_bits,
                                 response_bits=self.response_bits)
    quick = {}
    if self.quick:
      quick = dict(batch_size=64, total_samples=60 * 64,
                   learning_rate=0.01, schedule="constant")
    config = rp.RolloutTrainConfig(board_size=self.size, features=features,
                                   **quick)
    return stages.with_given(config, batch_size=self.batch_size,
                             learning_rate=self.lr,
                             weight_decay=self.weight_decay,
                             total_samples=self.total_samples)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command(stages.TrainingCommand[Options]):
  """A call of the stage (--output, --resume, --hours)."""


def run(command: Command) -> int:
  """Trains (or resumes) the run of `command`; the exit status."""

  try:
    options = command.options.resolved()
  except ValueError as e:
    return stages.fail(str(e))
  output, log = command.output, stages.log
  run_files = stages.RunFiles.of(command)
  config_path, saved = run_files.config_path, run_files.saved
  if run_files.resuming:
    config = rp.RolloutTrainConfig.from_json(saved["train"])
    dataset = saved["dataset"]
    seed = saved["seed"]
  else:
    try:
      run_files.check_fresh()
      config = options.train_config()
      dataset = run_dataset.dataset_from_args(
          options, limit=300 if options.quick else None)
    except ValueError as e:
      return stages.fail(str(e))
    seed = options.seed
  try:
    _, train, test = run_dataset.open_splits(options.data, options.cache,
                                             dataset, log=log)
  except data_lib.DataError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  log(f"cache: {len(train)} train, {len(test)} test positions")
  # The run's settings (what --resume reads); exporting the weights
  # rewrites the file with the weights' feature set added.
  meta = {"train": config.to_json(), "dataset": dataset, "seed": seed,
          "data": os.path.basename(os.path.normpath(options.data))}
  if not os.path.exists(config_path):
    stages.record(output, STAGE, options)
    stages.write_json(config_path, meta, sort_keys=True)
  try:
    state, history = rp.train_rollout_policy(
        config, train, seed=seed,
        eval_positions=eval_subset(test, options.eval_positions),
        output_dir=output, eval_every=options.eval_every, tensorboard=False,
        export_extra=meta, **stages.loop_limits(command, options))
  except ckpt.CheckpointMismatchError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  evals = [r for r in history if "eval_top1" in r]
  last = evals[-1] if evals else {}
  step = int(state.iteration)
  print(f"RESULT step={step} samples={step * config.batch_size} "
        f"test_top1={last.get('eval_top1', float('nan')):.4f} "
        f"test_top5={last.get('eval_top5', float('nan')):.4f}")
  return 0
