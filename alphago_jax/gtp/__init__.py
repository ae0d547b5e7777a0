"""The Go Text Protocol (GTP, version 2): both sides of it.

* `vertex`: the one codec between GTP vertices (`D4`, `pass`) and our Go
  actions.
* `client`: `GTPClient`, which drives any GTP engine in a subprocess.
* `gnugo_player`: GNU Go through that client (`gnugo()`, `GnuGoPlayer`).
"""

from alphago_jax.gtp.client import (GTPClient, GTPConnectionError, GTPError,
                                    GTPTimeout, colour_name)
from alphago_jax.gtp.gnugo_player import (GNUGO_FALLBACK, RESIGN, GnuGoNotFoundError,
                                   GnuGoPlayer, find_gnugo, gnugo)
from alphago_jax.gtp.vertex import (action_to_vertex, normalize_vertex,
                                    vertex_to_action)

__all__ = ["GNUGO_FALLBACK", "GTPClient", "GTPConnectionError", "GTPError",
           "GTPTimeout", "GnuGoNotFoundError", "GnuGoPlayer", "RESIGN",
           "action_to_vertex", "colour_name", "find_gnugo", "gnugo",
           "normalize_vertex", "vertex_to_action"]
