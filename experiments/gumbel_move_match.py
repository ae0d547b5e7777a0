"""Head to head: one network's Gumbel search playing the sequential-halving
winner (`gumbel_move="halving"`) against the same search playing the
argmax of its improved policy (`"argmax"`).

    python experiments/gumbel_move_match.py --network checkpoints/go9 \
        --simulations 64 --games-per-colour 100 --seed 0 \
        --output docs/results/gumbel-move-go9.json

Both sides search with evaluation settings (no Gumbel noise, no sampling),
so from one position both are deterministic; the first
`--random-opening-plies` plies of every game are uniformly random (each
seat's own key) to make the games differ. Each rule plays Black in half
the games. Writes, atomically, the halving side's wins by colour, its score
with a 95% Wilson interval, the settings, the network's iteration and the
commit, and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax import play, search
from alphago_jax.cli.agents import load_network, make_game
from alphago_jax.core import rundir
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.core.stats import wilson_interval

RULES = ("halving", "argmax")


def with_random_opening(agent, plies: int):
  """`agent`, but uniformly random for the game's first `plies` plies."""
  def opened(states, key):
    random_key, search_key = jax.random.split(key)
    random = search.random_agent(states, random_key)
    return jnp.where(states.step_count < plies, random,
                     agent(states, search_key))
  return opened


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--network", default="checkpoints/go9")
  parser.add_argument("--game", default="go9")
  parser.add_argument("--simulations", type=int, default=64)
  parser.add_argument("--games-per-colour", type=int, default=100)
  parser.add_argument("--random-opening-plies", type=int, default=4)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--output", required=True)
  args = parser.parse_args(argv)
  if args.games_per_colour < 1 or args.simulations < 1 or (
      args.random_opening_plies < 0):
    parser.error("--games-per-colour and --simulations must be >= 1, "
                 "--random-opening-plies >= 0")

  game = make_game(args.game)
  config, evaluate, variables, iteration = load_network(args.network,
                                                        args.game)
  agents = {}
  for rule in RULES:
    searched = dataclasses.replace(
        config.search, policy="gumbel", num_simulations=args.simulations,
        gumbel_move=rule)
    agents[rule] = with_random_opening(
        search.network_agent(game, evaluate, variables, searched),
        args.random_opening_plies)

  black_key, white_key = jax.random.split(jax.random.key(args.seed))
  start = time.perf_counter()
  wins = {}
  for colour, seats, key in (("black", ("halving", "argmax"), black_key),
                             ("white", ("argmax", "halving"), white_key)):
    results = play.play(game, (agents[seats[0]], agents[seats[1]]), key,
                        num_games=args.games_per_colour)
    seat = seats.index("halving")
    returns = np.asarray(jax.device_get(results.returns))[:, seat]
    if not np.asarray(results.terminated).all() or (returns == 0).any():
      raise RuntimeError("a game ended unfinished or drawn")
    wins[colour] = int((returns > 0).sum())
  seconds = time.perf_counter() - start

  games = 2 * args.games_per_colour
  total = wins["black"] + wins["white"]
  low, high = wilson_interval(total, games)
  result = {
      "command": "python experiments/gumbel_move_match.py " + " ".join(
          sys.argv[1:] if argv is None else argv),
      "commit": rundir.git_commit(), "network": args.network,
      "network_iteration": int(iteration), "game": args.game,
      "simulations": args.simulations,
      "random_opening_plies": args.random_opening_plies,
      "seed": args.seed, "games": games,
      "games_per_colour": args.games_per_colour,
      "halving_wins_as_black": wins["black"],
      "halving_wins_as_white": wins["white"],
      "halving_wins": total, "halving_score": total / games,
      "halving_score_interval": [low, high], "seconds": seconds,
  }
  write_atomic(args.output, json.dumps(result, indent=1) + "\n",
               make_dirs=True)
  print("| halving as | games | halving wins |\n|---|---|---|")
  for colour in ("black", "white"):
    print(f"| {colour} | {args.games_per_colour} | {wins[colour]} |")
  print(f"| both | {games} | {total} ({100 * total / games:.1f}% "
        f"[{100 * low:.1f}, {100 * high:.1f}]) |")
  return 0


if __name__ == "__main__":
  sys.exit(main())
