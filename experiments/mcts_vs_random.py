"""MCTS (UCT, X, moves first) against a uniformly random O on tic-tac-toe.

Reproduces the seed's table: win/draw/loss per simulation budget with 95%
Wilson intervals, beside the published 200-game figures, and whether ours is
consistent with them (Newcombe 95% interval of each difference contains 0).
`tests/test_experiments.py` runs a small version through `run` and
`consistent`.

    python experiments/mcts_vs_random.py [--games 200] [--seed 0]
"""

import argparse
import time

import jax

from alphago_jax import evaluation, games, search
from alphago_jax.evaluation.stats import Z95

PUBLISHED = {0: (58.5, 12.5, 29.0), 10: (87.5, 5.5, 7.0),
             100: (97.5, 2.5, 0.0), 1000: (98.0, 2.0, 0.0)}
PUBLISHED_GAMES = 200
OUTCOMES = ("wins", "draws", "losses")


def consistent(n, rec, z=Z95):
  """Whether `rec` agrees with the published row for `n` simulations.

  A two-sample test per outcome: Newcombe's interval (coverage set by z) of
  our rate minus the published one (200 games) must contain 0.
  """
  for i, outcome in enumerate(OUTCOMES):
    k_pub = round(PUBLISHED[n][i] * PUBLISHED_GAMES / 100)
    lo, hi = evaluation.difference_interval(
        getattr(rec, outcome), rec.games, k_pub, PUBLISHED_GAMES, z)
    if not lo <= 0 <= hi:
      return False
  return True


def run(num_games, seed=0, simulations=(0, 10, 100, 1000)):
  """Yields (simulations, record of X, seconds) per budget, in order.

  Budget 0 is a random X. Each row's key is split off one seed's chain.
  """
  game = games.make("tictactoe")
  key = jax.random.key(seed)
  for n in simulations:
    key, sub = jax.random.split(key)
    x = (search.random_agent if n == 0 else
         search.uct_agent(game, search.UCTConfig(num_simulations=n)))
    t = time.perf_counter()
    rec = evaluation.record(evaluation.play(
        game, (x, search.random_agent), sub, num_games=num_games))
    yield n, rec, time.perf_counter() - t


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

  print(f"UCT (X, first) vs random (O): {args.games} games per setting\n")
  print("| simulations/move | win | draw | loss | published (w/d/l) "
        "| consistent | seconds |")
  print("|---|---|---|---|---|---|---|")
  for n, rec, seconds in run(args.games, args.seed, args.simulations):
    cells = []
    for outcome in OUTCOMES:
      lo, hi = rec.interval(outcome)
      cells.append(f"{100 * rec.rate(outcome):.1f}% "
                   f"[{100 * lo:.1f}, {100 * hi:.1f}]")
    if n in PUBLISHED:
      pub = "/".join(f"{v:.1f}%" for v in PUBLISHED[n])
      verdict = "yes" if consistent(n, rec) else "NO"
    else:
      pub = verdict = "-"
    label = "0 (pure random)" if n == 0 else str(n)
    print(f"| {label} | {' | '.join(cells)} | {pub} | {verdict} "
          f"| {seconds:.1f} |", flush=True)


if __name__ == "__main__":
  main()
