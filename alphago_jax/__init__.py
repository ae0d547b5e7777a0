"""alphago-jax: AlphaGo-style search and learning as pure, composable JAX.

Subpackages: `games` (pure game cores), `search` (mctx-based UCT, Monte Carlo,
AlphaZero and AlphaGo search, sweeps, exact solvers), `evaluation` (arena,
matches, statistics), `gtp` (the GTP engine, client, referee and named
players); `models` and `training` hold
the networks and the self-play/learn loop; `data` reads expert game records
into a compact position cache and streams training batches.
"""

from alphago_jax import data, evaluation, games, gtp, search, types

__version__ = "0.1.0"
__all__ = ["data", "evaluation", "games", "gtp", "search", "types",
           "__version__"]
