"""Checks of config fields shared by the training stages' dataclasses:
errors name the field, and a bool never passes for a number."""

import math


def check(name, ok, value, what):
  """Raises `ValueError("<name> must be <what>, got <value>")` unless ok."""
  if not ok:
    raise ValueError(f"{name} must be {what}, got {value!r}")


def is_int(v) -> bool:
  return not isinstance(v, bool) and isinstance(v, int)


def is_real(v) -> bool:
  """A finite int or float (not a bool)."""
  return (not isinstance(v, bool) and isinstance(v, (int, float))
          and math.isfinite(v))
