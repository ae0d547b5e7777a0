"""Result files: the JSON a measuring command writes beside its printed
figures, so that a figure quoted in the documents can be traced to the
command, the commit and the inputs that produced it.

A result file is one JSON object: the figures and whatever identifies the
inputs (the caller's record), plus `command` (the command line, its paths
relative to the working directory when they lie under it or beside it, so
that no machine's absolute paths are recorded), `commit` (the source
checkout's, or null) and `date` (UTC, ISO 8601). It is written atomically:
an interrupted command leaves the previous file or none.
"""

import datetime
import hashlib
import json
import os
import shlex
import sys
from typing import Any, Dict, Mapping, Optional, Sequence

import jax
import numpy as np

from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.core.rundir import git_commit

RESERVED = ("command", "commit", "date")


def variables_sha256(variables):
  """sha256 of a network's variables (every leaf's path, dtype, shape and
  bytes, in path order): the same weights give the same hash wherever they
  are stored."""
  h = hashlib.sha256()
  leaves = jax.tree_util.tree_flatten_with_path(variables)[0]
  for path, leaf in sorted(leaves, key=lambda kv: jax.tree_util.keystr(
      kv[0])):
    a = np.ascontiguousarray(np.asarray(leaf))
    h.update(f"{jax.tree_util.keystr(path)}:{a.dtype}:{a.shape};".encode())
    h.update(a.tobytes())
  return h.hexdigest()


def portable_path(path: str) -> str:
  """`path` relative to the working directory (absolute paths name one
  machine's layout); unchanged when it is relative already or on another
  drive."""
  if not os.path.isabs(path):
    return path
  try:
    return os.path.relpath(path)
  except ValueError:
    return path


def command_line(argv: Sequence[str], script: Optional[str] = None) -> str:
  """The shell command `python SCRIPT ARGV...` (SCRIPT: `sys.argv[0]`),
  each absolute path in it made relative (`portable_path`)."""
  script = sys.argv[0] if script is None else script
  words = [portable_path(script)]
  for word in argv:
    if "=" in word and word.startswith("--"):
      flag, value = word.split("=", 1)
      words.append(f"{flag}={portable_path(value)}")
    else:
      words.append(portable_path(word))
  return shlex.join(["python", *words])


def write_result(path: str, record: Mapping[str, Any], *,
                 argv: Sequence[str], script: Optional[str] = None
                 ) -> Dict[str, Any]:
  """Writes `record` with `command`, `commit` and `date` to `path` (JSON,
  atomically); returns what it wrote.

  Raises:
    ValueError: `record` uses one of the reserved keys, or holds a value
      JSON cannot write (NaN included: a figure is a number or null).
  """
  clash = sorted(set(record) & set(RESERVED))
  if clash:
    raise ValueError(f"write_result: {clash} are written by write_result "
                     f"itself")
  out = {**record, "command": command_line(argv, script),
         "commit": git_commit(),
         "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
             timespec="seconds")}
  try:
    text = json.dumps(out, indent=1, allow_nan=False) + "\n"
  except (TypeError, ValueError) as e:
    raise ValueError(f"write_result: {path}: {e}") from None
  write_atomic(path, text, make_dirs=True)
  return out
