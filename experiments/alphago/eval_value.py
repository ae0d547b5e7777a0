"""Mean squared error of a value-network checkpoint against game outcomes.

Evaluates v_θ on the held-out split of a value-data folder (one position a
self-play game) or on every position of SGF records (any folder or archive,
with the filters the network was trained under when it was trained on
records; flags override), and prints the MSE with a 95% interval, the
share of positions whose value has the outcome's sign, and a last line

    RESULT mse=<x> sign_accuracy=<y> positions=<n> games=<g>

and with --output FILE.json a result file (`core.result_file`): the
figures, the checkpoint (path, step, a hash of its weights), the data's
identity, the command, the commit and the date.

    python experiments/alphago/eval_value.py --value-data runs/value19 \
        [--checkpoint checkpoints/value19] [--split test]
    python experiments/alphago/eval_value.py --data ../shared/data/kgs-6d \
        [--checkpoint checkpoints/value19] [--split test] [--limit N]

--symmetries 8 averages v over the board's 8 symmetries (8x the cost).

--checkpoint is a run directory (holding checkpoints/) or a checkpoint
directory; default: the committed 19×19 network, checkpoints/value19.
--split: for a value-data folder its test chunks by default; for records,
the test split of the network's own records, any other records whole
(`all`). The interval treats each game, not each position, as the
independent draw (positions of one game share its outcome).
"""

import argparse
import hashlib
import os
import sys

import numpy as np

from alphago_jax import data as data_lib
from alphago_jax.core import result_file
from alphago_jax.data import run_dataset
from alphago_jax.core.stats import clustered_mean_interval
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import value_data as vd
from alphago_jax.training import value_net as vn

sys.path.insert(0, os.path.dirname(__file__))
import eval_common  # noqa: E402  pylint: disable=wrong-import-position

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_CHECKPOINT = os.path.join(ROOT, "checkpoints", "value19")


def _sha256(path):
  """sha256 of a file's bytes."""
  with open(path, "rb") as f:
    return hashlib.sha256(f.read()).hexdigest()


def _record_positions(p, args, source, size):
  """`(positions, split, dataset identity)` of SGF records `args.data`
  (positions None after printing the error)."""
  dataset = source.get("dataset", {}) if source.get("kind") == "kgs" else {}
  trained = dict(dataset.get("filters", {}))
  min_rank = eval_common.min_rank(args.min_rank, trained)
  same = source.get("kind") == "kgs" and run_dataset.same_source(
      source.get("path"), args.data)
  split = args.split or ("test" if same else "all")
  if split != "all" and not same:
    p.error(f"--split {split}: the network was not trained on {args.data}; "
            "its records have no split of the network's (use --split all)")
  try:
    filters = data_lib.Filters(**dict(trained, size=size, min_rank=min_rank))
    config = (data_lib.DatasetConfig(filters=filters, fractions=(1, 0, 0))
              if split == "all" else data_lib.DatasetConfig(
                  filters=filters, fractions=tuple(dataset["fractions"]),
                  seed=dataset.get("seed", 0), limit=dataset.get("limit")))
  except ValueError as e:
    p.error(str(e))
  opened = eval_common.records_split(args, config, split)
  if opened is None:
    return None, split, None
  cache, positions = opened
  return vn.decided(positions), split, eval_common.dataset_identity(cache)


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  source = p.add_mutually_exclusive_group(required=True)
  source.add_argument("--value-data", default=None,
                      help="a value-data folder (one position a game)")
  source.add_argument("--data", default=None, help="SGF records: an .sgf "
                      "file, a tar(.gz) archive or a folder of them")
  eval_common.add_checkpoint_flags(p, DEFAULT_CHECKPOINT)
  p.add_argument("--split", default=None,
                 choices=("all",) + tuple(data_lib.SPLITS),
                 help="value data: train or test (default test); records: "
                 "default test for the network's own, else all")
  p.add_argument("--min-rank", default=None,
                 help="records: both players at least this rank ('none' "
                 "for any; default: as in training, else 6d)")
  p.add_argument("--cache", default=None, help="records: folder for "
                 "position caches (default: beside the data if writable, "
                 "else ~/.cache/alphago_jax)")
  p.add_argument("--limit", type=int, default=None,
                 help="evaluate the first N positions only")
  p.add_argument("--symmetries", type=int, default=1, choices=(1, 8),
                 help="8: average v over the board's 8 symmetries (8x the "
                 "cost); 1: each position as it stands")
  p.add_argument("--batch-size", type=int, default=256)
  eval_common.add_cpu_devices_flag(p)
  eval_common.add_output_flag(p)
  argv = sys.argv[1:] if argv is None else list(argv)
  args = p.parse_args(argv)
  if args.limit is not None and args.limit < 1:
    p.error(f"--limit must be at least 1, got {args.limit}")
  eval_common.use_cpu_devices(p, args)
  loaded = eval_common.load_checkpoint(vn.load_value, args)
  if loaded is None:
    return 1
  ckpt_dir, (model, variables, step) = loaded
  trained_on = ckpt.run_config(args.checkpoint).get("source", {})
  if args.value_data is not None:
    split = args.split or "test"
    if split not in ("train", "test"):
      p.error(f"--split {split}: a value-data folder has train and test")
    try:
      train, test, _ = vd.load_value_data(args.value_data)
    except data_lib.DataError as e:
      print(f"error: {e}", file=sys.stderr)
      return 1
    positions, where = (train if split == "train" else test), \
        args.value_data
    data_identity = {"value_data": result_file.portable_path(
        os.path.abspath(args.value_data)), "config_sha256": _sha256(
            os.path.join(args.value_data, "config.json"))}
  else:
    positions, split, data_identity = _record_positions(
        p, args, trained_on, model.board_size)
    if positions is None:
      return 1
    where = args.data
  if len(positions) == 0:
    print(f"error: no decided positions in the {split} split of {where}",
          file=sys.stderr)
    return 1
  if positions.size != model.board_size:
    print(f"error: {where} holds {positions.size}x{positions.size} "
          f"positions, the network in {ckpt_dir} is {model.board_size}x"
          f"{model.board_size}", file=sys.stderr)
    return 1
  mesh = eval_common.data_mesh(p, args.batch_size)
  v, z = vn.predict_values(variables, model, positions,
                           batch_size=args.batch_size, mesh=mesh,
                           limit=args.limit, symmetries=args.symmetries)
  n = len(v)
  games = np.asarray(positions.game)[:n]
  if len(np.unique(games)) < 2:
    print(f"error: {n} positions from one game: no interval",
          file=sys.stderr)
    return 1
  mse, lo, hi = clustered_mean_interval((v - z) ** 2, games)
  sign = float(np.mean(v * z > 0))
  num_games = len(np.unique(games))
  print(f"checkpoint: {ckpt_dir} step {step} ({model.num_layers} layers x "
        f"{model.filters} filters, {model.board_size}x{model.board_size})")
  print(f"data: {where}, split {split}, {n} positions of {num_games} games")
  if args.symmetries > 1:
    print(f"v averaged over the board's {args.symmetries} symmetries")
  print(f"mse: {mse:.4f}  95% CI [{lo:.4f}, {hi:.4f}] (games as draws)")
  print(f"sign accuracy: {sign:.4f}")
  print(f"RESULT mse={mse:.4f} sign_accuracy={sign:.4f} positions={n} "
        f"games={num_games}")
  record = {"split": split, "symmetries": args.symmetries, "mse": float(mse),
            "mse_interval": [float(lo), float(hi)],
            "interval": ("95%, cluster-robust by game (core.stats."
                         "clustered_mean_interval)"),
            "sign_accuracy": sign, "positions": n, "games": num_games,
            **eval_common.checkpoint_identity(ckpt_dir, step, variables),
            "dataset": data_identity}
  return eval_common.write_output(args, record, argv, __file__)


if __name__ == "__main__":
  sys.exit(main())
