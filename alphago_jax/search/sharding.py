"""Any search or agent, run with its batch of games split over devices.

A search is vmapped over games, so its batch splits over devices with no
communication: each device searches its own games with its own key. On a
CPU this is how a search uses several cores: XLA runs one device per thread,
and gathers, scatters and small loops (most of a batched tree search) run
on one thread otherwise. Give the process several CPU devices before JAX
starts (`alphago_jax.core.cpu_devices.use_cpu_devices(2)`, or
`XLA_FLAGS=--xla_force_host_platform_device_count=2`); on accelerators, the
devices are the chips.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import chex
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

from alphago_jax.games import base as game_base

_AXIS = "games"

# (states [B], key) -> any pytree with leading axis B: an `Agent` (actions)
# or a search (its output), in the argument order of `Agent`.
BatchedFn = Callable[[game_base.State, chex.PRNGKey], Any]


def shard_games(fn: BatchedFn, devices: Optional[list] = None) -> BatchedFn:
  """Wraps `fn(states, key)` to run on a slice of the batch per device.

  Device `i` of `n` runs `fn(states[i*B/n:(i+1)*B/n],
  jax.random.split(key, n)[i])`, so results are a pure function of the key
  and the device count, and match running those calls one by one (tests
  check this).

  Args:
    fn: an `Agent` or a batched search, `(states [B], key) -> outputs [B]`,
      traceable under `jax.jit`.
    devices: the devices to use (default: all local devices).

  Returns:
    A jitted function with the same signature. The batch size must be a
    multiple of the number of devices.
  """
  devices = list(jax.local_devices() if devices is None else devices)
  n = len(devices)
  if n == 0:
    raise ValueError("shard_games needs at least one device")
  mesh = Mesh(np.asarray(devices), (_AXIS,))

  def per_device(states, keys):
    # check_vma=False: the search's loops mix per-device and replicated
    # values freely; nothing crosses devices, so no collective is needed.
    return fn(states, keys[0])

  sharded = jax.jit(jax.shard_map(
      per_device, mesh=mesh, in_specs=(PartitionSpec(_AXIS),
                                       PartitionSpec(_AXIS)),
      out_specs=PartitionSpec(_AXIS), check_vma=False))

  def run(states: game_base.State, key: chex.PRNGKey):
    batch = jax.tree.leaves(states)[0].shape[0]
    if batch % n:
      raise ValueError(f"batch size {batch} is not a multiple of the "
                       f"{n} devices to shard the games over")
    return sharded(states, jax.random.split(key, n))

  return run
