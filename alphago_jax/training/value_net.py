"""Regression of the value network v_θ on game outcomes.

One compiled step rebuilds the AlphaGo planes of a compact batch
(`data.feature_batch`, a random board symmetry per example), takes a
gradient step on the mean squared error between v_θ(s) and the outcome z
of the game from the view of the player to move at s (the `outcome` field
of `data.Positions`: +1 won, -1 lost), and returns the batch's MSE.
It is the step of the `value_net` stage (`TRAINING_STAGE`, a
`position_stage.make_stage` registered in `training.stage.STAGES`);
`train_value` runs it in the host loop every stage shares
(`stage.run_stage`: metrics, TensorBoard, checkpoints with the
architecture check, resume, SIGTERM/SIGINT, progress), feeding it
`data.batches`; data parallelism is
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
from jax.sharding import Mesh

from alphago_jax.data import features as features_lib
from alphago_jax.data.positions import Positions
from alphago_jax.models.value import (ValueNet, ValueNetConfig, symmetric_mean,
                                      init_value_variables)
from alphago_jax.training import position_stage
from alphago_jax.training import optim
from alphago_jax.training.mesh import (batch_constraint, jit_over_batch,
                                        replicate)
from alphago_jax.training.stage import StageRun, register
from alphago_jax.training.state import TrainState, variables_of

STAGE = "value_net"
OPTIMIZERS = optim.OPTIMIZERS
SCHEDULES = optim.SCHEDULES
make_optimizer = optim.make_optimizer
_FIELDS = position_stage.FIELDS


@dataclasses.dataclass(frozen=True, kw_only=True)
class ValueTrainConfig(position_stage.StageConfig):
  """Network, optimiser and schedule of a value-network run: the fields of
  `optim.ScheduleConfig` (`weight_decay`: c in loss = MSE + c ||θ||²) and
  these.

  The paper's optimiser: SGD, rate 0.003, batches of 32, on 50 GPUs.

  Attributes:
    model: the value network.
    augment: a random one of the 8 board symmetries per example.
  """
  STAGE = STAGE
  MODEL = ValueNetConfig
  NETWORK = "value-network"
  model: ValueNetConfig = ValueNetConfig()
  warmup_steps: int = 200
  total_samples: int = 4_000_000
  weight_decay: float = 1e-5
  augment: bool = True


model_config_from_architecture = ValueTrainConfig.model_from_architecture


def init_value_state(config: ValueTrainConfig, seed: int, *,
                     mesh: Optional[Mesh] = None) -> TrainState:
  """A fresh run: random network, step 0, key from `seed` (no buffer)."""
  return position_stage.init_state(
      config, seed,
      lambda key: init_value_variables(ValueNet(config.model), key),
      mesh=mesh)


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
  network = ValueNet(config.model)

  def loss(params, batch_stats, inputs):
    # No batch norm: the (empty) statistics pass through.
    value, metrics = loss_fn(params, inputs, network=network,
                             weight_decay=config.weight_decay)
    return value, (batch_stats, metrics)

  return position_stage.make_train_step(
      config, mesh, loss=loss, inputs=lambda batch, featured: {
          "planes": featured["planes"], "outcome": featured["outcome"]})


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
  position_stage.check_board("evaluate_value", positions, model.board_size)
  totals = position_stage.summed(
      make_eval_step(model, mesh=mesh), variables, positions,
      batch_size=batch_size, limit=limit, mesh=mesh)
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
  position_stage.check_board("predict_values", positions, model.board_size)
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
                eval_batch_size: int = 256, mesh: Optional[Mesh] = None,
                **loop_options
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
    loop_options: `position_stage.run`'s, as in
      `supervised.train_supervised`.

  Returns:
    the final state and this call's records.

  Raises:
    CheckpointMismatchError: the checkpoint is of another network.
    ValueError: positions of another board size, or too few for a batch.
  """
  for name, positions in {"train": train, **(eval_sets or {})}.items():
    position_stage.check_board("train_value", positions,
                               config.model.board_size, name=name)
  return position_stage.run(
      TRAINING_STAGE, config, position_stage.PositionInputs(
          train, dict(eval_sets) if eval_sets else None, eval_batch_size),
      seed=seed, mesh=mesh, **loop_options)


def _evaluator(run: StageRun):
  inputs = run.inputs

  def evaluator(state):
    out = {}
    for name, positions in inputs.evaluation.items():
      result = evaluate_value(variables_of(state), run.config.model,
                              positions, batch_size=inputs.eval_batch_size,
                              mesh=run.mesh)
      out[f"{name}_mse"] = result["mse"]
      out[f"{name}_sign_accuracy"] = result["sign_accuracy"]
    return out
  return evaluator


# The `value_net` stage (`training.stage.STAGES`): its `StageRun.inputs`
# are `position_stage.PositionInputs` with evaluation sets by name.
TRAINING_STAGE = register(position_stage.make_stage(
    name=STAGE, config_type=ValueTrainConfig,
    init=lambda run: init_value_state(run.config, run.seed, mesh=run.mesh),
    train_step=make_train_step, evaluate=_evaluator,
    postfix=lambda record: {
        "mse": f"{record['mse']:.3f}",
        "pos_s": f"{record['samples_per_second']:.0f}"}))


def load_value(checkpoint_dir, *, step: Optional[int] = None
               ) -> Tuple[ValueNetConfig, Dict[str, Any], int]:
  """The network config, variables and step of a value-network checkpoint.

  Raises:
    FileNotFoundError: no checkpoint in `checkpoint_dir`.
    CheckpointMismatchError: a checkpoint of another kind of network; the
      message names the directory.
  """
  return position_stage.load_network(
      checkpoint_dir, step=step, config_type=ValueTrainConfig, init_state=init_value_state)
