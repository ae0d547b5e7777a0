"""alphago-jax: AlphaGo-style search and learning as pure, composable JAX.

Subpackages: `games` (pure game cores), `search` (mctx-based UCT, Monte Carlo,
exact solvers), `evaluation` (arena, statistics); `models` and `training` hold
the networks and the self-play/learn loop; `data` reads expert game records
into a compact position cache and streams training batches.
"""

from alphago_jax import data, evaluation, games, search, types

__version__ = "0.1.0"
__all__ = ["data", "evaluation", "games", "search", "types", "__version__"]
