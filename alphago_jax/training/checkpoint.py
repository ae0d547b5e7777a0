"""Checkpoints of a training run with orbax, guarded by an architecture check.

Each checkpoint is a step directory holding two items: `state` (params,
batch stats, optimiser state, counters, PRNG key data and, optionally, the
replay buffer) and `metadata` (JSON: the run's `TrainConfig.architecture`).
Orbax writes a step into a temporary directory and renames it when complete,
so a crash mid-save leaves no half-written step that `latest_step` would
pick up (tests check both).

Restoring reads the metadata first and raises `CheckpointMismatchError`,
naming the differing fields, before it touches the state, so loading a
checkpoint of another network or game fails clearly and never alters the
files.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp

from alphago_jax.training.state import TrainState


class CheckpointMismatchError(ValueError):
  """The checkpoint was written for another architecture or game."""


def _manager(directory, max_to_keep: Optional[int] = None, create=False):
  directory = os.path.abspath(os.fspath(directory))
  options = ocp.CheckpointManagerOptions(
      max_to_keep=max_to_keep, create=create,
      enable_async_checkpointing=False)
  return ocp.CheckpointManager(directory, options=options,
                               item_names=("state", "metadata"))


def _saved_tree(state: TrainState, with_buffer: bool) -> Dict[str, Any]:
  tree = {"params": state.params, "batch_stats": state.batch_stats,
          "opt_state": state.opt_state, "key": state.key,
          "iteration": state.iteration}
  if with_buffer:
    tree["buffer"] = state.buffer
  return tree


def save_checkpoint(directory, state: TrainState, *,
                    architecture: Dict[str, Any], with_buffer: bool = True,
                    max_to_keep: Optional[int] = 3) -> int:
  """Saves `state` as step `state.iteration`; returns that step."""
  step = int(jax.device_get(state.iteration))
  with _manager(directory, max_to_keep, create=True) as mngr:
    mngr.save(step, args=ocp.args.Composite(
        state=ocp.args.StandardSave(_saved_tree(state, with_buffer)),
        metadata=ocp.args.JsonSave(dict(architecture,
                                        with_buffer=with_buffer))))
    mngr.wait_until_finished()
  return step


def steps_directory(directory: str) -> str:
  """The folder of orbax steps of a run: a run directory keeps them in
  `checkpoints/`; the folder of steps itself is accepted too."""
  inner = os.path.join(directory, "checkpoints")
  return inner if os.path.isdir(inner) else directory


def run_directory(directory: str) -> str:
  """The run directory that `directory` (a run directory or its folder of
  steps) belongs to."""
  if os.path.isdir(os.path.join(directory, "checkpoints")):
    return directory
  return os.path.dirname(os.path.abspath(directory))


def run_config(directory: str) -> dict:
  """The `config.json` of the run that `directory` (a run directory or its
  folder of steps) belongs to; {} when it has none (a bare folder of
  steps)."""
  path = os.path.join(run_directory(directory), "config.json")
  if not os.path.exists(path):
    return {}
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def latest_step(directory) -> Optional[int]:
  """The newest complete checkpoint step in `directory`, or None."""
  if not os.path.isdir(directory):
    return None
  with _manager(directory) as mngr:
    return mngr.latest_step()


def all_steps(directory) -> List[int]:
  """Every complete checkpoint step kept in `directory`, oldest first."""
  if not os.path.isdir(directory):
    return []
  with _manager(directory) as mngr:
    return sorted(int(s) for s in mngr.all_steps())


def read_metadata(directory, step: Optional[int] = None) -> Dict[str, Any]:
  """The JSON metadata of a checkpoint (default: the latest)."""
  with _manager(directory) as mngr:
    step = mngr.latest_step() if step is None else step
    if step is None:
      raise FileNotFoundError(f"no checkpoint in {directory}")
    restored = mngr.restore(step, args=ocp.args.Composite(
        metadata=ocp.args.JsonRestore()))
    return dict(restored["metadata"])


def template_of(make_state: Callable[[], TrainState]) -> TrainState:
  """A state of `make_state()`'s structure, shapes and dtypes, all zeros,
  to restore a checkpoint into: traced abstractly (`jax.eval_shape`), so
  no network is initialised and nothing but the zeros is computed."""
  shapes = jax.eval_shape(make_state)
  return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)


def _step_and_metadata(mngr, directory, step: Optional[int]
                       ) -> "tuple[int, Dict[str, Any]]":
  """`step` (default the latest) of an open manager and its JSON metadata.

  Raises:
    FileNotFoundError: no checkpoint in `directory`.
  """
  step = mngr.latest_step() if step is None else step
  if step is None:
    raise FileNotFoundError(f"no checkpoint in {directory}")
  meta = dict(mngr.restore(step, args=ocp.args.Composite(
      metadata=ocp.args.JsonRestore()))["metadata"])
  return step, meta


def restore_checkpoint(directory, template: TrainState, *,
                       architecture: Dict[str, Any],
                       step: Optional[int] = None) -> TrainState:
  """Loads a checkpoint into the structure of `template`.

  Args:
    directory: the checkpoint directory.
    template: a state of the right structure (e.g. a fresh one); where the
      checkpoint has no buffer, the template's buffer is kept.
    architecture: `TrainConfig.architecture(game)` of the current run.
    step: which step; default the latest.

  Raises:
    CheckpointMismatchError: the checkpoint's architecture differs.
    FileNotFoundError: no checkpoint.
  """
  with _manager(directory) as mngr:
    step, meta = _step_and_metadata(mngr, directory, step)
    with_buffer = bool(meta.pop("with_buffer", False))
    diffs = [f"{k}: checkpoint has {meta.get(k)!r}, this run has "
             f"{architecture.get(k)!r}"
             for k in sorted(set(meta) | set(architecture))
             if meta.get(k) != architecture.get(k)]
    if diffs:
      raise CheckpointMismatchError(
          f"checkpoint {directory} step {step} does not match this run; "
          + "; ".join(diffs))
    target = _saved_tree(template, with_buffer)
    abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, target)
    tree = mngr.restore(step, args=ocp.args.Composite(
        state=ocp.args.StandardRestore(abstract)))["state"]
  return template.replace(
      params=tree["params"], batch_stats=tree["batch_stats"],
      opt_state=tree["opt_state"], key=tree["key"],
      iteration=tree["iteration"],
      buffer=tree["buffer"] if with_buffer else template.buffer)


def restore_network(directory, template, *, step: Optional[int] = None):
  """(metadata, variables, step) of a checkpoint's network alone: its
  `{"params", "batch_stats"}`, restored into the structure of `template`
  (variables of the same network, e.g. fresh ones), whatever else the
  state holds (optimiser, buffer) left unread. The caller checks the
  metadata.

  Raises:
    FileNotFoundError: no checkpoint in `directory`.
  """
  with _manager(directory) as mngr:
    step, meta = _step_and_metadata(mngr, directory, step)
    meta.pop("with_buffer", None)
    wanted = {k: template[k] for k in ("params", "batch_stats")}
    # On this process's first device, wherever the run was saved from.
    device = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(
        x.shape, x.dtype, sharding=device), wanted)
    tree = mngr.restore(step, args=ocp.args.Composite(
        state=ocp.args.PyTreeRestore(
            abstract, partial_restore=True,
            restore_args=ocp.checkpoint_utils.construct_restore_args(
                abstract))))[
            "state"]
  return meta, {k: tree[k] for k in ("params", "batch_stats")}, int(step)
