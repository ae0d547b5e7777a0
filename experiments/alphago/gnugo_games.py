"""Generates 9x9 expert games: GNU Go playing itself, in chunk archives.

    python experiments/alphago/gnugo_games.py --output data/gnugo9 \
        --games 10000 --levels 10 --opening-moves 4 --workers 1

Resumes: run the same command again and it counts the archives in
`--output`, reuses games already played for the unfinished chunks and
continues with new seeds. `--games` is a total (rounded up to whole
chunks); without it the command runs until killed. `--summary` only prints
the totals of what exists. Settings are pinned by the folder's
`config.json`: other settings raise an error naming them. Needs GNU Go
(`gnugo` on PATH, `$GNUGO`, or /usr/games/gnugo).
"""

import argparse
import json
import os
import sys
import time

from alphago_jax.cli import rundir
from alphago_jax.data import gnugo_games


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--output", required=True, help="folder of chunk archives")
  p.add_argument("--games", type=int, default=None,
                 help="total games wanted (default: until killed)")
  p.add_argument("--levels", type=int, nargs="+", default=[10],
                 help="GNU Go levels; game with seed s plays at "
                 "levels[s %% len(levels)]")
  p.add_argument("--size", type=int, default=9)
  p.add_argument("--komi", type=float, default=7.5)
  p.add_argument("--opening-moves", type=int, default=4,
                 help="uniformly random legal moves before GNU Go plays")
  p.add_argument("--chunk-size", type=int, default=100,
                 help="games per archive")
  p.add_argument("--base-seed", type=int, default=1)
  p.add_argument("--workers", type=int, default=1,
                 help="chunks built in parallel, one process each")
  p.add_argument("--move-timeout", type=float, default=120.0,
                 help="seconds for one GTP answer before GNU Go counts as "
                 "hung")
  p.add_argument("--quiet", action="store_true",
                 help="log chunks only, not every game")
  p.add_argument("--summary", action="store_true",
                 help="print the totals of the existing archives and exit")
  args = p.parse_args(argv)
  if args.summary:
    print(json.dumps(gnugo_games.folder_summary(args.output), indent=1))
    return 0
  if gnugo_games.find_gnugo() is None:
    print("error: GNU Go not found (install it, e.g. `apt-get install "
          "gnugo`, or set $GNUGO)", file=sys.stderr)
    return 1
  try:
    config = gnugo_games.GenerationConfig(
        levels=tuple(args.levels), size=args.size, komi=args.komi,
        opening_moves=args.opening_moves, games_per_chunk=args.chunk_size,
        base_seed=args.base_seed, move_timeout=args.move_timeout)
  except ValueError as e:
    p.error(str(e))

  def log(line):
    if not (args.quiet and line.startswith("chunk ") and " seed " in line):
      print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", file=sys.stderr,
            flush=True)

  rundir.write_command(args.output, script=os.path.basename(__file__),
                       argv=sys.argv[1:] if argv is None else argv)
  try:
    gnugo_games.generate(args.output, config, games=args.games,
                         workers=args.workers, log=log)
  except (gnugo_games.GenerationError, ValueError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  except KeyboardInterrupt:
    print("interrupted; run the same command to resume", file=sys.stderr)
    return 130
  print(json.dumps(gnugo_games.folder_summary(args.output), indent=1))
  return 0


if __name__ == "__main__":
  sys.exit(main())
