"""What the stages that learn from stored positions share.

Supervised learning of p_σ (`training.supervised`) and value regression
of v_θ (`training.value_net`) both feed compact batches of a seeded
stream (`data.batches`) to one compiled step, run it in the host loop
every stage uses (`host_loop.run`), and load their networks back from a
checkpoint the same way. Only the step, the evaluation and the network
differ; they come in as arguments.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from alphago_jax.data.batches import batches
from alphago_jax.data.positions import Positions
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import host_loop
from alphago_jax.training.mesh import DATA_AXIS
from alphago_jax.training.state import TrainState, variables_of

# The compact-batch fields a step reads (`game` and `valid` stay home;
# `action` also where the target is the outcome, because
# `data.feature_batch` transforms it with the board).
FIELDS = ("stones", "recent", "ply", "ko", "to_play", "action", "outcome")
# Read when the batch has them: the ladder planes of a cache built with
# them (`data.ladders`), which `data.feature_batch` then unpacks.
OPTIONAL_FIELDS = ("ladder",)


def to_device(batch: Dict[str, np.ndarray], mesh: Optional[Mesh],
              fields=FIELDS) -> Dict[str, jax.Array]:
  """A host compact batch (the global batch, same on every process) onto
  the mesh, sharded on its leading axis."""
  fields = tuple(fields) + tuple(f for f in OPTIONAL_FIELDS if f in batch)
  batch = {f: np.asarray(batch[f]) for f in fields}
  if mesh is None:
    return jax.device_put(batch)
  sharding = NamedSharding(mesh, PartitionSpec(DATA_AXIS))
  if jax.process_count() == 1:
    return jax.device_put(batch, sharding)
  # Multi-host: each process hands over its own rows of the global batch.
  p, n = jax.process_index(), jax.process_count()

  def local(x):
    rows = x.shape[0] // n
    return jax.make_array_from_process_local_data(
        sharding, x[p * rows:(p + 1) * rows], x.shape)
  return {f: local(x) for f, x in batch.items()}


def run(state: TrainState,
        step_fn: Callable[[TrainState, Dict[str, jax.Array]], Any],
        train: Positions, *, batch_size: int, seed: int, max_samples: int,
        architecture: Dict[str, Any], mesh: Optional[Mesh],
        evaluator: Optional[Callable[[TrainState], Dict[str, float]]],
        postfix: Callable[[Dict[str, Any]], Dict[str, str]],
        **loop_options) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) `step_fn` on batch `s` of `data.batches(train,
  batch_size, seed)` at step `s`, in `host_loop.run`, until `max_samples`
  positions were seen or a budget ends the call.

  Records get `samples`, `epoch` and `samples_per_second`; `evaluator`
  (or None) runs every `evaluate_every` steps and when the call stops.
  `loop_options` are `host_loop.run`'s (`output_dir`, `resume`,
  `log_every`, `evaluate_every`, the checkpoint and time budgets, `log`,
  `progress`, `tensorboard`).
  """
  per_epoch = max(1, len(train) // batch_size)

  def make_step(start):
    # The stream resumes at the step the state is at.
    stream = batches(train, batch_size, seed,
                     start_step=int(start.iteration))
    return lambda state: step_fn(state, to_device(next(stream), mesh))

  def summarize(metrics, *, step, steps, seconds):
    del metrics
    return {"samples": step * batch_size, "epoch": step / per_epoch,
            "samples_per_second": steps * batch_size / seconds}

  def resumed(done, seconds):
    return (f"resumed from step {done} ({done * batch_size} "
            f"samples, {seconds / 3600:.2f} h of training)")

  return host_loop.run(
      state, make_step, num_steps=max_samples // batch_size,
      architecture=architecture, with_buffer=False, mesh=mesh,
      summarize=summarize, evaluator=evaluator, evaluate_on_stop=True,
      handle_signals=True, resumed_message=resumed, progress_unit="pos",
      progress_scale=batch_size, postfix=postfix, **loop_options)


def load_network(checkpoint_dir, *, step: Optional[int],
                 make_config: Callable[[Dict[str, Any]], Any],
                 init_state: Callable[[Any], TrainState]
                 ) -> Tuple[Any, Dict[str, Any], int]:
  """The network config, variables and step of a checkpoint of a stage.

  `make_config(metadata)` builds the stage's config from the checkpoint's
  metadata (raising `CheckpointMismatchError`, `KeyError`, `TypeError` or
  `ValueError` when it describes another network); `init_state(config)`
  a state of its shapes to restore into.

  Raises:
    FileNotFoundError: no checkpoint in `checkpoint_dir`.
    CheckpointMismatchError: a checkpoint of another kind of network; the
      message names the directory.
  """
  checkpoint_dir = os.path.abspath(os.fspath(checkpoint_dir))
  if ckpt.latest_step(checkpoint_dir) is None:
    raise FileNotFoundError(f"no checkpoint in {checkpoint_dir}")
  meta = ckpt.read_metadata(checkpoint_dir, step)
  meta.pop("with_buffer", None)
  try:
    config = make_config(meta)
  except (ckpt.CheckpointMismatchError, KeyError, TypeError,
          ValueError) as e:
    raise ckpt.CheckpointMismatchError(
        f"checkpoint {checkpoint_dir}: {e}") from None
  state = ckpt.restore_checkpoint(checkpoint_dir, init_state(config),
                                  architecture=config.architecture(),
                                  step=step)
  return config.model, variables_of(state), int(state.iteration)
