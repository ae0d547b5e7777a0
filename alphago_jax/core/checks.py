"""Checks of config fields and arguments shared by every layer.

A leaf module (it imports nothing of ours), so that models, search, training
and the CLI name a bad setting the same way without depending on each
other. Errors name the field, and a bool never passes for a number.
"""

from __future__ import annotations

import math
from typing import Any, Optional


def check(name: str, ok: bool, value: Any, what: str) -> None:
  """Raises `ValueError("<name> must be <what>, got <value>")` unless ok."""
  if not ok:
    raise ValueError(f"{name} must be {what}, got {value!r}")


def is_int(value: Any) -> bool:
  return not isinstance(value, bool) and isinstance(value, int)


def is_real(value: Any) -> bool:
  """A finite int or float (not a bool)."""
  return (not isinstance(value, bool) and isinstance(value, (int, float))
          and math.isfinite(value))


def check_bool(name: str, value: Any) -> None:
  """Raises ValueError naming `name` unless `value` is True or False (a
  switch given as 0 or "no" is a mistake, not a falsy value)."""
  check(name, isinstance(value, bool), value, "a bool")


def check_int(name: str, value: Any, low: int, high: Optional[int] = None,
              *, optional: bool = False) -> None:
  """Raises ValueError naming `name` unless `value` is a Python int from
  `low` to `high` (no upper bound when `high` is None), or None with
  `optional`.

  For static settings: they fix shapes or loop lengths, so they are never
  traced.
  """
  if optional and value is None:
    return
  bound = f">= {low}" if high is None else f"from {low} to {high}"
  check(name, is_int(value) and value >= low
        and (high is None or value <= high), value,
        f"an integer {bound}{' or None' if optional else ''}")


def check_positive(name: str, value: Any, *, zero: bool = False,
                   optional: bool = False) -> None:
  """Raises ValueError naming `name` unless `value` is a finite number > 0
  (>= 0 with `zero`), or None with `optional`."""
  if optional and value is None:
    return
  bound = ">= 0" if zero else "> 0"
  check(name, is_real(value) and (value >= 0 if zero else value > 0), value,
        f"a finite number {bound}{' or None' if optional else ''}")
