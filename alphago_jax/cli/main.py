"""`alphago-jax COMMAND ARGS`: dispatch to the subcommands.

Each subcommand module has `main(argv) -> int` and is imported only when
used, so `alphago-jax --help` and `alphago-jax gtp` start quickly.
"""

from __future__ import annotations

import importlib
import sys
from typing import List, Optional

from alphago_jax.core import rundir

# name -> (module, one line of help)
COMMANDS = {
    "demo": ("alphago_jax.cli.demo",
             "no training needed: the published table at a reduced size, then "
             "a whole 9x9 game of the strongest committed player against "
             "GNU Go level 10, in about two minutes"),
    "train": ("alphago_jax.cli.train",
              "train a network in a run directory (AlphaZero on a game of "
              "training.game_specs, or a stage of AlphaGo's of "
              "cli.stages: `alphago-jax train --help` names them); repeat "
              "or resume a run"),
    "selfplay": ("alphago_jax.cli.selfplay",
                 "play games of a network (or any agent) against itself and "
                 "write them as SGF / JSON lines"),
    "arena": ("alphago_jax.cli.arena",
              "a colour-alternated match between two agents or checkpoints"),
    "gtp": ("alphago_jax.gtp.engine",
            "a GTP engine on stdin/stdout (for GUIs and GNU Go matches)"),
    "show": ("alphago_jax.cli.show",
             "draw a position (SGF + move number or a move list) with the "
             "network's policy and search visits as SVG/PNG; plot metrics"),
    "reproduce": ("alphago_jax.cli.reproduce",
                  "rerun a published table or a result: mcts-vs-random, "
                  "tictactoe-perfect, go9-curve, lambda, c-puct"),
    "sweep": ("alphago_jax.cli.sweep",
              "ablate AlphaGo's search parameters (presets lambda, c-puct, "
              "or a grid) in a round robin and against GNU Go, with Elo"),
    "sweep-sgf": ("alphago_jax.cli.sweep_sgf",
                  "write the games of sweep runs (such as docs/ablations/*) "
                  "as SGF files, each replayed and checked first"),
}

USAGE = """usage: alphago-jax COMMAND [ARGS...]   (alphago-jax COMMAND --help)

commands:
{commands}

examples:
  alphago-jax demo
  alphago-jax train tictactoe --output runs/ttt --stop-when-perfect
  alphago-jax train --resume runs/ttt
  alphago-jax selfplay --agent uct:100 --game tictactoe --output games/ttt
  alphago-jax arena uct:100 random --game tictactoe --games-per-colour 50
  alphago-jax gtp
  alphago-jax show --moves D4 E5 --output board.svg
  alphago-jax reproduce mcts-vs-random
  alphago-jax sweep lambda --output runs/lambda
  alphago-jax sweep-sgf docs/ablations/strength-l10-64 --output games
"""


def usage() -> str:
  width = max(len(n) for n in COMMANDS)
  return USAGE.format(commands="\n".join(
      f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()))


def main(argv: Optional[List[str]] = None) -> int:
  """The `alphago-jax` entry point; returns the exit status."""
  argv = list(sys.argv[1:] if argv is None else argv)
  if not argv or argv[0] in ("-h", "--help", "help"):
    print(usage())
    return 0 if argv else 2
  if argv[0] in ("-V", "--version"):
    print(f"alphago-jax {rundir.package_version()}")
    return 0
  name, rest = argv[0], argv[1:]
  if name not in COMMANDS:
    print(f"alphago-jax: unknown command {name!r}\n\n{usage()}",
          file=sys.stderr)
    return 2
  module_name = COMMANDS[name][0]
  try:
    module = importlib.import_module(module_name)
  except ModuleNotFoundError as e:
    if e.name is not None and module_name.startswith(e.name):
      print(f"alphago-jax {name}: not available in this installation "
            f"({module_name} is missing)", file=sys.stderr)
      return 2
    raise
  try:
    status = module.main(rest)
  except SystemExit as e:  # tyro and argparse exit on --help and errors
    code = e.code
    return code if isinstance(code, int) else (0 if code is None else 2)
  return int(status or 0)
