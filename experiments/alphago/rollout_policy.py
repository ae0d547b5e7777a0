"""Trains AlphaGo's fast rollout policy p_π on game records.

Builds (or reuses) the position cache of --data and trains the linear
softmax over pattern features (`models.rollout_policy`) on its train
split. OUTPUT gets config.json, metrics.jsonl (train loss and top-1 every
--log-every steps, top-1/top-5 on a fixed subset of the test split every
--eval-every steps), orbax checkpoints (every --checkpoint-minutes and on
stopping; SIGTERM and Ctrl-C stop cleanly) and the exported weights
(`weights.npz` and their feature set in config.json, the files
`models.rollout_policy.load_policy(OUTPUT)` reads). Rerun with --resume to
continue a run exactly where it stopped (the run's config.json wins over
the flags). The last line is

    RESULT step=<s> samples=<n> test_top1=<x> test_top5=<y>

    python experiments/alphago/rollout_policy.py --data ../shared/data/kgs-6d \
        --output runs/rollout [--cache DIR] [--total-samples N] [--resume]
    python experiments/alphago/rollout_policy.py --quick --data D --output O

--quick: the first 300 records, 60 steps of 64 positions (a smoke test).
"""

import argparse
import json
import os
import sys

from alphago_jax import data as data_lib
from alphago_jax.cli import rundir
from alphago_jax.data import run_dataset
from alphago_jax.games import go_patterns
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import rollout_policy as rp
from alphago_jax.training.supervised import eval_subset


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  run_dataset.add_dataset_arguments(p)
  p.add_argument("--output", required=True, help="run directory")
  p.add_argument("--resume", action="store_true",
                 help="continue the run in OUTPUT with its config.json")
  p.add_argument("--quick", action="store_true",
                 help="a smoke test: 300 records, 60 steps of 64")
  p.add_argument("--batch-size", type=int, default=None)
  p.add_argument("--lr", type=float, default=None)
  p.add_argument("--weight-decay", type=float, default=None)
  p.add_argument("--total-samples", type=int, default=None)
  p.add_argument("--pattern-bits", type=int, default=None)
  p.add_argument("--response-bits", type=int, default=None)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--hours", type=float, default=None,
                 help="stop after this much wall-clock time in this call")
  p.add_argument("--checkpoint-minutes", type=float, default=5.0)
  p.add_argument("--log-every", type=int, default=None,
                 help="steps per metrics record (default 200; --quick 10)")
  p.add_argument("--eval-every", type=int, default=None,
                 help="steps between test evaluations (default 2000; "
                 "--quick 30)")
  p.add_argument("--eval-positions", type=int, default=10_000,
                 help="size of the fixed test subset evaluated")
  args = p.parse_args(argv)
  log = lambda line: print(line, flush=True)
  config_path = os.path.join(args.output, "config.json")
  ckpt_dir = os.path.join(args.output, "checkpoints")
  if args.resume and os.path.exists(config_path):
    with open(config_path) as f:
      saved = json.load(f)
    config = rp.RolloutTrainConfig.from_json(saved["train"])
    dataset = saved["dataset"]
    seed = saved["seed"]
  else:
    if ckpt.latest_step(ckpt_dir) is not None:
      p.error(f"{args.output} already holds a run; pass --resume to "
              f"continue it or choose another --output")
    try:
      defaults = go_patterns.PatternConfig()
      features = go_patterns.PatternConfig(
          pattern_bits=args.pattern_bits or defaults.pattern_bits,
          response_bits=args.response_bits or defaults.response_bits)
      quick = {}
      if args.quick:
        quick = dict(batch_size=64, total_samples=60 * 64,
                     learning_rate=0.01, schedule="constant")
      overrides = {k: v for k, v in {
          "batch_size": args.batch_size, "learning_rate": args.lr,
          "weight_decay": args.weight_decay,
          "total_samples": args.total_samples}.items() if v is not None}
      config = rp.RolloutTrainConfig(
          board_size=args.size, features=features,
          **dict(quick, **overrides))
      dataset = run_dataset.dataset_from_args(
          args, limit=300 if args.quick else None)
    except ValueError as e:
      p.error(str(e))
    seed = args.seed
  try:
    _, train, test = run_dataset.open_splits(args.data, args.cache, dataset,
                                             log=log)
  except data_lib.DataError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  log(f"cache: {len(train)} train, {len(test)} test positions")
  os.makedirs(args.output, exist_ok=True)
  # The run's settings (what --resume reads); exporting the weights
  # rewrites the file with the weights' feature set added.
  meta = {"train": config.to_json(), "dataset": dataset, "seed": seed,
          "data": os.path.basename(os.path.normpath(args.data))}
  if not os.path.exists(config_path):
    rundir.write_command(args.output, script=os.path.basename(__file__),
                         argv=sys.argv[1:] if argv is None else argv)
    with open(config_path + ".tmp", "w") as f:
      json.dump(meta, f, indent=1, sort_keys=True)
    os.replace(config_path + ".tmp", config_path)
  quick = args.quick
  try:
    state, history = rp.train_rollout_policy(
        config, train, seed=seed,
        eval_positions=eval_subset(test, args.eval_positions),
        output_dir=args.output,
        max_seconds=None if args.hours is None else 3600 * args.hours,
        log_every=args.log_every or (10 if quick else 200),
        eval_every=args.eval_every or (30 if quick else 2000),
        checkpoint_seconds=60 * args.checkpoint_minutes, resume=True,
        log=log, progress=sys.stderr.isatty(), tensorboard=False,
        export_extra=meta)
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


if __name__ == "__main__":
  sys.exit(main())
