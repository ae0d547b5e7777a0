"""Builds (or opens) the position cache of a game-record collection and
prints its counts: records read, skipped by reason, duplicates, games and
positions per split, cache size.

    python experiments/alphago/prepare_data.py --data ../shared/data/kgs-6d \
        --cache /tmp/alphago_cache [--min-rank 6d] [--seed 0] [--quick] \
        [--ladders]

Without --cache the cache goes beside the data when that is writable, else
to ~/.cache/alphago_jax (never into the repository). --quick reads a few
hundred records only (a smoke test). --ladders also reads every
position's ladders into the cache (`data.ladders`: the cache that a
network on the paper's 48 planes trains on). The data is read in place.
"""

import argparse
import os
import sys
import time

from alphago_jax import data as data_lib


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--data", required=True,
                 help="an .sgf file, a tar(.gz) archive or a folder of them")
  p.add_argument("--cache", default=None,
                 help="folder for caches (default: beside the data if "
                 "writable, else ~/.cache/alphago_jax)")
  p.add_argument("--min-rank", default="6d",
                 help="both players at least this rank ('6d', '1k', '1p'); "
                 "'none' for any")
  p.add_argument("--size", type=int, default=19, help="board size kept")
  p.add_argument("--allow-handicap", action="store_true")
  p.add_argument("--fractions", type=float, nargs=3,
                 default=list(data_lib.records.DEFAULT_FRACTIONS),
                 metavar=("TRAIN", "VAL", "TEST"))
  p.add_argument("--seed", type=int, default=0, help="the split's seed")
  p.add_argument("--quick", action="store_true",
                 help="read only the first 300 records")
  p.add_argument("--ladders", action="store_true",
                 help="also read the two ladder planes into the cache")
  p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
  p.add_argument("--rebuild", action="store_true",
                 help="build even when a current cache exists")
  args = p.parse_args(argv)
  try:
    filters = data_lib.Filters(
        size=args.size,
        min_rank=None if args.min_rank.lower() == "none" else args.min_rank,
        allow_handicap=args.allow_handicap)
    config = data_lib.DatasetConfig(filters=filters,
                                    fractions=tuple(args.fractions),
                                    seed=args.seed,
                                    limit=300 if args.quick else None,
                                    ladders=args.ladders)
  except ValueError as e:
    p.error(str(e))
  start = time.perf_counter()
  try:
    cache = data_lib.prepare(
        args.data, args.cache, config, workers=args.workers,
        rebuild=args.rebuild,
        log=lambda line: print(line, file=sys.stderr, flush=True))
  except data_lib.DataError as e:  # CacheError included
    print(f"error: {e}", file=sys.stderr)
    return 1
  seconds = time.perf_counter() - start
  print(f"cache: {cache.path}")
  print(cache.report.summary())
  memory = sum(cache.split(s).nbytes for s in data_lib.SPLITS)
  print(f"size: {cache.disk_bytes / 2**20:.1f} MiB on disk, "
        f"{memory / 2**20:.1f} MiB of arrays in memory")
  print(f"built in {cache.manifest['build_seconds']:.1f}s; this call "
        f"{seconds:.1f}s")
  return 0


if __name__ == "__main__":
  sys.exit(main())
