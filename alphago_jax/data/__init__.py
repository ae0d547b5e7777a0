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

from alphago_jax.data.batches import (batches, epoch_order,
                                      sequential_batches)
from alphago_jax.data.features import (feature_batch, make_feature_fn,
                                       rebuild_state)
from alphago_jax.data.ladders import ladder_planes
from alphago_jax.data.positions import (CacheError, DatasetConfig,
                                        PositionCache, Positions, build_cache,
                                        default_cache_root, open_cache,
                                        prepare, replay_positions)
from alphago_jax.data.records import (SPLITS, DataError, DataReport, Filters,
                                      LoadReport, dedupe_records,
                                      filter_reason, game_key, iter_records,
                                      iter_sgf_files, load_records,
                                      rank_value, select_games, split_of,
                                      split_records)

__all__ = [
    "CacheError", "DataError", "DataReport", "DatasetConfig", "Filters",
    "LoadReport", "PositionCache", "Positions", "SPLITS",
    "batches", "build_cache", "dedupe_records", "default_cache_root",
    "epoch_order", "feature_batch", "filter_reason", "game_key",
    "iter_records", "iter_sgf_files", "ladder_planes", "load_records",
    "make_feature_fn",
    "open_cache", "prepare", "rank_value", "rebuild_state",
    "replay_positions", "select_games", "sequential_batches", "split_of",
    "split_records",
]
