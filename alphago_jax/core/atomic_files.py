"""Files that a crash never leaves torn.

Every results, metrics, config and data file the framework writes whole goes
through `write_atomic`: a reader, or a run resumed after Ctrl-C or kill -9,
sees the old file or the new one, never half of one. A leaf module (it
imports nothing of ours).
"""

from __future__ import annotations

import os
from typing import BinaryIO, Callable, Optional, Union

# Temporary files are named `<path>.tmp-<pid>`, so that a cleaner can tell a
# killed writer's leftovers (`temporary_writer`) from a live writer's.
TEMPORARY = ".tmp-"


def temporary_path(path: str) -> str:
  """Where this process writes `path` before renaming it into place."""
  return f"{path}{TEMPORARY}{os.getpid()}"


def temporary_writer(name: str) -> Optional[int]:
  """The pid of the process that wrote the temporary file `name`, or None
  when `name` is not a temporary file's."""
  head, sep, pid = name.rpartition(TEMPORARY)
  if not sep or not head or not pid.isdigit():
    return None
  return int(pid)


def fsync_dir(path: str) -> None:
  """Makes a rename in directory `path` durable. Filesystems that cannot
  fsync a directory are let be: the rename itself is still atomic."""
  try:
    fd = os.open(path, os.O_RDONLY)
  except OSError:
    return
  try:
    os.fsync(fd)
  except OSError:
    pass
  finally:
    os.close(fd)


def write_atomic(path: str,
                 data: Union[str, bytes, Callable[[BinaryIO], None]], *,
                 make_dirs: bool = False) -> None:
  """Writes `path` whole or not at all.

  Args:
    path: the file.
    data: its contents: text (UTF-8), bytes, or a function that writes them
      to the binary file it is given.
    make_dirs: create `path`'s folder first.

  The contents go to a temporary file beside `path`, fsynced, then renamed
  over it, and the rename is fsynced. On an error the temporary file is
  removed and `path` is left as it was.
  """
  directory = os.path.dirname(os.path.abspath(path))
  if make_dirs:
    os.makedirs(directory, exist_ok=True)
  tmp = temporary_path(path)
  try:
    with open(tmp, "wb") as f:
      if callable(data):
        data(f)
      else:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except BaseException:
    try:
      os.remove(tmp)
    except FileNotFoundError:
      pass
    raise
  fsync_dir(directory)
