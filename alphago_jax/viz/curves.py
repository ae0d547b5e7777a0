"""Training curves from any `metrics.jsonl` (every stage writes one).

`plot_metrics` draws chosen numeric fields against `iteration` (one panel
per field, one line per run), from the JSON lines that `host_loop` writes
for AlphaZero and the supervised stages alike. Needs matplotlib (the
`plot` extra).
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, List, Optional, Sequence

from alphago_jax.training.metrics import read_metrics
from alphago_jax.viz.figure_file import pyplot, save_figure


def latest_records(path: str) -> List[Dict[str, Any]]:
  """The records of a metrics file, the last one of each iteration, in
  iteration order (files written before resumes dropped repeated steps can
  hold an iteration twice)."""
  by_step: Dict[int, Dict[str, Any]] = {}
  for record in read_metrics(path):
    if "iteration" in record:
      by_step[int(record["iteration"])] = record
  return [by_step[k] for k in sorted(by_step)]


def _numeric(value) -> Optional[float]:
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    return None
  return float(value) if math.isfinite(value) else None


def numeric_fields(records: Sequence[Dict[str, Any]]) -> List[str]:
  """Fields holding a finite number in some record (not the counters)."""
  skip = {"iteration", "elapsed", "seconds", "train_seconds"}
  return sorted({k for r in records for k, v in r.items()
                 if k not in skip and _numeric(v) is not None})


def plot_metrics(runs: Dict[str, str], output: str, *,
                 fields: Optional[Sequence[str]] = None,
                 title: Optional[str] = None, columns: int = 2) -> List[str]:
  """Plots `fields` of each run's metrics file against its iteration.

  Args:
    runs: label -> path of a `metrics.jsonl` (or a run directory).
    output: the figure (.png, .svg, .pdf: by extension), written to a
      temporary file and renamed.
    fields: the fields to draw (default: every numeric field, up to 12).
    title: the figure's title.

  Returns:
    the fields drawn.

  Raises:
    ValueError: no records, or a field that no run has.
  """
  data = {}
  for label, path in runs.items():
    if os.path.isdir(path):
      path = os.path.join(path, "metrics.jsonl")
    records = latest_records(path)
    if not records:
      raise ValueError(f"{path}: no metrics records")
    data[label] = records
  everything = sorted({f for r in data.values() for f in numeric_fields(r)})
  if fields is None:
    fields = everything[:12]
  missing = [f for f in fields if f not in everything]
  if missing:
    raise ValueError(f"no run has numeric field(s) {missing}; fields: "
                     f"{everything}")
  plt = pyplot()
  columns = max(1, min(columns, len(fields)))
  rows = math.ceil(len(fields) / columns)
  fig, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3 * rows),
                           squeeze=False)
  for ax, field in zip(axes.flat, fields):
    for label, records in data.items():
      points = [(r["iteration"], _numeric(r.get(field))) for r in records]
      points = [(x, y) for x, y in points if y is not None]
      if points:
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="." if len(xs) < 40 else None, label=label)
    ax.set_title(field, fontsize=10)
    ax.set_xlabel("iteration")
    ax.grid(alpha=0.3)
    if len(data) > 1:
      ax.legend(fontsize=8)
  for ax in list(axes.flat)[len(fields):]:
    ax.axis("off")
  if title:
    fig.suptitle(title)
  fig.tight_layout()
  save_figure(fig, output, dpi=110)
  return list(fields)
