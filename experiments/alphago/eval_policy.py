"""Move-prediction accuracy of a policy checkpoint on SGF records.

Reads any folder or archive of SGF records with the filters the network was
trained under (its run's config.json: board size, minimum rank, no
handicap; flags override), and prints top-1 / top-5 accuracy of the move
played with 95% intervals, the mean negative log-likelihood, and a last
line

    RESULT top1=<x> top5=<y> games=<g> positions=<n>

and with --output FILE.json a result file (`core.result_file`): the
figures, their intervals, the checkpoint (path, step, a hash of its
weights), the data's identity (`data.held_out.DatasetIdentity`: archives,
filters, split, hashes of the held-out games), the command, the commit and
the date.

    python experiments/alphago/eval_policy.py --data ../shared/data/kgs-6d \
        [--checkpoint runs/sl19] [--split test] [--ensemble] [--limit N]
    python experiments/alphago/eval_policy.py --data ../shared/data/kgs-6d \
        --rollout [DIR]

--rollout evaluates the fast rollout policy p_π instead: the weights in
DIR (a `experiments/alphago/rollout_policy.py` run, or a folder with
weights.npz and config.json; default the committed
checkpoints/rollout_policy), on the test split of its own data. A
position whose move is a pass counts as a miss (p_π scores points only);
nll is over the other positions.

--checkpoint is a run directory (holding checkpoints/) or a checkpoint
directory; default: the committed CPU network, checkpoints/sl_policy.
--split: with the run's own --data the default is its test split (held-out
games); any other data is read whole (`all`). --ensemble averages the
policy over the 8 board symmetries (the paper's 57.0% against 55.4%).
The intervals treat each game, not each position, as the independent
draw (`core.stats.clustered_mean_interval`: positions of one game are not
independent); with positions of a single game there is none.
"""

import argparse
import os
import sys

import numpy as np

from alphago_jax import data as data_lib
from alphago_jax.data import run_dataset
from alphago_jax.core import result_file
from alphago_jax.core.stats import clustered_mean_interval
from alphago_jax.games import go_features
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import supervised as sl

sys.path.insert(0, os.path.dirname(__file__))
import eval_common  # noqa: E402  pylint: disable=wrong-import-position

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_CHECKPOINT = os.path.join(ROOT, "checkpoints", "sl_policy")
DEFAULT_ROLLOUT = os.path.join(ROOT, "checkpoints", "rollout_policy")
INTERVAL = ("95%, cluster-robust by game (core.stats."
            "clustered_mean_interval)")


def _open_positions(p, args, trained, size, min_rank, split, dataset,
                    ladders=False):
  """The positions of `split` in `args.data` under the training filters
  (`trained`, with `size` and `min_rank`) and the run's split settings
  (`dataset`), with the ladder planes read into the cache if `ladders`,
  as `(dataset identity, positions)`; None after printing the error.""" 
  try:
    filters = data_lib.Filters(**dict(trained, size=size, min_rank=min_rank))
    if split == "all":
      config = data_lib.DatasetConfig(filters=filters, fractions=(1, 0, 0),
                                      ladders=ladders)
    else:
      config = data_lib.DatasetConfig(
          filters=filters,
          fractions=tuple(dataset.get("fractions",
                                      data_lib.DatasetConfig().fractions)),
          seed=dataset.get("seed", 0), ladders=ladders)
  except ValueError as e:
    p.error(str(e))
  opened = eval_common.records_split(args, config, split)
  if opened is None:
    return None
  cache, positions = opened
  # As in training: a run's --min-ply (none before it existed), else the
  # flag's.
  min_ply = dataset.get("min_ply", 0) if args.min_ply is None else \
      args.min_ply
  positions = positions.from_ply(min_ply)
  if len(positions) == 0:
    print(f"error: no positions in the {split} split of {args.data} under "
          f"{filters}", file=sys.stderr)
    return None
  return eval_common.dataset_identity(cache, min_ply), positions


def _print_accuracy(scores, nll):
  """Prints the top-1 / top-5 accuracies of per-position `scores` (a
  network's or p_π's: `top1`, `top5` hits and `game`) with their 95%
  intervals by game, the mean `nll` and the RESULT line; returns the
  figures for the result file."""
  games = scores["game"]
  n, num_games = len(games), len(np.unique(games))
  record = {}
  for k in ("top1", "top5"):
    hits = np.asarray(scores[k], np.float64)
    record[k] = float(hits.mean())
    if num_games < 2:
      print(f"{k}: {record[k]:.4f}  (no interval: positions of one game)")
      record[f"{k}_interval"] = None
      continue
    _, lo, hi = clustered_mean_interval(hits, games)
    record[f"{k}_interval"] = [float(lo), float(hi)]
    print(f"{k}: {record[k]:.4f}  95% CI [{lo:.4f}, {hi:.4f}] (games as "
          f"draws)")
  print(f"nll: {nll:.4f}")
  print(f"RESULT top1={record['top1']:.4f} top5={record['top5']:.4f} "
        f"games={num_games} positions={n}")
  record.update(nll=float(nll), interval=INTERVAL, games=num_games,
                positions=n)
  return record


def _eval_rollout(p, args, argv):
  """--rollout: top-1 / top-5 of p_π, as for a network."""
  # pylint: disable=import-outside-toplevel
  from alphago_jax.models import rollout_policy as model_lib
  from alphago_jax.training import rollout_policy as rp
  if args.ensemble:
    p.error("--ensemble: p_π's features are symmetric already")
  try:
    weights, features, meta = model_lib.load_weights(args.rollout)
  except (FileNotFoundError, model_lib.RolloutWeightsError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  dataset = meta.get("dataset", {})
  trained = dict(dataset.get("filters", {}))
  size = meta.get("train", {}).get("board_size", trained.get("size", 19))
  min_rank = eval_common.min_rank(args.min_rank, trained)
  same_data = run_dataset.same_source(meta.get("data"), args.data)
  split = args.split or ("test" if same_data else "all")
  opened = _open_positions(p, args, trained, size, min_rank, split, dataset)
  if opened is None:
    return 1
  data_identity, positions = opened
  scores = rp.position_scores(weights, features, positions,
                              batch_size=args.batch_size, limit=args.limit)
  n, labelled = len(scores["game"]), int(scores["labelled"].sum())
  print(f"rollout policy: {os.path.abspath(args.rollout)} "
        f"({features.num_features} weights, step {meta.get('step')})")
  print(f"data: {args.data}, split {split}, {n} positions of "
        f"{len(np.unique(scores['game']))} games ({n - labelled} passes or "
        f"unscored, counted as misses)")
  record = _print_accuracy(scores, float(scores["nll"].sum()) /
                           max(labelled, 1))
  record = {"policy": "rollout", "split": split, **record,
            "rollout": result_file.portable_path(
                os.path.abspath(args.rollout)),
            "rollout_step": meta.get("step"), "dataset": data_identity}
  return eval_common.write_output(args, record, argv, __file__)


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--data", required=True,
                 help="an .sgf file, a tar(.gz) archive or a folder of them")
  eval_common.add_checkpoint_flags(p, DEFAULT_CHECKPOINT)
  p.add_argument("--split", default=None,
                 choices=("all",) + tuple(data_lib.SPLITS),
                 help="default: test for the run's own data, else all")
  p.add_argument("--min-rank", default=None,
                 help="both players at least this rank ('none' for any; "
                 "default: as in training)")
  p.add_argument("--cache", default=None,
                 help="folder for position caches (default: beside the data "
                 "if writable, else ~/.cache/alphago_jax)")
  p.add_argument("--limit", type=int, default=None,
                 help="evaluate the first N positions only")
  p.add_argument("--min-ply", type=int, default=None,
                 help="leave out positions before this engine move "
                 "(default: as in training)")
  p.add_argument("--batch-size", type=int, default=256)
  p.add_argument("--ensemble", action="store_true",
                 help="mean policy over the 8 symmetries")
  p.add_argument("--rollout", nargs="?", const=DEFAULT_ROLLOUT, default=None,
                 metavar="DIR", help="evaluate the rollout policy p_π in "
                 "DIR (default: the committed one)")
  eval_common.add_cpu_devices_flag(p)
  eval_common.add_output_flag(p)
  argv = sys.argv[1:] if argv is None else list(argv)
  args = p.parse_args(argv)
  eval_common.use_cpu_devices(p, args)
  if args.rollout is not None:
    return _eval_rollout(p, args, argv)
  loaded = eval_common.load_checkpoint(sl.load_policy, args)
  if loaded is None:
    return 1
  ckpt_dir, (model, variables, step) = loaded
  run = ckpt.run_config(args.checkpoint)
  trained = run.get("dataset", {}).get("filters", {})
  min_rank = eval_common.min_rank(args.min_rank, trained)
  same_data = run_dataset.same_source(run.get("data"), args.data)
  split = args.split or ("test" if same_data else "all")
  # A network on the ladder planes reads them from the cache, as in
  # training (reading them in each step would cost far more).
  opened = _open_positions(
      p, args, trained, model.board_size, min_rank, split,
      run.get("dataset", {}),
      ladders=go_features.reads_ladders(model.features))
  if opened is None:
    return 1
  data_identity, positions = opened
  mesh = eval_common.data_mesh(p, args.batch_size)
  scores = sl.policy_scores(variables, model, positions,
                            batch_size=args.batch_size, mesh=mesh,
                            limit=args.limit, ensemble=args.ensemble)
  print(f"checkpoint: {ckpt_dir} step {step} ({model.num_layers} layers x "
        f"{model.filters} filters, {model.num_planes} planes, "
        f"{model.trunk})")
  print(f"data: {args.data}, split {split}, {len(scores['game'])} positions"
        f" of {len(np.unique(scores['game']))} games"
        f"{' (8-symmetry ensemble)' if args.ensemble else ''}")
  record = _print_accuracy(scores, float(np.mean(scores["nll"])))
  record = {"policy": "network", "split": split, "ensemble": args.ensemble,
            **record,
            **eval_common.checkpoint_identity(ckpt_dir, step, variables),
            "dataset": data_identity}
  return eval_common.write_output(args, record, argv, __file__)


if __name__ == "__main__":
  sys.exit(main())
