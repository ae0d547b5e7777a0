"""Evaluation: a batched arena, matches against GNU Go and a review of
where their games were decided, parameter ablations, and the statistics to
read them."""

from alphago_jax.evaluation.ablation import (AblationConfig, Job,
                                            group_moves, plan, play_job,
                                            run_ablation, variant_agent)
from alphago_jax.evaluation.ablation_report import (Pairing, Summary,
                                                   summarize)
from alphago_jax.evaluation.elo import (EloTable, elo_covariance,
                                        elo_difference, elo_from_score,
                                        elo_interval, elo_intervals,
                                        elo_table, expected_score, fit_elo,
                                        score)
from alphago_jax.evaluation.gnugo_match import (Outcomes, agent_match,
                                                gnugo_match)
from alphago_jax.evaluation.match import MatchResult, match
from alphago_jax.evaluation.match_review import (Review, review_game,
                                                 review_games)
from alphago_jax.evaluation.tournament import round_robin

__all__ = ["AblationConfig", "EloTable", "Job",
           "MatchResult", "Outcomes", "Pairing", "Review", "Summary",
           "agent_match", "elo_covariance",
           "elo_difference", "elo_from_score", "elo_interval",
           "elo_intervals", "elo_table", "expected_score", "fit_elo",
           "gnugo_match", "group_moves", "match", "plan", "play_job",
           "review_game", "review_games", "round_robin",
           "run_ablation", "score", "summarize",
           "variant_agent", ]
