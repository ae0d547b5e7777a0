"""Learning from game records: read, filter, split, cache, stream.

`records` reads SGF collections in place (folders, tar archives), filters,
deduplicates and splits them by game; `positions` turns the selected games
into a compact position cache, built once (`ladders` reads the two ladder
planes into it when asked: `DatasetConfig(ladders=True)`); `batches`
streams shuffled
compact batches from it; `features` rebuilds engine states and AlphaGo
input planes from a compact batch inside `jit`, with a random symmetry per
example.

    cache = data.prepare("../shared/data/kgs-6d", "/tmp/caches")
    train = cache.split("train")
    step = data.make_feature_fn(cache.size)
    for batch in data.batches(train, 256, seed=0):
      out = step(batch, key)   # planes [256, 19, 19, 46], action [256]
"""

from alphago_jax.data.batches import batches
from alphago_jax.data.features import make_feature_fn
from alphago_jax.data.positions import (CacheError, DatasetConfig,
                                        PositionCache, Positions, open_cache,
                                        prepare)
from alphago_jax.data.records import (SPLITS, DataError, Filters,
                                      iter_records, load_records,
                                      select_games)

__all__ = [
    "CacheError", "DataError", "DatasetConfig", "Filters",
    "PositionCache", "Positions", "SPLITS", "batches", "iter_records",
    "load_records", "make_feature_fn", "open_cache", "prepare", "select_games",
]
