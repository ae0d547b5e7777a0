"""AlphaGo's λ-search on 9×9: simulations per second for λ = 0, 0.5, 1,
beside OpenSpiel's C++ MCTS with random rollouts, in one run.

Ours: `search.alphago_search` from the empty 9×9 board, the committed
AlphaZero 9×9 network (`checkpoints/go9/`) as the prior and as v, random
lean playouts (`games.GoPlayout`) as z, one rollout per leaf. One compiled
program per batch size serves all three λ (λ is traced; at λ = 0 and 1 a
`lax.cond` runs only the evaluator that counts). The peer: OpenSpiel's
`pyspiel.MCTSBot` with `RandomRolloutEvaluator(1, seed)` (UCT, one random
rollout per leaf, no network), one thread. The two do different work per
simulation (ours: a network evaluation and/or a playout that never fills
its own eyes), so the ratio compares throughput, not like for like.

Compile excluded, one warm-up, block until ready, medians.

    python benchmarks/lambda_search.py [--simulations 64] [--batches 1 64]

Last line: `RESULT lambda_half_sims_per_s=<ours, λ = 0.5, largest batch>
cpp_mcts_sims_per_s=<OpenSpiel>`.
"""

import argparse
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp

from alphago_jax import games, search, training
from alphago_jax.search.alphago import AlphaGoParams, AlphaGoStatic, split_evaluate
from alphago_jax.models.resnet import make_evaluate_fn, make_network
from alphago_jax.training import snapshots

sys.path.insert(0, os.path.dirname(__file__))
from rollouts import _openspiel, openspiel_uct  # noqa: E402  pylint: disable=wrong-import-position

CHECKPOINT = os.path.join(os.path.dirname(__file__), "..", "checkpoints",
                          "go9", "snapshots")


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--simulations", type=int, default=64)
  parser.add_argument("--batches", type=int, nargs="+", default=[1, 64])
  parser.add_argument("--repeats", type=int, default=3)
  args = parser.parse_args()

  game = games.make("go", size=9)
  config = training.presets.go9()
  [(_, path)] = snapshots.list_snapshots(CHECKPOINT)
  variables, _ = snapshots.load(path, architecture=config.architecture(game))
  prior, value = split_evaluate(
      game, make_evaluate_fn(make_network(game, config.model)))
  static = AlphaGoStatic(num_simulations=args.simulations)
  pyspiel = _openspiel()
  print(f"9×9, {args.simulations} simulations per move from the empty "
        f"board, median of {args.repeats}")
  print()
  print("| implementation | λ | batch | sims/s |")
  print("|---|---|---|---|")
  ours = {}
  for batch in args.batches:
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), batch))
    run = jax.jit(lambda p, k, s: search.alphago_search(
        game, prior, value, (variables, variables), k, s, config=static,
        params=p).action)
    for lam in (0.0, 0.5, 1.0):
      p = AlphaGoParams(c_puct=jnp.float32(5.0),
                               mixing=jnp.float32(lam))
      jax.block_until_ready(run(p, jax.random.key(1), states))  # warm-up
      times = []
      for r in range(args.repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run(p, jax.random.key(2 + r), states))
        times.append(time.perf_counter() - t0)
      rate = batch * args.simulations / statistics.median(times)
      ours[(lam, batch)] = rate
      print(f"| ours (AlphaGo search) | {lam:g} | {batch} | {rate:,.0f} |")
  cpp = float("nan")
  if pyspiel is not None:
    times = [openspiel_uct(pyspiel, args.simulations, r)
             for r in range(args.repeats)]
    cpp = args.simulations / statistics.median(times)
    print(f"| OpenSpiel MCTSBot (C++, random rollouts) | – | 1 | {cpp:,.0f} |")
  print()
  print(f"RESULT lambda_half_sims_per_s={ours[(0.5, max(args.batches))]:.0f} "
        f"cpp_mcts_sims_per_s={cpp:.0f}")


if __name__ == "__main__":
  main()
