"""Search: classic UCT and Monte Carlo on mctx, AlphaZero's and AlphaGo's
network-guided searches, tree reuse between moves, parameter sweeps, exact
solvers, agents."""

from alphago_jax.search.agents import random_agent
from alphago_jax.search.alphago import (AlphaGoParams, AlphaGoSearchConfig,
                                        AlphaGoSearchOutput, AlphaGoStatic,
                                        alphago_action_selection,
                                        alphago_agent, alphago_search,
                                        puct_scores, split_evaluate,
                                        uniform_policy)
from alphago_jax.search.alphazero import (AlphaZeroParams,
                                          AlphaZeroSearchConfig,
                                          AlphaZeroSearchOutput,
                                          AlphaZeroStatic, alphazero_search,
                                          evaluate_states, make_recurrent_fn,
                                          network_agent, policy_agent,
                                          qtransform_raw)
from alphago_jax.search.base import (Agent, CarryingAgent, SearchOutput,
                                     argmax_random_tiebreak)
from alphago_jax.search.monte_carlo import (MonteCarloConfig,
                                            monte_carlo_agent,
                                            monte_carlo_search)
from alphago_jax.search.rollout import (random_legal_action, random_rollout,
                                        rollout_fn)
from alphago_jax.search.sharding import shard_games
from alphago_jax.search.solver import (GameGraph, Solution, alphabeta,
                                       minimax, solve, solver_agent)
from alphago_jax.search.tree_reuse import reroot, subtree
from alphago_jax.search.sweep import (SweepMatchResult, grid, match_outcomes,
                                      num_values, play_games, stack,
                                      sweep_match, sweep_search)
from alphago_jax.search.uct import (UCTConfig, UCTParams, UCTStatic,
                                    rollout_recurrent_fn,
                                    ucb1_action_selection, ucb1_scores,
                                    uct_agent, uct_search)

__all__ = [
    "AlphaGoParams", "AlphaGoSearchConfig", "AlphaGoSearchOutput",
    "AlphaGoStatic", "alphago_action_selection", "alphago_agent",
    "alphago_search", "puct_scores", "split_evaluate", "uniform_policy",
    "AlphaZeroParams", "AlphaZeroSearchConfig", "AlphaZeroSearchOutput",
    "AlphaZeroStatic", "alphazero_search",
    "evaluate_states", "make_recurrent_fn", "network_agent", "policy_agent",
    "qtransform_raw", "rollout_fn",
    "Agent", "CarryingAgent", "GameGraph", "MonteCarloConfig",
    "SearchOutput", "Solution",
    "SweepMatchResult", "grid", "match_outcomes", "num_values", "play_games",
    "stack", "sweep_search",
    "sweep_match",
    "UCTConfig", "UCTParams", "UCTStatic", "alphabeta",
    "argmax_random_tiebreak", "minimax",
    "monte_carlo_agent", "monte_carlo_search", "random_agent",
    "random_legal_action", "random_rollout", "rollout_recurrent_fn",
    "reroot", "shard_games", "solve", "subtree",
    "solver_agent", "ucb1_action_selection", "ucb1_scores", "uct_agent",
    "uct_search",
]
