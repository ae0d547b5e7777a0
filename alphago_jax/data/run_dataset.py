"""The dataset of a training run on game records: the JSON a run saves in
its config.json (what `--resume` reads back) from its options, and the
train and test positions it names.

Shared by the stages that train on records (`alphago-jax train sl-policy`,
`rollout-policy`) so that they filter, split and cut openings the same way.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional, Tuple

from alphago_jax.data.positions import DatasetConfig, PositionCache, Positions
from alphago_jax.data.positions import prepare
from alphago_jax.data.records import Filters


def dataset_from_args(args: Any, *, limit: Optional[int] = None,
                      ladders: bool = False) -> Dict[str, Any]:
  """The run's dataset JSON (`DatasetConfig.to_json()` plus `min_ply`)
  from a stage's options (`size`, `min_rank`, `fractions`, `min_ply`);
  `ladders`: a cache with the ladder planes (for a network that reads
  them). ValueError names a bad flag."""
  if args.min_ply < 0:
    raise ValueError(f"--min-ply must be >= 0, got {args.min_ply}")
  min_rank = None if args.min_rank.lower() == "none" else args.min_rank
  extra = {} if args.fractions is None else {
      "fractions": tuple(args.fractions)}
  dataset = DatasetConfig(filters=Filters(size=args.size, min_rank=min_rank),
                          seed=0, limit=limit, ladders=ladders,
                          **extra).to_json()
  dataset["min_ply"] = args.min_ply
  return dataset


def open_splits(data: str, cache_root: Optional[str],
                dataset: Dict[str, Any], *, monitor: str = "test",
                log: Callable[[str], None] = print
                ) -> Tuple[PositionCache, Positions, Positions]:
  """(cache, train, monitored) of `data` under a run's dataset JSON: the
  train split and the `monitor` split ("validation" or "test"), building
  the cache on first use; `DataError` when the records cannot be read."""
  config = DatasetConfig.from_json(
      {k: v for k, v in dataset.items() if k != "min_ply"}, "dataset")
  cache = prepare(data, cache_root, config,
                  workers=min(2, os.cpu_count() or 1), log=log)
  # Runs from before --min-ply have no such field: every position.
  min_ply = int(dataset.get("min_ply", 0))
  return (cache, cache.split("train").from_ply(min_ply),
          cache.split(monitor).from_ply(min_ply))


def same_source(saved: Optional[str], data: str) -> bool:
  """Whether `data` is the source a run saved (`saved`, as given to it,
  relative to wherever it ran): compared by the folder's or archive's
  name, the part of a path that survives moving the data."""
  name = lambda path: os.path.basename(os.path.normpath(path))
  return saved is not None and name(saved) == name(data)
