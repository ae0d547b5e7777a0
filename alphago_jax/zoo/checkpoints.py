"""Where the committed networks live.

In a source checkout (an editable install included) they are the
repository's `checkpoints/`. A wheel carries the folders the presets name
as package data, `alphago_jax/zoo/networks/` (the build step in setup.py
copies them there; docs/design/packaging.md), so an installed package finds
them without the repository.
"""

from __future__ import annotations

import os

CHECKPOINTS_ENV = "ALPHAGO_JAX_CHECKPOINTS"

_HERE = os.path.dirname(os.path.abspath(__file__))
# The installed package's copy (absent from a source checkout).
PACKAGED = os.path.join(_HERE, "networks")
# The source checkout's folder.
REPOSITORY = os.path.join(os.path.dirname(os.path.dirname(_HERE)),
                          "checkpoints")


def checkpoints_root() -> str:
  """`$ALPHAGO_JAX_CHECKPOINTS`, else the installed package's networks,
  else the repository's `checkpoints/`."""
  env = os.environ.get(CHECKPOINTS_ENV)
  if env:
    return env
  if os.path.isdir(PACKAGED):
    return PACKAGED
  return REPOSITORY
