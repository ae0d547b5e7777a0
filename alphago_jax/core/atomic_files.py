"""Files that a crash never leaves torn.

Every results, metrics, config and data file the framework writes whole goes
through `write_atomic`: a reader, or a run resumed after Ctrl-C or kill -9,
sees the old file or the new one, never half of one; `read_json` reads such a
file back with an error that says what is wrong. A leaf module (it imports
nothing of ours).
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO, Callable, Optional, Union

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


def read_json(path: str, *, error: Callable[[str], Exception], missing: str,
              unreadable: Callable[[Exception], str], **load_options) -> Any:
  """The JSON value in `path`.

  Args:
    path: the file.
    error: the exception type (or factory) raised, from a message.
    missing: the message where there is no such file.
    unreadable: the message, from the cause, where the file cannot be
      read or is not JSON.
    **load_options: passed to `json.load` (e.g. `parse_constant`).
  """
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f, **load_options)
  except FileNotFoundError:
    raise error(missing) from None
  except (OSError, ValueError) as e:
    raise error(unreadable(e)) from None
