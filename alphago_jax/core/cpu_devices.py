"""Splitting the host CPU into several XLA devices.

XLA runs each CPU device on its own thread, and one device's convolution
uses one core, so a data-parallel mesh over one CPU device per core is how a
run uses every core of a CPU-only machine (`benchmarks/selfplay.py` compares
one device with one per core). Accelerators are
unaffected: the setting only shapes the host platform.

The count must be fixed before JAX starts a backend, i.e. before the first
JAX operation. Importing `alphago_jax` starts none, so entry points can parse
their flags first and call `use_cpu_devices` at the top of `main()`.
"""

from __future__ import annotations

import os
import re
from typing import Optional

import jax

from alphago_jax.core.checks import check_int

_FLAG = re.compile(r"--xla_force_host_platform_device_count=(\d+)")


def default_cpu_device_count(*, cap: int = 64) -> int:
  """The largest power of two <= the machine's cores (and <= `cap`).

  A power of two divides the usual game and batch sizes, so data-parallel
  sharding over these devices needs no padding.
  """
  n = 1
  while n * 2 <= min(os.cpu_count() or 1, cap):
    n *= 2
  return n


def xla_flags_cpu_device_count() -> Optional[int]:
  """The count `XLA_FLAGS` forces on the host platform, or None."""
  match = _FLAG.search(os.environ.get("XLA_FLAGS", ""))
  return int(match.group(1)) if match else None


def use_cpu_devices(count: int) -> int:
  """Give this process `count` XLA CPU devices; returns the count in force.

  An explicit `--xla_force_host_platform_device_count` in `XLA_FLAGS` wins
  (the user said so on the command line), and its count is returned.

  Raises:
    ValueError: `count` < 1.
    RuntimeError: a JAX backend already started in this process.
  """
  check_int("CPU device count", count, 1)
  forced = xla_flags_cpu_device_count()
  if forced is not None:
    return forced
  try:
    jax.config.update("jax_num_cpu_devices", count)
  except RuntimeError as e:  # JAX refuses once a backend has started.
    raise RuntimeError(
        f"use_cpu_devices({count}) came after JAX started its backends; "
        "call it before the first JAX operation (and before importing "
        "packages such as pgx that run JAX code on import)") from e
  return count
