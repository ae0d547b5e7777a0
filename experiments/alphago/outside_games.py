"""Writes KGS games that the 6-dan training filter never admits, for an
independent accuracy check of a policy trained on the filtered set.

Kept: 19×19 games without handicap in which one player is 7 dan or more
and the other below 6 dan (so `Filters(min_rank="6d")` rejects them), whose
moves equal no game the filter admits (duplicates are copied across
archives). The selection is deterministic: records ordered by their
content digest, the first --count taken.

    python experiments/alphago/outside_games.py --data ../shared/data/kgs-6d \
        --output /tmp/kgs-outside --count 400
    python experiments/alphago/eval_policy.py --data /tmp/kgs-outside \
        --min-rank none --split all --checkpoint checkpoints/sl_policy
"""

import argparse
import os
import sys

from alphago_jax.data import records as rec
from alphago_jax.games.sgf import GameRecord, to_sgf


def is_outside(record: GameRecord) -> bool:
  """One player 7 dan or more, the other below 6 dan, no handicap, 19×19."""
  if rec.filter_reason(record, rec.Filters(min_rank=None)) is not None:
    return False
  ranks = [rec.rank_value(r) for r in (record.black_rank, record.white_rank)]
  if any(r is None for r in ranks):
    return False
  return max(ranks) >= rec.rank_value("7d") and min(ranks) < rec.rank_value(
      "6d")


def select(path: str, count: int):
  """`(selected records, number outside the filter, number admitted)`."""
  admitted, outside = set(), {}
  training = rec.Filters()
  for record in rec.iter_records(path):
    key = rec.game_key(record)
    if rec.filter_reason(record, training) is None:
      admitted.add(key)
    elif is_outside(record):
      outside.setdefault(key, record)
  keys = sorted(k for k in outside if k not in admitted)
  return [outside[k] for k in keys[:count]], len(outside), len(admitted)


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--data", required=True,
                 help="the KGS archives (a folder or one archive)")
  p.add_argument("--output", required=True, help="folder for the .sgf files")
  p.add_argument("--count", type=int, default=400)
  args = p.parse_args(argv)
  if args.count < 1:
    p.error("--count must be at least 1")
  chosen, n_outside, n_admitted = select(args.data, args.count)
  if not chosen:
    print(f"error: no game outside the filter in {args.data}",
          file=sys.stderr)
    return 1
  os.makedirs(args.output, exist_ok=True)
  for i, record in enumerate(chosen):
    with open(os.path.join(args.output, f"outside-{i:04d}.sgf"), "wb") as f:
      f.write(to_sgf(record))
  print(f"{len(chosen)} of {n_outside} distinct games outside the filter "
        f"({n_admitted} admitted) written to {args.output}")
  print(f"RESULT games={len(chosen)} outside={n_outside}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
