"""MCTS (UCT, X, moves first) against a uniformly random O on tic-tac-toe.

Reproduces the seed's table: win/draw/loss per simulation budget with 95%
Wilson intervals, beside the published 200-game figures, and whether ours is
consistent with them (Newcombe 95% interval of each difference contains 0).
The same as `alphago-jax reproduce mcts-vs-random` (the code lives in
`alphago_jax.cli.reproduce`); `tests/test_experiments.py` runs a small
version through `run` and `consistent`.

    python experiments/mcts_vs_random.py [--games 200] [--seed 0]
"""

import argparse

from alphago_jax.cli.reproduce import (OUTCOMES, PUBLISHED,  # noqa: F401
                                       PUBLISHED_GAMES, consistent,
                                       print_mcts_vs_random)
from alphago_jax.cli.reproduce import mcts_vs_random as run  # noqa: F401


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--games", type=int, default=200, help="games per setting")
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--simulations", type=int, nargs="+",
                 default=[0, 10, 100, 1000],
                 help="budgets per move; 0 means a random X")
  args = p.parse_args()
  if args.games < 1:
    p.error(f"--games must be at least 1, got {args.games}")
  if any(n < 0 for n in args.simulations):
    p.error("--simulations must be >= 0 (0 = random play)")
  print_mcts_vs_random(args.games, args.seed, args.simulations)


if __name__ == "__main__":
  main()
