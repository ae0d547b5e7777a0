"""`alphago-jax arena A B`: a colour-alternated match between two agents.

    alphago-jax arena uct:100 random --game tictactoe --games-per-colour 100
    alphago-jax arena net:checkpoints/go9 uct:16 --game go9

Agents are specs (`alphago_jax.cli.agents`: random, uct:N, mc:N, solver,
policy:DIR, net:DIR[:N]). Prints A's wins, draws and losses with 95% Wilson
intervals and the Elo difference with its interval, and with `--json` one
JSON line of the same.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from typing import List, Literal, Optional, Tuple

import tyro

from alphago_jax.cli.agents import SpecError, make_agent, make_game

EXAMPLES = """examples:
  alphago-jax arena uct:100 random --game tictactoe --games-per-colour 100
  alphago-jax arena net:checkpoints/go9 uct:16 --game go9
  alphago-jax arena policy:runs/ttt solver --games-per-colour 500"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ArenaArgs:
  """A colour-alternated match between two agents or checkpoints.

  Attributes:
    agents: the two agents, A then B (random, uct:N, mc:N, solver,
      policy:DIR, net:DIR[:N]).
    game: "tictactoe" or "go9".
    games_per_colour: games with A first, and as many with B first.
    max_moves: stop unfinished games after this many moves a side (scored
      as draws); default: play every game out.
    seed: the match's key.
    json: also print the result as one JSON line.
  """
  agents: tyro.conf.Positional[Tuple[str, str]]
  game: Literal["tictactoe", "go9"] = "tictactoe"
  games_per_colour: int = 50
  max_moves: Optional[int] = None
  seed: int = 0
  json: bool = False


def main(argv: List[str]) -> int:
  args = tyro.cli(ArenaArgs, args=argv, prog="alphago-jax arena",
                  description=ArenaArgs.__doc__.splitlines()[0] + "\n\n"
                  + EXAMPLES)
  # pylint: disable=import-outside-toplevel
  import jax
  from alphago_jax import evaluation
  if args.games_per_colour < 1:
    print("error: --games-per-colour must be >= 1", file=sys.stderr)
    return 2
  if args.max_moves is not None and args.max_moves < 1:
    print("error: --max-moves must be >= 1", file=sys.stderr)
    return 2
  try:
    game = make_game(args.game)
    a, b = (make_agent(spec, args.game) for spec in args.agents)
  except SpecError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print(f"{args.agents[0]} vs {args.agents[1]} on {args.game}: "
        f"{2 * args.games_per_colour} games ...", flush=True)
  start = time.perf_counter()
  result = evaluation.match(game, a, b, jax.random.key(args.seed),
                            games_per_colour=args.games_per_colour,
                            max_moves=args.max_moves)
  seconds = time.perf_counter() - start
  print(f"{args.agents[0]}: {result.summary()}")
  print(f"  as first: {result.as_first.wins}/{result.as_first.draws}/"
        f"{result.as_first.losses}, as second: {result.as_second.wins}/"
        f"{result.as_second.draws}/{result.as_second.losses} (w/d/l); "
        f"{seconds:.1f} s, {result.games / seconds:.1f} games/s")
  if args.json:
    lo, hi = result.elo_interval
    print(json.dumps({
        "agents": list(args.agents), "game": args.game,
        "wins": result.wins, "draws": result.draws,
        "losses": result.losses, "score": result.score,
        "elo": result.elo if abs(result.elo) != float("inf") else None,
        "elo_interval": [lo, hi] if all(
            abs(x) != float("inf") for x in (lo, hi)) else None,
        "seed": args.seed, "seconds": seconds}))
  return 0
