"""Small, self-describing network snapshots: the variables of one iteration
(no optimiser state, no buffer), for learning curves and for sharing a
trained network. One msgpack file per iteration, written to a temporary file
and renamed, with the architecture it belongs to beside the weights."""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Any, Dict, List, Tuple

import jax
from flax import serialization

from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.training.checkpoint import CheckpointMismatchError
from alphago_jax.training.loop import variables_of
from alphago_jax.training.state import TrainState


def save(directory: str, state: TrainState, *,
         architecture: Dict[str, Any]) -> str:
  """Writes `directory/iter_<n>.msgpack`; returns its path."""
  os.makedirs(directory, exist_ok=True)
  iteration = int(jax.device_get(state.iteration))
  payload = {"architecture": json.dumps(architecture, sort_keys=True),
             "iteration": iteration,
             "variables": jax.device_get(variables_of(state))}
  path = os.path.join(directory, f"iter_{iteration:06d}.msgpack")
  write_atomic(path, serialization.msgpack_serialize(payload))
  return path


def load(path: str, *, architecture: Dict[str, Any]) -> Tuple[Any, int]:
  """`(variables, iteration)` of a snapshot.

  Raises:
    CheckpointMismatchError: the snapshot is of another game or network.
  """
  with open(path, "rb") as f:
    payload = serialization.msgpack_restore(f.read())
  saved = json.loads(payload["architecture"])
  want = json.loads(json.dumps(architecture, sort_keys=True))
  diffs = [k for k in sorted(set(saved) | set(want))
           if saved.get(k) != want.get(k)]
  if diffs:
    raise CheckpointMismatchError(
        f"snapshot {path} does not match this run in: {', '.join(diffs)} "
        f"(snapshot {[saved.get(k) for k in diffs]}, run "
        f"{[want.get(k) for k in diffs]})")
  return payload["variables"], int(payload["iteration"])


def list_snapshots(directory: str) -> List[Tuple[int, str]]:
  """`(iteration, path)` of every snapshot in `directory`, oldest first."""
  out = []
  for path in glob.glob(os.path.join(directory, "iter_*.msgpack")):
    m = re.search(r"iter_(\d+)\.msgpack$", path)
    if m:
      out.append((int(m.group(1)), path))
  return sorted(out)
