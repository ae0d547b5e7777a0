"""AlphaZero on 9×9 Go: runs for hours, survives interruption, resumes.

Trains with `training.presets.go9()`; one JSON line per iteration goes to
OUTPUT/metrics.jsonl and checkpoints to OUTPUT/checkpoints (rerun with the
same OUTPUT to resume; Ctrl-C loses at most the iterations since the last
checkpoint, never a checkpoint). Every --eval-every iterations the raw
policy and the network + search play a uniformly random opponent, and the
network's variables are saved to OUTPUT/snapshots/ for the learning curve
(`experiments/go9_learning_curve.py`).

    python experiments/train_go9.py [--output runs/go9] [--hours 3]
    python experiments/train_go9.py --start-from checkpoints/go9  # continue
                                                  # the committed network
"""

import argparse
import json
import os
import shutil
import sys
import time

import jax
from jax.experimental import multihost_utils

from alphago_jax import cpu_devices, games, training
from alphago_jax.search.agents import random_agent
from alphago_jax.training import snapshots
from alphago_jax.training.augment import dihedral_augment


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
  try:  # Before JAX starts: the first JAX operation fixes the devices.
    cpu_devices.use_cpu_devices(args.cpu_devices)
  except ValueError as e:
    p.error(f"--cpu-devices: {e}")
  if args.coordinator:
    jax.distributed.initialize(args.coordinator, args.num_processes,
                               args.process_id)
  if args.hours <= 0 or args.eval_every < 1 or args.eval_games < 1:
    p.error("--hours must be > 0, --eval-every and --eval-games >= 1")

  game = games.make("go", size=9)
  config = training.presets.go9()
  os.makedirs(args.output, exist_ok=True)
  ckpts = os.path.join(args.output, "checkpoints")
  # Multi-host: OUTPUT is shared, so one process writes the files.
  writer = jax.process_index() == 0
  if writer and args.start_from and training.latest_step(ckpts) is None:
    # Copy, never write into the committed directory.
    shutil.copytree(os.path.join(args.start_from, "checkpoints"), ckpts,
                    dirs_exist_ok=True)
  if writer:
    with open(os.path.join(args.output, "config.json.tmp"), "w") as f:
      json.dump(config.architecture(game), f, indent=1)
    os.replace(os.path.join(args.output, "config.json.tmp"),
               os.path.join(args.output, "config.json"))
  if jax.process_count() > 1:
    multihost_utils.sync_global_devices("train_go9: output ready")
  vs_random = training.make_reference_evaluator(
      game, config, random_agent, games_per_colour=args.eval_games,
      seed=args.seed + 1, name="random")

  def evaluator(state):
    if writer:
      snapshots.save(os.path.join(args.output, "snapshots"), state,
                     architecture=config.architecture(game))
    return vs_random(state)

  # Data parallel over every device of every process (one device: none).
  mesh = training.make_mesh() if jax.device_count() > 1 else None
  deadline = time.perf_counter() + 3600 * args.hours
  _, history = training.train(
      game, config, seed=args.seed, num_iterations=args.iterations,
      output_dir=args.output, augment=dihedral_augment(9), mesh=mesh,
      evaluator=evaluator, evaluate_every=args.eval_every,
      checkpoint_every=args.checkpoint_every,
      stop_when=lambda record: time.perf_counter() > deadline,
      log=lambda line: print(line, flush=True),
      # A progress bar with throughput on a terminal; plain lines in logs.
      progress=sys.stderr.isatty())
  last = history[-1] if history else {}
  print(f"RESULT iterations={last.get('iteration')} "
        f"devices={jax.device_count()}")


if __name__ == "__main__":
  main()
