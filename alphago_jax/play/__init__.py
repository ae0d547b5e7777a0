"""Games between agents, batched and compiled: `play` runs two agents over
a batch of games to their ends; `record` tallies the outcomes by colour;
`play_loop` is the game loop under every match (the arena's and the
sweeps'), for callers that decide who moves how in each round."""

from alphago_jax.play.arena import (GameResults, Record, play, play_loop,
                                    record)

__all__ = ["GameResults", "Record", "play", "play_loop", "record"]
