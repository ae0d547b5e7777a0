"""alphago-jax: AlphaGo-style search and learning as pure, composable JAX.

Subpackages: `games` (pure game cores), `search` (mctx-based UCT, Monte Carlo,
exact solvers), `evaluation` (arena, statistics); `models` and `training` hold
the networks and the self-play/learn loop.
"""

from alphago_jax import evaluation, games, search

__version__ = "0.1.0"
__all__ = ["evaluation", "games", "search", "__version__"]
