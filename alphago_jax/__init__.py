"""alphago-jax: AlphaGo-style search and learning as pure, composable JAX.

The packages, from the bottom layer up (each imports only those below it;
`pyproject.toml`'s import-linter contracts enforce the order):

* `core`: contracts (`types`), argument checks, statistics, atomic files,
  run directories, CPU devices.
* `games`: pure game cores (`init`, `step`, `observe`) and their registry.
* `models`: the Flax networks; `engines`: outside GTP engines (GNU Go).
* `play`: batched games between agents.
* `search`: mctx-based searches and agents; `data`: game records to
  training batches.
* `training`: the compiled self-play/learn loop and AlphaGo's stages.
* `zoo`: the committed networks and players; `viz`: pictures.
* `gtp`: our players as a GTP engine.
* `evaluation`: matches, ablations, ratings.
* `cli`: the `alphago-jax` command.

`import alphago_jax` loads nothing else: each package is imported on first
use (`alphago_jax.search`), or directly (`from alphago_jax import search`).
"""

import importlib

__version__ = "0.1.0"

_PACKAGES = ("core", "games", "models", "engines", "play", "search", "data",
             "training", "zoo", "viz", "gtp", "evaluation", "cli")

__all__ = list(_PACKAGES) + ["__version__"]


def __getattr__(name):
  if name in _PACKAGES:
    return importlib.import_module(f"{__name__}.{name}")
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return sorted(__all__)
