"""UCT simulations per second on tic-tac-toe: JAX (mctx) vs pure Python.

Both search from the empty board with the same number of simulations per
move. JAX: compile excluded, one warm-up, block until ready, median of
--repeats. Python: `python_uct.py`, a textbook UCT, in the same process.
The Python runs are interleaved with the JAX runs of each batch size and
each speedup divides by the Python median of its own window, so that load
from other processes (the machine is shared) hits both sides alike; the
Python row reports the median over all windows.

The JAX rows run once on one XLA device and once with the games split over
one CPU device per core (`search.shard_games`): XLA runs each device on its
own thread, while one device leaves most of a batched tree search (gathers,
scatters, small loops) on one thread. The RESULT line gives both, the
all-cores figure first.

    python benchmarks/uct_tictactoe.py [--simulations 1000] [--repeats 5] [--devices N]
"""

import argparse
import os
import random
import statistics
import time

import jax

import python_uct
from alphago_jax import games, search
from devices_flag import parse_with_devices


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--simulations", type=int, default=1000)
  p.add_argument("--repeats", type=int, default=5)
  p.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024])
  args = parse_with_devices(
      p, default=os.cpu_count() or 1, help_text="XLA CPU devices for the "
      "split rows (default: one per core; XLA_FLAGS wins when it sets the "
      "count)")
  n = args.simulations
  game = games.make("tictactoe")
  config = search.UCTConfig(num_simulations=n)
  py_seed = iter(range(10**6))

  def python_time():
    t = time.perf_counter()
    python_uct.uct_move((0,) * 9, 1, n, random.Random(next(py_seed)))
    return time.perf_counter() - t

  agent = search.uct_agent(game, config)
  devices = jax.local_devices()
  setups = [(1, jax.jit(agent), b) for b in args.batches]
  if len(devices) > 1:
    setups += [(len(devices), search.shard_games(agent), b)
                for b in args.batches if b % len(devices) == 0]
  rows, all_py = [], []
  cores = os.cpu_count() or 1
  for num_devices, run, b in setups:
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), b))
    run(states, jax.random.key(0)).block_until_ready()  # Compile, warm up.
    times, py_times = [], [python_time()]
    for i in range(args.repeats):
      t = time.perf_counter()
      run(states, jax.random.key(i + 1)).block_until_ready()
      times.append(time.perf_counter() - t)
      py_times.append(python_time())
    rate = b * n / statistics.median(times)
    py_rate = n / statistics.median(py_times)
    all_py += py_times
    step_ms = 1e3 * statistics.median(times) / n
    core_us = 1e6 * cores * statistics.median(times) / (b * n)
    rows.append((num_devices, b, rate, rate / py_rate, step_ms, core_us))

  print(f"UCT on tic-tac-toe, {n} simulations per move, empty board\n")
  # ms per batched simulation: one simulation step of the whole batch;
  # core-µs per simulation: all cores' time over the simulations it ran.
  print("| implementation | devices | batch | sims/s | speedup vs Python "
        "| ms per batched sim | core-µs per sim |")
  print("|---|---|---|---|---|---|---|")
  py_s = statistics.median(all_py)
  print(f"| pure Python | - | 1 | {n / py_s:,.0f} | 1.0x | "
        f"{1e3 * py_s / n:.3f} | {1e6 * py_s / n:.1f} |")
  for num_devices, b, rate, speedup, step_ms, core_us in rows:
    print(f"| JAX + mctx | {num_devices} | {b} | {rate:,.0f} | "
          f"{speedup:.1f}x | {step_ms:.3f} | {core_us:.2f} |")
  biggest = max(args.batches)
  at = {r[0]: r[3] for r in rows if r[1] == biggest}
  print(f"RESULT speedup_vs_python={at[max(at)]:.2f} "
        f"speedup_vs_python_one_device={at[1]:.2f}")


if __name__ == "__main__":
  main()
