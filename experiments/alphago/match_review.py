"""Where the games of a match against GNU Go were decided: before GNU Go's
first pass, or while the board was played out after it
(`evaluation.match_review`).

    python experiments/alphago/match_review.py \
        docs/results/sl-policy-19-vs-gnugo10-seed2 --opening-plies 2

Reads every `.sgf` directly in each folder (not `unplayed/`), replays each
game into GNU Go up to its first pass after the `--opening-plies` random
plies, and compares GNU Go's count there (`final_score`, which judges dead
stones) with the final result. Also measures each side's longest atari
run that was captured (`match_review.lost_atari_run`: a ladder run out
and lost makes a long one), and its atari extensions and how many of
them ran into a working ladder by AlphaGo's ladder-escape plane
(`match_review.into_ladders`). Prints the games decided after that pass
and a summary, writes one row a game to `--csv` (atomically), and ends
with `RESULT games=<n> gnugo_passed=<n> count_is_result=<n>
lost_when_ahead=<n> won_when_behind=<n> lost_with_ladder_run=<n>
gnugo_ladder_runs=<n> atari_extensions=<n> into_ladders=<n>
games_into_ladders=<n> gnugo_atari_extensions=<n> gnugo_into_ladders=<n>
gnugo_games_into_ladders=<n>`, counted for GNU Go's opponent first.
"""

import argparse
import csv
import io
import os
import sys


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("folders", nargs="+", help="folders of match SGFs")
  p.add_argument("--opening-plies", type=int, default=0,
                 help="the match's --random-opening-moves")
  p.add_argument("--level", type=int, default=10,
                 help="the counting GNU Go's level")
  p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                 help="GNU Go processes at once")
  p.add_argument("--csv", help="write one row a game here")
  args = p.parse_args(argv)
  if args.opening_plies < 0:
    p.error("--opening-plies must be >= 0")
  if args.workers < 1:
    p.error("--workers must be >= 1")
  # pylint: disable=import-outside-toplevel
  from alphago_jax.core.atomic_files import write_atomic
  from alphago_jax.evaluation import match_review
  from alphago_jax.games.sgf import SGFError, parse_sgf, result_string
  records = []
  for folder in args.folders:
    if not os.path.isdir(folder):
      print(f"error: {folder}: not a folder", file=sys.stderr)
      return 1
    names = sorted(n for n in os.listdir(folder) if n.endswith(".sgf"))
    if not names:
      print(f"error: {folder}: no .sgf file", file=sys.stderr)
      return 1
    for name in names:
      path = os.path.join(folder, name)
      with open(path, "rb") as f:
        try:
          records.append(parse_sgf(f.read(), source=path))
        except SGFError as e:
          print(f"error: {e}", file=sys.stderr)
          return 1
  try:
    reviews = match_review.review_games(
        records, opening_plies=args.opening_plies, level=args.level,
        workers=args.workers)
  except ValueError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1

  def score(x):
    return "–" if x is None else result_string(x)
  flips = [r for r in reviews if r.decided_after_pass]
  if flips:
    print("| game | GNU Go | its first pass | its count there | result |")
    print("|---|---|---|---|---|")
    for r in flips:
      print(f"| {r.source} | {'BW'[r.gnugo_colour]} | ply {r.first_pass} | "
            f"{score(r.count_at_pass)} | {score(r.result)} |")
  s = match_review.summarize(reviews)
  print(f"{s['games']} games, {s['won']} won by GNU Go's opponent; GNU Go "
        f"passed in {s['gnugo_passed']}, and its count there was the final "
        f"result in {s['count_is_result']}; decided after its pass: "
        f"{s['lost_when_ahead']} lost from ahead, {s['won_when_behind']} "
        f"won from behind; lost with an atari run of "
        f"{match_review.LADDER_RUN}+ moves captured (a ladder): "
        f"{s['lost_with_ladder_run']}, and GNU Go had one in "
        f"{s['gnugo_ladder_runs']}; atari extensions into a working "
        f"ladder: {s['into_ladders']} of {s['atari_extensions']} in "
        f"{s['games_into_ladders']} games, GNU Go's "
        f"{s['gnugo_into_ladders']} of {s['gnugo_atari_extensions']} in "
        f"{s['gnugo_games_into_ladders']}")
  if args.csv:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["source", "gnugo_colour", "plies", "result",
                     "first_pass", "count_at_pass", "lost_atari_run",
                     "gnugo_lost_atari_run", "atari_extensions",
                     "into_ladders", "gnugo_atari_extensions",
                     "gnugo_into_ladders"])
    for r in reviews:
      writer.writerow([r.source, "BW"[r.gnugo_colour], r.plies,
                       score(r.result) if r.result is not None else
                       ("BW"[r.winner] + "+R"),
                       "" if r.first_pass is None else r.first_pass,
                       "" if r.count_at_pass is None else
                       score(r.count_at_pass), r.lost_atari_run,
                       r.gnugo_lost_atari_run, r.atari_extensions,
                       r.into_ladders, r.gnugo_atari_extensions,
                       r.gnugo_into_ladders])
    write_atomic(args.csv, buf.getvalue())
  print("RESULT " + " ".join(f"{k}={v}" for k, v in s.items()
                             if k != "won"))
  return 0


if __name__ == "__main__":
  sys.exit(main())
