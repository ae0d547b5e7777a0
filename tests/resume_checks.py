"""Checks that an interrupted training run resumes to the uninterrupted
result, for the training stages that share the `train(config, data, *,
output_dir, max_samples, log, ...)` signature and write `metrics.jsonl`."""

import os

import jax
import numpy as np

from alphago_jax.training import read_metrics


def interrupt_and_resume(train, output_dir, *, interrupted_at, batch_size):
  """Runs `train` (a callable of `output_dir`, `max_samples`, `log`) to
  `interrupted_at` steps of `batch_size`, then again in the same folder to
  the end; checks the first stopped at that step and the second said it
  resumed from it. Returns the resumed run's final state."""
  part, _ = train(output_dir=output_dir,
                  max_samples=interrupted_at * batch_size)
  assert int(part.iteration) == interrupted_at
  lines = []
  resumed, _ = train(output_dir=output_dir, log=lines.append)
  assert f"resumed from step {interrupted_at}" in lines[0], lines[:1]
  return resumed


def whole_and_resumed(train, run_dir, *, interrupted_at, batch_size):
  """Runs `train` (as for `interrupt_and_resume`) uninterrupted in
  `run_dir/a`, and interrupted then resumed in `run_dir/b`; returns both
  runs' final states."""
  whole, _ = train(output_dir=os.path.join(run_dir, "a"))
  resumed = interrupt_and_resume(train, os.path.join(run_dir, "b"),
                                 interrupted_at=interrupted_at,
                                 batch_size=batch_size)
  return whole, resumed


def metric_by_iteration(run_dir, key):
  """`{iteration: value of key}` over the records of `run_dir`'s
  metrics.jsonl that have it."""
  return {r["iteration"]: r[key] for r in read_metrics(
      os.path.join(run_dir, "metrics.jsonl")) if key in r}


def assert_resumed_equals_whole(whole, resumed, whole_dir, resumed_dir, *,
                                metric, iterations):
  """The resumed run's parameters equal the uninterrupted run's, leaf by
  leaf, and both logged the same `metric` at each of `iterations`."""
  jax.tree.map(np.testing.assert_array_equal, jax.device_get(whole.params),
               jax.device_get(resumed.params))
  a = metric_by_iteration(whole_dir, metric)
  b = metric_by_iteration(resumed_dir, metric)
  for it in iterations:
    assert a[it] == b[it], (metric, it, a[it], b[it])
