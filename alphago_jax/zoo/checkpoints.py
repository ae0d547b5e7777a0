"""Where the committed networks live."""

from __future__ import annotations

import os

CHECKPOINTS_ENV = "ALPHAGO_JAX_CHECKPOINTS"


def checkpoints_root() -> str:
  """`$ALPHAGO_JAX_CHECKPOINTS`, else the repository's `checkpoints/`."""
  env = os.environ.get(CHECKPOINTS_ENV)
  if env:
    return env
  return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
      os.path.abspath(__file__)))), "checkpoints")
