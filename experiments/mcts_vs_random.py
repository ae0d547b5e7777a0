"""MCTS (UCT, X, moves first) against a uniformly random O on tic-tac-toe.

Reproduces the seed's table: win/draw/loss per simulation budget with 95%
Wilson intervals, beside the published 200-game figures, and whether ours is
consistent with them (Newcombe 95% interval of each difference contains 0).

    python experiments/mcts_vs_random.py [--games 200] [--seed 0]
"""

import argparse
import time

import jax

from alphago_jax import evaluation, games, search

PUBLISHED = {0: (58.5, 12.5, 29.0), 10: (87.5, 5.5, 7.0),
             100: (97.5, 2.5, 0.0), 1000: (98.0, 2.0, 0.0)}
PUBLISHED_GAMES = 200


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

  game = games.make("tictactoe")
  key = jax.random.key(args.seed)
  print(f"UCT (X, first) vs random (O): {args.games} games per setting\n")
  print("| simulations/move | win | draw | loss | published (w/d/l) "
        "| consistent | seconds |")
  print("|---|---|---|---|---|---|---|")
  for n in args.simulations:
    key, sub = jax.random.split(key)
    x = (search.random_agent if n == 0 else
         search.uct_agent(game, search.UCTConfig(num_simulations=n)))
    t = time.perf_counter()
    rec = evaluation.record(evaluation.play(
        game, (x, search.random_agent), sub, num_games=args.games))
    seconds = time.perf_counter() - t
    cells, consistent = [], True
    for i, outcome in enumerate(("wins", "draws", "losses")):
      lo, hi = rec.interval(outcome)
      cells.append(f"{100 * rec.rate(outcome):.1f}% "
                   f"[{100 * lo:.1f}, {100 * hi:.1f}]")
      if n in PUBLISHED:
        k_pub = round(PUBLISHED[n][i] * PUBLISHED_GAMES / 100)
        dlo, dhi = evaluation.difference_interval(
            getattr(rec, outcome), rec.games, k_pub, PUBLISHED_GAMES)
        consistent &= dlo <= 0 <= dhi
    pub = ("/".join(f"{v:.1f}%" for v in PUBLISHED[n]) if n in PUBLISHED
           else "-")
    verdict = ("yes" if consistent else "NO") if n in PUBLISHED else "-"
    label = "0 (pure random)" if n == 0 else str(n)
    print(f"| {label} | {' | '.join(cells)} | {pub} | {verdict} "
          f"| {seconds:.1f} |", flush=True)


if __name__ == "__main__":
  main()
