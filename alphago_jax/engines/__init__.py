"""Outside engines driven as subprocesses over the Go Text Protocol.

`gtp_client.GTPClient` speaks GTP version 2 to any engine; `gnugo_player`
starts GNU Go through it (`gnugo()`, `GnuGoPlayer`), the rules oracle and
first opponent.
"""

from alphago_jax.engines.gnugo_player import (RESIGN, GnuGoNotFoundError,
                                              GnuGoPlayer, find_gnugo, gnugo)
from alphago_jax.engines.gtp_client import (GTPClient, GTPConnectionError,
                                            GTPError, GTPTimeout)

__all__ = ["GTPClient", "GTPConnectionError", "GTPError", "GTPTimeout",
           "GnuGoNotFoundError", "GnuGoPlayer", "RESIGN", "find_gnugo",
           "gnugo"]
