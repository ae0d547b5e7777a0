"""The picture of a parameter ablation: win rates and Elo against the
parameter's value, with their 95% intervals (matplotlib, the `plot`
extra). A learning curve is the same picture against training time: Elo of
the snapshots, the anchors as reference lines
(`experiments/go9_learning_curve.py`)."""

from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence, Tuple

from alphago_jax.viz.figure_file import pyplot, save_figure

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
                  log_x: bool = False, title: Optional[str] = None,
                  point_labels: Optional[Sequence[str]] = None,
                  elo_label: str = "Elo (95% interval)",
                  series_label: str = "variants") -> None:
  """Two panels: win rate against `x` (one line per opponent) and Elo
  against `x`, each point with its interval; only the Elo panel when
  `win_rates` is empty.

  Args:
    x: the parameter value of each variant `[P]` (or 0..P-1 with
      `tick_labels`).
    win_rates: line label -> per variant (rate, low, high) or None (may be
      empty).
    elo: per variant (Elo, low, high) or None.
    output: the figure (.png, .svg, .pdf), written to a temporary file and
      renamed.
    xlabel: the x axis.
    tick_labels: names of the variants under the x ticks.
    references: label -> Elo, drawn as horizontal lines (the GNU Go levels).
    log_x: a logarithmic x axis (c_puct).
    title: the figure's title.
    point_labels: a label beside each Elo point (a snapshot's iteration).
    elo_label: the Elo axis.
    series_label: the Elo points' legend entry.
  """
  plt = pyplot()
  if (len(elo) != len(x) or any(len(v) != len(x) for v in win_rates.values())
      or (point_labels is not None and len(point_labels) != len(x))):
    raise ValueError(f"plot_ablation: every series needs {len(x)} points")
  if win_rates:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    panels = (left, right)
  else:
    fig, right = plt.subplots(figsize=(7, 4.5))
    panels = (right,)
  for j, (label, points) in enumerate(win_rates.items()):
    _errorbar(left, _dodged(x, j, len(win_rates), log_x), points, label,
              color=f"C{j}")
  if win_rates:
    left.set_ylim(-0.03, 1.03)
    left.set_ylabel("win rate (95% Wilson interval)")
    left.axhline(0.5, color="grey", lw=0.8, ls=":")
  _errorbar(right, x, elo, series_label, color="black")
  for xi, point, text in zip(x, elo, point_labels or ()):
    if point is not None and all(math.isfinite(v) for v in (xi, point[0])):
      right.annotate(text, (xi, point[0]), textcoords="offset points",
                     xytext=(4, 4), fontsize=7)
  styles = ("--", ":", "-.", "-")
  for i, (label, value) in enumerate((references or {}).items()):
    # GNU Go level i: the colour of its win-rate line on the left.
    right.axhline(value, color=f"C{i}", lw=1.2, ls=styles[i % len(styles)],
                  label=label)
  right.set_ylabel(elo_label)
  for ax in panels:
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
  save_figure(fig, output, dpi=100)
