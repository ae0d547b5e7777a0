"""matplotlib for the pictures: pyplot on the non-interactive Agg backend,
imported on first use (it takes longer to import than the whole package),
and a figure written whole or not at all, then closed."""

from __future__ import annotations

import os

from alphago_jax.core.atomic_files import write_atomic


def pyplot():
  """`matplotlib.pyplot`, on the Agg backend (no display needed)."""
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  return plt


def save_figure(fig, path: str, *, dpi: int) -> None:
  """Writes `fig` to `path` in the format its extension names (png, svg,
  pdf, ...) through `atomic_files.write_atomic`, and closes it either way."""
  plt = pyplot()
  ext = os.path.splitext(path)[1][1:].lower()
  try:
    write_atomic(path, lambda f: fig.savefig(f, format=ext or None, dpi=dpi))
  finally:
    plt.close(fig)
