"""Per-iteration metrics as JSON lines, safe to append to after a crash."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List

import numpy as np


def _plain(value: Any) -> Any:
  if isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "dtype"):
    value = np.asarray(value).item() if np.ndim(value) == 0 else (
        np.asarray(value).tolist())
  if isinstance(value, float) and not math.isfinite(value):
    return repr(value)  # JSON has no NaN/inf.
  return value


class MetricsWriter:
  """Appends one JSON object per line to `path`.

  Each record is written with a single `write` on a file opened with
  O_APPEND and then fsynced, so a crash leaves at most one partial last line
  (which `read_metrics` skips) and never corrupts earlier records.
  """

  def __init__(self, path):
    self.path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)

  def write(self, record: Dict[str, Any]) -> None:
    line = json.dumps({k: _plain(v) for k, v in record.items()},
                      sort_keys=True) + "\n"
    fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
      os.write(fd, line.encode())
      os.fsync(fd)
    finally:
      os.close(fd)


def read_metrics(path) -> List[Dict[str, Any]]:
  """All complete records of a metrics file, in order."""
  records = []
  if not os.path.exists(path):
    return records
  with open(path) as f:
    for line in f:
      if line.endswith("\n"):
        records.append(json.loads(line))
  return records
