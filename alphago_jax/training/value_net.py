"""Regression of the value network v_θ on game outcomes.

One compiled step rebuilds the AlphaGo planes of a compact batch
(`data.feature_batch`, a random board symmetry per example), takes a
gradient step on the mean squared error between v_θ(s) and the outcome z
of the game from the view of the player to move at s (the `outcome` field
of `data.Positions`: +1 won, -1 lost), and returns the batch's MSE.
`train_value` runs it in the host loop every stage shares (`host_loop.run`:
metrics, TensorBoard, checkpoints with the architecture check, resume,
SIGTERM/SIGINT, progress), feeding it `data.batches`; data parallelism is
the `"data"` mesh axis of `supervised`, the batch sharded, the state
replicated. The learning curve evaluates MSE on named position sets (e.g. a
fixed subset of the training positions and the test split: the paper's
overfitting comparison, where successive positions of one KGS game are
strongly correlated, against one position a game of self-play).

Positions with outcome 0 (a draw, or an unknown result in a record) carry
no target; `decided` drops them before training.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh

from alphago_jax.core.checks import check as _check
from alphago_jax.data import features as features_lib
from alphago_jax.data.batches import sequential_batches
from alphago_jax.data.positions import Positions
from alphago_jax.models.value import (ValueNet, ValueNetConfig, symmetric_mean,
                                      init_value_variables)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import position_stage
from alphago_jax.training import optim
from alphago_jax.training.mesh import (batch_constraint, check_mesh,
                                        jit_over_batch, replicate)
from alphago_jax.training.state import TrainState, variables_of

STAGE = "value_net"
OPTIMIZERS = optim.OPTIMIZERS
SCHEDULES = optim.SCHEDULES
make_optimizer = optim.make_optimizer
_FIELDS = position_stage.FIELDS


@dataclasses.dataclass(frozen=True, kw_only=True)
class ValueTrainConfig(optim.ScheduleConfig):
  """Network, optimiser and schedule of a value-network run: the fields of
  `optim.ScheduleConfig` (`weight_decay`: c in loss = MSE + c ||θ||²) and
  these.

  The paper's optimiser: SGD, rate 0.003, batches of 32, on 50 GPUs.

  Attributes:
    model: the value network.
    augment: a random one of the 8 board symmetries per example.
  """
  model: ValueNetConfig = ValueNetConfig()
  warmup_steps: int = 200
  total_samples: int = 4_000_000
  weight_decay: float = 1e-5
  augment: bool = True

  def __post_init__(self):
    _check("model", isinstance(self.model, ValueNetConfig), self.model,
           "a ValueNetConfig")
    super().__post_init__()
    _check("augment", isinstance(self.augment, bool), self.augment,
           "a bool")

  def architecture(self) -> Dict[str, Any]:
    """What a checkpoint must match to be loaded (JSON-able)."""
    model = dataclasses.asdict(self.model)
    model["features"] = list(model["features"])
    return {"stage": STAGE, "model": model,
            "num_planes": self.model.num_planes,
            "optimizer": self.optimizer}

  def to_json(self) -> Dict[str, Any]:
    out = dataclasses.asdict(self)
    out["model"]["features"] = list(self.model.features)
    return out

  @classmethod
  def from_json(cls, obj: Dict[str, Any]) -> "ValueTrainConfig":
    obj = dict(obj)
    model = dict(obj.pop("model"))
    model["features"] = tuple(model["features"])
    return cls(model=ValueNetConfig(**model), **obj)


def model_config_from_architecture(arch: Dict[str, Any]) -> ValueNetConfig:
  """The `ValueNetConfig` a checkpoint's metadata describes.

  Raises:
    ckpt.CheckpointMismatchError: not a value-network checkpoint.
  """
  if arch.get("stage") != STAGE or "model" not in arch:
    raise ckpt.CheckpointMismatchError(
        f"not a value-network checkpoint (its metadata describes "
        f"{arch.get('stage') or arch.get('game') or 'another network'!r}: "
        f"{sorted(arch)})")
  model = dict(arch["model"])
  model["features"] = tuple(model["features"])
  return ValueNetConfig(**model)


def init_value_state(config: ValueTrainConfig, seed: int, *,
                     mesh: Optional[Mesh] = None) -> TrainState:
  """A fresh run: random network, step 0, key from `seed` (no buffer)."""
  check_mesh(mesh, batch_size=config.batch_size)
  init_key, run_key = jax.random.split(jax.random.key(seed))
  variables = init_value_variables(ValueNet(config.model), init_key)
  state = TrainState(
      params=variables["params"], batch_stats=variables["batch_stats"],
      opt_state=make_optimizer(config).init(variables["params"]),
      buffer=None, key=jax.random.key_data(run_key),
      iteration=jnp.int32(0))
  if mesh is not None:
    state = replicate(state, mesh)
  return state


def loss_fn(params, inputs, *, network: ValueNet, weight_decay: float):
  """MSE of v_θ against the outcome; returns (loss, metrics). `inputs`:
  `planes` `[B, N, N, C]`, `outcome` float32 `[B]` in {-1, 0, 1}."""
  value = network.apply({"params": params}, inputs["planes"])
  chex.assert_equal_shape([value, inputs["outcome"]])
  mse = jnp.mean((value - inputs["outcome"]) ** 2)
  l2 = sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params))
  loss = mse + weight_decay * l2
  return loss, {"loss": loss, "mse": mse, "l2": l2,
                "value_mean": jnp.mean(value)}


def make_train_step(config: ValueTrainConfig, *, mesh: Optional[Mesh] = None
                    ) -> Callable[[TrainState, Dict], Tuple[TrainState,
                                                           Dict]]:
  """The jitted `step(state, compact batch) -> (state, metrics)`.

  The batch is `Positions.take` arrays `[B, ...]` (`_FIELDS`), sharded
  over the mesh's data axis; metrics are float32 scalars of the batch
  (before the update): loss, mse, l2, value_mean, lr. Cached on its
  arguments, so a resume in the same process reuses the compiled step.
  """
  return _make_train_step(config, mesh)


@functools.lru_cache(maxsize=8)
def _make_train_step(config, mesh):
  check_mesh(mesh, batch_size=config.batch_size)
  network = ValueNet(config.model)
  optimizer = make_optimizer(config)
  schedule = optim.make_schedule(config)
  size, names = config.model.board_size, config.model.features
  constrain = batch_constraint(mesh)

  def step(state: TrainState, batch):
    chex.assert_shape(batch["outcome"], (config.batch_size,))
    key = jax.random.fold_in(jax.random.wrap_key_data(state.key),
                             state.iteration)
    inputs = features_lib.feature_batch(batch, key, size=size, names=names,
                                        augment=config.augment)
    inputs = constrain({"planes": inputs["planes"],
                        "outcome": inputs["outcome"]})
    grads, metrics = jax.grad(loss_fn, has_aux=True)(
        state.params, inputs, network=network,
        weight_decay=config.weight_decay)
    updates, opt_state = optimizer.update(grads, state.opt_state,
                                          state.params)
    metrics["lr"] = jnp.asarray(schedule(state.iteration), jnp.float32)
    return state.replace(params=optax.apply_updates(state.params, updates),
                         opt_state=opt_state,
                         iteration=state.iteration + 1), metrics

  return jit_over_batch(step, mesh, donate_first=True)


@functools.lru_cache(maxsize=8)
def make_eval_step(model: ValueNetConfig, *, mesh: Optional[Mesh] = None):
  """Jitted `(variables, compact batch with valid) -> sums`: squared
  error, sign agreement (v and z of the same sign) and valid positions.
  No augmentation."""
  network = ValueNet(model)
  size, names = model.board_size, model.features
  constrain = batch_constraint(mesh)

  def step(variables, batch):
    inputs = constrain(features_lib.feature_batch(
        batch, jax.random.key(0), size=size, names=names, augment=False))
    value = network.apply({"params": variables["params"]}, inputs["planes"])
    z = inputs["outcome"]
    valid = batch["valid"].astype(jnp.float32)
    return {"sq": jnp.sum((value - z) ** 2 * valid),
            "sign": jnp.sum((value * z > 0) * valid),
            "positions": jnp.sum(valid)}

  return jit_over_batch(step, mesh)


def evaluate_value(variables, model: ValueNetConfig, positions: Positions,
                   *, batch_size: int = 256, mesh: Optional[Mesh] = None,
                   limit: Optional[int] = None) -> Dict[str, float]:
  """MSE against the outcome, the share of positions whose value has the
  outcome's sign (`sign_accuracy`) and the count, over `positions` (the
  first `limit`; all when None)."""
  if positions.size != model.board_size:
    raise ValueError(f"evaluate_value: the positions are {positions.size}x"
                     f"{positions.size}, the network is {model.board_size}x"
                     f"{model.board_size}")
  if limit is not None and limit < len(positions):
    positions = dataclasses.replace(positions, **{
        f: getattr(positions, f)[:limit] for f in positions.arrays()})
  step = make_eval_step(model, mesh=mesh)
  totals = None
  for batch in sequential_batches(positions, batch_size):
    sums = step(variables, position_stage.to_device(batch, mesh, _FIELDS + ("valid",)))
    totals = sums if totals is None else jax.tree.map(jnp.add, totals,
                                                      sums)
  totals = {k: float(v) for k, v in jax.device_get(totals).items()}
  n = max(totals["positions"], 1.0)
  return {"mse": totals["sq"] / n, "sign_accuracy": totals["sign"] / n,
          "positions": int(totals["positions"])}


def predict_values(variables, model: ValueNetConfig, positions: Positions,
                   *, batch_size: int = 256, mesh: Optional[Mesh] = None,
                   limit: Optional[int] = None, symmetries: int = 1
                   ) -> Tuple[np.ndarray, np.ndarray]:
  """(v, z): v_θ of each position and its outcome for the player to move,
  each `[P]` (the first `limit` positions; all when None), for
  per-position errors and intervals (`evaluate_value` gives the sums).
  `symmetries=8` averages v_θ over the board's 8 symmetries
  (`models.value.symmetric_mean`); 1: the position as it stands."""
  if symmetries not in (1, 8):
    raise ValueError(f"predict_values: symmetries must be 1 or 8, got "
                     f"{symmetries!r}")
  if positions.size != model.board_size:
    raise ValueError(f"predict_values: the positions are {positions.size}x"
                     f"{positions.size}, the network is {model.board_size}x"
                     f"{model.board_size}")
  n = len(positions) if limit is None else min(limit, len(positions))
  network = ValueNet(model)
  constrain = batch_constraint(mesh)
  if mesh is not None:  # a loaded network sits on one device
    variables = replicate(variables, mesh)

  @jax.jit
  def values(variables, batch):
    inputs = constrain(features_lib.feature_batch(
        batch, jax.random.key(0), size=model.board_size,
        names=model.features, augment=False))
    apply = lambda v, planes: network.apply({"params": v["params"]}, planes)
    value = (apply(variables, inputs["planes"]) if symmetries == 1 else
             symmetric_mean(apply, variables, inputs["planes"]))
    return value, inputs["outcome"]

  vs, zs = [], []
  for start in range(0, n, batch_size):
    index = np.arange(start, start + batch_size) % n  # pad the last batch
    batch = positions.take(index)
    v, z = jax.device_get(values(variables,
                                 position_stage.to_device(batch, mesh, _FIELDS)))
    keep = min(batch_size, n - start)
    vs.append(np.asarray(v)[:keep])
    zs.append(np.asarray(z, np.float32)[:keep])
  if not vs:
    return np.zeros((0,), np.float32), np.zeros((0,), np.float32)
  return np.concatenate(vs), np.concatenate(zs)


def decided(positions: Positions) -> Positions:
  """The positions with a known, decisive outcome (outcome != 0), read
  into memory."""
  keep = np.flatnonzero(np.asarray(positions.outcome) != 0)
  return dataclasses.replace(positions, **positions.take(keep))


def train_value(config: ValueTrainConfig, train: Positions, *, seed: int,
                eval_sets: Optional[Mapping[str, Positions]] = None,
                output_dir: Optional[str] = None,
                mesh: Optional[Mesh] = None,
                max_samples: Optional[int] = None,
                max_seconds: Optional[float] = None,
                stall_seconds: Optional[float] = None,
                max_train_seconds: Optional[float] = None,
                log_every: int = 100, eval_every: int = 2000,
                eval_batch_size: int = 256,
                checkpoint_seconds: float = 600.0,
                checkpoint_every: int = 0, resume: bool = True,
                log: Optional[Callable[[str], None]] = None,
                progress: bool = False,
                tensorboard: Optional[bool] = None
                ) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) value-network training.

  Step `s` trains on batch `s` of `data.batches(train, batch_size, seed)`
  with symmetries from `fold_in(key, s)`, so the run is a function of the
  seed and the step count, wherever it was interrupted.

  Args:
    train: the training positions (their `outcome` is the target).
    eval_sets: name -> positions, evaluated every `eval_every` steps and
      when the call stops; records get `<name>_mse` and
      `<name>_sign_accuracy` (e.g. {"train": a fixed subset of train,
      "test": the test split}).
    output_dir: `metrics.jsonl`, `tensorboard/` and `checkpoints/` go there.
    max_samples: stop once this many training positions were seen (default
      `config.total_samples`).
    max_seconds, stall_seconds, max_train_seconds, log_every,
    checkpoint_seconds, checkpoint_every, resume, log, progress,
    tensorboard: as in `supervised.train_supervised`.

  Returns:
    the final state and this call's records.

  Raises:
    CheckpointMismatchError: the checkpoint is of another network.
    ValueError: positions of another board size, or too few for a batch.
  """
  for name, positions in {"train": train, **(eval_sets or {})}.items():
    if positions.size != config.model.board_size:
      raise ValueError(
          f"train_value: the {name} positions are {positions.size}x"
          f"{positions.size}, the network is {config.model.board_size}x"
          f"{config.model.board_size}")
  max_samples = config.total_samples if max_samples is None else max_samples

  def evaluator(state):
    out = {}
    for name, positions in eval_sets.items():
      result = evaluate_value(variables_of(state), config.model, positions,
                              batch_size=eval_batch_size, mesh=mesh)
      out[f"{name}_mse"] = result["mse"]
      out[f"{name}_sign_accuracy"] = result["sign_accuracy"]
    return out

  return position_stage.run(
      init_value_state(config, seed, mesh=mesh),
      make_train_step(config, mesh=mesh), train,
      batch_size=config.batch_size, seed=seed, max_samples=max_samples,
      architecture=config.architecture(), mesh=mesh,
      evaluator=evaluator if eval_sets else None,
      postfix=lambda record: {
          "mse": f"{record['mse']:.3f}",
          "pos_s": f"{record['samples_per_second']:.0f}"},
      output_dir=output_dir, resume=resume, log_every=log_every,
      evaluate_every=eval_every, checkpoint_every=checkpoint_every,
      checkpoint_seconds=checkpoint_seconds, max_seconds=max_seconds,
      stall_seconds=stall_seconds,
      max_train_seconds=max_train_seconds, log=log, progress=progress,
      tensorboard=tensorboard)


def load_value(checkpoint_dir, *, step: Optional[int] = None
               ) -> Tuple[ValueNetConfig, Dict[str, Any], int]:
  """The network config, variables and step of a value-network checkpoint.

  Raises:
    FileNotFoundError: no checkpoint in `checkpoint_dir`.
    CheckpointMismatchError: a checkpoint of another kind of network; the
      message names the directory.
  """
  return position_stage.load_network(
      checkpoint_dir, step=step, init_state=lambda c: init_value_state(c, 0),
      make_config=lambda meta: ValueTrainConfig(
          model=model_config_from_architecture(meta),
          optimizer=meta["optimizer"]))
