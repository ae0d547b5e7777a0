"""A training run survives SIGKILL at any moment.

A tiny tic-tac-toe AlphaZero run (`training.train`, a checkpoint after
every iteration, so that much of its time is spent inside checkpoint
writes) is started in a child process and killed with SIGKILL after seeded,
staggered delays, then restarted in the same directory, until it finishes.
Every restart must resume from the newest complete checkpoint the killed
process left, the metrics file must hold each iteration exactly once with
no torn line, and the final parameters must equal those of an uninterrupted
run with the same seed (computed here, in this process).
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

import jax
import numpy as np
import pytest

from alphago_jax import games, training
from alphago_jax.training.state import variables_of
from alphago_jax.training.checkpoint import latest_step, restore_checkpoint
from alphago_jax.models.resnet import ResNetConfig
from alphago_jax.search.alphazero import AlphaZeroSearchConfig

ITERATIONS = 60
# Enough that 24 kills land before the end on a quiet machine too (about 6
# iterations a life there).
LONG_ITERATIONS = 200
SEED = 5

# The child: builds the same config, compiles the iteration before saying
# READY (so that kills land in the training loop, not in imports or the
# compiler; a fresh and a restored state share one program), then trains with a checkpoint every iteration. Progress goes to
# stdout.
CHILD = r"""
import os, sys
from alphago_jax import games, training
sys.path.insert(0, sys.argv[2])
from test_faults import tiny_config, SEED
game = games.make("tictactoe")
config = tiny_config()
state = training.init_train_state(game, config, SEED)
ckpts = os.path.join(sys.argv[1], "checkpoints")
if latest_step(ckpts) is not None:
  state = restore_checkpoint(ckpts, state,
                                      architecture=config.architecture(game))
training.make_iteration(game, config)(state)  # compile (cached by train)
print("READY", flush=True)
training.train(game, config, seed=SEED, num_iterations=int(sys.argv[3]),
               output_dir=sys.argv[1], checkpoint_every=1,
               log=lambda line: print(line, flush=True))
print("DONE", flush=True)
"""


def tiny_config():
  return training.TrainConfig(
      model=ResNetConfig(num_blocks=1, channels=4, value_hidden=8),
      search=AlphaZeroSearchConfig(num_simulations=2, policy="gumbel",
                                   temperature_moves=9),
      max_moves=9, num_games=8, random_opening_moves=2,
      buffer_capacity=8 * 9 * 4, batch_size=16, gradient_steps=2,
      optimizer="adam", learning_rate=3e-3)


def _leaves(tree):
  return [np.asarray(x) for x in jax.tree.leaves(tree)]


def _start(run_dir, env, iterations):
  return subprocess.Popen(
      [sys.executable, "-c", CHILD, run_dir, os.path.dirname(__file__),
       str(iterations)],
      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


def _wait_for(proc, word, timeout):
  deadline = time.monotonic() + timeout
  lines = []
  while time.monotonic() < deadline:
    line = proc.stdout.readline()
    if not line:
      break
    lines.append(line)
    if line.startswith(word):
      return lines
  raise AssertionError(f"child never printed {word}: {lines[-5:]}")


def _tmp_entries(ckpt_dir):
  """Orbax's unfinished step directories, each with its inode and mtime (a
  directory of the same name written again is a new one)."""
  if not os.path.isdir(ckpt_dir):
    return set()
  out = set()
  for name in os.listdir(ckpt_dir):
    if "tmp" in name:
      st = os.stat(os.path.join(ckpt_dir, name))
      out.add((name, st.st_ino, st.st_mtime_ns))
  return out


def kill_and_resume(tmp_path, kills, max_delay, seed, iterations):
  """Trains `iterations` in a subprocess, SIGKILLed `kills` times after
  random delays up to `max_delay` seconds and restarted, then run to the
  end; checks each life that got past the restore resumed from the last
  complete checkpoint, and prints what it saw. Returns `(run_dir,
  resumed_from, inside_write, steps_at_kills)`: the checkpoint steps the
  checked lives resumed from, how many kills landed inside a checkpoint
  write, and the last complete step after each kill."""
  run_dir = str(tmp_path / "run")
  ckpt_dir = os.path.join(run_dir, "checkpoints")
  env = dict(os.environ, JAX_PLATFORMS="cpu",
             JAX_COMPILATION_CACHE_DIR=str(tmp_path / "jax_cache"),
             JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
             XLA_FLAGS=os.environ.get("ALPHAGO_JAX_TEST_XLA_FLAGS", "")
             + " --xla_force_host_platform_device_count=1")
  rng = random.Random(seed)
  delays = [rng.uniform(0, max_delay) for _ in range(kills)]
  expected_resume = None
  inside_write = 0
  resumed_from, steps_at_kills = [], []
  for delay in delays + [None]:
    unfinished = _tmp_entries(ckpt_dir)
    proc = _start(run_dir, env, iterations)
    try:
      _wait_for(proc, "READY", 300)
      if delay is None:  # the last life runs to the end
        lines = _wait_for(proc, "DONE", 300)
        assert proc.wait(60) == 0
      else:
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        lines = proc.stdout.readlines()
        proc.wait(60)
    finally:
      if proc.poll() is None:
        proc.kill()
        proc.wait()
    started = [l for l in lines if l.startswith("resumed from iteration")]
    if expected_resume is not None and (
        started or any(l.startswith("iteration=") for l in lines)):
      # The life got past the restore: it resumed from the last complete
      # checkpoint the killed process left (or, with none yet, started
      # afresh without a message). A life killed inside the restore says
      # nothing.
      if expected_resume == 0:
        assert not started, started
      else:
        assert started and started[0].split()[3] == str(expected_resume), (
            started, expected_resume)
      resumed_from.append(expected_resume)
    if delay is not None:
      # This life left an unfinished checkpoint of its own: killed inside
      # the write.
      inside_write += bool(_tmp_entries(ckpt_dir) - unfinished)
      expected_resume = latest_step(ckpt_dir) or 0
      steps_at_kills.append(expected_resume)
  print(f"checkpoint step after each kill: {steps_at_kills}; kills inside a "
        f"checkpoint write: {inside_write}; checked resumes: {resumed_from}")
  return run_dir, resumed_from, inside_write, steps_at_kills


def check_run(run_dir, iterations):
  path = os.path.join(run_dir, "metrics.jsonl")
  with open(path, "rb") as f:
    data = f.read()
  assert data.endswith(b"\n")
  records = [json.loads(line) for line in data.splitlines()]  # no torn line
  assert [r["iteration"] for r in records] == list(range(1, iterations + 1))
  game = games.make("tictactoe")
  config = tiny_config()
  straight, _ = training.train(game, config, seed=SEED,
                               num_iterations=iterations)
  template = training.init_train_state(game, config, SEED)
  resumed = restore_checkpoint(
      os.path.join(run_dir, "checkpoints"), template,
      architecture=config.architecture(game))
  assert int(resumed.iteration) == iterations
  for a, b in zip(_leaves(variables_of(straight)) +
                  _leaves(straight.opt_state),
                  _leaves(variables_of(resumed)) +
                  _leaves(resumed.opt_state)):
    np.testing.assert_array_equal(a, b)
  assert not any(np.array_equal(a, b) for a, b in zip(
      _leaves(template.params), _leaves(resumed.params))), "never trained"


@pytest.mark.slow
def test_three_kills_resume_to_the_uninterrupted_result(tmp_path):
  run_dir, resumed_from, _, steps = kill_and_resume(
      tmp_path, kills=3, max_delay=3.0, seed=0, iterations=ITERATIONS)
  assert len(steps) == 3 and resumed_from  # the last life at least
  assert steps[-1] < ITERATIONS, steps  # every kill hit a running run
  check_run(run_dir, ITERATIONS)


@pytest.mark.slow
def test_twenty_four_kills_some_inside_checkpoint_writes(tmp_path):
  run_dir, resumed_from, inside_write, steps = kill_and_resume(
      tmp_path, kills=24, max_delay=3.0, seed=1, iterations=LONG_ITERATIONS)
  # At least 20 kills landed before the run was complete.
  assert sum(s < LONG_ITERATIONS for s in steps) >= 20, steps
  # Kills that left orbax's temporary step directory behind landed inside a
  # checkpoint write; the run must have survived some.
  assert inside_write >= 3, inside_write
  check_run(run_dir, LONG_ITERATIONS)


def test_resume_drops_the_records_of_steps_it_repeats(tmp_path):
  # A crash after the records of iterations 4 and 5 (and half of 6) were
  # written but before their checkpoints: the resume from 3 repeats them,
  # and the file must hold each iteration once, the repeated ones new.
  game = games.make("tictactoe")
  config = tiny_config()
  out = str(tmp_path / "run")
  training.train(game, config, seed=SEED, num_iterations=3, output_dir=out,
                 checkpoint_every=1, tensorboard=False)
  path = os.path.join(out, "metrics.jsonl")
  with open(path, "a") as f:
    f.write('{"iteration": 4, "loss": -1}\n{"iteration": 5, "loss": -1}\n'
            '{"iteration": 6, "lo')
  training.train(game, config, seed=SEED, num_iterations=5, output_dir=out,
                 checkpoint_every=1, tensorboard=False)
  records = training.read_metrics(path)
  assert [r["iteration"] for r in records] == [1, 2, 3, 4, 5]
  assert all(r["loss"] > 0 for r in records)
  assert open(path, "rb").read().endswith(b"\n")
  assert not [n for n in os.listdir(out) if "tmp" in n]
