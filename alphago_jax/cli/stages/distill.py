"""Distils p_σ and v_θ into the AlphaZero loop's two-headed ResNet.

The teachers: --policy (p_σ, or p_ρ: a policy run directory) and --value
(v_θ). Each step the teachers play --num-games games against themselves
(p_σ sampling at --temperature) and the student (the loop's ResNet on
the game's own observation, --num-blocks, --channels, ...) takes
--gradient-steps steps on their positions toward p_σ's move distribution
(cross-entropy) and v_θ's value for the player to move (squared error),
each position under a random board symmetry (`training.distill`).

OUTPUT gets config.json (the run's config, the teachers' folders and the
seed; written atomically), command.json (these options, resolved),
metrics.jsonl (the training losses every --log-every steps; every
--eval-every steps, the student against the teachers on every position of
--eval-games held-out validation games: `validation_agreement` (top-1
with p_σ), `validation_kl`, `validation_cross_entropy`,
`validation_value_mse`), tensorboard/ and orbax checkpoints (every
--checkpoint-minutes and on stopping; SIGTERM and Ctrl-C stop cleanly).
The test split (games of another key) is left to
`experiments/alphago/eval_distill.py`, read once per network. Rerun with
--resume to continue exactly where the run stopped (its config.json wins
over the flags). Start an AlphaZero run from the result with
`alphago-jax train go9 --init-from OUTPUT ...`.

--quick: a tiny student, 4 games a step, 4 steps (a smoke test). The last
line: `RESULT step=<s> samples=<n> validation_agreement=<a>
validation_kl=<k> validation_value_mse=<m>`.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

from alphago_jax.cli import stages
from alphago_jax.cli.stages import groups
from alphago_jax.core.checks import check_int
from alphago_jax.models.resnet import ResNetConfig
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import distill, game_specs
from alphago_jax.zoo import loaders

STAGE = "distill"
EXAMPLES = """examples:
  alphago-jax train distill --policy checkpoints/sl9 --value checkpoints/value9s2 --num-blocks 4 --channels 64 --output runs/distill9 [--hours 1]
  alphago-jax train distill --output runs/distill9 --resume
  alphago-jax train distill --quick --policy P --value V --output O   (a smoke test)"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Own(groups.Optimization):
  """The stage's own options: the teachers, the student, the games and
  the fields of `Optimization` (defaults: `training.distill.DistillConfig`).

  Attributes:
    policy: p_σ's run directory (or p_ρ's).
    value: v_θ's run directory.
    game: the AlphaZero game the student plays (a Go game of
      `training.game_specs` on the teachers' board).
    num_blocks: the student's residual blocks (default: the game's
      AlphaZero network's).
    channels: filters of its stem and blocks (default: the game's).
    policy_channels: filters of its policy head (default: the game's).
    value_channels: filters of its value head (default: the game's).
    value_hidden: its value head's hidden units (default: the game's).
    num_games: teacher games a step (even).
    gradient_steps: gradient steps a step, on that step's positions.
    temperature: p_σ's sampling temperature in the games.
    eval_games: held-out validation games of the learning curve (every
      position is evaluated; 0: none).
    quick: a smoke test: a tiny student, 4 steps of 4 games.
  """
  policy: Optional[str] = None
  value: Optional[str] = None
  game: str = "go9"
  num_blocks: Optional[int] = None
  channels: Optional[int] = None
  policy_channels: Optional[int] = None
  value_channels: Optional[int] = None
  value_hidden: Optional[int] = None
  num_games: Optional[int] = None
  gradient_steps: Optional[int] = None
  temperature: Optional[float] = None
  eval_games: int = 64
  quick: bool = False

  def __post_init__(self):
    super().__post_init__()
    stages.check_optional_ints(self, {
        "num_blocks": 0, "channels": 1, "policy_channels": 1,
        "value_channels": 1, "value_hidden": 1, "num_games": 2,
        "gradient_steps": 1})
    stages.check_positive("temperature", self.temperature, zero=True)
    check_int("eval_games", self.eval_games, 0)
    if self.eval_games % 2:
      raise ValueError(f"eval_games must be even, got {self.eval_games}")
    spec = game_specs.get(self.game)
    if not spec.go:
      raise ValueError(f"game must be a Go game (the teachers play Go), "
                       f"got {self.game!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options(groups.Steps, groups.TrainingTime, Own):
  """What a distillation run computes (recorded in command.json): the
  fields of `Own`, `TrainingTime` and `Steps`, and these.

  Attributes:
    eval_every: steps between evaluations (default 100; --quick 2).
    log_every: steps per record (default 10; --quick 1).
  """
  eval_every: Optional[int] = None

  def __post_init__(self):
    super().__post_init__()
    stages.check_optional_ints(self, {"eval_every": 1})

  def resolved(self) -> "Options":
    """The defaults that depend on --quick filled in (what command.json
    records)."""
    return dataclasses.replace(
        self, log_every=self.log_every or (1 if self.quick else 10),
        eval_every=self.eval_every or (2 if self.quick else 100))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command(stages.TrainingCommand[Options]):
  """A call of the stage (--output, --resume, --hours)."""


def build_config(options: Options) -> distill.DistillConfig:
  """The library's `DistillConfig` of `options` (the game's AlphaZero
  network where no size is given)."""
  model = game_specs.get(options.game).train().model
  if options.quick:
    model = ResNetConfig.tiny()
  model = stages.with_given(
      model, num_blocks=options.num_blocks, channels=options.channels,
      policy_channels=options.policy_channels,
      value_channels=options.value_channels,
      value_hidden=options.value_hidden)
  quick = dict(num_games=4, gradient_steps=2, batch_size=32,
               total_samples=4 * 2 * 32, warmup_steps=0) \
      if options.quick else {}
  config = distill.DistillConfig(model=model, **quick)
  return stages.with_given(
      config, num_games=options.num_games,
      gradient_steps=options.gradient_steps,
      temperature=options.temperature, learning_rate=options.lr,
      batch_size=options.batch_size, total_samples=options.total_samples)


def load_teachers(policy_dir: str, value_dir: str):
  """(Teacher, variables) of the teachers' run directories.

  Raises:
    StageError: a folder with no network or another kind of network.
  """
  try:
    policy = loaders.load(policy_dir, expect=loaders.POLICY_KINDS)
    value = loaders.load(value_dir, expect=("value_net",))
    teacher = distill.Teacher(policy=policy.model, value=value.model)
  except (FileNotFoundError, ckpt.CheckpointMismatchError, ValueError) as e:
    raise stages.StageError(str(e)) from None
  return teacher, {"policy": policy.variables, "value": value.variables}


def run(command: Command) -> int:
  """Trains (or resumes) the run of `command`; the exit status."""
  call = stages.begin(STAGE, command)
  options, saved, log = call.options, call.saved, stages.log
  if call.resuming:
    config = distill.DistillConfig.from_json(saved["config"])
    teachers, seed, game_name = saved["teachers"], saved["seed"], \
        saved["game"]
  else:
    if options.policy is None or options.value is None:
      raise stages.refused("give the teachers: --policy (p_σ's run "
                           "directory) and --value (v_θ's)")
    try:
      config = build_config(options)
    except ValueError as e:
      raise stages.refused(str(e)) from None
    teachers = {"policy": os.path.normpath(options.policy),
                "value": os.path.normpath(options.value)}
    seed, game_name = options.seed, options.game
  teacher, variables = load_teachers(teachers["policy"], teachers["value"])
  game = game_specs.get(game_name).make()
  try:
    distill.check_game(game, teacher)
  except ValueError as e:
    raise stages.refused(str(e)) from None
  call.record({"config": config.to_json(), "game": game_name,
               "teachers": teachers, "seed": seed})
  log(f"distilling {teachers['policy']} + {teachers['value']} into "
      f"{config.model.num_blocks}x{config.model.channels} on {game_name}: "
      f"{config.num_steps} steps of {config.num_games} games, "
      f"{config.samples_per_step} positions trained on a step")
  inputs = distill.DistillInputs(game=game, teacher=teacher,
                                 teacher_variables=variables,
                                 eval_games=options.eval_games)
  try:
    state, history = call.train(
        distill.train_distill, config, inputs, seed=seed,
        output_dir=command.output, evaluate_every=options.eval_every)
  except ValueError as e:
    raise stages.StageError(str(e)) from None
  evals = [r for r in history if "validation_agreement" in r]
  last = evals[-1] if evals else {}
  step = int(state.iteration)
  print(f"RESULT step={step} samples={step * config.samples_per_step} "
        + " ".join(f"validation_{k}={last.get(f'validation_{k}', float('nan')):.4f}"
                   for k in ("agreement", "kl", "value_mse")), flush=True)
  return 0


stages.register(__name__)
