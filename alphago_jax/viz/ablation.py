"""The picture of a parameter ablation: win rates and Elo against the
parameter's value, with their 95% intervals (matplotlib, the `plot`
extra)."""

from __future__ import annotations

import math
import os
from typing import Mapping, Optional, Sequence, Tuple

Interval = Tuple[float, float, float]  # (value, low, high)


def _dodged(x, j, n, log_x):
  """x shifted for series j of n, so that equal points stay visible."""
  if n <= 1 or len(x) < 2:
    return list(x)
  shift = (j - (n - 1) / 2) * 0.012
  if log_x:
    span = math.log(max(x) / min(x))
    return [v * math.exp(shift * span) for v in x]
  span = max(x) - min(x)
  return [v + shift * span for v in x]


def _errorbar(ax, x, points, label, **kwargs):
  pts = [(xi, p) for xi, p in zip(x, points) if p is not None
         and all(math.isfinite(v) for v in p)]
  if not pts:
    return
  xs = [xi for xi, _ in pts]
  ys = [p[0] for _, p in pts]
  lo = [p[0] - p[1] for _, p in pts]
  hi = [p[2] - p[0] for _, p in pts]
  ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=label,
              **kwargs)


def plot_ablation(x: Sequence[float],
                  win_rates: Mapping[str, Sequence[Optional[Interval]]],
                  elo: Sequence[Optional[Interval]], output: str, *,
                  xlabel: str, tick_labels: Optional[Sequence[str]] = None,
                  references: Optional[Mapping[str, float]] = None,
                  log_x: bool = False, title: Optional[str] = None) -> None:
  """Two panels: win rate against `x` (one line per opponent) and Elo
  against `x`, each point with its interval.

  Args:
    x: the parameter value of each variant `[P]` (or 0..P-1 with
      `tick_labels`).
    win_rates: line label -> per variant (rate, low, high) or None.
    elo: per variant (Elo, low, high) or None.
    output: the figure (.png, .svg, .pdf), written to a temporary file and
      renamed.
    xlabel: the x axis.
    tick_labels: names of the variants under the x ticks.
    references: label -> Elo, drawn as horizontal lines (the GNU Go levels).
    log_x: a logarithmic x axis (c_puct).
    title: the figure's title.
  """
  try:
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  except ImportError as e:
    raise ImportError("plots need matplotlib: pip install -e '.[plot]'"
                      ) from e
  if len(elo) != len(x) or any(len(v) != len(x) for v in win_rates.values()):
    raise ValueError(f"plot_ablation: every series needs {len(x)} points")
  fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
  for j, (label, points) in enumerate(win_rates.items()):
    _errorbar(left, _dodged(x, j, len(win_rates), log_x), points, label,
              color=f"C{j}")
  left.set_ylim(-0.03, 1.03)
  left.set_ylabel("win rate (95% Wilson interval)")
  left.axhline(0.5, color="grey", lw=0.8, ls=":")
  _errorbar(right, x, elo, "variants", color="black")
  styles = ("--", ":", "-.")
  for i, (label, value) in enumerate((references or {}).items()):
    # GNU Go level i: the colour of its win-rate line on the left.
    right.axhline(value, color=f"C{i}", lw=1.2, ls=styles[i % 3],
                  label=label)
  right.set_ylabel("Elo (95% interval)")
  for ax in (left, right):
    ax.set_xlabel(xlabel)
    if log_x:
      ax.set_xscale("log")
      ax.set_xticks(list(x))
      ax.set_xticklabels([f"{v:g}" for v in x])
    elif tick_labels is not None:
      ax.set_xticks(list(x))
      ax.set_xticklabels(tick_labels, rotation=30, ha="right", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
  if title:
    fig.suptitle(title, fontsize=10)
  fig.tight_layout()
  tmp = f"{output}.tmp{os.getpid()}{os.path.splitext(output)[1]}"
  fig.savefig(tmp, dpi=100)
  plt.close(fig)
  os.replace(tmp, output)
