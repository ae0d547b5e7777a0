"""`alphago-jax sweep-sgf RUN_DIR...`: the games of sweeps as SGF files.

    alphago-jax sweep-sgf docs/ablations/strength-l10-64 --output games
    alphago-jax sweep-sgf runs/lambda

Reads each run directory's config.json and finished `jobs/*.json` (the
moves are there as GTP vertices) and writes one SGF per game
(`evaluation.ablation_games`, `games.match_sgf`): into `RUN_DIR/games/`,
where a sweep run writes them itself, or with `--output DIR` into
`DIR/<run name>/`. Each game is replayed under our rules first and its
recorded outcome checked against the replay (`--no-check` skips that); a
game that fails stops the conversion, named. Where a job's record keeps
the variants' per-move winrate and root visits, each searched move carries
them as its comment (`winrate 0.54 visits 64`); records without them give
SGFs without move comments.
"""

from __future__ import annotations

import dataclasses
import os
from typing import List, Optional, Tuple

import tyro

from alphago_jax.cli import parsing
from alphago_jax.evaluation import ablation, ablation_games
from alphago_jax.games import match_sgf

EXAMPLES = """examples:
  alphago-jax sweep-sgf docs/ablations/strength-l10-64 --output games
  alphago-jax sweep-sgf runs/lambda runs/c-puct --no-check"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SweepSgfArgs:
  """Write the games of sweep run directories as SGF files.

  Attributes:
    runs: sweep run directories (`alphago-jax sweep --output`, or the
      committed docs/ablations/*).
    output: write into OUTPUT/<run name>/ instead of each RUN_DIR/games/.
    check: replay every game under our rules and check its recorded
      outcome first.
  """
  runs: tyro.conf.Positional[Tuple[str, ...]]
  output: Optional[str] = None
  check: bool = True


def convert(run_dir: str, folder: str, *, check: bool = True
            ) -> Tuple[int, int]:
  """Writes the finished jobs' games of `run_dir` into `folder`; returns
  `(jobs, games)`.

  Raises:
    ValueError: not a sweep run, a damaged job, or (with `check`) a game
      whose replay disagrees with its record, named.
  """
  _, config = ablation.read_config(run_dir)
  jobs = {j.name: j for j in ablation.plan(config)}
  done = ablation.finished_jobs(run_dir, config)
  games = 0
  for name, record in done.items():
    played = ablation_games.job_games(config, jobs[name], record)
    if check:
      try:
        ablation_games.check_games(played, record)
      except ValueError as e:
        raise ValueError(f"{run_dir}: {e}") from None
    match_sgf.write_games(folder, played)
    games += len(played)
  return len(done), games


def main(argv: List[str]) -> int:
  args = parsing.parse(SweepSgfArgs, argv, prog="alphago-jax sweep-sgf",
                       examples=EXAMPLES)
  if not args.runs:
    return parsing.fail("name at least one sweep run directory")
  names = [os.path.basename(os.path.normpath(r)) for r in args.runs]
  if args.output is not None and len(set(names)) != len(names):
    return parsing.fail(f"two runs share a name ({', '.join(names)}); "
                        f"convert them one at a time")
  for run_dir, name in zip(args.runs, names):
    folder = (os.path.join(run_dir, match_sgf.GAMES_DIR)
              if args.output is None else os.path.join(args.output, name))
    try:
      jobs, games = convert(run_dir, folder, check=args.check)
    except ValueError as e:
      return parsing.fail(str(e))
    checked = (", each replayed and its result checked" if args.check
               else "")
    print(f"{run_dir}: {games} games of {jobs} jobs{checked} -> {folder}",
          flush=True)
  return 0
