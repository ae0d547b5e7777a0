"""Supervised learning of the policy network p_σ from game records.

One compiled step rebuilds the AlphaGo planes of a compact batch
(`data.feature_batch`, a random symmetry per example), takes a gradient
step on the cross-entropy of the move played, and returns the batch's
top-1/top-5 accuracy. It is the step of the `sl_policy` stage
(`TRAINING_STAGE`, a `position_stage.make_stage` registered in
`training.stage.STAGES`); `train_supervised` runs it in the host loop every
stage shares (`stage.run_stage`: metrics, TensorBoard, checkpoints with
the architecture check, resume, progress), feeding it compact batches
(`data.batches`, resumable at any step); the state is a `TrainState`
without a buffer. Data parallelism is the same `"data"` mesh axis as
AlphaZero's: every batch is sharded over it, the state replicated.

A run stops on a sample budget (`max_samples`), a wall-clock budget for this
call (`max_seconds`), a training-time budget summed over calls
(`max_train_seconds`) or SIGTERM/SIGINT, and always saves before it stops;
checkpoints also go out every `checkpoint_seconds`, so a killed run loses at
most that much. Resuming continues the same batch stream and keys, so an
interrupted run ends where an uninterrupted one does.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Dict, List, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from alphago_jax.core.checks import check as _check
from alphago_jax.data import features as features_lib
from alphago_jax.data.positions import Positions
from alphago_jax.games import go_features, symmetry
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables,
                                       symmetric_log_policy)
from alphago_jax.training import position_stage
from alphago_jax.training import optim
from alphago_jax.training.mesh import batch_constraint, jit_over_batch
from alphago_jax.training.stage import StageRun, register
from alphago_jax.training.state import TrainState, variables_of

STAGE = "sl_policy"
OPTIMIZERS = optim.OPTIMIZERS
SCHEDULES = optim.SCHEDULES
make_schedule = optim.make_schedule
make_optimizer = optim.make_optimizer
_FIELDS = position_stage.FIELDS


@dataclasses.dataclass(frozen=True, kw_only=True)
class SupervisedConfig(position_stage.StageConfig):
  """Network, optimiser and schedule of a supervised policy run: the
  fields of `optim.ScheduleConfig` and these.

  The paper's optimiser: plain SGD, rate 0.003 halved every 80M steps,
  batches of 16.

  Attributes:
    model: the policy network.
    mask_illegal: give illegal moves `MASKED_LOGIT` in the loss (the
      paper's softmax covers every point; off by default).
    augment: a random one of the 8 board symmetries per example.
  """
  STAGE = STAGE
  MODEL = PolicyNetConfig
  NETWORK = "policy-network"
  MODEL_SIZES = ("num_planes", "num_actions")
  model: PolicyNetConfig = PolicyNetConfig()
  mask_illegal: bool = False
  augment: bool = True

  def __post_init__(self):
    super().__post_init__()
    _check("mask_illegal", isinstance(self.mask_illegal, bool),
           self.mask_illegal, "a bool")


model_config_from_architecture = SupervisedConfig.model_from_architecture


def init_supervised_state(config: SupervisedConfig, seed: int, *,
                          mesh: Optional[Mesh] = None,
                          variables: Optional[Dict[str, Any]] = None
                          ) -> TrainState:
  """A fresh run: step 0, key from `seed` (no buffer), a fresh optimizer,
  and a random network or `variables` (e.g. a trained one, or one made
  deeper by `models.deepen_policy`).

  Raises:
    ValueError: `variables` are not of `config.model`'s network.
  """
  def init_variables(key):
    fresh = init_policy_variables(PolicyNet(config.model), key)
    if variables is None:
      return fresh
    shapes = lambda tree: jax.tree.map(jnp.shape, tree)
    if shapes(variables) != shapes(fresh):
      raise ValueError(
          f"the starting network is not a {config.model.num_layers}x"
          f"{config.model.filters} {config.model.trunk} network on "
          f"{config.model.num_planes} planes")
    return variables

  return position_stage.init_state(config, seed, init_variables, mesh=mesh)


def topk_correct(logits: chex.Array, action: chex.Array, k: int
                 ) -> chex.Array:
  """bool `[B]`: `action` `[B]` is among the `k` largest of `logits`
  `[B, A]` (ties broken against it: it must beat all but k - 1 others)."""
  chex.assert_rank(logits, 2)
  chex.assert_shape(action, (logits.shape[0],))
  target = jnp.take_along_axis(logits, action[:, None], axis=-1)
  return jnp.sum(logits >= target, axis=-1) <= k


def _legal_masks(batch, sym, size):
  """Legal masks `[B, N² + 1]` of a compact batch, in the frame of the
  symmetries `sym` `[B]` that `feature_batch` applied."""
  game = features_lib.feature_game(size)
  states = jax.vmap(functools.partial(features_lib.rebuild_state, game))(
      batch)
  return jax.vmap(lambda m, i: symmetry.transform_policy(m, i, size))(
      states.legal_action_mask, sym)


def loss_fn(params, batch_stats, inputs, *, network: PolicyNet,
            weight_decay: float):
  """Cross-entropy of the played move; returns (loss, (batch_stats,
  metrics)). `inputs`: `planes` `[B, N, N, C]`, `action` `[B]`, `legal`
  `[B, A]` or None."""
  logits, updates = network.apply(
      {"params": params, "batch_stats": batch_stats}, inputs["planes"],
      inputs["legal"], train=True, mutable=["batch_stats"])
  nll = -jnp.take_along_axis(jax.nn.log_softmax(logits),
                             inputs["action"][:, None], axis=-1)[:, 0]
  l2 = sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params))
  loss = jnp.mean(nll) + weight_decay * l2
  metrics = {
      "loss": loss, "nll": jnp.mean(nll), "l2": l2,
      "top1": jnp.mean(topk_correct(logits, inputs["action"], 1)
                       .astype(jnp.float32)),
      "top5": jnp.mean(topk_correct(logits, inputs["action"], 5)
                       .astype(jnp.float32)),
  }
  return loss, (updates.get("batch_stats", batch_stats), metrics)


def make_train_step(config: SupervisedConfig, *, mesh: Optional[Mesh] = None
                    ) -> Callable[[TrainState, Dict], Tuple[TrainState,
                                                           Dict]]:
  """The jitted `step(state, compact batch) -> (state, metrics)`.

  The batch is `Positions.take` arrays `[B, ...]` (`_FIELDS`), sharded
  over the mesh's data axis; metrics are float32 scalars of the batch
  (before the update): loss, nll, l2, top1, top5, lr. Cached on its
  arguments, so a resume in the same process reuses the compiled step.
  """
  return _make_train_step(config, mesh)


@functools.lru_cache(maxsize=8)
def _make_train_step(config, mesh):
  size = config.model.board_size

  def inputs(batch, featured):
    return {"planes": featured["planes"], "action": featured["action"],
            "legal": (_legal_masks(batch, featured["symmetry"], size)
                      if config.mask_illegal else None)}

  return position_stage.make_train_step(
      config, mesh, inputs=inputs, loss=functools.partial(
          loss_fn, network=PolicyNet(config.model),
          weight_decay=config.weight_decay))


@functools.lru_cache(maxsize=8)
def _move_scores(model: PolicyNetConfig, *, mesh: Optional[Mesh],
                 ensemble: bool):
  """`(variables, compact batch) -> scores` of each position, each `[B]`:
  `top1` and `top5` (the played move is the network's first, or among its
  five first) and `nll` (of the played move). No augmentation; with
  `ensemble`, the policy is the mean of the softmax over the 8 symmetries
  (the paper's 8-symmetry ensemble)."""
  network = PolicyNet(model)
  size, names = model.board_size, model.features
  constrain = batch_constraint(mesh)

  def scores(variables, batch):
    inputs = constrain(features_lib.feature_batch(
        batch, jax.random.key(0), size=size, names=names, augment=False))
    planes, action = inputs["planes"], inputs["action"]
    if ensemble:
      logp = symmetric_log_policy(network.apply, variables, planes)
    else:
      logp = jax.nn.log_softmax(network.apply(variables, planes))
    nll = -jnp.take_along_axis(logp, action[:, None], axis=-1)[:, 0]
    return {"top1": topk_correct(logp, action, 1),
            "top5": topk_correct(logp, action, 5), "nll": nll}

  return scores


def make_eval_step(model: PolicyNetConfig, *, mesh: Optional[Mesh] = None,
                   ensemble: bool = False):
  """Jitted `(variables, compact batch with valid) -> sums`: counts of
  top-1 and top-5 hits, summed nll and valid positions (`_move_scores`
  summed over the valid positions)."""
  scores = _move_scores(model, mesh=mesh, ensemble=ensemble)

  def step(variables, batch):
    s = scores(variables, batch)
    valid = batch["valid"].astype(jnp.float32)
    return {"top1": jnp.sum(s["top1"] * valid),
            "top5": jnp.sum(s["top5"] * valid),
            "nll": jnp.sum(s["nll"] * valid), "positions": jnp.sum(valid)}

  return jit_over_batch(step, mesh)


def evaluate_policy(variables, model: PolicyNetConfig, positions: Positions,
                    *, batch_size: int = 256, mesh: Optional[Mesh] = None,
                    limit: Optional[int] = None, ensemble: bool = False
                    ) -> Dict[str, float]:
  """Top-1 / top-5 accuracy and mean nll of the played move over
  `positions` (the first `limit`; all when None), the count and the hits
  (`top1_hits`, `top5_hits`)."""
  position_stage.check_board("evaluate_policy", positions,
                             model.board_size)
  _check_ladders(model, positions, "evaluate_policy")
  totals = position_stage.summed(
      make_eval_step(model, mesh=mesh, ensemble=ensemble), variables,
      positions, batch_size=batch_size, limit=limit, mesh=mesh)
  n = max(totals["positions"], 1.0)
  return {"top1": totals["top1"] / n, "top5": totals["top5"] / n,
          "nll": totals["nll"] / n, "positions": int(totals["positions"]),
          "top1_hits": round(totals["top1"]),
          "top5_hits": round(totals["top5"])}


def policy_scores(variables, model: PolicyNetConfig, positions: Positions,
                  *, batch_size: int = 256, mesh: Optional[Mesh] = None,
                  limit: Optional[int] = None, ensemble: bool = False
                  ) -> Dict[str, np.ndarray]:
  """`evaluate_policy`'s figures position by position, for intervals by
  game: `top1`, `top5` (bool: a hit), `nll` and `game` (the position's
  game), each `[n]` over the first `limit` of `positions` (all when
  None)."""
  position_stage.check_board("policy_scores", positions, model.board_size)
  _check_ladders(model, positions, "policy_scores")
  return position_stage.per_position(
      jit_over_batch(_move_scores(model, mesh=mesh, ensemble=ensemble),
                     mesh), variables, positions, batch_size=batch_size,
      limit=limit, mesh=mesh)


def _check_ladders(model: PolicyNetConfig, positions: Positions,
                   caller: str) -> None:
  """A network on the ladder planes needs positions that carry them:
  reading them in every step instead would be correct but cost far more
  than the network, so it is refused rather than run slowly."""
  if positions.ladder is None and go_features.reads_ladders(model.features):
    raise ValueError(
        f"{caller}: the network reads the ladder planes, but the "
        f"{positions.split} positions carry none: build their cache with "
        f"DatasetConfig(ladders=True)")


def eval_subset(positions: Positions, num: int, seed: int = 0) -> Positions:
  """A fixed random subset of `num` positions (in index order), for the
  learning curve; all of them when `num` >= their count."""
  if num >= len(positions):
    return positions
  index = np.sort(np.random.default_rng(seed).choice(
      len(positions), num, replace=False))
  return dataclasses.replace(positions, **{
      f: np.asarray(a[index]) for f, a in positions.arrays().items()})


def train_supervised(config: SupervisedConfig, train: Positions, *,
                     seed: int, eval_positions: Optional[Positions] = None,
                     eval_batch_size: int = 256,
                     mesh: Optional[Mesh] = None,
                     init_variables: Optional[Dict[str, Any]] = None,
                     **loop_options
                     ) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) supervised training of the policy network.

  Step `s` trains on batch `s` of `data.batches(train, batch_size, seed)`
  with symmetries from `fold_in(key, s)`, so the run is a function of the
  seed and the step count, wherever it was interrupted.

  Args:
    train: the training positions.
    eval_positions: positions for the learning curve (e.g. a fixed
      `eval_subset` of the test split); evaluated every `eval_every` steps
      and when the call stops.
    init_variables: the network a new run starts from (default random);
      a resumed run starts from its checkpoint.
    loop_options: `position_stage.run`'s: `max_samples`, `output_dir`,
      `resume`, `log_every`, `eval_every`, the checkpoint intervals, the
      time budgets, `log`, `progress`, `tensorboard`.

  Returns:
    the final state and this call's records.

  Raises:
    CheckpointMismatchError: the checkpoint is of another network.
    ValueError: `init_variables` are of another network; a network on
      the ladder planes with positions that lack them.
  """
  position_stage.check_board("train_supervised", train,
                             config.model.board_size)
  _check_ladders(config.model, train, "train_supervised")
  if eval_positions is not None:
    _check_ladders(config.model, eval_positions, "train_supervised")
  return position_stage.run(
      TRAINING_STAGE, config, position_stage.PositionInputs(
          train, eval_positions, eval_batch_size, init_variables),
      seed=seed, mesh=mesh, **loop_options)


def _evaluator(run: StageRun):
  inputs = run.inputs

  def evaluator(state):
    result = evaluate_policy(variables_of(state), run.config.model,
                             inputs.evaluation,
                             batch_size=inputs.eval_batch_size,
                             mesh=run.mesh)
    return {f"eval_{k}": v for k, v in result.items()}
  return evaluator


# The `sl_policy` stage (`training.stage.STAGES`): its `StageRun.inputs`
# are `position_stage.PositionInputs` with one evaluation `Positions`.
TRAINING_STAGE = register(position_stage.make_stage(
    name=STAGE, config_type=SupervisedConfig,
    init=lambda run: init_supervised_state(
        run.config, run.seed, mesh=run.mesh,
        variables=run.inputs.init_variables),
    train_step=make_train_step, evaluate=_evaluator,
    postfix=lambda record: {
        "loss": f"{record['loss']:.3f}", "top1": f"{record['top1']:.3f}",
        "pos_s": f"{record['samples_per_second']:.0f}"}))


def load_policy(checkpoint_dir, *, step: Optional[int] = None
                ) -> Tuple[PolicyNetConfig, Dict[str, Any], int]:
  """The network config, variables and step of a supervised checkpoint.

  Raises:
    FileNotFoundError: no checkpoint in `checkpoint_dir`.
    CheckpointMismatchError: a checkpoint of another kind of network; the
      message names the directory.
  """
  return position_stage.load_network(
      checkpoint_dir, step=step, config_type=SupervisedConfig, init_state=init_supervised_state)
