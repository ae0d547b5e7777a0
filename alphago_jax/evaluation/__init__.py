"""Evaluation: a batched arena and the statistics to read it."""

from alphago_jax.evaluation.arena import GameResults, Record, play, record
from alphago_jax.evaluation.elo import (EloTable, elo_covariance,
                                        elo_difference, elo_from_score,
                                        elo_interval, elo_intervals,
                                        elo_table, expected_score, fit_elo,
                                        score)
from alphago_jax.evaluation.gnugo_match import (Outcomes, agent_match,
                                                gnugo_match)
from alphago_jax.evaluation.match import MatchResult, match
from alphago_jax.evaluation.stats import difference_interval, wilson_interval
from alphago_jax.evaluation.tournament import round_robin

__all__ = ["EloTable", "GameResults", "MatchResult", "Outcomes", "Record",
           "agent_match", "difference_interval", "elo_covariance",
           "elo_difference", "elo_from_score", "elo_interval",
           "elo_intervals", "elo_table", "expected_score", "fit_elo",
           "gnugo_match", "match", "play", "record", "round_robin", "score",
           "wilson_interval"]
