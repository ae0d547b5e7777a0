"""AlphaZero on tic-tac-toe from random init, judged against the solver.

Trains with the `training.presets.tictactoe` config, logs one JSON line per
iteration to OUTPUT/metrics.jsonl, checkpoints to OUTPUT/checkpoints (a rerun
with the same OUTPUT resumes), and every --eval-every iterations plays the
raw policy (argmax) and the network + search against the perfect solver.
With --stop-when-perfect it stops at the first evaluation where neither
loses a game. OUTPUT/config.json records the whole run: `alphago-jax train
--from-run OUTPUT --output NEW` repeats it (this script is a thin wrapper
over `alphago-jax train tictactoe`).

    python experiments/train_tictactoe.py --output runs/ttt [--seed 0]
"""

import argparse
import dataclasses
import sys
import time

from alphago_jax.cli.configs import alphazero_defaults
from alphago_jax.cli.stages.alphazero import run_alphazero
from alphago_jax.training import presets


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
  try:
    run = dataclasses.replace(
        alphazero_defaults("tictactoe"),
        train=presets.tictactoe(args.policy), seed=args.seed,
        iterations=args.iterations, eval_every=args.eval_every,
        eval_games=args.eval_games, checkpoint_every=args.checkpoint_every,
        stop_when_perfect=args.stop_when_perfect)
  except ValueError as e:
    p.error(str(e))
  start = time.perf_counter()
  history = run_alphazero(run, args.output, progress=sys.stderr.isatty())
  last = history[-1] if history else {}
  perfect = ("solver_policy_losses" in last and
             last["solver_policy_losses"] == 0 and
             last["solver_search_losses"] == 0)
  print(f"RESULT iterations={last.get('iteration')} "
        f"perfect={perfect} seconds={time.perf_counter() - start:.1f}")


if __name__ == "__main__":
  main()
