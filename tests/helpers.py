"""Shared by tests that need a fresh Python process (the XLA CPU device
count, and `jax.distributed.initialize`, must come before JAX starts, and
the test process has long started) and a tiny training configuration."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TESTS = os.path.join(ROOT, "tests")


def cpu_env(devices=None, **overrides):
  """This environment on the CPU platform, with `devices` XLA CPU devices
  (None: whatever the code asks for), and `tests/` importable."""
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["JAX_PLATFORMS"] = "cpu"
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (TESTS, env.get("PYTHONPATH")) if p)
  if devices is not None:
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
  env.update(overrides)
  return env


def run_python(args, *, devices=None, timeout=600, env=None, check=True):
  """Runs `python ARGS` from the repository root; with `check`, asserts it
  succeeded (showing the end of its stderr). A str is code for `-c`."""
  if isinstance(args, str):
    args = ["-c", textwrap.dedent(args)]
  proc = subprocess.run([sys.executable, *args], cwd=ROOT,
                        env=env or cpu_env(devices), capture_output=True,
                        text=True, timeout=timeout, check=False)
  if check:
    assert proc.returncode == 0, proc.stderr[-3000:]
  return proc


def tiny_train_config():
  """Tic-tac-toe AlphaZero small enough for a few iterations in seconds."""
  from alphago_jax import models, search, training  # pylint: disable=import-outside-toplevel
  return training.TrainConfig(
      model=models.ResNetConfig(num_blocks=1, channels=8, value_hidden=8),
      search=search.AlphaZeroSearchConfig(
          num_simulations=4, max_num_considered_actions=4),
      max_moves=9, num_games=8, random_opening_moves=2,
      buffer_capacity=512, batch_size=32, gradient_steps=4)
