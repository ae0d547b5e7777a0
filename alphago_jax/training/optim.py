"""The optimiser and learning-rate schedule of the position-trained stages.

p_σ (`supervised`) and v_θ (`value_net`) train the same way: a batch of
positions a step, Adam or SGD on a warm-up-then-decay schedule over a
sample budget. `ScheduleConfig` holds those fields and their checks once;
each stage's config extends it with its network (and may change a default).
"""

from __future__ import annotations

import dataclasses

import optax

from alphago_jax.core.checks import check as _check, check_int, is_real as _is_real

OPTIMIZERS = ("sgd", "adam")
SCHEDULES = ("cosine", "constant", "wsd")


def check_optimizer(config) -> None:
  """Raises ValueError unless `config`'s `optimizer` is one of `OPTIMIZERS`,
  its `learning_rate` > 0 and its `momentum` in [0, 1): the fields of
  every stage's `optimizer(...)` call."""
  _check("optimizer", config.optimizer in OPTIMIZERS, config.optimizer,
         f"one of {OPTIMIZERS}")
  _check("learning_rate", _is_real(config.learning_rate)
         and config.learning_rate > 0, config.learning_rate, "a number > 0")
  _check("momentum", _is_real(config.momentum)
         and 0 <= config.momentum < 1, config.momentum, "a number in [0, 1)")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScheduleConfig:
  """Batch, optimiser and learning-rate schedule of a run on positions.

  Attributes:
    batch_size: positions a gradient step (sharded over the mesh).
    optimizer: "adam" or "sgd" (with `momentum`).
    learning_rate: peak rate.
    momentum: SGD momentum.
    schedule: "cosine": linear warm-up over `warmup_steps`, then a cosine
      decay to `final_lr_fraction` of the peak at `total_samples`, constant
      after; "wsd" (warm-up, stable, decay): the peak until the last
      `decay_fraction` of `total_samples`, then a linear decay to
      `final_lr_fraction` of it; "constant": the peak after the warm-up.
      A run whose time budget is uncertain wants "wsd": its horizon can be
      re-planned (`--resume --total-samples N`) without a jump in the rate
      until the decay starts, which a cosine's cannot.
    warmup_steps: steps of linear warm-up from 0.
    total_samples: the schedule's horizon, in training positions.
    final_lr_fraction: the rate at the horizon, a fraction of the peak.
    decay_fraction: "wsd" only: the share of `total_samples` over which
      the rate decays.
    weight_decay: c of the penalty c ||θ||² added to the loss.
  """
  batch_size: int = 128
  optimizer: str = "adam"
  learning_rate: float = 1e-3
  momentum: float = 0.9
  schedule: str = "cosine"
  warmup_steps: int = 500
  total_samples: int = 8_000_000
  final_lr_fraction: float = 0.02
  decay_fraction: float = 0.2
  weight_decay: float = 0.0

  def __post_init__(self):
    check_int("batch_size", self.batch_size, 1)
    check_optimizer(self)
    _check("schedule", self.schedule in SCHEDULES, self.schedule,
           f"one of {SCHEDULES}")
    check_int("warmup_steps", self.warmup_steps, 0)
    check_int("total_samples", self.total_samples, 1)
    _check("final_lr_fraction", _is_real(self.final_lr_fraction)
           and 0 <= self.final_lr_fraction <= 1, self.final_lr_fraction,
           "a number in [0, 1]")
    _check("decay_fraction", _is_real(self.decay_fraction)
           and 0 < self.decay_fraction <= 1, self.decay_fraction,
           "a number in (0, 1]")
    _check("weight_decay", _is_real(self.weight_decay)
           and self.weight_decay >= 0, self.weight_decay, "a number >= 0")

  @property
  def total_steps(self) -> int:
    return max(1, self.total_samples // self.batch_size)


def make_schedule(config: ScheduleConfig) -> optax.Schedule:
  """The learning rate at each step (see `ScheduleConfig.schedule`)."""
  peak = config.learning_rate
  after_warmup = max(1, config.total_steps - config.warmup_steps)
  if config.schedule == "constant":
    decay = optax.constant_schedule(peak)
  elif config.schedule == "wsd":
    decay_steps = min(after_warmup,
                      max(1, round(config.decay_fraction * config.total_steps)))
    decay = optax.join_schedules(
        [optax.constant_schedule(peak),
         optax.linear_schedule(peak, peak * config.final_lr_fraction,
                               decay_steps)],
        [after_warmup - decay_steps])
  else:
    decay = optax.cosine_decay_schedule(peak, after_warmup,
                                        alpha=config.final_lr_fraction)
  if not config.warmup_steps:
    return decay
  return optax.join_schedules(
      [optax.linear_schedule(0.0, peak, config.warmup_steps), decay],
      [config.warmup_steps])


def optimizer(name: str, learning_rate, *, momentum=None
              ) -> optax.GradientTransformation:
  """The one optimiser factory of every stage: "adam", or "sgd" with
  `momentum` (None: plain SGD), at `learning_rate` (a float or an optax
  schedule)."""
  if name == "adam":
    return optax.adam(learning_rate)
  if name == "sgd":
    return optax.sgd(learning_rate, momentum=momentum)
  raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {name!r}")


def make_optimizer(config: ScheduleConfig) -> optax.GradientTransformation:
  """Adam, or SGD with momentum, on `make_schedule`."""
  return optimizer(config.optimizer, make_schedule(config),
                   momentum=config.momentum or None)
