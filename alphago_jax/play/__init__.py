"""Games between agents, batched and compiled: `play` runs two agents over
a batch of games to their ends; `record` tallies the outcomes by colour."""

from alphago_jax.play.arena import GameResults, Record, play, record

__all__ = ["GameResults", "Record", "play", "record"]
