"""Evaluation: a batched arena and the statistics to read it."""

from alphago_jax.evaluation.arena import GameResults, Record, play, record
from alphago_jax.evaluation.stats import difference_interval, wilson_interval

__all__ = ["GameResults", "Record", "difference_interval", "play", "record",
           "wilson_interval"]
