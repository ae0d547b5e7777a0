"""What the stages that learn from stored positions share.

Supervised learning of p_σ (`training.supervised`) and value regression
of v_θ (`training.value_net`) both start a run the same way, take one
compiled gradient step on the AlphaGo planes of a compact batch
(`data.feature_batch`, a random symmetry per example), feed it batches of
a seeded stream (`data.batches`) in the host loop every stage uses
(`make_stage`: one `training.stage.Stage` shape for both), sum an
evaluation step over fixed positions, and load their networks back from a
checkpoint the same way. Only the network, its loss and the evaluation's
sums differ; they come in as arguments.

A stage's config is a `StageConfig`: an `optim.ScheduleConfig` with a
`model` (a `models.plane_net.PlaneNetConfig`) and an `augment` flag.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from alphago_jax.core import config_codec
from alphago_jax.core.checks import check as _check
from alphago_jax.data import features as features_lib
from alphago_jax.data.batches import batches, sequential_batches
from alphago_jax.data.positions import Positions
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import optim
from alphago_jax.training.mesh import (DATA_AXIS, batch_constraint,
                                        check_mesh, jit_over_batch,
                                        replicate)
from alphago_jax.training.stage import Stage, StageRun, run_stage
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class StageConfig(optim.ScheduleConfig, config_codec.JsonMethods):
  """The config of a stage that trains a network on positions: the fields
  of `optim.ScheduleConfig`, and in each stage's subclass `model` (a
  `MODEL`) and `augment` (a random board symmetry per example).

  Defines once what a checkpoint of the stage must match
  (`architecture`), the JSON form (`to_json`, `from_json`, by
  `config_codec`) and the config read back from a checkpoint's metadata
  (`from_architecture`).

  Class attributes:
    STAGE: the stage's name in a checkpoint's metadata.
    MODEL: the `PlaneNetConfig` subclass of `model`.
    NETWORK: what a mismatch's message calls the network.
    MODEL_SIZES: properties of `model` the architecture also names.
    ADDED_FIELDS: fields that the records of earlier runs lack (read as
      their defaults, the settings those runs ran with).
  """
  STAGE: ClassVar[str]
  MODEL: ClassVar[type]
  NETWORK: ClassVar[str]
  MODEL_SIZES: ClassVar[Tuple[str, ...]] = ("num_planes",)
  ADDED_FIELDS: ClassVar[Tuple[str, ...]] = ("decay_fraction",)

  def __post_init__(self):
    _check("model", isinstance(self.model, self.MODEL), self.model,
           f"a {self.MODEL.__name__}")
    super().__post_init__()
    _check("augment", isinstance(self.augment, bool), self.augment,
           "a bool")

  def architecture(self) -> Dict[str, Any]:
    """What a checkpoint must match to be loaded (JSON-able)."""
    return {"stage": self.STAGE, "model": config_codec.to_json(self.model),
            **{name: getattr(self.model, name) for name in self.MODEL_SIZES},
            "optimizer": self.optimizer}

  @classmethod
  def model_from_architecture(cls, arch: Dict[str, Any]):
    """The `MODEL` a checkpoint's metadata `arch` describes.

    Raises:
      ckpt.CheckpointMismatchError: not a checkpoint of this stage.
    """
    if arch.get("stage") != cls.STAGE or "model" not in arch:
      raise ckpt.CheckpointMismatchError(
          f"not a {cls.NETWORK} checkpoint (its metadata describes "
          f"{arch.get('stage') or arch.get('game') or 'another network'!r}: "
          f"{sorted(arch)})")
    return config_codec.from_json(cls.MODEL, arch["model"], "model")

  @classmethod
  def from_architecture(cls, arch: Dict[str, Any]):
    """The config of a checkpoint's network and optimizer (the rest
    default), to restore it."""
    return cls(model=cls.model_from_architecture(arch),
               optimizer=arch["optimizer"])


def check_board(caller: str, positions: Positions, board_size: int, *,
                name: Optional[str] = None) -> None:
  """Raises ValueError unless `positions` (the `name` ones, when named)
  are of the network's `board_size`; the message starts with `caller`."""
  if positions.size != board_size:
    which = "positions" if name is None else f"{name} positions"
    raise ValueError(f"{caller}: the {which} are {positions.size}x"
                     f"{positions.size}, the network is {board_size}x"
                     f"{board_size}")


def init_state(config: optim.ScheduleConfig, seed: int,
               init_variables: Callable[[jax.Array], Dict[str, Any]], *,
               mesh: Optional[Mesh]) -> TrainState:
  """A fresh run: step 0, key from `seed` (no buffer), a fresh optimizer
  (`optim.make_optimizer(config)`) and the network
  `init_variables(init_key)` returns, replicated over `mesh`."""
  check_mesh(mesh, batch_size=config.batch_size)
  init_key, run_key = jax.random.split(jax.random.key(seed))
  variables = init_variables(init_key)
  state = TrainState(
      params=variables["params"], batch_stats=variables["batch_stats"],
      opt_state=optim.make_optimizer(config).init(variables["params"]),
      buffer=None, key=jax.random.key_data(run_key),
      iteration=jnp.int32(0))
  if mesh is not None:
    state = replicate(state, mesh)
  return state


def make_train_step(config, mesh: Optional[Mesh], *,
                    inputs: Callable[[Dict[str, jax.Array],
                                      Dict[str, jax.Array]],
                                     Dict[str, Any]],
                    loss: Callable[..., Tuple[jax.Array, Tuple[Any, Dict]]]
                    ) -> Callable[[TrainState, Dict], Tuple[TrainState,
                                                           Dict]]:
  """The jitted `step(state, compact batch) -> (state, metrics)` of a
  stage's `config`.

  Step `s` rebuilds the planes of the batch (`FIELDS` `[B, ...]`, sharded
  over the mesh's data axis) with the symmetries of `fold_in(key, s)`
  (with `config.augment`); `inputs(batch, featured)` picks the loss's
  inputs from the batch and `data.feature_batch`'s output (`planes`,
  `action`, `outcome`, `symmetry`), and
  `loss(params, batch_stats, inputs) -> (loss, (batch_stats, metrics))`
  gives the gradient. Metrics are the loss's float32 scalars of the batch
  (before the update) and the step's `lr`.
  """
  check_mesh(mesh, batch_size=config.batch_size)
  optimizer = optim.make_optimizer(config)
  schedule = optim.make_schedule(config)
  size, names = config.model.board_size, config.model.features
  constrain = batch_constraint(mesh)

  def step(state: TrainState, batch):
    chex.assert_shape(batch["action"], (config.batch_size,))
    key = jax.random.fold_in(jax.random.wrap_key_data(state.key),
                             state.iteration)
    featured = features_lib.feature_batch(batch, key, size=size, names=names,
                                          augment=config.augment)
    grads, (batch_stats, metrics) = jax.grad(loss, has_aux=True)(
        state.params, state.batch_stats, constrain(inputs(batch, featured)))
    updates, opt_state = optimizer.update(grads, state.opt_state,
                                          state.params)
    metrics["lr"] = jnp.asarray(schedule(state.iteration), jnp.float32)
    return state.replace(params=optax.apply_updates(state.params, updates),
                         batch_stats=batch_stats, opt_state=opt_state,
                         iteration=state.iteration + 1), metrics

  return jit_over_batch(step, mesh, donate_first=True)


def first(positions: Positions, limit: Optional[int]) -> Positions:
  """The first `limit` of `positions` (all of them when None)."""
  if limit is None or limit >= len(positions):
    return positions
  return dataclasses.replace(positions, **{
      f: getattr(positions, f)[:limit] for f in positions.arrays()})


def summed(step: Callable[[Any, Dict[str, jax.Array]], Dict[str, jax.Array]],
           variables, positions: Positions, *, batch_size: int,
           limit: Optional[int] = None, mesh: Optional[Mesh] = None,
           put: Optional[Callable[[Dict[str, np.ndarray]], Any]] = None
           ) -> Dict[str, float]:
  """The sums of `step(variables, compact batch with valid)` over the
  first `limit` of `positions` (all when None), in batches of `batch_size`
  (`data.sequential_batches`: the last padded, its padding not `valid`),
  as floats. `put` hands a host batch to the step (default: `to_device`
  of `FIELDS` and `valid` over `mesh`)."""
  if put is None:
    put = lambda batch: to_device(batch, mesh, FIELDS + ("valid",))
  totals = None
  for batch in sequential_batches(first(positions, limit), batch_size):
    sums = step(variables, put(batch))
    totals = sums if totals is None else jax.tree.map(jnp.add, totals, sums)
  return {k: float(v) for k, v in jax.device_get(totals).items()}


def per_position(step: Callable[[Any, Dict[str, jax.Array]],
                                 Dict[str, jax.Array]],
                 variables, positions: Positions, *, batch_size: int,
                 limit: Optional[int] = None, mesh: Optional[Mesh] = None,
                 put: Optional[Callable[[Dict[str, np.ndarray]], Any]] = None
                 ) -> Dict[str, np.ndarray]:
  """The values of `step(variables, compact batch with valid)`, each `[B]`
  a batch, for the first `limit` of `positions` (all when None), in order,
  the padding of the last batch dropped: host arrays `[n]`, and `game`,
  each position's game (for intervals that treat games as the draws).
  Batches and `put` as in `summed`."""
  if put is None:
    put = lambda batch: to_device(batch, mesh, FIELDS + ("valid",))
  chosen = first(positions, limit)
  parts: Dict[str, List[np.ndarray]] = {}
  for batch in sequential_batches(chosen, batch_size):
    valid = np.asarray(batch["valid"])
    values = jax.device_get(step(variables, put(batch)))
    for k, v in values.items():
      parts.setdefault(k, []).append(np.asarray(v)[valid])
  out = {k: np.concatenate(v) for k, v in parts.items()}
  out["game"] = np.asarray(chosen.game)
  return out


@dataclasses.dataclass(frozen=True)
class PositionInputs:
  """What a position stage's run reads besides its config.

  Attributes:
    train: the training positions.
    evaluation: the stage's evaluation positions (p_σ: one `Positions`;
      v_θ: name -> `Positions`), or None for no evaluation.
    eval_batch_size: positions an evaluation batch.
    init_variables: the network a new run starts from (None: random); a
      resumed run starts from its checkpoint.
  """
  train: Positions
  evaluation: Any = None
  eval_batch_size: int = 256
  init_variables: Optional[Dict[str, Any]] = None


def make_stage(*, name: str, config_type: type,
               init: Callable[[StageRun], TrainState],
               train_step: Callable[..., Callable],
               evaluate: Callable[[StageRun], Callable[[TrainState],
                                                       Dict[str, float]]],
               postfix: Callable[[Dict[str, Any]], Dict[str, str]]
               ) -> Stage:
  """The `Stage` of a network trained on stored positions (its
  `StageRun.inputs` a `PositionInputs`).

  Step `s` runs `train_step(config, mesh=mesh)` on batch `s` of
  `data.batches(train, config.batch_size, seed)`, so the run is a function
  of the seed and the step count, wherever it was interrupted. Records get
  `samples`, `epoch` and `samples_per_second`; checkpoints carry
  `config.architecture()`; the run is evaluated (`evaluate(run)`, when
  `inputs.evaluation` is given) every `evaluate_every` steps (default
  2000) and when it stops. Defaults: a record every 100 steps, a
  checkpoint every 600 s, SIGTERM/SIGINT stop cleanly.
  """
  def make_step(run: StageRun, start: TrainState):
    step_fn = train_step(run.config, mesh=run.mesh)
    # The stream resumes at the step the state is at.
    stream = batches(run.inputs.train, run.config.batch_size, run.seed,
                     start_step=int(start.iteration))
    return lambda state: step_fn(state, to_device(next(stream), run.mesh))

  def loop_defaults(run: StageRun) -> Dict[str, Any]:
    batch_size = run.config.batch_size
    per_epoch = max(1, len(run.inputs.train) // batch_size)

    def summarize(metrics, *, step, steps, seconds):
      del metrics
      return {"samples": step * batch_size, "epoch": step / per_epoch,
              "samples_per_second": steps * batch_size / seconds}

    def resumed(done, seconds):
      return (f"resumed from step {done} ({done * batch_size} "
              f"samples, {seconds / 3600:.2f} h of training)")

    return dict(log_every=100, evaluate_every=2000, evaluate_on_stop=True,
                checkpoint_seconds=600.0, handle_signals=True,
                summarize=summarize, resumed_message=resumed,
                progress_unit="pos", progress_scale=batch_size,
                postfix=postfix)

  return Stage(
      name=name, config_type=config_type, init=init, make_step=make_step,
      architecture=lambda run: run.config.architecture(),
      evaluate=lambda run: (None if run.inputs.evaluation is None
                            else evaluate(run)),
      loop_defaults=loop_defaults)


def run(stage: Stage, config, inputs: PositionInputs, *, seed: int,
        mesh: Optional[Mesh] = None, max_samples: Optional[int] = None,
        eval_every: Optional[int] = None, **loop_options
        ) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) a position `stage` (`make_stage`) with `run_stage`
  up to `max_samples` training positions.

  Args:
    max_samples: stop once this many training positions were seen (default
      `config.total_samples`).
    eval_every: steps between evaluations (default 2000).
    loop_options: `host_loop.run`'s: `output_dir`, `resume`, `log_every`,
      `checkpoint_seconds`, `checkpoint_every`, `max_seconds`,
      `stall_seconds`, `max_train_seconds` (training time summed over
      every call of the run), `log`, `progress`, `tensorboard`.

  Returns:
    the final state and this call's records.

  Raises:
    CheckpointMismatchError: the checkpoint is of another network.
  """
  max_samples = config.total_samples if max_samples is None else max_samples
  if eval_every is not None:
    loop_options["evaluate_every"] = eval_every
  return run_stage(stage, config, seed=seed,
                   num_steps=max_samples // config.batch_size,
                   inputs=inputs, mesh=mesh, **loop_options)


def load_network(checkpoint_dir, *, step: Optional[int],
                 config_type: type,
                 init_state: Callable[[Any, int], TrainState]
                 ) -> Tuple[Any, Dict[str, Any], int]:
  """The network config, variables and step of a checkpoint of a stage.

  `config_type.from_architecture(metadata)` builds the stage's config (a
  `StageConfig`) from the checkpoint's metadata (raising
  `CheckpointMismatchError`, `KeyError`, `TypeError` or `ValueError` when
  it describes another network); `init_state(config, seed)` a state of its
  shapes to restore into.

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
    config = config_type.from_architecture(meta)
  except (ckpt.CheckpointMismatchError, KeyError, TypeError,
          ValueError) as e:
    raise ckpt.CheckpointMismatchError(
        f"checkpoint {checkpoint_dir}: {e}") from None
  state = ckpt.restore_checkpoint(checkpoint_dir,
                                  ckpt.template_of(lambda: init_state(config, 0)),
                                  architecture=config.architecture(),
                                  step=step)
  return config.model, variables_of(state), int(state.iteration)
