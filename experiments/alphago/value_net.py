"""Trains AlphaGo's value network v_θ on game outcomes.

Data: --data, a value-data folder (`experiments/alphago/value_data.py`: one
self-play position a game), or --kgs, game records read into a position
cache under --cache (every position of every game, the paper's
overfitting comparison; positions of games without a result are dropped).
OUTPUT gets config.json (written atomically), metrics.jsonl (train MSE
every --log-every steps; MSE on a fixed subset of the training positions
and on the test split every --eval-every steps), tensorboard/ and orbax
checkpoints (every --checkpoint-minutes and on stopping; SIGTERM and
Ctrl-C stop cleanly). Rerun with --resume to continue exactly where it
stopped (the run's config.json wins over the flags).

    python experiments/alphago/value_net.py --data data/value9 \
        --output runs/value9 [--hours 2] [--resume]
    python experiments/alphago/value_net.py --kgs ../shared/data/kgs-6d \
        --cache /tmp/caches --output runs/value-kgs
    python experiments/alphago/value_net.py --quick --data D --output O

Presets: `cpu` (default: 6 convolutions of 64 filters, 256 hidden units,
the 47 planes without ladders, Adam) and `paper` (13 convolutions of 192
on all 49 planes). --quick: a tiny net, 40 steps of 32 (with --kgs, 300
records). The last line: `RESULT train_mse=.. test_mse=.. positions=..`.
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
from alphago_jax.models.value import ValueNetConfig
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import supervised as sl
from alphago_jax.training import value_data as vd
from alphago_jax.training import value_net as vn
from alphago_jax.training.loop import make_mesh

PRESETS = ("cpu", "paper")


def build_config(args, size: int) -> vn.ValueTrainConfig:
  if args.quick:
    config = vn.ValueTrainConfig(
        model=ValueNetConfig.tiny(board_size=size), batch_size=32,
        learning_rate=3e-3, warmup_steps=0, schedule="constant",
        total_samples=40 * 32)
  elif args.preset == "paper":
    config = vn.ValueTrainConfig(
        model=dataclasses.replace(ValueNetConfig.paper(), board_size=size),
        batch_size=256, learning_rate=5e-4, warmup_steps=2000,
        total_samples=100_000_000)
  else:
    config = vn.ValueTrainConfig(
        model=dataclasses.replace(ValueNetConfig.cpu(), board_size=size))
  model = config.model
  if args.layers is not None:
    model = dataclasses.replace(model, num_layers=args.layers)
  if args.filters is not None:
    model = dataclasses.replace(model, filters=args.filters)
  overrides = {k: v for k, v in {
      "batch_size": args.batch_size, "learning_rate": args.lr,
      "total_samples": args.total_samples}.items() if v is not None}
  return dataclasses.replace(config, model=model, **overrides)


def load_data(source: dict, cache_root, log):
  """(train, test, description) of the run's data source."""
  if source["kind"] == "value_data":
    train, test, summary = vd.load_value_data(source["path"])
    return train, test, (f"value data {summary['folder']}: "
                         f"{summary['games']} games, {summary['positions']} "
                         f"positions ({summary['discarded']} discarded)")
  dconf = source["dataset"]
  dataset = data_lib.DatasetConfig(
      filters=data_lib.Filters(**dconf["filters"]),
      fractions=tuple(dconf["fractions"]), seed=dconf["seed"],
      limit=dconf["limit"])
  cache = data_lib.prepare(source["path"], cache_root, dataset,
                           workers=min(2, os.cpu_count() or 1), log=log)
  train = vn.decided(cache.split("train"))
  test = vn.decided(cache.split("test"))
  return train, test, f"KGS cache {cache.path}"


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  src = p.add_mutually_exclusive_group()
  src.add_argument("--data", default=None, help="a value-data folder")
  src.add_argument("--kgs", default=None,
                   help="game records (.sgf, tar(.gz) or a folder of them)")
  p.add_argument("--cache", default=None,
                 help="with --kgs: the folder of position caches")
  p.add_argument("--output", required=True, help="run directory")
  p.add_argument("--resume", action="store_true",
                 help="continue the run in OUTPUT with its config.json")
  p.add_argument("--preset", choices=PRESETS, default="cpu")
  p.add_argument("--quick", action="store_true",
                 help="a smoke test: a tiny net, 40 steps")
  p.add_argument("--layers", type=int, default=None)
  p.add_argument("--filters", type=int, default=None)
  p.add_argument("--lr", type=float, default=None)
  p.add_argument("--batch-size", type=int, default=None)
  p.add_argument("--total-samples", type=int, default=None)
  p.add_argument("--size", type=int, default=19,
                 help="with --kgs: the board size kept")
  p.add_argument("--min-rank", default="6d",
                 help="with --kgs: both players at least this rank; 'none' "
                 "for any")
  p.add_argument("--fractions", type=float, nargs=3, default=None,
                 metavar=("TRAIN", "VAL", "TEST"),
                 help="with --kgs: shares of the games per split (default "
                 "0.95 0.025 0.025)")
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--hours", type=float, default=None,
                 help="stop after this much wall-clock time in this call")
  p.add_argument("--max-train-hours", type=float, default=8.0)
  p.add_argument("--checkpoint-minutes", type=float, default=10.0)
  p.add_argument("--log-every", type=int, default=None,
                 help="steps per record (default 200; --quick 5)")
  p.add_argument("--eval-every", type=int, default=None,
                 help="steps between evaluations (default 2000; --quick 20)")
  p.add_argument("--eval-positions", type=int, default=10_000,
                 help="size of the fixed train and test subsets evaluated")
  p.add_argument("--cpu-devices", type=int,
                 default=cpu_devices.default_cpu_device_count(),
                 help="XLA CPU devices (one per core uses every core)")
  args = p.parse_args(argv)
  try:
    cpu_devices.use_cpu_devices(args.cpu_devices)
  except ValueError as e:
    p.error(f"--cpu-devices: {e}")
  log = lambda line: print(line, flush=True)
  config_path = os.path.join(args.output, "config.json")
  ckpt_dir = os.path.join(args.output, "checkpoints")
  if args.resume and os.path.exists(config_path):
    with open(config_path) as f:
      saved = json.load(f)
    source, seed = saved["source"], saved["seed"]
    config = vn.ValueTrainConfig.from_json(saved["config"])
  else:
    if ckpt.latest_step(ckpt_dir) is not None:
      p.error(f"{args.output} already holds a run; pass --resume to "
              f"continue it or choose another --output")
    if args.data is None and args.kgs is None:
      p.error("give --data (a value-data folder) or --kgs (game records)")
    seed = args.seed
    if args.data is not None:
      source = {"kind": "value_data", "path": os.path.normpath(args.data)}
    else:
      filters = data_lib.Filters(
          size=args.size,
          min_rank=None if args.min_rank.lower() == "none" else args.min_rank)
      split = {} if args.fractions is None else {
          "fractions": tuple(args.fractions)}
      try:
        dataset = data_lib.DatasetConfig(
            filters=filters, seed=0, limit=300 if args.quick else None,
            **split)
      except ValueError as e:
        p.error(f"--fractions: {e}")
      source = {"kind": "kgs", "path": os.path.normpath(args.kgs),
                "dataset": dataset.to_json()}
    config = None
  try:
    train, test, what = load_data(source, args.cache, log)
  except data_lib.DataError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  if config is None:
    try:
      config = build_config(args, train.size)
    except ValueError as e:
      p.error(str(e))
  log(f"{what}; {len(train)} train, {len(test)} test positions")
  if len(train) < config.batch_size or not len(test):
    print(f"error: {len(train)} training and {len(test)} test positions: "
          f"too few for batches of {config.batch_size} and a test set",
          file=sys.stderr)
    return 1
  if jax.process_index() == 0:
    if not (args.resume and os.path.exists(config_path)):
      rundir.write_command(args.output, script=os.path.basename(__file__),
                           argv=sys.argv[1:] if argv is None else argv)
    os.makedirs(args.output, exist_ok=True)
    tmp = config_path + ".tmp"
    with open(tmp, "w") as f:
      json.dump({"config": config.to_json(), "source": source,
                 "seed": seed}, f, indent=1)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, config_path)
  if jax.process_count() > 1:
    multihost_utils.sync_global_devices("value_net: output ready")
  mesh = make_mesh() if jax.device_count() > 1 else None
  log_every = args.log_every or (5 if args.quick else 200)
  eval_every = args.eval_every or (20 if args.quick else 2000)
  eval_sets = {"train": sl.eval_subset(train, args.eval_positions),
               "test": sl.eval_subset(test, args.eval_positions)}
  try:
    state, history = vn.train_value(
        config, train, seed=seed, eval_sets=eval_sets,
        output_dir=args.output, mesh=mesh,
        max_seconds=None if args.hours is None else 3600 * args.hours,
        max_train_seconds=3600 * args.max_train_hours,
        log_every=log_every, eval_every=eval_every,
        checkpoint_seconds=60 * args.checkpoint_minutes, resume=True,
        log=log, progress=sys.stderr.isatty())
  except (ckpt.CheckpointMismatchError, ValueError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  evals = [r for r in history if "test_mse" in r]
  if evals:
    last = evals[-1]
  else:  # Nothing left to train (a finished run resumed): measure it.
    variables = {"params": state.params}
    last = {f"{name}_mse": vn.evaluate_value(variables, config.model,
                                             positions, mesh=mesh)["mse"]
            for name, positions in eval_sets.items()}
  train_mse = last.get("train_mse", float("nan"))
  test_mse = last.get("test_mse", float("nan"))
  log(f"step {int(state.iteration)}: train MSE {train_mse:.4f}, test MSE "
      f"{test_mse:.4f}")
  print(f"RESULT train_mse={train_mse:.4f} test_mse={test_mse:.4f} "
        f"positions={len(train)} step={int(state.iteration)} "
        f"samples={int(state.iteration) * config.batch_size} "
        f"devices={jax.device_count()}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
