"""Search: classic UCT and pure Monte Carlo on mctx, AlphaZero's and
AlphaGo's network-guided searches, exact solvers, parameter sweeps, and the
agents built on them.

The names here are the searches' entry points: a config (hyperparameters;
`split()` gives the shape-fixing static part and the traced part), the
search itself (`[B]` root states in, a `SearchOutput`-like record out), and
an `Agent` (`(states [B], key) -> actions [B]`) for the arena. The modules
hold the rest: `uct`, `monte_carlo`, `alphazero`, `alphago`, `gumbel_alphago` (their static
and traced parameter types, selection rules and helpers), `rollout`,
`solver`, `sweep`, `tree_reuse`, `sharding`.
"""

from alphago_jax.search.agents import random_agent
from alphago_jax.search.alphago import (AlphaGoSearchConfig, alphago_agent,
                                        alphago_search)
from alphago_jax.search.alphazero import (AlphaZeroSearchConfig,
                                          alphazero_search, network_agent,
                                          policy_agent)
from alphago_jax.search.base import Agent, CarryingAgent, SearchOutput
from alphago_jax.search.gumbel_alphago import gumbel_alphago_search
from alphago_jax.search.monte_carlo import (MonteCarloConfig,
                                            monte_carlo_agent,
                                            monte_carlo_search)
from alphago_jax.search.sharding import shard_games
from alphago_jax.search.solver import solver_agent
from alphago_jax.search.sweep import grid, sweep_match, sweep_search
from alphago_jax.search.uct import UCTConfig, uct_agent, uct_search

__all__ = [
    "Agent", "AlphaGoSearchConfig", "AlphaZeroSearchConfig", "CarryingAgent",
    "MonteCarloConfig", "SearchOutput", "UCTConfig", "alphago_agent",
    "alphago_search", "alphazero_search", "grid", "gumbel_alphago_search", "monte_carlo_agent",
    "monte_carlo_search", "network_agent", "policy_agent", "random_agent",
    "shard_games", "solver_agent", "sweep_match", "sweep_search",
    "uct_agent", "uct_search",
]
