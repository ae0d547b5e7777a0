"""What AlphaGo's input planes cost: `go_features.alphago_features` on a
batch of Go positions, with the per-move planes from chain bit sets (the
default), by playing every move with the engine (`reference=True`), and
with the two ladder planes added; the two ladder planes alone read on
the host (`data.ladders`, numba, one core: how the position cache gets
them); and all 48 planes as a network plays on them
(`training.policy_games.planes_of`: the ladders read on the host from
inside `jit`).

Positions: random legal play (`--plies` moves) from the empty board, one
per game of the batch. jit + vmap; compile and one warm-up excluded, block
until ready, median of `--repeats`.

    python benchmarks/go_features.py [--size 19] [--batch 16] [--plies 120]

Last line: `RESULT ms_default=<a> ms_by_play=<b> ms_with_ladders=<c>
ladder_cost_ratio=<(c - a) / a> ms_ladders_host=<d> ms_play_48=<e>` (ms per
batch).
"""

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.data import ladders
from alphago_jax.games import go, go_features
from alphago_jax.training import policy_games


def _median_ms(fn, repeats):
  """(median ms, compile-and-first-call s) of `fn()`, blocked until ready."""
  t = time.perf_counter()
  jax.block_until_ready(fn())
  compile_s = time.perf_counter() - t
  times = []
  for _ in range(repeats):
    t = time.perf_counter()
    jax.block_until_ready(fn())
    times.append(time.perf_counter() - t)
  return 1e3 * statistics.median(times), compile_s


def random_positions(game, batch, plies, key):
  """`batch` positions after `plies` uniformly random legal moves."""
  def one(key):
    def body(state, k):
      logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
      # Never pass, so that the boards fill up; games do not end early.
      logits = logits.at[-1].set(-jnp.inf)
      a = jax.random.categorical(k, logits)
      return game.step(state, a), None
    k0, k1 = jax.random.split(key)
    state, _ = jax.lax.scan(body, game.init(k0), jax.random.split(k1, plies))
    return state
  return jax.jit(jax.vmap(one))(jax.random.split(key, batch))


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--size", type=int, default=19)
  p.add_argument("--batch", type=int, default=16)
  p.add_argument("--plies", type=int, default=120)
  p.add_argument("--repeats", type=int, default=5)
  args = p.parse_args()
  game = go.Go(size=args.size)
  states = random_positions(game, args.batch, args.plies, jax.random.key(0))
  setups = [
      ("default (46 planes, bit sets)", go_features.DEFAULT_POLICY_FEATURES,
       False),
      ("46 planes, every move played", go_features.DEFAULT_POLICY_FEATURES,
       True),
      ("48 planes with ladders (bit sets)",
       go_features.ALPHAGO_POLICY_FEATURES, False),
  ]
  rows = []
  for label, names, reference in setups:
    fn = jax.jit(jax.vmap(lambda s, names=names, reference=reference:
                          go_features.alphago_features(
                              game, s, names, reference=reference)))
    ms, compile_s = _median_ms(lambda fn=fn: fn(states), args.repeats)
    rows.append((label, ms, args.batch / ms * 1e3, compile_s))
  stones = np.sign(np.asarray(states.board)).astype(np.int8)
  ko, to_play = np.asarray(states.ko), np.asarray(states.current_player)
  ms, compile_s = _median_ms(  # the first call compiles the numba code
      lambda: ladders.ladder_planes(stones, ko, to_play, args.size),
      args.repeats)
  rows.append(("2 ladder planes alone, read on the host (numba)", ms,
               args.batch / ms * 1e3, compile_s))
  play = jax.jit(lambda s: policy_games.planes_of(
      game, s, go_features.ALPHAGO_POLICY_FEATURES))
  ms, compile_s = _median_ms(lambda: play(states), args.repeats)
  rows.append(("48 planes in play, ladders read on the host", ms,
               args.batch / ms * 1e3, compile_s))
  n = args.size
  print(f"AlphaGo planes on {n}x{n}, batch {args.batch}, positions after "
        f"{args.plies} random moves\n")
  print("| planes | ms per batch | positions/s | compile s |")
  print("|---|---|---|---|")
  for label, ms, rate, compile_s in rows:
    print(f"| {label} | {ms:.1f} | {rate:,.0f} | {compile_s:.1f} |")
  a, b, c, d, e = (r[1] for r in rows)
  print(f"RESULT ms_default={a:.2f} ms_by_play={b:.2f} "
        f"ms_with_ladders={c:.2f} ladder_cost_ratio={(c - a) / a:.1f} "
        f"ms_ladders_host={d:.2f} ms_play_48={e:.2f}")


if __name__ == "__main__":
  main()
