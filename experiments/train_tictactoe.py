"""AlphaZero on tic-tac-toe from random init, judged against the solver.

Trains with the `training.presets.tictactoe` config, logs one JSON line per
iteration to OUTPUT/metrics.jsonl, checkpoints to OUTPUT/checkpoints (a rerun
with the same OUTPUT resumes), and every --eval-every iterations plays the
raw policy (argmax) and the network + search against the perfect solver.
With --stop-when-perfect it stops at the first evaluation where neither
loses a game.

    python experiments/train_tictactoe.py --output runs/ttt [--seed 0]
"""

import argparse
import sys
import time

from alphago_jax import games, training


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--iterations", type=int, default=200)
  p.add_argument("--output", required=True, help="run directory")
  p.add_argument("--policy", choices=("gumbel", "puct"), default="gumbel")
  p.add_argument("--eval-every", type=int, default=10)
  p.add_argument("--eval-games", type=int, default=256,
                 help="games per colour per network agent")
  p.add_argument("--checkpoint-every", type=int, default=10)
  p.add_argument("--stop-when-perfect", action="store_true")
  args = p.parse_args()
  if args.iterations < 0 or args.eval_every < 0 or args.eval_games < 1:
    p.error("--iterations and --eval-every must be >= 0, --eval-games >= 1")

  game = games.make("tictactoe")
  config = training.presets.tictactoe(args.policy)
  evaluator = training.make_solver_evaluator(
      game, config, games_per_colour=args.eval_games, seed=args.seed + 1)

  def perfect(record):
    return ("solver_policy_losses" in record and
            record["solver_policy_losses"] == 0 and
            record["solver_search_losses"] == 0)

  start = time.perf_counter()
  _, history = training.train(
      game, config, seed=args.seed, num_iterations=args.iterations,
      output_dir=args.output, evaluator=evaluator,
      evaluate_every=args.eval_every,
      checkpoint_every=args.checkpoint_every,
      stop_when=perfect if args.stop_when_perfect else None,
      log=lambda line: print(line, flush=True),
      # A progress bar with throughput on a terminal; plain lines in logs.
      progress=sys.stderr.isatty())
  last = history[-1] if history else {}
  print(f"RESULT iterations={last.get('iteration')} "
        f"perfect={perfect(last)} seconds={time.perf_counter() - start:.1f}")


if __name__ == "__main__":
  main()
