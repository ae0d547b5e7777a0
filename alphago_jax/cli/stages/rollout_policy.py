"""Trains AlphaGo's fast rollout policy p_π on game records.

Builds (or reuses) the position cache of --data and trains the linear
softmax over pattern features (`models.rollout_policy`) on its train
split. OUTPUT gets config.json (with the dataset's identity under
`held_out`, as `train sl-policy` records it), held_out_games.json,
command.json (these options, resolved),
metrics.jsonl (train loss and top-1 every --log-every steps, top-1/top-5
on a fixed subset of the validation split, --monitor-split, every
--eval-every steps; the test split is read once, by
`experiments/alphago/eval_policy.py`), orbax
checkpoints (every --checkpoint-minutes and on stopping; SIGTERM and
Ctrl-C stop cleanly) and the exported weights (`weights.npz` and their
feature set in config.json, the files `models.rollout_policy.load_policy
(OUTPUT)` reads). Rerun with --resume to continue a run exactly where it
stopped (the run's config.json wins over the flags). The last line is
`RESULT step=<s> samples=<n> validation_top1=<x> validation_top5=<y>`
(`test_top1=` with --monitor-split test).

--quick: the first 300 records, 60 steps of 64 positions (a smoke test).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

from alphago_jax.cli import stages
from alphago_jax.cli.stages import groups
from alphago_jax.data import held_out, run_dataset
from alphago_jax.games import go_patterns
from alphago_jax.training import rollout_policy as rp
from alphago_jax.training.supervised import eval_subset

STAGE = "rollout-policy"
EXAMPLES = """examples:
  alphago-jax train rollout-policy --data ../shared/data/kgs-6d --output runs/rollout [--hours 2]
  alphago-jax train rollout-policy --output runs/rollout --data ../shared/data/kgs-6d --resume
  alphago-jax train rollout-policy --data data/gnugo9 --size 9 --min-rank none --fractions 0.9 0.05 0.05 --min-ply 4 --output runs/rollout9
  alphago-jax train rollout-policy --quick --data D --output O   (a smoke test)"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Own(groups.Optimization):
  """The stage's own options: the fields of `Optimization` and these (a
  base of `Options`, so that --help lists them between the records and
  the schedule).

  Attributes:
    quick: a smoke test: 300 records, 60 steps of 64.
    weight_decay: c of the penalty c * sum(w²) (default 0).
    pattern_bits: log2 of the 3x3 pattern table size (default 17).
    response_bits: log2 of the response-pattern table size (default 16).
  """
  quick: bool = False
  weight_decay: Optional[float] = None
  pattern_bits: Optional[int] = None
  response_bits: Optional[int] = None

  def __post_init__(self):
    super().__post_init__()
    stages.check_optional_ints(self, {"pattern_bits": 1,
                                      "response_bits": 1})
    stages.check_positive("weight_decay", self.weight_decay, zero=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options(groups.Evaluations, groups.Steps, Own, groups.GameRecords):
  """What a rollout-policy run computes (recorded in command.json): the
  fields of `GameRecords`, `Own`, `Steps` and `Evaluations`, these in
  this stage's words.

  Attributes:
    batch_size: positions a step (default 256; --quick 64).
    lr: Adam's peak step size (default 0.03; --quick 0.01, constant).
    total_samples: training positions of the run (default 2,000,000;
      --quick 3840).
    seed: initialisation and batch order.
    log_every: steps per metrics record (default 200; --quick 10).
    eval_every: steps between evaluations (default 2000; --quick 30).
    eval_positions: size of the fixed subset evaluated.
  """
  # Records made before --monitor-split monitored the test split.
  ADDED_FIELDS = {"monitor_split": "test"}
  checkpoint_minutes: float = 5.0

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
  call = stages.begin(STAGE, command)
  options, saved, log = call.options, call.saved, stages.log
  if call.resuming:
    config = rp.RolloutTrainConfig.from_json(saved["train"])
    dataset = saved["dataset"]
    seed = saved["seed"]
  else:
    try:
      config = options.train_config()
      dataset = run_dataset.dataset_from_args(
          options, limit=300 if options.quick else None)
    except ValueError as e:
      raise stages.refused(str(e)) from None
    seed = options.seed
  split = call.monitor_split()
  cache, train, monitored = stages.open_splits(options.data, options.cache,
                                               dataset, split)
  log(f"cache: {len(train)} train, {len(monitored)} {split} positions")
  identity, held_files = held_out.run_files(
      cache, min_ply=int(dataset.get("min_ply", 0)))
  # The run's settings (what --resume reads); exporting the weights
  # rewrites the file with the weights' feature set added.
  meta = {"train": config.to_json(), "dataset": dataset, "seed": seed,
          "data": os.path.basename(os.path.normpath(options.data)),
          **identity}
  call.record(meta, once=True, sort_keys=True, files=held_files)
  state, history = call.train(
      rp.train_rollout_policy, config, train, seed=seed,
      eval_positions=eval_subset(monitored, options.eval_positions),
      output_dir=command.output, eval_every=options.eval_every,
      tensorboard=False, export_extra=meta)
  evals = [r for r in history if "eval_top1" in r]
  last = evals[-1] if evals else {}
  step = int(state.iteration)
  print(f"RESULT step={step} samples={step * config.batch_size} "
        f"{split}_top1={last.get('eval_top1', float('nan')):.4f} "
        f"{split}_top5={last.get('eval_top5', float('nan')):.4f}")
  return 0


stages.register(__name__)
