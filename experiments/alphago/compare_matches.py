"""Two players' records against the same opponent, from two ablation run
directories (`alphago-jax sweep`), and the difference of their win rates.

    python experiments/alphago/compare_matches.py \
        docs/ablations/gumbel-l10-64-seed5 docs/ablations/puct-l10-64-seed5 \
        --opponent gnugo-10 --output docs/results/gumbel-9x9.json

Each run must hold one variant with finished games against `--opponent`
(its `results.csv`). Writes, atomically, each player's wins, draws, games
and 95% Wilson interval, and the difference of the win rates (first minus
second) with its 95% interval from the normal approximation of two
independent proportions; prints the same as a Markdown table.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys

from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.core.stats import Z95, wilson_interval


def record(run_dir: str, opponent: str) -> dict:
  """The one variant's record against `opponent` in `run_dir`."""
  path = os.path.join(run_dir, "results.csv")
  with open(path, newline="", encoding="utf-8") as f:
    rows = [r for r in csv.DictReader(f) if r["opponent"] == opponent]
  if len(rows) != 1:
    raise ValueError(f"{path}: expected one row against {opponent!r}, "
                     f"found {len(rows)}")
  row = rows[0]
  wins, games = int(row["wins"]), int(row["games"])
  low, high = wilson_interval(wins, games)
  return {"run": run_dir, "player": row["player"], "wins": wins,
          "draws": int(row["draws"]), "games": games,
          "win_rate": wins / games, "interval": [low, high]}


def difference(a: dict, b: dict) -> dict:
  """a's win rate minus b's, with its 95% normal-approximation interval."""
  pa, pb = a["win_rate"], b["win_rate"]
  half = Z95 * math.sqrt(pa * (1 - pa) / a["games"]
                         + pb * (1 - pb) / b["games"])
  d = pa - pb
  return {"difference": d, "interval": [d - half, d + half],
          "distinguished": not d - half <= 0 <= d + half}


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("first")
  parser.add_argument("second")
  parser.add_argument("--opponent", default="gnugo-10")
  parser.add_argument("--output", required=True)
  args = parser.parse_args(argv)
  try:
    a, b = record(args.first, args.opponent), record(args.second,
                                                     args.opponent)
  except (OSError, ValueError, KeyError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  result = {"opponent": args.opponent, "first": a, "second": b,
            "first_minus_second": difference(a, b)}
  write_atomic(args.output, json.dumps(result, indent=1) + "\n")
  print("| run | wins | games | win rate [95% CI] |\n|---|---|---|---|")
  for r in (a, b):
    lo, hi = r["interval"]
    print(f"| {r['run']} | {r['wins']} | {r['games']} | "
          f"{100 * r['win_rate']:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}] |")
  d = result["first_minus_second"]
  print(f"difference: {100 * d['difference']:+.0f} points "
        f"[{100 * d['interval'][0]:+.0f}, {100 * d['interval'][1]:+.0f}]")
  return 0


if __name__ == "__main__":
  sys.exit(main())
