"""`alphago_jax.core.cpu_devices`, each case in a fresh process (the count can only
be set before JAX starts, and the test process has long started)."""

import os

import pytest

from alphago_jax.core import cpu_devices

import helpers


def run_python(code, devices=None):
  return helpers.run_python(code, devices=devices, timeout=300).stdout.split()


def test_importing_every_module_starts_no_backend_then_count_takes_effect():
  # Regression: tictactoe's LINES was a jnp array built at import, which
  # started the CPU backend, so no entry point could set a device count (or
  # call jax.distributed.initialize) after `import alphago_jax`.
  out = run_python("""
      import importlib, pkgutil
      import jax
      import alphago_jax
      import sys
      for m in pkgutil.walk_packages(alphago_jax.__path__, "alphago_jax."):
        if not m.name.endswith(".__main__"):  # entry points run on import
          importlib.import_module(m.name)
      # The benchmark peers are never imported by the package.
      print("peers:", [p for p in ("pgx", "pyspiel") if p in sys.modules])
      from alphago_jax.core import cpu_devices
      print(cpu_devices.use_cpu_devices(3), len(jax.devices()))
      try:
        cpu_devices.use_cpu_devices(2)
      except RuntimeError as e:
        print("late:", "before the first JAX operation" in str(e))
  """)
  assert out == ["peers:", "[]", "3", "3", "late:", "True"]


def test_xla_flags_count_wins():
  out = run_python("""
      import jax
      from alphago_jax.core import cpu_devices
      print(cpu_devices.use_cpu_devices(2), len(jax.devices()))
  """, devices=4)
  assert out == ["4", "4"]


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_bad_count_names_the_problem(bad):
  with pytest.raises(ValueError, match="CPU device count"):
    cpu_devices.use_cpu_devices(bad)


def test_default_count_is_a_power_of_two_within_the_cores():
  n = cpu_devices.default_cpu_device_count()
  assert n >= 1 and n & (n - 1) == 0 and n <= (os.cpu_count() or 1)
  assert cpu_devices.default_cpu_device_count(cap=1) == 1
