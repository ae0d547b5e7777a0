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
