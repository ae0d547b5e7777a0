"""Per-iteration metrics: JSON lines (always), TensorBoard (when installed).

The JSONL file is the record of a run and is safe to append to after a
crash. TensorBoard event files are a view of it for people who use
TensorBoard; they need the optional `tensorboardX` package
(`pip install -e '.[tensorboard]'`).
"""

from __future__ import annotations

import json
import math
import os
import uuid
from typing import Any, Dict, List, Optional

import numpy as np

from alphago_jax.core.atomic_files import write_atomic


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
    _drop_partial_last_line(self.path)

  def write(self, record: Dict[str, Any]) -> None:
    line = json.dumps({k: _plain(v) for k, v in record.items()},
                      sort_keys=True) + "\n"
    fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
      os.write(fd, line.encode())
      os.fsync(fd)
    finally:
      os.close(fd)


def _drop_partial_last_line(path) -> None:
  """Cuts a record that a crash left half-written, so that the next append
  starts on a line of its own instead of gluing onto it."""
  if not os.path.exists(path):
    return
  with open(path, "rb+") as f:
    data = f.read()
    if data and not data.endswith(b"\n"):
      f.truncate(data.rfind(b"\n") + 1)
      f.flush()
      os.fsync(f.fileno())


def truncate_metrics(path, last_iteration: int) -> int:
  """Keeps only the complete records with `iteration <= last_iteration`.

  A resumed run repeats the steps after its checkpoint; their records from
  before the crash would otherwise appear twice. The file is rewritten to a
  temporary file and renamed over the old one, so a crash here leaves
  either version whole. Returns the number of records dropped.
  """
  path = os.fspath(path)
  if not os.path.exists(path):
    return 0
  with open(path, "rb") as f:
    data = f.read()
  lines = data.split(b"\n")
  complete, torn = lines[:-1], lines[-1]
  kept = [line for line in complete
          if json.loads(line).get("iteration", 0) <= last_iteration]
  if len(kept) == len(complete) and not torn:
    return 0
  write_atomic(path, b"".join(line + b"\n" for line in kept))
  return len(complete) - len(kept)


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


def tensorboard_available() -> bool:
  try:
    import tensorboardX  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
  except ImportError:
    return False
  return True


class TensorBoardWriter:
  """Writes every numeric field of a record as a scalar at its iteration."""

  def __init__(self, logdir):
    try:
      from tensorboardX import SummaryWriter  # pylint: disable=import-outside-toplevel
    except ImportError as e:
      raise ImportError(
          "TensorBoard logging needs tensorboardX: pip install -e "
          "'.[tensorboard]' (or pass tensorboard=None to log only when it "
          "is installed)") from e
    # tensorboardX names event files by the second and host only, so a
    # writer opened in the same second as the last one (a quick resume)
    # would truncate its file; a random suffix keeps both.
    self._writer = SummaryWriter(
        logdir=os.fspath(logdir),
        filename_suffix=f".{os.getpid()}.{uuid.uuid4().hex[:8]}")

  def write(self, record: Dict[str, Any]) -> None:
    step = int(record["iteration"])
    for key, value in sorted(record.items()):
      value = _plain(value)
      if isinstance(value, (int, float)) and not isinstance(value, bool) \
          and key != "iteration":
        self._writer.add_scalar(key, float(value), global_step=step)
    self._writer.flush()

  def close(self) -> None:
    self._writer.close()


def make_tensorboard_writer(output_dir, tensorboard: Optional[bool]
                            ) -> Optional[TensorBoardWriter]:
  """`output_dir/tensorboard` writer: None never, True always (raises when
  tensorboardX is missing), None when tensorboardX is installed."""
  if output_dir is None or tensorboard is False:
    return None
  if tensorboard is None and not tensorboard_available():
    return None
  return TensorBoardWriter(os.path.join(output_dir, "tensorboard"))
