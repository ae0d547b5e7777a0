"""Shuffled streams of compact batches from a position split.

`batches(positions, batch_size, seed)` yields `Positions.take` dicts of B
positions: each epoch visits every position once in an order drawn from
`(seed, epoch)`, so a stream is deterministic from its seed and can resume
at any step (`start_step`) without replaying the earlier ones. Within a
batch the rows are read in index order (neighbouring rows share pages of
the memory-mapped cache); the batch's composition is what is random.
Batches are small (118 bytes a position on 19x19), so the host side costs
little next to the compiled feature step (`features.make_feature_fn`).
`sequential_batches` reads a split once in order, for evaluation.
"""

from __future__ import annotations

from typing import Dict, Iterator, Optional

import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.data.positions import Positions


def epoch_order(num: int, seed: int, epoch: int) -> np.ndarray:
  """The permutation of `range(num)` used in `epoch` (int64 `[num]`)."""
  return np.random.default_rng([seed, epoch]).permutation(num)


def batches(positions: Positions, batch_size: int, seed: int = 0, *,
            start_step: int = 0, num_steps: Optional[int] = None
            ) -> Iterator[Dict[str, np.ndarray]]:
  """Compact batches of `batch_size` positions, forever (or `num_steps`).

  Each epoch is a fresh permutation; its last partial batch is dropped, so
  every batch has the same shape (one compilation) and each epoch draws
  `len(positions) // batch_size` batches.

  Args:
    positions: a split (`PositionCache.split`).
    batch_size: B.
    seed: the stream's seed.
    start_step: the first batch to yield (to resume a run).
    num_steps: how many batches; None for an endless stream.

  Raises:
    ValueError: a batch larger than the split.
  """
  n = len(positions)
  check_int("batches: batch_size", batch_size, 1)
  per_epoch = n // batch_size
  if per_epoch == 0:
    raise ValueError(f"batches: the {positions.split} split has {n} "
                     f"positions, fewer than one batch of {batch_size}")
  step = start_step
  epoch, order = -1, None
  while num_steps is None or step < start_step + num_steps:
    e, i = divmod(step, per_epoch)
    if e != epoch:
      epoch, order = e, epoch_order(n, seed, e)
    index = np.sort(order[i * batch_size:(i + 1) * batch_size])
    yield positions.take(index)
    step += 1


def sequential_batches(positions: Positions, batch_size: int
                       ) -> Iterator[Dict[str, np.ndarray]]:
  """One pass over `positions` in order (evaluation), every batch of
  `batch_size` rows: the last one is padded with copies of row 0. Each
  batch has `valid`, bool `[B]`, False on padding."""
  n = len(positions)
  check_int("batches: batch_size", batch_size, 1)
  for start in range(0, n, batch_size):
    index = np.arange(start, start + batch_size)
    valid = index < n
    batch = positions.take(np.where(valid, index, 0))
    batch["valid"] = valid
    yield batch
