"""`alphago-jax demo`: what the framework does, in a couple of minutes on a
laptop's CPU, without training anything.

    alphago-jax demo
    alphago-jax demo --games 200 --preset strongest-9x9

Two parts:

1. The published table, MCTS (UCT) against random play on tic-tac-toe
   (`alphago-jax reproduce mcts-vs-random`), at fewer games a row than the
   published 200 (`--games`), and said so: each row still gets its 95%
   intervals and the consistency test against the published figures.
2. A whole 9x9 game of a committed player (`--preset`, by default
   `fast-9x9`: AlphaGo's search over the 9x9 p_σ and v_θ) against GNU Go
   level 10, each board printed with the networks' value estimate and the
   search's most visited moves; then the final count by Tromp-Taylor and by
   GNU Go, and an SVG of the final position with the heat map of the
   player's last search that played on the board. Without GNU Go the player plays itself, and the
   demo says how to install GNU Go.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import List, Optional, Tuple

import jax
import numpy as np

from alphago_jax import engines, viz, zoo
from alphago_jax.cli import parsing
from alphago_jax.cli.reproduce import print_mcts_vs_random
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.evaluation import watch
from alphago_jax.games.sgf import result_string

EXAMPLES = """examples:
  alphago-jax demo
  alphago-jax demo --games 200 --preset strongest-9x9
  alphago-jax demo --moves 20 --svg opening.svg
  alphago-jax demo --moves 0          (the table only)"""

SEED_GAMES = 200  # games a row of the published table


@dataclasses.dataclass(frozen=True, kw_only=True)
class DemoArgs:
  """The published MCTS-vs-random table at a reduced size, then a whole
  9x9 game of a committed player against GNU Go, without training.

  Attributes:
    games: games a row of the table (the published one has 200; 0 skips it).
    table_simulations: the table's UCT budgets (0: a random X).
    preset: the 9x9 search preset that plays (`alphago-jax gtp
      --list-presets`).
    moves: stop the game after this many moves (None: play it to its end;
      0 skips it).
    simulations: the search's simulations a move (default: the preset's).
    gnugo_level: GNU Go's level, 0 to 10.
    svg: where to write the final position with the heat map of the
      player's last search that played on the board (None: nowhere).
    seed: the table's seed and the search's key.
  """
  games: int = 100
  table_simulations: Tuple[int, ...] = (0, 10, 100, 1000)
  preset: str = "fast-9x9"
  moves: Optional[int] = None
  simulations: Optional[int] = None
  gnugo_level: int = 10
  svg: Optional[str] = "demo.svg"
  seed: int = 0


def _check(args: DemoArgs) -> None:
  for name in ("games", "moves", "seed"):
    if getattr(args, name) is not None and getattr(args, name) < 0:
      raise ValueError(f"{parsing.flag(name)} must be >= 0, got "
                       f"{getattr(args, name)}")
  if args.simulations is not None and args.simulations < 1:
    raise ValueError(f"--simulations must be >= 1, got {args.simulations}")
  if not 0 <= args.gnugo_level <= 10:
    raise ValueError(f"--gnugo-level must be 0 to 10, got "
                     f"{args.gnugo_level}")
  if any(n < 0 for n in args.table_simulations):
    raise ValueError(f"--table-simulations must be >= 0, got "
                     f"{args.table_simulations}")
  if args.moves != 0:
    presets = {p.name: p for p in zoo.available_presets()}
    if args.preset not in presets:
      raise ValueError(f"--preset: no preset {args.preset!r}; the presets: "
                       f"{', '.join(presets)}")
    preset = presets[args.preset]
    if not preset.searches or preset.board_size != 9:
      raise ValueError(f"--preset: {args.preset!r} is not a 9x9 search "
                       f"preset")


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
def _player(preset: str, simulations: Optional[int]):
  """The preset's player (compiled on its first move; kept for the
  process)."""
  return zoo.load_player(preset, simulations=simulations)


def _side(colour: int) -> str:
  return "Black" if colour == 0 else "White"


def _value(value: Optional[float]) -> str:
  return "n/a" if value is None else f"{value:+.2f}"


def go_game(args: DemoArgs) -> None:
  """Part 2: a 9x9 game, board by board, its count and its picture."""
  length = "a whole game" if args.moves is None else f"{args.moves} moves"
  print(f"== 2. The committed player {args.preset} plays {length} ==\n",
        flush=True)
  player = _player(args.preset, args.simulations)
  game = player.game
  gnugo = None
  if engines.find_gnugo() is None:
    print("GNU Go is not installed, so the player plays itself. Install "
          "it to see\nit against GNU Go: `apt-get install gnugo` "
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
    ply, searched, moves = None, None, []
    for ply in watch.watch_game(player, gnugo=gnugo, max_plies=args.moves,
                                key=jax.random.key(args.seed)):
      moves.append(ply.action)
      mover = f"{_side(ply.colour)} ({names[ply.colour]})"
      print(f"move {ply.number}: {mover} plays {ply.vertex}"
            f" [{ply.seconds:.2f} s]")
      if ply.visits is not None:
        if 0 <= ply.action < game.num_points:
          searched = ply  # The heat map's search: its last on the board.
        top = np.argsort(-ply.visits, kind="stable")[:3]
        visits = ", ".join(f"{game.action_to_vertex(int(a))} "
                           f"{int(ply.visits[a])}"
                           for a in top if ply.visits[a] > 0)
        print(f"  value for {_side(ply.colour)}: network "
              f"{_value(ply.value)}, search {_value(ply.search_value)}; "
              f"most visited of {int(ply.visits.sum())}: {visits}")
      stones = np.asarray(game.stones(ply.after))
      print(viz.board_text(game.size, stones, last_move=(
          ply.action if 0 <= ply.action < game.num_points else None)))
      print(flush=True)
    if ply is not None:
      _summary(args, game, gnugo, ply, searched, moves, names)
  finally:
    if gnugo is not None:
      gnugo.close()


def _summary(args, game, gnugo, ply, searched, moves, names) -> None:
  """The count by both scorers, the winner and the final picture."""
  ours = watch.score_of(game, ply.after)
  over = bool(ply.after.terminated)
  status = "the game is over" if over else "the game goes on"
  line = (f"After {ply.number} moves ({status}): the board counts "
          f"{result_string(ours)} by Tromp-Taylor (every stone alive)")
  theirs = None
  if gnugo is not None and ply.vertex != "resign":
    theirs = watch.gnugo_score(gnugo)
    line += f"; GNU Go counts {result_string(theirs)} (dead stones removed)"
  print(line + ".")
  if over:
    black = float(ply.after.rewards[0]) > 0
    print(f"{_side(0 if black else 1)} ({names[0 if black else 1]}) wins.")
  if args.svg and searched is not None:
    stones = np.asarray(game.stones(ply.after))
    heat = np.asarray(searched.visits[:game.num_points], np.float64)
    caption = (f"{result_string(ours)} by Tromp-Taylor" + (
        "" if theirs is None else f", {result_string(theirs)} by GNU Go"),
               f"shading: visits of the search at move {searched.number}")
    picture = viz.BoardPicture(
        size=game.size, stones=stones, heat=heat,
        numbers=viz.move_numbers(moves, stones), caption=caption,
        last_move=(ply.action if 0 <= ply.action < game.num_points
                   else None),
        title=f"{args.preset} (Black) against " + (
            "itself" if gnugo is None else f"GNU Go {args.gnugo_level}"))
    write_atomic(args.svg, viz.board_svg(picture))
    print(f"The final position, with the search's heat map: {args.svg}")


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
  if args.moves != 0:
    go_game(args)
  print(f"\nDone in {time.perf_counter() - start:.0f} s. Next: "
        f"`alphago-jax gtp --preset {args.preset}` plays\nit in a Go GUI "
        f"(Sabaki, Lizzie); notebooks/ has walk-throughs with\npictures; "
        f"`alphago-jax train tictactoe --output runs/ttt` trains from "
        f"scratch.")
  return 0 if ok else 1
