"""Supervised-learning data pipeline speed and size, on its own.

Opens (or builds, once) the position cache of a record collection (the KGS
set by default), then measures at each batch size, on the train split:

* stream: drawing shuffled compact batches from the memory-mapped cache;
* features: the jitted step alone (rebuild states, 46 AlphaGo planes
  `DEFAULT_POLICY_FEATURES`, a random symmetry per example) on one batch;
* pipeline: both, as training would consume them (the host draws the next
  batch while the step runs, by JAX's asynchronous dispatch);
* reference: the pipeline with `go_features.alphago_features`, which plays
  every move to get the per-move planes (the first batch size only).

Compile time is excluded (a warm-up run of each measurement); each figure is
the median over `--repeats` runs of `--steps` batches, timed to
`block_until_ready`. The peer is the training step of the network the
pipeline feeds: ~287 samples/s for a 6-layer 64-filter 19x19 conv net on
the same 2 CPU cores; the pipeline must be faster.

    python benchmarks/data_pipeline.py --data ../shared/data/kgs-6d \
        --cache /tmp/alphago_cache [--batches 128 256] [--quick]

Last line: `RESULT pipeline_b<B>=<samples/s> ... cache_mib=<disk>
memory_mib=<arrays> build_s=<s> positions=<n>`.
"""

import argparse
import os
import statistics
import sys
import time

import jax

from alphago_jax import data as data_lib
from alphago_jax.data import features

TRAINING_PEER = 287.0  # samples/s, 6x64 conv net training step, 2 cores


def _median_rate(fn, samples, repeats):
  times = []
  for _ in range(repeats):
    t0 = time.perf_counter()
    fn()
    times.append(time.perf_counter() - t0)
  return samples / statistics.median(times)


def measure(positions, batch_size, steps, repeats, reference=False):
  """`(stream, features, pipeline)` samples/s; features and pipeline with
  the reference planes when `reference` (stream is then None)."""
  size = positions.size
  fn = features.make_feature_fn(size, reference=reference)
  key = jax.random.PRNGKey(0)
  stream = data_lib.batches(positions, batch_size, seed=0)
  fixed = next(stream)
  jax.block_until_ready(fn(fixed, key))  # compile

  def draw():
    for _ in range(steps):
      next(stream)

  def step_only():
    out = None
    for k in range(steps):
      out = fn(fixed, jax.random.fold_in(key, k))
    jax.block_until_ready(out)

  def pipeline():
    out = None
    for k in range(steps):
      out = fn(next(stream), jax.random.fold_in(key, k))
    jax.block_until_ready(out)

  n = batch_size * steps
  draw()  # warm-up: the page cache, XLA's threads and buffers
  step_only()
  stream_rate = None if reference else _median_rate(draw, n, repeats)
  return (stream_rate, _median_rate(step_only, n, repeats),
          _median_rate(pipeline, n, repeats))


def main(argv=None):
  default_data = os.path.join(os.environ.get("ALPHAGO_JAX_DATA", os.path.join(
      os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
      "data")), "kgs-6d")
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--data", default=default_data)
  p.add_argument("--cache", default=None,
                 help="folder of caches (default: beside the data if "
                 "writable, else ~/.cache/alphago_jax)")
  p.add_argument("--batches", type=int, nargs="+", default=[128, 256])
  p.add_argument("--steps", type=int, default=10, help="batches per repeat")
  p.add_argument("--repeats", type=int, default=5)
  p.add_argument("--workers", type=int, default=2,
                 help="processes for a cache build")
  p.add_argument("--no-reference", action="store_true",
                 help="skip the slow reference planes")
  p.add_argument("--quick", action="store_true",
                 help="a cache of 300 records, 2 steps x 2 repeats")
  args = p.parse_args(argv)
  if args.quick:
    args.steps, args.repeats = 2, 2
  config = data_lib.DatasetConfig(limit=300 if args.quick else None)
  try:
    cache = data_lib.prepare(
        args.data, args.cache, config, workers=args.workers,
        log=lambda line: print(line, file=sys.stderr, flush=True))
  except data_lib.DataError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  train = cache.split("train")
  report = cache.report
  memory = sum(cache.split(s).nbytes for s in data_lib.SPLITS)
  total = sum(report.positions.values())
  build = cache.manifest["build_seconds"]
  print(f"cache {cache.path}: built in {build:.0f}s from {report.records} "
        f"records; {sum(report.games.values())} games, {total} positions "
        f"({', '.join(f'{s} {report.positions[s]}' for s in data_lib.SPLITS)})"
        f"; {cache.disk_bytes / 2**20:.1f} MiB on disk, "
        f"{memory / 2**20:.1f} MiB in memory ({memory / max(total, 1):.0f} "
        f"bytes a position)")
  print(f"jax {jax.__version__} on {jax.devices()[0].platform}, "
        f"{os.cpu_count()} cores; median of {args.repeats} x {args.steps} "
        f"batches; training peer ~{TRAINING_PEER:.0f} samples/s\n")
  print("| batch | stream (samples/s) | features (samples/s) | "
        "pipeline (samples/s) | pipeline / training |")
  print("|---|---|---|---|---|")
  result = {}
  for b in args.batches:
    s, f, both = measure(train, b, args.steps, args.repeats)
    print(f"| {b} | {s:,.0f} | {f:,.0f} | {both:,.0f} | "
          f"{both / TRAINING_PEER:.1f}x |", flush=True)
    result[f"pipeline_b{b}"] = both
    result[f"features_b{b}"] = f
    result[f"stream_b{b}"] = s
  if not args.no_reference:
    b = args.batches[0]
    _, f, both = measure(train, b, max(1, args.steps // 5), args.repeats,
                         reference=True)
    print(f"| {b} (reference planes) | | {f:,.0f} | {both:,.0f} | "
          f"{both / TRAINING_PEER:.1f}x |")
    result[f"reference_b{b}"] = both
  result.update(cache_mib=cache.disk_bytes / 2**20, memory_mib=memory / 2**20,
                build_s=build, positions=total)
  print("RESULT " + " ".join(
      f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
      for k, v in result.items()))
  return 0


if __name__ == "__main__":
  sys.exit(main())
