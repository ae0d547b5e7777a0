"""Go environment speed and state size, ours beside pgx's, in one run.

Random legal play under `jit(vmap(step))`, games reset as they end, at batch
1, 64, 512 and 4096 on 9×9 and 19×19. Each measurement runs a jitted
`lax.scan` of T steps (T chosen so one repeat is ~20k game steps); compile
and a warm-up of 2·N steps are excluded; the median of the repeats is
reported. pgx is an optional peer (`pip install -e ".[bench]"`); without it
only our figures are printed.

    python benchmarks/go_env.py [--batches 1 64 512 4096] [--repeats 3]

Last line: `RESULT ratio_vs_pgx_9x9=<x> ratio_vs_pgx_19x19=<y>` at batch 512.
"""

import argparse
import math
import statistics
import time

import jax
import jax.numpy as jnp

from alphago_jax.games.go import Go


def _state_bytes(state) -> int:
  return sum(x.nbytes for x in jax.tree.leaves(state))


def _make_runner(init, step, batch: int, length: int):
  """jitted (states, key) -> states after `length` random legal steps."""
  v_init, v_step = jax.vmap(init), jax.vmap(step)

  def one(carry, key):
    states = carry
    k_act, k_init = jax.random.split(key)
    logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
    actions = jax.random.categorical(k_act, logits)
    # A terminated game has an all-False mask; any action is absorbed.
    actions = jnp.where(states.terminated, 0, actions)
    states = v_step(states, actions)
    fresh = v_init(jax.random.split(k_init, batch))
    states = jax.tree.map(
        lambda f, s: jnp.where(
            states.terminated.reshape((-1,) + (1,) * (s.ndim - 1)), f, s),
        fresh, states)
    return states, None

  @jax.jit
  def run(states, key):
    states, _ = jax.lax.scan(one, states, jax.random.split(key, length))
    return states

  return jax.jit(lambda key: v_init(jax.random.split(key, batch))), run


def measure(init, step, size: int, batch: int, repeats: int) -> float:
  """Median random-play steps per second."""
  length = max(1, math.ceil(20_000 / batch)) if size > 9 else max(
      1, math.ceil(50_000 / batch))
  make, run = _make_runner(init, step, batch, length)
  key = jax.random.PRNGKey(0)
  states = make(key)
  # Compile, then warm up into the opening (2·N moves).
  for i in range(max(1, math.ceil(2 * size / length))):
    states = jax.block_until_ready(run(states, jax.random.fold_in(key, i)))
  times = []
  for r in range(repeats):
    t0 = time.perf_counter()
    states = jax.block_until_ready(
        run(states, jax.random.fold_in(key, 1000 + r)))
    times.append(time.perf_counter() - t0)
  return batch * length / statistics.median(times)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--batches", type=int, nargs="+",
                      default=[1, 64, 512, 4096])
  parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
  parser.add_argument("--repeats", type=int, default=3)
  args = parser.parse_args()
  try:
    import pgx  # pylint: disable=import-outside-toplevel
  except ImportError:
    pgx = None
    print("pgx not installed: printing our figures only "
          "(pip install -e '.[bench]' for the peer)")

  print(f"jax {jax.__version__}, backend {jax.default_backend()}, "
        f"{jax.device_count()} device(s)")
  print()
  print("| board | batch | ours steps/s | pgx steps/s | ratio |")
  print("|---|---|---|---|---|")
  ratios, sizes_bytes = {}, {}
  for size in args.sizes:
    game = Go(size=size)
    ours_init, ours_step = game.init, game.step
    peer = pgx.make(f"go_{size}x{size}") if pgx else None
    sizes_bytes[size] = (
        _state_bytes(game.init(jax.random.PRNGKey(0))),
        _state_bytes(peer.init(jax.random.PRNGKey(0))) if peer else None)
    for batch in args.batches:
      ours = measure(ours_init, ours_step, size, batch, args.repeats)
      if peer is not None:
        theirs = measure(peer.init, lambda s, a: peer.step(s, a), size,
                         batch, args.repeats)
        ratio = ours / theirs
        ratios[(size, batch)] = ratio
        print(f"| {size}x{size} | {batch} | {ours:,.0f} | {theirs:,.0f} | "
              f"{ratio:.2f} |", flush=True)
      else:
        print(f"| {size}x{size} | {batch} | {ours:,.0f} | - | - |",
              flush=True)
  print()
  print("| board | ours bytes/state | pgx bytes/state |")
  print("|---|---|---|")
  for size, (ours_b, theirs_b) in sizes_bytes.items():
    print(f"| {size}x{size} | {ours_b:,} | "
          f"{'-' if theirs_b is None else f'{theirs_b:,}'} |")
  print()
  fields = []
  for size in args.sizes:
    r = ratios.get((size, 512))
    fields.append(f"ratio_vs_pgx_{size}x{size}="
                  f"{'nan' if r is None else f'{r:.2f}'}")
  for size, (ours_b, theirs_b) in sizes_bytes.items():
    fields.append(f"state_bytes_{size}x{size}={ours_b}")
  print("RESULT " + " ".join(fields))


if __name__ == "__main__":
  main()
