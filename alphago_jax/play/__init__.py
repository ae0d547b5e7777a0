"""Games between agents, batched and compiled: `play` runs two agents over
a batch of games to their ends; `record` tallies the outcomes by colour;
`play_loop` is the game loop under every compiled match and generator (the
arena, sweeps, policy games, value data), for callers that decide who
moves how in each round and what each round records.

AlphaZero's self-play keeps its own `lax.scan`: it plays fixed-length
chunks of a game stream and stacks every ply's training example, where
`play_loop` plays games to their ends. GNU Go matches run on the host,
one GTP move at a time.
"""

from alphago_jax.play.arena import (GameResults, Record, play, play_loop,
                                    record)

__all__ = ["GameResults", "Record", "play", "play_loop", "record"]
