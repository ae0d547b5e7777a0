"""Training AlphaGo's fast rollout policy p_π on expert positions.

p_π (`models.rollout_policy`) is a linear softmax over pattern features
(`games.go_patterns`). It is trained by cross-entropy of the move played
over the legal points of each cached position (`data.positions`), with
Adam on minibatches streamed from the cache (`data.batches`): the
`rollout_policy` stage (`TRAINING_STAGE`, registered in
`training.stage.STAGES`), run by `stage.run_stage` in the shared host loop
(metrics, orbax checkpoints, exact resume), which then exports the
weights. The features are invariant under the board's symmetries, so no
augmentation is needed.

Features are computed inside the compiled step from the compact
positions: chain ids by label propagation (`data.features.chain_ids`), the
legal points by the lean playout rule (simple ko, no suicide; the rule the
records were replayed under), the last move from the position's history (a
pass or the start gives none). A position whose move is a pass carries no
gradient (p_π scores points only) and counts as a miss in evaluation.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Dict, List, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax

from alphago_jax.core import config_codec
from alphago_jax.core.checks import check_int
from alphago_jax.data import features as features_lib
from alphago_jax.data.batches import batches
from alphago_jax.data.positions import Positions
from alphago_jax.games import go_patterns
from alphago_jax.models import rollout_policy as model_lib
from alphago_jax.training import optim, position_stage
from alphago_jax.training.stage import Stage, StageRun, register, run_stage
from alphago_jax.training.state import TrainState
from alphago_jax.core.types import MASKED_LOGIT

_FIELDS = ("stones", "recent", "ko", "to_play", "action")


@dataclasses.dataclass(frozen=True)
class RolloutTrainConfig(config_codec.JsonMethods):
  """How p_π is trained.

  Attributes:
    board_size: N of the positions.
    features: the feature set (table sizes).
    batch_size: positions a step.
    learning_rate: Adam's step size (the peak, with `schedule="cosine"`).
    schedule: "constant", or "cosine" (decay to a tenth over the run).
    weight_decay: c of the penalty c * sum(w²) added to the mean nll.
    total_samples: training positions of the run.
  """
  board_size: int = 19
  features: go_patterns.PatternConfig = go_patterns.PatternConfig()
  batch_size: int = 256
  learning_rate: float = 0.03
  schedule: str = "cosine"
  weight_decay: float = 0.0
  total_samples: int = 2_000_000

  def __post_init__(self):
    for name in ("board_size", "batch_size", "total_samples"):
      check_int(f"RolloutTrainConfig: {name}", getattr(self, name), 1)
    check_int("RolloutTrainConfig: board_size", self.board_size, 5, 19)
    if not self.learning_rate > 0:
      raise ValueError(f"RolloutTrainConfig: learning_rate must be > 0, got "
                       f"{self.learning_rate!r}")
    if self.schedule not in ("constant", "cosine"):
      raise ValueError(f"RolloutTrainConfig: schedule must be 'constant' or "
                       f"'cosine', got {self.schedule!r}")
    if not self.weight_decay >= 0:
      raise ValueError(f"RolloutTrainConfig: weight_decay must be >= 0, got "
                       f"{self.weight_decay!r}")

  def architecture(self) -> Dict[str, Any]:
    """What a checkpoint must match."""
    return {"stage": "rollout_policy", "board_size": self.board_size,
            "features": config_codec.to_json(self.features),
            "num_features": self.features.num_features}


def make_schedule(config: RolloutTrainConfig) -> optax.Schedule:
  if config.schedule == "constant":
    return optax.constant_schedule(config.learning_rate)
  return optax.cosine_decay_schedule(
      config.learning_rate, max(config.total_samples // config.batch_size, 1),
      alpha=0.1)


def make_optimizer(config: RolloutTrainConfig
                   ) -> optax.GradientTransformation:
  return optim.optimizer("adam", make_schedule(config))


def init_state(config: RolloutTrainConfig, seed: int) -> TrainState:
  """A fresh run: zero weights (the uniform policy), step 0."""
  weights = jnp.zeros(config.features.num_features, jnp.float32)
  params = {"weights": weights}
  return TrainState(params=params, batch_stats={},
                    opt_state=make_optimizer(config).init(params),
                    buffer=None,
                    key=jax.random.key_data(jax.random.key(seed)),
                    iteration=jnp.int32(0))


def position_inputs(features: go_patterns.PatternConfig, size: int,
                    position: Dict[str, chex.Array]
                    ) -> Tuple[chex.Array, chex.Array]:
  """(feature ids int32 `[N², K]`, legal bool `[N²]`) of one cached
  position (`Positions.take` row)."""
  n2 = size * size
  playout = go_patterns.playout_for(size)
  stones = features_lib.unpack_stones(position["stones"], size)
  board = features_lib.chain_ids(stones, size)
  player = position["to_play"].astype(jnp.int32)
  legal = playout.legal_points(board, player,
                               position["ko"].astype(jnp.int32))
  last = position["recent"][0].astype(jnp.int32)
  last = jnp.where(last < n2, last, -1)
  ids = go_patterns.point_features(features, playout, board, player, last)
  return ids, legal


def batch_logits(weights: chex.Array, features: go_patterns.PatternConfig,
                 size: int, batch: Dict[str, chex.Array]
                 ) -> Tuple[chex.Array, chex.Array, chex.Array]:
  """(logits float32 `[B, N²]` with illegal points at `MASKED_LOGIT`,
  action int32 `[B]`, labelled bool `[B]`: the move is a legal point)."""
  size_sq = size * size
  b = batch["action"].shape[0]
  chex.assert_shape(batch["stones"], (b, 2, (size_sq + 7) // 8))
  ids, legal = jax.vmap(functools.partial(position_inputs, features, size))(
      batch)
  logits = jnp.where(legal, model_lib.pattern_logits(weights, ids),
                     MASKED_LOGIT)
  action = batch["action"].astype(jnp.int32)
  point = jnp.minimum(action, size_sq - 1)
  labelled = (action < size_sq) & jnp.take_along_axis(
      legal, point[:, None], axis=1)[:, 0]
  return logits, point, labelled


def _topk(logits, action, k):
  target = jnp.take_along_axis(logits, action[:, None], axis=-1)
  return jnp.sum(logits >= target, axis=-1) <= k


def loss_fn(params, batch, *, config: RolloutTrainConfig):
  """Mean nll of the played move over the labelled positions plus the
  weight penalty; returns (loss, metrics)."""
  logits, action, labelled = batch_logits(params["weights"], config.features,
                                          config.board_size, batch)
  w = labelled.astype(jnp.float32)
  count = jnp.maximum(jnp.sum(w), 1.0)
  nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None],
                             axis=-1)[:, 0]
  mean_nll = jnp.sum(nll * w) / count
  l2 = jnp.sum(params["weights"] ** 2)
  loss = mean_nll + config.weight_decay * l2
  return loss, {"loss": loss, "nll": mean_nll, "l2": l2,
                "top1": jnp.sum(_topk(logits, action, 1) * w) / count,
                "labelled": jnp.mean(w)}


@functools.lru_cache(maxsize=8)
def make_train_step(config: RolloutTrainConfig):
  """Jitted `step(state, compact batch) -> (state, metrics)`."""
  optimizer = make_optimizer(config)

  def step(state: TrainState, batch):
    chex.assert_shape(batch["action"], (config.batch_size,))
    grads, metrics = jax.grad(functools.partial(loss_fn, config=config),
                              has_aux=True)(state.params, batch)
    updates, opt_state = optimizer.update(grads, state.opt_state,
                                          state.params)
    return state.replace(params=optax.apply_updates(state.params, updates),
                         opt_state=opt_state,
                         iteration=state.iteration + 1), metrics

  return jax.jit(step, donate_argnums=0)


def _move_scores(features: go_patterns.PatternConfig, size: int):
  """`(weights, compact batch) -> scores` of each position, each `[B]`:
  `top1`, `top5` (a hit; a pass, which p_π cannot play, is a miss), `nll`
  (0 on a pass) and `labelled` (the move is a point)."""

  def scores(weights, batch):
    logits, action, labelled = batch_logits(weights, features, size, batch)
    nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None],
                               axis=-1)[:, 0]
    return {"top1": _topk(logits, action, 1) & labelled,
            "top5": _topk(logits, action, 5) & labelled,
            "nll": jnp.where(labelled, nll, 0.0), "labelled": labelled}

  return scores


@functools.lru_cache(maxsize=8)
def make_eval_step(features: go_patterns.PatternConfig, size: int):
  """Jitted `(weights, compact batch with valid) -> sums` of top-1 and
  top-5 hits, nll (labelled positions), labelled and valid positions."""
  scores = _move_scores(features, size)

  def step(weights, batch):
    s = scores(weights, batch)
    valid = batch["valid"]
    f = lambda x: jnp.sum((x & valid).astype(jnp.float32))
    return {"top1": f(s["top1"]), "top5": f(s["top5"]),
            "nll": jnp.sum(jnp.where(valid, s["nll"], 0.0)),
            "labelled": f(s["labelled"]),
            "positions": jnp.sum(valid.astype(jnp.float32))}

  return jax.jit(step)


@functools.lru_cache(maxsize=8)
def _make_score_step(features: go_patterns.PatternConfig, size: int):
  return jax.jit(_move_scores(features, size))


def _host_batch(batch):
  return {f: np.asarray(batch[f]) for f in _FIELDS + ("valid",)}


def evaluate(weights, features: go_patterns.PatternConfig,
             positions: Positions, *, batch_size: int = 256,
             limit: Optional[int] = None) -> Dict[str, float]:
  """Top-1 / top-5 of the played move over `positions` (the first `limit`),
  a pass counting as a miss; the mean nll over positions whose move is a
  point; counts and hits (`top1_hits`, `top5_hits`)."""
  t = position_stage.summed(
      make_eval_step(features, positions.size),
      jnp.asarray(weights, jnp.float32), positions, batch_size=batch_size,
      limit=limit, put=_host_batch)
  n = max(t["positions"], 1.0)
  return {"top1": t["top1"] / n, "top5": t["top5"] / n,
          "nll": t["nll"] / max(t["labelled"], 1.0),
          "positions": int(t["positions"]), "labelled": int(t["labelled"]),
          "top1_hits": round(t["top1"]), "top5_hits": round(t["top5"])}


def position_scores(weights, features: go_patterns.PatternConfig,
                    positions: Positions, *, batch_size: int = 256,
                    limit: Optional[int] = None) -> Dict[str, np.ndarray]:
  """`evaluate`'s figures position by position, for intervals by game:
  `top1`, `top5`, `labelled` (bool), `nll` (0 on a pass) and `game` (the
  position's game), each `[n]` over the first `limit` of `positions`."""
  return position_stage.per_position(
      _make_score_step(features, positions.size),
      jnp.asarray(weights, jnp.float32), positions, batch_size=batch_size,
      limit=limit, put=_host_batch)


def train_rollout_policy(config: RolloutTrainConfig, train: Positions, *,
                         seed: int = 0,
                         eval_positions: Optional[Positions] = None,
                         output_dir: Optional[str] = None,
                         max_samples: Optional[int] = None,
                         max_seconds: Optional[float] = None,
                         stall_seconds: Optional[float] = None,
                         log_every: int = 100, eval_every: int = 2000,
                         checkpoint_seconds: float = 300.0,
                         checkpoint_every: int = 0, resume: bool = True,
                         log: Optional[Callable[[str], None]] = None,
                         progress: bool = False,
                         tensorboard: Optional[bool] = None,
                         export_extra: Optional[Dict[str, Any]] = None
                         ) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) training; step `s` trains on batch `s` of
  `data.batches(train, batch_size, seed)`, so a run is a function of its
  seed and step count wherever it was interrupted. With `output_dir`, the
  final weights are also exported there (`models.rollout_policy`
  `weights.npz`, `config.json` with `export_extra`'s fields, the training
  config and the step).

  Raises:
    CheckpointMismatchError: the run's checkpoint is of another shape.
  """
  if train.size != config.board_size:
    raise ValueError(f"train_rollout_policy: the positions are "
                     f"{train.size}x{train.size}, the config "
                     f"{config.board_size}x{config.board_size}")
  max_samples = config.total_samples if max_samples is None else max_samples
  return run_stage(
      TRAINING_STAGE, config, seed=seed,
      num_steps=max_samples // config.batch_size,
      inputs=RolloutInputs(train, eval_positions, export_extra),
      output_dir=output_dir, resume=resume, log_every=log_every,
      evaluate_every=eval_every, checkpoint_every=checkpoint_every,
      checkpoint_seconds=checkpoint_seconds, max_seconds=max_seconds,
      stall_seconds=stall_seconds, log=log, progress=progress,
      tensorboard=tensorboard)


@dataclasses.dataclass(frozen=True)
class RolloutInputs:
  """What a p_π run reads besides its config: the training positions,
  the evaluation positions (None: no evaluation) and the extra fields of
  the exported `config.json`."""
  train: Positions
  evaluation: Optional[Positions] = None
  export_extra: Optional[Dict[str, Any]] = None


def _make_step(run: StageRun, start: TrainState):
  config = run.config
  step_fn = make_train_step(config)
  stream = batches(run.inputs.train, config.batch_size, run.seed,
                   start_step=int(start.iteration))
  return lambda state: step_fn(state, {
      f: np.asarray(v) for f, v in next(stream).items() if f in _FIELDS})


def _evaluator(run: StageRun):
  if run.inputs.evaluation is None:
    return None

  def evaluator(state):
    result = evaluate(state.params["weights"], run.config.features,
                      run.inputs.evaluation)
    return {f"eval_{k}": v for k, v in result.items()}
  return evaluator


def _loop_defaults(run: StageRun) -> Dict[str, Any]:
  batch_size = run.config.batch_size

  def summarize(metrics, *, step, steps, seconds):
    del metrics
    return {"samples": step * batch_size,
            "samples_per_second": steps * batch_size / seconds}

  return dict(
      summarize=summarize, evaluate_on_stop=True, handle_signals=True,
      resumed_message=lambda done, s: (
          f"resumed from step {done} ({done * batch_size} samples)"),
      progress_unit="pos", progress_scale=batch_size,
      postfix=lambda r: {"loss": f"{r['loss']:.3f}",
                         "top1": f"{r['top1']:.3f}"})


def _export(run: StageRun, state: TrainState, output_dir: str) -> None:
  """The final weights as `models.rollout_policy` reads them."""
  model_lib.save_weights(
      output_dir, np.asarray(jax.device_get(state.params["weights"])),
      run.config.features, extra=dict(run.inputs.export_extra or {},
                                      train=run.config.to_json(),
                                      step=int(state.iteration)))


# The `rollout_policy` stage (`training.stage.STAGES`): its
# `StageRun.inputs` are `RolloutInputs`; the run directory also holds the
# exported weights.
TRAINING_STAGE = register(Stage(
    name="rollout_policy", config_type=RolloutTrainConfig,
    init=lambda run: init_state(run.config, run.seed), make_step=_make_step,
    architecture=lambda run: run.config.architecture(),
    evaluate=_evaluator, loop_defaults=_loop_defaults,
    artifacts=(model_lib.WEIGHTS_FILE, "config.json"), export=_export))
