"""UCT simulations per second on tic-tac-toe: JAX (mctx) vs pure Python.

Both search from the empty board with the same number of simulations per
move. JAX: compile excluded, one warm-up, block until ready, median of
--repeats. Python: `python_uct.py`, a textbook UCT, in the same process.
The Python runs are interleaved with the JAX runs of each batch size and
each speedup divides by the Python median of its own window, so that load
from other processes (the machine is shared) hits both sides alike; the
Python row reports the median over all windows.

    python benchmarks/uct_tictactoe.py [--simulations 1000] [--repeats 5]
"""

import argparse
import random
import statistics
import time

import jax

import python_uct
from alphago_jax import games, search


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--simulations", type=int, default=1000)
  p.add_argument("--repeats", type=int, default=5)
  p.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024])
  args = p.parse_args()
  n = args.simulations
  game = games.make("tictactoe")
  config = search.UCTConfig(num_simulations=n)
  py_seed = iter(range(10**6))

  def python_time():
    t = time.perf_counter()
    python_uct.uct_move((0,) * 9, 1, n, random.Random(next(py_seed)))
    return time.perf_counter() - t

  rows, all_py = [], []
  for b in args.batches:
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), b))
    run = jax.jit(lambda k, s: search.uct_search(game, k, s,
                                                 config=config).action)
    run(jax.random.key(0), states).block_until_ready()  # Compile, warm up.
    times, py_times = [], [python_time()]
    for i in range(args.repeats):
      t = time.perf_counter()
      run(jax.random.key(i + 1), states).block_until_ready()
      times.append(time.perf_counter() - t)
      py_times.append(python_time())
    rate = b * n / statistics.median(times)
    py_rate = n / statistics.median(py_times)
    all_py += py_times
    rows.append((b, rate, rate / py_rate))

  print(f"UCT on tic-tac-toe, {n} simulations per move, empty board\n")
  print("| implementation | batch | sims/s | speedup vs Python |")
  print("|---|---|---|---|")
  print(f"| pure Python | 1 | {n / statistics.median(all_py):,.0f} | 1.0x |")
  for b, rate, speedup in rows:
    print(f"| JAX + mctx | {b} | {rate:,.0f} | {speedup:.1f}x |")
  print(f"RESULT speedup_vs_python={rows[-1][2]:.2f}")


if __name__ == "__main__":
  main()
