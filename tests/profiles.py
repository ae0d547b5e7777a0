"""Hypothesis profiles, loaded by conftest.py before any test module.

`deterministic` (the default, and what CI runs): examples are derived from
each test's name, so a run is a function of the commit. `explore`
(`ALPHAGO_JAX_HYPOTHESIS=explore`): fresh random examples on every run,
ten times as many, for hunting bugs by hand before resolving an issue.
"""

import os

from hypothesis import settings

PROFILE = os.environ.get("ALPHAGO_JAX_HYPOTHESIS", "deterministic")
_FACTOR = {"deterministic": 1, "explore": 10}

settings.register_profile("deterministic", derandomize=True, database=None,
                          print_blob=True)
settings.register_profile("explore", derandomize=False, database=None,
                          print_blob=True)


def load():
  if PROFILE not in _FACTOR:
    raise ValueError(f"ALPHAGO_JAX_HYPOTHESIS must be one of "
                     f"{sorted(_FACTOR)}, got {PROFILE!r}")
  settings.load_profile(PROFILE)


def examples(n: int) -> int:
  """A test's `max_examples`, scaled up under the explore profile (a test's
  own `@settings(max_examples=...)` overrides any profile's)."""
  return n * _FACTOR.get(PROFILE, 1)
