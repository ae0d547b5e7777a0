"""Supervised learning of the policy network p_σ from game records.

One compiled step rebuilds the AlphaGo planes of a compact batch
(`data.feature_batch`, a random symmetry per example), takes a gradient
step on the cross-entropy of the move played, and returns the batch's
top-1/top-5 accuracy. `train_supervised` runs it in the host loop every
stage shares (`host_loop.run`: metrics, TensorBoard, checkpoints with the
architecture check, resume, progress), feeding it compact batches
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
import optax
from jax.sharding import Mesh

from alphago_jax.core.checks import check as _check
from alphago_jax.data import features as features_lib
from alphago_jax.data.batches import sequential_batches
from alphago_jax.data.positions import Positions
from alphago_jax.games import go_features, symmetry
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables,
                                       symmetric_log_policy)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import position_stage
from alphago_jax.training import optim
from alphago_jax.training.mesh import (batch_constraint, check_mesh,
                                        jit_over_batch, replicate)
from alphago_jax.training.state import TrainState, variables_of

OPTIMIZERS = optim.OPTIMIZERS
SCHEDULES = optim.SCHEDULES
make_schedule = optim.make_schedule
make_optimizer = optim.make_optimizer
_FIELDS = position_stage.FIELDS


@dataclasses.dataclass(frozen=True, kw_only=True)
class SupervisedConfig(optim.ScheduleConfig):
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
  model: PolicyNetConfig = PolicyNetConfig()
  mask_illegal: bool = False
  augment: bool = True

  def __post_init__(self):
    _check("model", isinstance(self.model, PolicyNetConfig), self.model,
           "a PolicyNetConfig")
    super().__post_init__()
    for name in ("mask_illegal", "augment"):
      _check(name, isinstance(getattr(self, name), bool),
             getattr(self, name), "a bool")

  def architecture(self) -> Dict[str, Any]:
    """What a checkpoint must match to be loaded (JSON-able)."""
    model = dataclasses.asdict(self.model)
    model["features"] = list(model["features"])
    return {"stage": "sl_policy", "model": model,
            "num_planes": self.model.num_planes,
            "num_actions": self.model.num_actions,
            "optimizer": self.optimizer}

  def to_json(self) -> Dict[str, Any]:
    out = dataclasses.asdict(self)
    out["model"]["features"] = list(self.model.features)
    return out

  @classmethod
  def from_json(cls, obj: Dict[str, Any]) -> "SupervisedConfig":
    obj = dict(obj)
    model = dict(obj.pop("model"))
    model["features"] = tuple(model["features"])
    return cls(model=PolicyNetConfig(**model), **obj)


def model_config_from_architecture(arch: Dict[str, Any]) -> PolicyNetConfig:
  """The `PolicyNetConfig` a checkpoint's metadata describes.

  Raises:
    ckpt.CheckpointMismatchError: not a supervised policy checkpoint.
  """
  if arch.get("stage") != "sl_policy" or "model" not in arch:
    raise ckpt.CheckpointMismatchError(
        f"not a policy-network checkpoint (its metadata describes "
        f"{arch.get('stage') or arch.get('game') or 'another network'!r}: "
        f"{sorted(arch)})")
  model = dict(arch["model"])
  model["features"] = tuple(model["features"])
  return PolicyNetConfig(**model)


def _check_mesh(config: SupervisedConfig, mesh: Optional[Mesh]) -> None:
  check_mesh(mesh, batch_size=config.batch_size)


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
  _check_mesh(config, mesh)
  init_key, run_key = jax.random.split(jax.random.key(seed))
  fresh = init_policy_variables(PolicyNet(config.model), init_key)
  if variables is not None:
    shapes = lambda tree: jax.tree.map(jnp.shape, tree)
    if shapes(variables) != shapes(fresh):
      raise ValueError(
          f"the starting network is not a {config.model.num_layers}x"
          f"{config.model.filters} {config.model.trunk} network on "
          f"{config.model.num_planes} planes")
  variables = fresh if variables is None else variables
  state = TrainState(
      params=variables["params"], batch_stats=variables["batch_stats"],
      opt_state=make_optimizer(config).init(variables["params"]),
      buffer=None, key=jax.random.key_data(run_key),
      iteration=jnp.int32(0))
  if mesh is not None:
    state = replicate(state, mesh)
  return state


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
  _check_mesh(config, mesh)
  network = PolicyNet(config.model)
  optimizer = make_optimizer(config)
  schedule = make_schedule(config)
  size, names = config.model.board_size, config.model.features
  constrain = batch_constraint(mesh)

  def step(state: TrainState, batch):
    chex.assert_shape(batch["action"], (config.batch_size,))
    key = jax.random.fold_in(jax.random.wrap_key_data(state.key),
                             state.iteration)
    inputs = features_lib.feature_batch(batch, key, size=size, names=names,
                                        augment=config.augment)
    inputs = constrain({
        "planes": inputs["planes"], "action": inputs["action"],
        "legal": (_legal_masks(batch, inputs["symmetry"], size)
                  if config.mask_illegal else None)})
    grads, (batch_stats, metrics) = jax.grad(loss_fn, has_aux=True)(
        state.params, state.batch_stats, inputs, network=network,
        weight_decay=config.weight_decay)
    updates, opt_state = optimizer.update(grads, state.opt_state,
                                          state.params)
    metrics["lr"] = jnp.asarray(schedule(state.iteration), jnp.float32)
    return state.replace(params=optax.apply_updates(state.params, updates),
                         batch_stats=batch_stats, opt_state=opt_state,
                         iteration=state.iteration + 1), metrics

  return jit_over_batch(step, mesh, donate_first=True)


@functools.lru_cache(maxsize=8)
def make_eval_step(model: PolicyNetConfig, *, mesh: Optional[Mesh] = None,
                   ensemble: bool = False):
  """Jitted `(variables, compact batch with valid) -> sums`: counts of
  top-1 and top-5 hits, summed nll and valid positions. No augmentation;
  with `ensemble`, the policy is the mean of the softmax over the 8
  symmetries (the paper's 8-symmetry ensemble)."""
  network = PolicyNet(model)
  size, names = model.board_size, model.features
  constrain = batch_constraint(mesh)

  def step(variables, batch):
    inputs = constrain(features_lib.feature_batch(
        batch, jax.random.key(0), size=size, names=names, augment=False))
    planes, action = inputs["planes"], inputs["action"]
    if ensemble:
      logp = symmetric_log_policy(network.apply, variables, planes)
    else:
      logp = jax.nn.log_softmax(network.apply(variables, planes))
    valid = batch["valid"].astype(jnp.float32)
    nll = -jnp.take_along_axis(logp, action[:, None], axis=-1)[:, 0]
    return {"top1": jnp.sum(topk_correct(logp, action, 1) * valid),
            "top5": jnp.sum(topk_correct(logp, action, 5) * valid),
            "nll": jnp.sum(nll * valid), "positions": jnp.sum(valid)}

  return jit_over_batch(step, mesh)


def evaluate_policy(variables, model: PolicyNetConfig, positions: Positions,
                    *, batch_size: int = 256, mesh: Optional[Mesh] = None,
                    limit: Optional[int] = None, ensemble: bool = False
                    ) -> Dict[str, float]:
  """Top-1 / top-5 accuracy and mean nll of the played move over
  `positions` (the first `limit`; all when None), the count and the hits
  (`top1_hits`, `top5_hits`)."""
  if positions.size != model.board_size:
    raise ValueError(f"evaluate_policy: the positions are {positions.size}x"
                     f"{positions.size}, the network is {model.board_size}x"
                     f"{model.board_size}")
  _check_ladders(model, positions, "evaluate_policy")
  if limit is not None and limit < len(positions):
    positions = dataclasses.replace(positions, **{
        f: getattr(positions, f)[:limit] for f in positions.arrays()})
  step = make_eval_step(model, mesh=mesh, ensemble=ensemble)
  totals = None
  for batch in sequential_batches(positions, batch_size):
    sums = step(variables, position_stage.to_device(batch, mesh, _FIELDS + ("valid",)))
    totals = sums if totals is None else jax.tree.map(jnp.add, totals,
                                                      sums)
  totals = {k: float(v) for k, v in jax.device_get(totals).items()}
  n = max(totals["positions"], 1.0)
  return {"top1": totals["top1"] / n, "top5": totals["top5"] / n,
          "nll": totals["nll"] / n, "positions": int(totals["positions"]),
          "top1_hits": round(totals["top1"]),
          "top5_hits": round(totals["top5"])}


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
                     tensorboard: Optional[bool] = None,
                     init_variables: Optional[Dict[str, Any]] = None
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
    output_dir: `metrics.jsonl`, `tensorboard/` and `checkpoints/` go there.
    max_samples: stop once this many training positions were seen (default
      `config.total_samples`).
    max_seconds: stop after this much wall-clock time in this call.
    stall_seconds: end the process when no step, evaluation or checkpoint
      finishes for this long (`host_loop.run`; None: never).
    max_train_seconds: stop once training time summed over every call of
      the run (read back from the metrics) reaches this.
    log_every: steps a metrics record (train means over those steps).
    checkpoint_seconds, checkpoint_every: save every that many seconds
      and/or steps (0: never), and always when stopping.
    resume: load the latest checkpoint in `output_dir` first.
    log: called with each record as one line.
    progress: a tqdm bar of the samples.
    tensorboard: as in `training.train`.
    init_variables: the network a new run starts from (default random);
      a resumed run starts from its checkpoint.

  Returns:
    the final state and this call's records.

  Raises:
    CheckpointMismatchError: the checkpoint is of another network.
    ValueError: `init_variables` are of another network; a network on
      the ladder planes with positions that lack them.
  """
  if train.size != config.model.board_size:
    raise ValueError(f"train_supervised: the positions are {train.size}x"
                     f"{train.size}, the network is "
                     f"{config.model.board_size}x{config.model.board_size}")
  _check_ladders(config.model, train, "train_supervised")
  if eval_positions is not None:
    _check_ladders(config.model, eval_positions, "train_supervised")
  max_samples = config.total_samples if max_samples is None else max_samples

  def evaluator(state):
    result = evaluate_policy(variables_of(state), config.model,
                             eval_positions, batch_size=eval_batch_size,
                             mesh=mesh)
    return {f"eval_{k}": v for k, v in result.items()}

  return position_stage.run(
      init_supervised_state(config, seed, mesh=mesh,
                            variables=init_variables),
      make_train_step(config, mesh=mesh), train,
      batch_size=config.batch_size, seed=seed, max_samples=max_samples,
      architecture=config.architecture(), mesh=mesh,
      evaluator=None if eval_positions is None else evaluator,
      postfix=lambda record: {
          "loss": f"{record['loss']:.3f}", "top1": f"{record['top1']:.3f}",
          "pos_s": f"{record['samples_per_second']:.0f}"},
      output_dir=output_dir, resume=resume, log_every=log_every,
      evaluate_every=eval_every, checkpoint_every=checkpoint_every,
      checkpoint_seconds=checkpoint_seconds, max_seconds=max_seconds,
      stall_seconds=stall_seconds,
      max_train_seconds=max_train_seconds, log=log, progress=progress,
      tensorboard=tensorboard)


def load_policy(checkpoint_dir, *, step: Optional[int] = None
                ) -> Tuple[PolicyNetConfig, Dict[str, Any], int]:
  """The network config, variables and step of a supervised checkpoint.

  Raises:
    FileNotFoundError: no checkpoint in `checkpoint_dir`.
    CheckpointMismatchError: a checkpoint of another kind of network; the
      message names the directory.
  """
  return position_stage.load_network(
      checkpoint_dir, step=step, init_state=lambda c: init_supervised_state(c, 0),
      make_config=lambda meta: SupervisedConfig(
          model=model_config_from_architecture(meta),
          optimizer=meta["optimizer"]))
