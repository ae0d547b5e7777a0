"""Our players served as a Go Text Protocol (version 2) engine.

`GTPEngine` answers GTP commands for any `zoo` player (`python -m
alphago_jax.gtp`, `main(argv)`, `serve`). The other side of the protocol,
driving an outside engine, is `alphago_jax.engines`.
"""

from alphago_jax.gtp.engine import GTPEngine, main, serve

__all__ = ["GTPEngine", "main", "serve"]
