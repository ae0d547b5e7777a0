"""AlphaZero on 9×9 Go: runs for hours, survives interruption, resumes.

Trains with `training.presets.go9()`; one JSON line per iteration goes to
OUTPUT/metrics.jsonl and checkpoints to OUTPUT/checkpoints (rerun with the
same OUTPUT to resume; Ctrl-C loses at most the iterations since the last
checkpoint, never a checkpoint). Every --eval-every iterations the raw
policy and the network + search play a uniformly random opponent, and the
network's variables are saved to OUTPUT/snapshots/ for the learning curve
(`experiments/go9_learning_curve.py`). OUTPUT/config.json records the whole
run (this script is a thin wrapper over `alphago-jax train go9`).

    python experiments/train_go9.py [--output runs/go9] [--hours 3]
    python experiments/train_go9.py --start-from checkpoints/go9  # continue
                                                  # the committed network
"""

import argparse
import dataclasses

import jax

from alphago_jax.core import cpu_devices
from alphago_jax.cli.configs import alphazero_defaults
from alphago_jax.cli.stages.alphazero import run_alphazero


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--output", default="runs/go9", help="run directory")
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--iterations", type=int, default=100_000)
  p.add_argument("--hours", type=float, default=3.0,
                 help="stop after this much wall-clock time in this call")
  p.add_argument("--eval-every", type=int, default=5)
  p.add_argument("--eval-games", type=int, default=16,
                 help="games per colour against the random agent")
  p.add_argument("--checkpoint-every", type=int, default=2)
  p.add_argument("--start-from", default=None,
                 help="a committed run directory (e.g. checkpoints/go9) to "
                 "continue from when OUTPUT has no checkpoint yet")
  p.add_argument("--cpu-devices", type=int,
                 default=cpu_devices.default_cpu_device_count(),
                 help="XLA CPU devices, so that the data-parallel mesh uses "
                 "every core (default: one per core, a power of two); "
                 "ignored when XLA_FLAGS sets the count")
  p.add_argument("--coordinator", default=None,
                 help="multi-host: address:port of process 0")
  p.add_argument("--num-processes", type=int, default=1)
  p.add_argument("--process-id", type=int, default=0)
  args = p.parse_args()
  if args.hours <= 0 or args.eval_every < 1 or args.eval_games < 1:
    p.error("--hours must be > 0, --eval-every and --eval-games >= 1")
  try:
    run = dataclasses.replace(
        alphazero_defaults("go9"), seed=args.seed,
        iterations=args.iterations, hours=args.hours,
        eval_every=args.eval_every, eval_games=args.eval_games,
        checkpoint_every=args.checkpoint_every, cpu_devices=args.cpu_devices)
  except ValueError as e:
    p.error(str(e))
  try:  # Before JAX starts: the first JAX operation fixes the devices.
    cpu_devices.use_cpu_devices(args.cpu_devices)
  except ValueError as e:
    p.error(f"--cpu-devices: {e}")
  if args.coordinator:
    jax.distributed.initialize(args.coordinator, args.num_processes,
                               args.process_id)
  history = run_alphazero(run, args.output, start_from=args.start_from)
  last = history[-1] if history else {}
  print(f"RESULT iterations={last.get('iteration')} "
        f"devices={jax.device_count()}")


if __name__ == "__main__":
  main()
