"""The data-parallel mesh every training stage shares."""

from __future__ import annotations

from typing import Optional

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"


def make_mesh(devices=None) -> Mesh:
  """A 1-D data-parallel mesh over `devices` (default: all)."""
  devices = jax.devices() if devices is None else devices
  return Mesh(np.asarray(devices), (DATA_AXIS,))


def replicate(tree, mesh: Mesh):
  """`tree` on every device of `mesh` (e.g. a network loaded onto one
  device, for a shard_map over the mesh)."""
  return jax.device_put(tree, NamedSharding(mesh, PartitionSpec()))


def check_mesh(mesh: Optional[Mesh], **sizes: int) -> None:
  """Raises ValueError unless `mesh` (None: no mesh, nothing to check) has
  the data axis and it divides every named size (e.g. `batch_size=256`):
  each device takes an equal share."""
  if mesh is None:
    return
  if DATA_AXIS not in mesh.axis_names:
    raise ValueError(f"the mesh needs an axis named {DATA_AXIS!r}, has "
                     f"{mesh.axis_names}")
  n = mesh.shape[DATA_AXIS]
  for name, value in sizes.items():
    if value % n:
      raise ValueError(f"{name}={value} is not divisible by the {n} devices "
                       "of the mesh")


def batch_constraint(mesh: Optional[Mesh]):
  """`tree -> tree` that pins every leaf's leading (batch) axis to the
  mesh's data axis inside a jitted step (the identity without a mesh), so
  that XLA keeps the per-example work sharded rather than gathering it."""
  if mesh is None:
    return lambda tree: tree
  sharding = NamedSharding(mesh, PartitionSpec(DATA_AXIS))
  return lambda tree: jax.tree.map(
      lambda x: jax.lax.with_sharding_constraint(x, sharding), tree)


def jit_over_batch(step, mesh: Optional[Mesh], *, donate_first=False):
  """`jax.jit` of `step(replicated, batch)`: over `mesh`, the first
  argument (a train state, or a network's variables) and every output
  replicated, the batch sharded over the data axis; `donate_first` donates
  the first argument (a train state the step replaces)."""
  donate = (0,) if donate_first else ()
  if mesh is None:
    return jax.jit(step, donate_argnums=donate)
  replicated = NamedSharding(mesh, PartitionSpec())
  sharded = NamedSharding(mesh, PartitionSpec(DATA_AXIS))
  return jax.jit(step, in_shardings=(replicated, sharded),
                 out_shardings=replicated, donate_argnums=donate)
