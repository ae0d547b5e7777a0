"""A c_puct sweep as one compiled program against one run per value.

The task: P = 8 values of c_puct, each playing G = 64 games (32 per colour)
of tic-tac-toe against a uniformly random player with AlphaGo's search
(`search.alphago`: PUCT on raw Q, uniform prior, random-rollout leaves,
λ = 1). Two ways, end to end (compilation included, the way a user meets
it), in one process:

* sweep: `search.sweep_match` over the stacked values, one program that
  vmaps over the parameter axis (compiled once);
* sweep, one value at a time: the same program with `values_per_batch=1`
  (`lax.map` over the values: compiles as one value does, plays them in
  turn);
* separate: what a user would write today, a config per value and one
  jitted match each (`play_games` under `jax.jit`, the config's
  c_puct a constant of the program), so one compilation per value.

Both play the same games per value with the same keys; the script checks
the per-value results agree. Settings: `quick` (16 simulations per move)
and `long` (256), both tic-tac-toe. Also printed: the time of each once
compiled, so compilation and play can be told apart.

    python benchmarks/sweep.py [--setting quick|long|both] [--repeats N]

Last line: `RESULT sweep_speedup=<quick: separate / sweep, end to end>
sweep_speedup_long=<...> sweep_run_only_speedup=<quick, compiled>
sweep_one_at_a_time_speedup=<quick: separate / lax.map sweep, end to end>`.
"""

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax import games, search
from alphago_jax.search.sweep import match_outcomes, play_games
from alphago_jax.search.alphago import uniform_policy

C_PUCT = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0)
SETTINGS = {"quick": 16, "long": 256}


def _agent(game, static, params):
  return search.alphago_agent(game, uniform_policy, None, (None, None),
                              static, params)


def run_sweep(game, simulations, games_per_colour, key,
              values_per_batch=None):
  """Seconds end to end, seconds once compiled, W/D/L `[P, 3]`."""
  static, base = search.AlphaGoSearchConfig(
      num_simulations=simulations, mixing=1.0).split()
  t0 = time.perf_counter()
  params, _ = search.grid(base, {"c_puct": list(C_PUCT)})
  run = jax.jit(lambda p, k: match_outcomes(
      game, lambda q: _agent(game, static, q), p, search.random_agent, k,
      games_per_colour=games_per_colour, values_per_batch=values_per_batch))
  wdl = jax.block_until_ready(run(params, key))
  total = time.perf_counter() - t0
  t1 = time.perf_counter()
  jax.block_until_ready(run(params, key))
  return total, time.perf_counter() - t1, np.asarray(wdl).sum(1)


def run_separate(game, simulations, games_per_colour, key):
  """The same per value, one compiled program per value."""
  seats = jnp.repeat(jnp.arange(2, dtype=jnp.int32), games_per_colour)
  t0 = time.perf_counter()
  runs, rows = [], []
  for c in C_PUCT:
    config = search.AlphaGoSearchConfig(num_simulations=simulations,
                                        mixing=1.0, c_puct=c)
    agent = _agent(game, config, None)
    run = jax.jit(lambda k, agent=agent: play_games(
        game, agent, search.random_agent, k, seats))
    r = np.asarray(jax.block_until_ready(run(key)))
    rows.append([(r > 0).sum(), (r == 0).sum(), (r < 0).sum()])
    runs.append(run)
  total = time.perf_counter() - t0
  t1 = time.perf_counter()
  for run in runs:
    jax.block_until_ready(run(key))
  return total, time.perf_counter() - t1, np.array(rows)


def measure(setting, repeats, games_per_colour):
  game = games.make("tictactoe")
  sims = SETTINGS[setting]
  key = jax.random.key(0)
  ways = (("sweep", run_sweep),
          ("sweep, one value at a time",
           lambda *a: run_sweep(*a, values_per_batch=1)),
          ("separate", run_separate))
  rows = {name: [] for name, _ in ways}
  results = {}
  for _ in range(repeats):
    # Interleaved, caches cleared: each measurement compiles from scratch.
    for name, fn in ways:
      jax.clear_caches()
      total, compiled, wdl = fn(game, sims, games_per_colour, key)
      rows[name].append((total, compiled))
      results[name] = wdl
  # The sweep's `[P]` vmap plays each value with the same keys as its own
  # program, but floating-point order may differ under batching; report.
  agree = all(np.array_equal(results[name], results["separate"])
              for name in results)
  med = {k: (statistics.median(t for t, _ in v),
             statistics.median(c for _, c in v)) for k, v in rows.items()}
  return sims, med, results["sweep"], agree


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--setting", choices=("quick", "long", "both"),
                      default="both")
  parser.add_argument("--repeats", type=int, default=1)
  parser.add_argument("--games-per-colour", type=int, default=32)
  args = parser.parse_args()
  settings = ["quick", "long"] if args.setting == "both" else [args.setting]
  print(f"tic-tac-toe, AlphaGo search (uniform prior, random rollouts, "
        f"λ = 1) vs random, {len(C_PUCT)} c_puct values × "
        f"{2 * args.games_per_colour} games; median of {args.repeats}; "
        f"{jax.device_count()} device(s)")
  print()
  print("| setting | simulations | way | end to end s | compiled s |")
  print("|---|---|---|---|---|")
  speed = {}
  for setting in settings:
    sims, med, wdl, agree = measure(setting, args.repeats,
                                    args.games_per_colour)
    for way, (total, compiled) in med.items():
      print(f"| {setting} | {sims} | {way} | {total:.2f} | {compiled:.3f} |")
    speed[setting] = (med["separate"][0] / med["sweep"][0],
                      med["separate"][1] / med["sweep"][1], wdl, agree,
                      med["separate"][0] / med["sweep, one value at a time"][0])
  print()
  for setting, (_, _, wdl, agree, _) in speed.items():
    print(f"{setting}: per-value W/D/L of both sweeps "
          f"{'equal to' if agree else 'DIFFERENT from'} the separate runs'")
    print("| c_puct | wins | draws | losses |")
    print("|---|---|---|---|")
    for c, (w, d, l) in zip(C_PUCT, wdl):
      print(f"| {c:g} | {w} | {d} | {l} |")
    print()
  nan = float("nan")
  quick = speed.get("quick", (nan,) * 5)
  long = speed.get("long", (nan,) * 5)
  print(f"RESULT sweep_speedup={quick[0]:.2f} "
        f"sweep_speedup_long={long[0]:.2f} "
        f"sweep_run_only_speedup={quick[1]:.2f} "
        f"sweep_one_at_a_time_speedup={quick[4]:.2f}")


if __name__ == "__main__":
  main()
