"""Trains AlphaGo's supervised policy network p_σ on game records.

Builds (or reuses) the position cache of --data, then trains on its train
split; OUTPUT gets config.json, metrics.jsonl (train loss and accuracy every
--log-every steps, top-1/top-5 on a fixed subset of the test split every
--eval-every steps: the accuracy-vs-samples curve), tensorboard/ and orbax
checkpoints (every --checkpoint-minutes and on stopping; SIGTERM and Ctrl-C
stop cleanly, kill -9 loses at most the minutes since the last one). A run
stops at its sample budget, after --hours in this call, or once its
training time over all calls reaches --max-train-hours; rerun with --resume
to continue it exactly where it stopped (the run's config.json wins over
the flags).

    python experiments/alphago/sl_policy.py --data ../shared/data/kgs-6d \
        --output runs/sl19 [--cache /tmp/caches] [--hours 2] [--resume]
    python experiments/alphago/sl_policy.py --preset paper ...  # 13x192
    python experiments/alphago/sl_policy.py --quick --data D --output O

Presets: `cpu` (default: 6 layers of 64 filters, the 46 planes without
ladders, Adam with a cosine decay over 8M positions, sized for ~8 h on a
2-core CPU) and `paper` (13 layers of 192 filters on all 48 planes, for an
accelerator). --quick: 300 records, a 3-layer 8-filter net, 40 steps.
"""

import argparse
import dataclasses
import json
import os
import sys

import jax
from jax.experimental import multihost_utils

from alphago_jax import cpu_devices
from alphago_jax import data as data_lib
from alphago_jax.cli import rundir
from alphago_jax.data import run_dataset
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training.loop import make_mesh
from alphago_jax.training import supervised as sl

PRESETS = ("cpu", "paper")
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


def build_config(args) -> sl.SupervisedConfig:
  if args.quick:
    model = PolicyNetConfig.tiny(board_size=args.size)
    config = sl.SupervisedConfig(model=model, batch_size=32,
                                 learning_rate=3e-3, warmup_steps=0,
                                 schedule="constant", total_samples=40 * 32)
  elif args.preset == "paper":
    config = sl.SupervisedConfig(
        model=dataclasses.replace(PolicyNetConfig.paper(),
                                  board_size=args.size),
        batch_size=256, learning_rate=5e-4, warmup_steps=2000,
        total_samples=100_000_000)
  else:
    config = sl.SupervisedConfig(
        model=dataclasses.replace(PolicyNetConfig.cpu(),
                                  board_size=args.size))
  model = config.model
  if args.layers is not None:
    model = dataclasses.replace(model, num_layers=args.layers)
  if args.filters is not None:
    model = dataclasses.replace(model, filters=args.filters)
  if args.trunk is not None:
    model = dataclasses.replace(model, trunk=args.trunk)
  overrides = {k: v for k, v in {
      "batch_size": args.batch_size, "learning_rate": args.lr,
      "optimizer": args.optimizer, "total_samples": args.total_samples,
  }.items() if v is not None}
  return dataclasses.replace(config, model=model, **overrides)


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  run_dataset.add_dataset_arguments(p)
  p.add_argument("--output", required=True, help="run directory")
  p.add_argument("--resume", action="store_true",
                 help="continue the run in OUTPUT with its config.json")
  p.add_argument("--preset", choices=PRESETS, default="cpu")
  p.add_argument("--quick", action="store_true",
                 help="a smoke test: 300 records, a tiny net, 40 steps")
  p.add_argument("--layers", type=int, default=None)
  p.add_argument("--filters", type=int, default=None)
  p.add_argument("--trunk", choices=("plain", "residual"), default=None)
  p.add_argument("--optimizer", choices=sl.OPTIMIZERS, default=None)
  p.add_argument("--lr", type=float, default=None)
  p.add_argument("--batch-size", type=int, default=None)
  p.add_argument("--total-samples", type=int, default=None,
                 help="training positions of the run (the schedule's "
                 "horizon); with --resume, re-plans it")
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--hours", type=float, default=None,
                 help="stop after this much wall-clock time in this call")
  p.add_argument("--max-train-hours", type=float, default=8.0,
                 help="stop once the run's training time over all calls "
                 "reaches this")
  p.add_argument("--checkpoint-minutes", type=float, default=10.0)
  p.add_argument("--log-every", type=int, default=None,
                 help="steps per metrics record (default 200; --quick 5)")
  p.add_argument("--eval-every", type=int, default=None,
                 help="steps between test evaluations (default 2000; "
                 "--quick 20)")
  p.add_argument("--eval-positions", type=int, default=10_000,
                 help="size of the fixed test subset of the curve")
  p.add_argument("--cpu-devices", type=int,
                 default=cpu_devices.default_cpu_device_count(),
                 help="XLA CPU devices (one per core uses every core); "
                 "ignored when XLA_FLAGS sets the count")
  p.add_argument("--coordinator", default=None,
                 help="multi-host: address:port of process 0")
  p.add_argument("--num-processes", type=int, default=1)
  p.add_argument("--process-id", type=int, default=0)
  args = p.parse_args(argv)
  patient_collectives()
  try:  # Before JAX starts: the first JAX operation fixes the devices.
    cpu_devices.use_cpu_devices(args.cpu_devices)
  except ValueError as e:
    p.error(f"--cpu-devices: {e}")
  if args.coordinator:
    jax.distributed.initialize(args.coordinator, args.num_processes,
                               args.process_id)
  log = lambda line: print(line, flush=True)
  config_path = os.path.join(args.output, "config.json")
  ckpt_dir = os.path.join(args.output, "checkpoints")
  if args.resume and os.path.exists(config_path):
    with open(config_path) as f:
      saved = json.load(f)
    config = sl.SupervisedConfig.from_json(saved["config"])
    dataset = saved["dataset"]
    if (args.total_samples is not None
        and args.total_samples != config.total_samples):
      # Re-planning the horizon (a run that must end within its time
      # budget) changes only the schedule's shape from here on; the
      # optimizer state does not depend on it.
      log(f"schedule horizon {config.total_samples} -> "
          f"{args.total_samples} samples")
      config = dataclasses.replace(config, total_samples=args.total_samples)
  else:
    if ckpt.latest_step(ckpt_dir) is not None:
      p.error(f"{args.output} already holds a run; pass --resume to "
              f"continue it or choose another --output")
    try:
      config = build_config(args)
      dataset = run_dataset.dataset_from_args(
          args, limit=300 if args.quick else None)
    except ValueError as e:
      p.error(str(e))
  try:
    cache, train, test = run_dataset.open_splits(args.data, args.cache,
                                                 dataset, log=log)
  except data_lib.DataError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  log(f"cache {cache.path}: {len(train)} train, {len(test)} test positions")
  if jax.process_index() == 0:
    if not (args.resume and os.path.exists(config_path)):
      rundir.write_command(args.output, script=os.path.basename(__file__),
                           argv=sys.argv[1:] if argv is None else argv)
    os.makedirs(args.output, exist_ok=True)
    tmp = config_path + ".tmp"
    with open(tmp, "w") as f:
      # The paths as given, not absolute: run directories get committed.
      json.dump({"config": config.to_json(), "dataset": dataset,
                 "data": args.data, "cache": args.cache,
                 "seed": args.seed}, f, indent=1)
    os.replace(tmp, config_path)
  if jax.process_count() > 1:
    multihost_utils.sync_global_devices("sl_policy: output ready")
  mesh = make_mesh() if jax.device_count() > 1 else None
  quick = args.quick
  log_every = args.log_every or (5 if quick else 200)
  eval_every = args.eval_every or (20 if quick else 2000)
  eval_positions = sl.eval_subset(test, args.eval_positions)
  try:
    state, history = sl.train_supervised(
        config, train, seed=args.seed, eval_positions=eval_positions,
        output_dir=args.output, mesh=mesh,
        max_seconds=None if args.hours is None else 3600 * args.hours,
        max_train_seconds=3600 * args.max_train_hours,
        log_every=log_every, eval_every=eval_every,
        checkpoint_seconds=60 * args.checkpoint_minutes, resume=True,
        log=log, progress=sys.stderr.isatty())
  except ckpt.CheckpointMismatchError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  evals = [r for r in history if "eval_top1" in r]
  last = evals[-1] if evals else {}
  print(f"RESULT step={int(state.iteration)} "
        f"samples={int(state.iteration) * config.batch_size} "
        f"test_top1={last.get('eval_top1', float('nan')):.4f} "
        f"test_top5={last.get('eval_top5', float('nan')):.4f} "
        f"devices={jax.device_count()}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
