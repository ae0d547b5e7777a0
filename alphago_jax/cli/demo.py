"""`alphago-jax demo`: what the framework does, in a couple of minutes on a
laptop's CPU, without training anything.

    alphago-jax demo
    alphago-jax demo --games 200 --moves 40 --simulations 256

Two parts:

1. The published table, MCTS (UCT) against random play on tic-tac-toe
   (`alphago-jax reproduce mcts-vs-random`), at fewer games a row than the
   published 200 (`--games`), and said so: each row still gets its 95%
   intervals and the consistency test against the published figures.
2. The shipped 9x9 network (`checkpoints/go9`, preset `az-9x9`) with its
   search plays the opening of a game against GNU Go (`--moves` moves),
   each board printed with the network's value estimate and the search's
   most visited moves; without GNU Go it plays itself, and says how to
   install GNU Go.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import List, Tuple

import jax
import numpy as np

from alphago_jax import engines, viz, zoo
from alphago_jax.cli import parsing
from alphago_jax.cli.reproduce import print_mcts_vs_random
from alphago_jax.evaluation import watch
from alphago_jax.games.sgf import result_string

EXAMPLES = """examples:
  alphago-jax demo
  alphago-jax demo --games 200 --moves 40 --simulations 256
  alphago-jax demo --moves 0          (the table only)"""

SEED_GAMES = 200  # games a row of the published table


@dataclasses.dataclass(frozen=True, kw_only=True)
class DemoArgs:
  """The published MCTS-vs-random table at a reduced size, then the shipped
  9x9 network against GNU Go, without training.

  Attributes:
    games: games a row of the table (the published one has 200; 0 skips it).
    table_simulations: the table's UCT budgets (0: a random X).
    moves: moves of the 9x9 game (0 skips it).
    simulations: the network's search simulations a move.
    gnugo_level: GNU Go's level, 0 to 10.
    seed: the table's seed and the search's key.
  """
  games: int = 100
  table_simulations: Tuple[int, ...] = (0, 10, 100, 1000)
  moves: int = 16
  simulations: int = 128
  gnugo_level: int = 1
  seed: int = 0


def _check(args: DemoArgs) -> None:
  for name in ("games", "moves", "seed"):
    if getattr(args, name) < 0:
      raise ValueError(f"{parsing.flag(name)} must be >= 0, got "
                       f"{getattr(args, name)}")
  if args.simulations < 1:
    raise ValueError(f"--simulations must be >= 1, got {args.simulations}")
  if not 0 <= args.gnugo_level <= 10:
    raise ValueError(f"--gnugo-level must be 0 to 10, got "
                     f"{args.gnugo_level}")
  if any(n < 0 for n in args.table_simulations):
    raise ValueError(f"--table-simulations must be >= 0, got "
                     f"{args.table_simulations}")


def table(args: DemoArgs) -> bool:
  """Part 1; True when every row agrees with the published one."""
  print(f"== 1. The published table, at {args.games} games a row instead of "
        f"its {SEED_GAMES} ==\n")
  print("UCT with random rollouts plays X (first) against a uniformly "
        "random O on\ntic-tac-toe; each cell is a rate with its 95% "
        "interval, and 'consistent'\ntests it against the published "
        f"{SEED_GAMES}-game row. For the full table:\n"
        "`alphago-jax reproduce mcts-vs-random` (about a minute).\n",
        flush=True)
  start = time.perf_counter()
  ok = print_mcts_vs_random(args.games, args.seed, args.table_simulations)
  print(f"\n({time.perf_counter() - start:.0f} s; every row consistent "
        f"with the published one: {'yes' if ok else 'NO'})\n", flush=True)
  return ok


@functools.lru_cache(maxsize=2)
def _player(simulations: int):
  """The shipped network with its search (compiled on its first move; kept
  for the process)."""
  return zoo.load_player("az-9x9", simulations=simulations)


def _side(colour: int) -> str:
  return "Black" if colour == 0 else "White"


def go_game(args: DemoArgs) -> None:
  """Part 2: the opening of a 9x9 game, board by board."""


  print(f"== 2. The shipped 9x9 network plays {args.moves} moves ==\n",
        flush=True)
  player = _player(args.simulations)
  game = player.game
  gnugo = None
  if engines.find_gnugo() is None:
    print("GNU Go is not installed, so the network plays itself. Install "
          "it to see\nthe network against GNU Go: `apt-get install gnugo` "
          "(Debian/Ubuntu), `brew\ninstall gnu-go` (macOS), or set $GNUGO "
          "to its binary.\n")
    names = (f"network {player.name}",) * 2
  else:
    gnugo = engines.GnuGoPlayer(game, level=args.gnugo_level, seed=args.seed,
                            extra_args=("--capture-all-dead",))
    names = (f"network {player.name}", f"GNU Go level {args.gnugo_level}")
  print(f"Black: {names[0]} ({player.description.split(': ', 1)[-1]}); "
        f"White: {names[1]}. 9x9, komi {game.komi:g}, area scoring.\n"
        f"Values are the mover's, from -1 (sure loss) to +1 (sure win). "
        f"The first move\ncompiles the search (some seconds).\n",
        flush=True)
  try:
    ply = None
    for ply in watch.watch_game(player, gnugo=gnugo, max_plies=args.moves,
                              key=jax.random.key(args.seed)):
      mover = f"{_side(ply.colour)} ({names[ply.colour]})"
      print(f"move {ply.number}: {mover} plays {ply.vertex}"
            f" [{ply.seconds:.2f} s]")
      if ply.visits is not None:
        top = np.argsort(-ply.visits, kind="stable")[:3]
        visits = ", ".join(f"{game.action_to_vertex(int(a))} "
                           f"{int(ply.visits[a])}"
                           for a in top if ply.visits[a] > 0)
        print(f"  value for {_side(ply.colour)}: network {ply.value:+.2f}, "
              f"search {ply.search_value:+.2f}; most visited of "
              f"{int(ply.visits.sum())}: {visits}")
      stones = np.asarray(game.stones(ply.after))
      print(viz.board_text(game.size, stones, last_move=(
          ply.action if 0 <= ply.action < game.num_points else None)))
      print(flush=True)
    if ply is not None:
      ours = watch.score_of(game, ply.after)
      status = ("the game is over" if bool(ply.after.terminated)
                else "the game goes on")
      print(f"After {ply.number} moves ({status}): the board counts "
            f"{result_string(ours)} by Tromp-Taylor (every stone alive)",
            end="")
      if gnugo is not None:
        print(f"; GNU Go's estimate: {result_string(watch.gnugo_score(gnugo))}"
              ".")
      else:
        print(".")
  finally:
    if gnugo is not None:
      gnugo.close()


def main(argv: List[str]) -> int:
  """`alphago-jax demo ARGS`; returns the exit status."""
  args = parsing.parse(
      DemoArgs, argv, prog="alphago-jax demo", examples=EXAMPLES,
      summary=" ".join(DemoArgs.__doc__.split("\n\n")[0].split()))
  try:
    _check(args)
  except ValueError as e:
    return parsing.fail(str(e))
  start = time.perf_counter()
  ok = table(args) if args.games else True
  if args.moves:
    go_game(args)
  print(f"\nDone in {time.perf_counter() - start:.0f} s. Next: "
        f"`alphago-jax gtp --preset az-9x9` plays\nthis network in a Go GUI "
        f"(Sabaki, Lizzie); notebooks/ has walk-throughs with\npictures; "
        f"`alphago-jax train tictactoe --output runs/ttt` trains from "
        f"scratch.")
  return 0 if ok else 1
