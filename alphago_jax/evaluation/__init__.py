"""Evaluation: a batched arena, matches against GNU Go and a review of
where their games were decided, parameter ablations, and the statistics to
read them."""

from alphago_jax.evaluation.ablation import AblationConfig, run_ablation
from alphago_jax.evaluation.ablation_report import Summary, summarize
from alphago_jax.evaluation.elo import EloTable, elo_table, fit_elo
from alphago_jax.evaluation.gnugo_match import (Outcomes, agent_match,
                                                gnugo_match)
from alphago_jax.evaluation.match import MatchResult, match
from alphago_jax.evaluation.match_review import Review, review_games
from alphago_jax.evaluation.tournament import round_robin

__all__ = [
    "AblationConfig", "EloTable", "MatchResult", "Outcomes",
    "Review", "Summary", "agent_match", "elo_table",
    "fit_elo", "gnugo_match", "match", "review_games",
    "round_robin", "run_ablation", "summarize",
]
