"""The Go Text Protocol (GTP, version 2): both sides of it.

* `vertex`: the one codec between GTP vertices (`D4`, `pass`) and our Go
  actions.
* `client`: `GTPClient`, which drives any GTP engine in a subprocess.
* `gnugo_player`: GNU Go through that client (`gnugo()`, `GnuGoPlayer`).
* `engine`: `GTPEngine`, our players served as a GTP engine
  (`python -m alphago_jax.gtp`, `main(argv)`).
* `players`: `SearchPlayer` (network + AlphaZero search under a clock),
  `AlphaGoPlayer` (AlphaGo's search, reusing its tree between moves) and
  `PolicyPlayer` (greedy network move).
* `presets`: named players, `load_player("az-9x9")`.
* `referee`: two GTP engines play, our rules engine judges every move.
* `watch`: one game of a network against GNU Go, move by move, with its
  policy, visits and values (notebooks, `alphago-jax demo`).
"""

from alphago_jax.gtp.client import (GTPClient, GTPConnectionError, GTPError,
                                    GTPTimeout, colour_name)
from alphago_jax.gtp.engine import GTPEngine, main, serve
from alphago_jax.gtp.gnugo_player import (GNUGO_FALLBACK, RESIGN,
                                          GnuGoNotFoundError, GnuGoPlayer,
                                          find_gnugo, gnugo)
from alphago_jax.gtp.players import (AlphaGoPlayer, Candidate, Decision,
                                     PolicyPlayer, SearchPlayer)
from alphago_jax.gtp.presets import (Preset, available_presets, load_player,
                                     register_preset)
from alphago_jax.gtp.referee import (RefereeResult, referee_game,
                                     referee_match)
from alphago_jax.gtp.vertex import (action_to_vertex, normalize_vertex,
                                    vertex_to_action)
from alphago_jax.gtp.watch import Ply, gnugo_score, score_of, watch_game

__all__ = ["AlphaGoPlayer", "Candidate", "Decision", "GNUGO_FALLBACK",
           "GTPClient", "GTPConnectionError", "GTPEngine", "GTPError",
           "GTPTimeout", "GnuGoNotFoundError", "GnuGoPlayer", "Ply",
           "PolicyPlayer", "Preset", "RESIGN", "RefereeResult", "SearchPlayer",
           "action_to_vertex", "available_presets", "colour_name", "find_gnugo",
           "gnugo", "gnugo_score", "load_player", "main", "normalize_vertex",
           "referee_game", "referee_match", "register_preset", "score_of",
           "serve", "vertex_to_action", "watch_game"]
