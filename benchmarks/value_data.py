"""Value-data generation on 9×9 against its networks' forward-only
throughput, in one run.

Ours: `training.value_data.make_generate_fn`, the compiled generator of
AlphaGo's value data (p_σ plays the opening, one uniformly random move at
ply U, then p_ρ plays the game out), with the committed 9×9 p_σ
(`checkpoints/sl9`) and p_ρ (`checkpoints/rl9`), B games at once on one
device. Every ply evaluates both networks on all B games, so a generation
of R plies makes 2·R·B network evaluations (R: the longest game's
length). The limit: the same two networks' forward passes alone
(`PolicyNet.apply`) on B positions' planes computed beforehand, 2·B
evaluations a pair of passes, R pairs in one compiled loop as in the
generator. Their ratio is the share of the time the
generator spends in the networks; the rest is the game engine, the
feature planes, sampling and bookkeeping.

Compile excluded, one warm-up, block until ready, medians.

    python benchmarks/value_data.py [--batches 64 256] [--repeats 3]

Last line: `RESULT games_per_s=<largest batch> evals_per_s=<the same>
forward_evals_per_s=<the same batch> ratio=<evals over forward>`.
"""

import argparse
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.models.policy import PolicyNet
from alphago_jax.training import policy_games
from alphago_jax.training import value_data
from alphago_jax.zoo import loaders

CHECKPOINTS = os.path.join(os.path.dirname(__file__), "..", "checkpoints")


def median_seconds(fn, repeats):
  """Median wall time of `fn()` (blocked until ready) after one warm-up."""
  jax.block_until_ready(fn())
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    jax.block_until_ready(fn())
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def generation(game, sigma, rho, batch, repeats, key):
  """(seconds a generation, plies of its longest game) at `batch`."""
  generate = value_data.make_generate_fn(
      game, sigma.model, rho.model, num_games=batch,
      max_random_ply=value_data.paper_random_ply(game.size))
  run = lambda: generate(sigma.variables, rho.variables, key)
  seconds = median_seconds(run, repeats)
  plies = int(np.asarray(run()["length"]).max())
  return seconds, plies


def forward(game, sigma, rho, batch, plies, repeats, key):
  """Seconds of `plies` forward passes of each network on `batch`
  positions, in one compiled loop as the generator's (no dispatch between
  passes); each pass reads the previous one's planes rolled by a game, so
  none can be hoisted out of the loop."""
  states = jax.vmap(game.init)(jax.random.split(key, batch))
  # Positions some moves into a game, as the generator sees them.
  for k in jax.random.split(key, 20):
    logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
    states = jax.vmap(game.step)(states, jax.random.categorical(k, logits))
  planes = [policy_games.planes_of(game, states, net.model.features)
            for net in (sigma, rho)]
  nets = [PolicyNet(net.model) for net in (sigma, rho)]

  @jax.jit
  def passes(variables, planes):
    def body(_, carry):
      planes, total = carry
      for net, v, p in zip(nets, variables, planes):
        total = total + net.apply(v, p, train=False)[0, 0]
      return [jnp.roll(p, 1, axis=0) for p in planes], total
    return jax.lax.fori_loop(0, plies, body, (planes, jnp.float32(0)))[1]

  variables = (sigma.variables, rho.variables)
  return median_seconds(lambda: passes(variables, planes), repeats)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--batches", type=int, nargs="+", default=[64, 256])
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  if min(args.batches) < 1 or args.repeats < 1:
    parser.error("--batches and --repeats must be >= 1")

  sigma = loaders.load(os.path.join(CHECKPOINTS, "sl9"))
  rho = loaders.load(os.path.join(CHECKPOINTS, "rl9"))
  game = policy_games.make_game(9)
  key = jax.random.key(args.seed)
  print(f"9×9 value data: p_σ {sigma.name} and p_ρ {rho.name}, one "
        f"device ({jax.devices()[0].platform}), median of {args.repeats}")
  print()
  print("| games at once | games/s | network evaluations/s | forward-only "
        "evaluations/s | ratio |")
  print("|---|---|---|---|---|")
  rows = {}
  for batch in args.batches:
    seconds, plies = generation(game, sigma, rho, batch, args.repeats, key)
    evals_per_s = 2 * plies * batch / seconds
    forward_per_s = 2 * plies * batch / forward(
        game, sigma, rho, batch, plies, args.repeats, key)
    rows[batch] = (batch / seconds, evals_per_s, forward_per_s,
                   evals_per_s / forward_per_s)
    print("| {} | {:.1f} | {:.0f} | {:.0f} | {:.2f} |".format(
        batch, *rows[batch]))
  games, evals, fwd, ratio = rows[max(args.batches)]
  print()
  print(f"RESULT games_per_s={games:.2f} evals_per_s={evals:.0f} "
        f"forward_evals_per_s={fwd:.0f} ratio={ratio:.3f}")


if __name__ == "__main__":
  main()
