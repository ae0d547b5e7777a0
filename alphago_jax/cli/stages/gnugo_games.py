"""Generates 9x9 expert games: GNU Go playing itself, in chunk archives.

Resumes: run the same command again and it counts the archives in
`--output`, reuses games already played for the unfinished chunks and
continues with new seeds. `--games` is a total (rounded up to whole
chunks); without it the command runs until killed. `--summary` only prints
the totals of what exists. Settings are pinned by the folder's
`config.json`: other settings raise an error naming them; command.json
records the options of the first call. Needs GNU Go (`gnugo` on PATH,
`$GNUGO`, or /usr/games/gnugo).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from typing import Annotated, Optional, Tuple

import tyro

from alphago_jax import engines
from alphago_jax.cli import stages
from alphago_jax.data import gnugo_games

STAGE = "gnugo-games"
EXAMPLES = """examples:
  alphago-jax train gnugo-games --output data/gnugo9 --games 10000 --levels 10 --opening-moves 4
  alphago-jax train gnugo-games --output data/gnugo9b --games 1200 --levels 1 5 --workers 2
  alphago-jax train gnugo-games --output data/gnugo9 --summary"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options:
  """What a folder of GNU Go games holds (recorded in command.json).

  Attributes:
    games: total games wanted (default: until killed).
    levels: GNU Go levels; the game with seed s plays at
      levels[s % len(levels)].
    size: board size.
    komi: komi (area scoring).
    opening_moves: uniformly random legal moves before GNU Go plays.
    chunk_size: games per archive.
    base_seed: the first seed (>= 1: GNU Go takes seed 0 as random).
    workers: chunks built in parallel, one process each.
    move_timeout: seconds for one GTP answer before GNU Go counts as hung.
    quiet: log chunks only, not every game.
  """
  games: Optional[int] = None
  levels: Tuple[int, ...] = (10,)
  size: int = 9
  komi: float = 7.5
  opening_moves: int = 4
  chunk_size: int = 100
  base_seed: int = 1
  workers: int = 1
  move_timeout: float = 120.0
  quiet: bool = False

  def __post_init__(self):
    stages.check_optional_ints(self, {"games": 1})
    if not self.levels:
      raise ValueError("levels must name at least one GNU Go level")
    for level in self.levels:
      stages.check_int("levels", level, 0)
    stages.check_int("size", self.size, 5)
    stages.check_int("opening_moves", self.opening_moves, 0)
    stages.check_int("chunk_size", self.chunk_size, 1)
    stages.check_int("base_seed", self.base_seed, 1)
    stages.check_int("workers", self.workers, 1)
    stages.check_positive("move_timeout", self.move_timeout)

  def resolved(self) -> "Options":
    return self  # Every default is a value already.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command:
  """A call of the stage.

  Attributes:
    output: the folder of chunk archives.
    summary: print the totals of the existing archives and exit.
  """
  output: str
  summary: bool = False
  options: Annotated[Options, tyro.conf.arg(name="")]


def run(command: Command) -> int:
  """Plays (or continues) the games of `command`; the exit status."""
  options, output = command.options.resolved(), command.output
  if command.summary:
    print(json.dumps(gnugo_games.folder_summary(output), indent=1))
    return 0
  if engines.find_gnugo() is None:
    print("error: GNU Go not found (install it, e.g. `apt-get install "
          "gnugo`, or set $GNUGO)", file=sys.stderr)
    return 1
  try:
    config = gnugo_games.GenerationConfig(
        levels=tuple(options.levels), size=options.size, komi=options.komi,
        opening_moves=options.opening_moves,
        games_per_chunk=options.chunk_size, base_seed=options.base_seed,
        move_timeout=options.move_timeout)
  except ValueError as e:
    return stages.fail(str(e))

  def log(line):
    if not (options.quiet and line.startswith("chunk ") and " seed " in line):
      print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", file=sys.stderr,
            flush=True)

  stages.record(output, STAGE, options)
  try:
    gnugo_games.generate(output, config, games=options.games,
                         workers=options.workers, log=log)
  except (gnugo_games.GenerationError, ValueError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  except KeyboardInterrupt:
    print("interrupted; run the same command to resume", file=sys.stderr)
    return 130
  print(json.dumps(gnugo_games.folder_summary(output), indent=1))
  return 0


stages.register(__name__)
