"""Search parameters as traced values: checks that run only where concrete.

Every search splits its config into a static part (what fixes shapes or code
paths: simulations, policy kind, depth, rollout policy) and a pytree of
parameters (`flax.struct` dataclasses of arrays: c_puct, noise, λ, ...)
passed as an argument, the way mctx takes `pb_c_init` as an array. Changing
a parameter then reuses the compiled program, and `jax.vmap` over a stacked
parameter pytree runs a sweep as one program (`search.sweep`).

A parameter is checked where its value is known: from Python numbers at
config construction, and from concrete arrays (also stacked ones) when a
search is called outside `jit`. Inside a trace the values pass through.
"""

from __future__ import annotations

from typing import Mapping, Optional, Tuple

import chex
import jax
import numpy as np

# (low, high, low_open): bounds of a field; None is unbounded.
Bounds = Tuple[Optional[float], Optional[float], bool]


def is_concrete(value) -> bool:
  """True when `value` is a number or array whose value is known here."""
  return not any(isinstance(x, jax.core.Tracer)
                 for x in jax.tree.leaves(value))


def check_number(name: str, value, *, low=None, high=None,
                 low_open: bool = False) -> None:
  """Raises ValueError naming `name` unless every element of `value` is a
  finite number within the bounds; traced values pass unchecked."""
  if not is_concrete(value):
    return
  if isinstance(value, bool) or (
      isinstance(value, (np.ndarray, jax.Array))
      and np.asarray(value).dtype == np.bool_):
    ok = False
  else:
    try:
      arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
      arr = None
    ok = arr is not None and arr.size > 0 and bool(np.all(np.isfinite(arr)))
    if ok and low is not None:
      ok = bool(np.all(arr > low) if low_open else np.all(arr >= low))
    if ok and high is not None:
      ok = bool(np.all(arr <= high))
  if not ok:
    bounds = []
    if low is not None:
      bounds.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
      bounds.append(f"<= {high}")
    raise ValueError(f"{name} must be a finite number "
                     f"{' and '.join(bounds)}, got {value!r}")


def check_params(params, bounds: Mapping[str, Bounds]) -> None:
  """Checks every field of a parameter pytree named in `bounds`."""
  for name, (low, high, low_open) in bounds.items():
    check_number(name, getattr(params, name), low=low, high=high,
                 low_open=low_open)


def as_float(value) -> chex.Array:
  """A float32 array: parameters are arrays, so one trace serves all values."""
  return np.asarray(value, np.float32)


def resolve(config, params, config_type, static_type, params_type):
  """`(static, params)` from a full config (params default to its own) or a
  static part with explicit params; checks concrete parameter values."""
  if isinstance(config, config_type):
    static, own = config.split()
    params = own if params is None else params
  elif isinstance(config, static_type):
    static = config
    if params is None:
      raise ValueError(f"a {static_type.__name__} needs explicit params "
                       f"({params_type.__name__})")
  else:
    raise ValueError(f"config must be a {config_type.__name__} or a "
                     f"{static_type.__name__}, got {config!r}")
  if not isinstance(params, params_type):
    raise ValueError(f"params must be a {params_type.__name__}, got "
                     f"{type(params).__name__}")
  return static, params.check()
