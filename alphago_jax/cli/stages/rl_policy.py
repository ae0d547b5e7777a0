"""Trains AlphaGo's RL policy network p_ρ by REINFORCE from p_σ.

p_ρ starts as the supervised network of --sl-checkpoint and plays batches
of games against snapshots of itself (`training.reinforce`); OUTPUT gets
config.json, command.json (these options, resolved), metrics.jsonl (the
learner's win rate against its pool opponent, mean game length, loss,
gradient norm, every --log-every iterations), tensorboard/ and orbax
checkpoints (every --checkpoint-minutes and on stopping; Ctrl-C and
SIGTERM stop cleanly). A run stops after --iterations, after --hours in
this call, or once its training time over all calls reaches
--max-train-hours; --resume continues it exactly (the run's config.json
wins over the flags, but --iterations may extend it). At the end p_ρ
plays p_σ (--eval-games in all, half as each colour, both sampling at
temperature 1 as in the paper's comparison) and the win rate is printed
with a 95% Wilson interval, then a `RESULT` line.

--quick: a fresh 3-layer 8-filter net on 5×5 (no p_σ), 12 iterations of 32
games, 128 evaluation games: seconds after compiling.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Literal, Optional

import jax

from alphago_jax.cli import stages
from alphago_jax.cli.stages import groups
from alphago_jax.core import config_codec, cpu_devices
from alphago_jax.games import match_sgf
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import policy_games
from alphago_jax.training import reinforce as rl
from alphago_jax.training.state import variables_of

STAGE = "rl-policy"
DEFAULT_SL = os.path.join("checkpoints", "sl_policy")
# The repository's root: DEFAULT_SL is relative to it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
EXAMPLES = """examples:
  alphago-jax train rl-policy --sl-checkpoint checkpoints/sl9 --output runs/rl9 [--hours 2]
  alphago-jax train rl-policy --output runs/rl9 --resume [--iterations 80]
  alphago-jax train rl-policy --quick --output /tmp/rl-quick   (a smoke run)"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Own(groups.Group):
  """The stage's own options: p_σ, the games and the update (a base of
  `Options`, so that --help lists them before the schedule).

  Attributes:
    sl_checkpoint: p_σ: an SL run or checkpoint directory (default
      checkpoints/sl_policy of the repository; not read with --quick).
    quick: a smoke run: tiny fresh net on 5x5, 12 iterations.
    size: --quick only: board size (default 5; p_σ's board otherwise).
    iterations: iterations of the run (default 10000; --quick 12); with
      --resume, a new budget.
    games: games an iteration (default 128; --quick 32).
    optimizer: sgd (the paper's) or adam (default sgd; --quick adam).
    lr: learning rate (default 0.001; --quick 0.01).
    baseline: none (b = 0) or mean (the batch's mean outcome; default).
    pool_size: snapshots kept (default 16; --quick 4).
    snapshot_every: iterations between snapshots (default 10; --quick 3).
    temperature: the softmax temperature both players sample at (default
      1).
    max_moves: the ply cap (default: the engine's 2 N²).
    grad_chunk: recorded positions a gradient chunk (default 512; --quick
      256).
    eval_games: p_ρ vs p_σ games at the end of the call, half as each
      colour (default 400; --quick 128; 0 skips); with --resume, for this
      call only. Each is written to OUTPUT/games/ as an SGF
      (`p-rho-vs-p-sigma-iteration-NNNNNN-KKKK.sgf`).
    sgf_games: self-play games kept as SGF in OUTPUT/games/ of every
      --sgf-every-th iteration, half with p_ρ as Black (default 0: none;
      the games played are the same either way).
    sgf_every: iterations between those sampled (default 100).
  """
  sl_checkpoint: Optional[str] = None
  quick: bool = False
  size: Optional[int] = None
  iterations: Optional[int] = None
  games: Optional[int] = None
  optimizer: Optional[Literal["sgd", "adam"]] = None
  lr: Optional[float] = None
  baseline: Optional[Literal["none", "mean"]] = None
  pool_size: Optional[int] = None
  snapshot_every: Optional[int] = None
  temperature: Optional[float] = None
  max_moves: Optional[int] = None
  grad_chunk: Optional[int] = None
  eval_games: Optional[int] = None
  sgf_games: Optional[int] = config_codec.omit_at_default(None)
  sgf_every: Optional[int] = config_codec.omit_at_default(None)

  def __post_init__(self):
    super().__post_init__()
    stages.check_optional_ints(self, {
        "size": 5, "iterations": 0, "games": 2, "pool_size": 1,
        "snapshot_every": 1, "max_moves": 1, "grad_chunk": 1,
        "eval_games": 0, "sgf_games": 0, "sgf_every": 1})
    if self.games is not None and self.games % 2:
      raise ValueError(f"games must be even (half as each colour), got "
                       f"{self.games}")
    for name in ("optimizer", "baseline"):
      allowed = {"optimizer": ("sgd", "adam"),
                 "baseline": ("none", "mean")}[name]
      if getattr(self, name) not in (None,) + allowed:
        raise ValueError(f"{name} must be one of {allowed}, got "
                         f"{getattr(self, name)!r}")
    stages.check_positive("lr", self.lr)
    stages.check_positive("temperature", self.temperature, zero=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options(groups.Devices, groups.TrainingTime, groups.Steps, Own):
  """What an RL-policy run computes (recorded in command.json): the
  fields of `Own`, `Steps`, `TrainingTime` and `Devices`, these in this
  stage's words.

  Attributes:
    seed: initialisation, games and evaluation.
    log_every: iterations per metrics record (default 1).
    cpu_devices: XLA CPU devices the games and gradients are split over
      (default: a power of two up to the cores, one per core; --quick 1).
      A resumed run keeps its own.
  """
  # Records made before the field existed ran on the machine's default.
  ADDED_FIELDS = ("cpu_devices",)
  max_train_hours: float = 6.0

  def resolved(self) -> "Options":
    """Every default filled in from the library's (what command.json
    records); p_σ's path stays as given (None: the repository's)."""
    config = build_config(self, PolicyNetConfig())
    devices = self.cpu_devices or (
        1 if self.quick else cpu_devices.default_cpu_device_count())
    if config.games_per_iteration % (2 * devices):
      raise ValueError(
          f"games={config.games_per_iteration} must split into an even "
          f"number of games on each of the {devices} cpu_devices")
    iterations = self.iterations
    if iterations is None:
      iterations = 12 if self.quick else 10_000
    return dataclasses.replace(
        self, size=(self.size or 5) if self.quick else None,
        iterations=iterations,
        games=config.games_per_iteration, optimizer=config.optimizer,
        lr=config.learning_rate, baseline=config.baseline,
        pool_size=config.pool_size, snapshot_every=config.snapshot_every,
        temperature=config.temperature, grad_chunk=config.grad_chunk,
        cpu_devices=devices, log_every=self.log_every or 1,
        eval_games=self.eval_games if self.eval_games is not None
        else 128 if self.quick else 400)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command(stages.TrainingCommand[Options]):
  """A call of the stage (--output, --resume, --hours)."""


def build_config(options: Options, model=None):
  """The library's `ReinforceConfig` (p_σ's `model` unless --quick)."""
  if options.quick:
    config = rl.ReinforceConfig(
        model=PolicyNetConfig.tiny(board_size=options.size or 5),
        games_per_iteration=32, optimizer="adam", learning_rate=1e-2,
        pool_size=4, snapshot_every=3, grad_chunk=256)
  else:
    config = rl.ReinforceConfig(model=model)
  return stages.with_given(
      config, games_per_iteration=options.games, learning_rate=options.lr,
      optimizer=options.optimizer, baseline=options.baseline,
      pool_size=options.pool_size, snapshot_every=options.snapshot_every,
      temperature=options.temperature, max_moves=options.max_moves,
      grad_chunk=options.grad_chunk, sgf_games=options.sgf_games,
      sgf_every=options.sgf_every)


def _devices(options: Options, saved) -> int:
  """The run's device count: a resumed run keeps its own (runs recorded
  before it was saved ran on one device)."""
  return saved.get("cpu_devices", 1) if saved else options.cpu_devices


def run(command: Command) -> int:
  """Trains (or resumes) the run of `command`; the exit status."""
  call = stages.begin(STAGE, command, devices=_devices)
  options, saved, resuming = call.options, call.saved, call.resuming
  log = stages.log
  devices = _devices(options, saved)
  if jax.device_count() < devices:
    log(f"note: this process has {jax.device_count()} XLA devices, fewer "
        f"than cpu_devices={devices}: the games run on those")
    devices = jax.device_count()
  mesh = stages.data_mesh(devices)

  if resuming:
    config = rl.ReinforceConfig.from_json(saved["config"])
    sl_path, seed = saved["sl_checkpoint"], saved["seed"]
    iterations, eval_games = saved["iterations"], saved["eval_games"]
    recorded_eval_games = eval_games
    if command.options.iterations is not None:
      iterations = command.options.iterations  # A resumed run may grow.
    if command.options.eval_games is not None:
      # A call that only continues training may skip the match (0).
      eval_games = command.options.eval_games
  else:
    seed, iterations = options.seed, options.iterations
    eval_games = recorded_eval_games = options.eval_games
    # The default is recorded as the repository's relative name, never as
    # this machine's path.
    sl_path = None if options.quick else (
        options.sl_checkpoint or DEFAULT_SL)
  variables = model = None
  if sl_path is not None:
    try:
      model, variables, sl_step = rl.load_any_policy(ckpt.steps_directory(
          os.path.join(ROOT, DEFAULT_SL) if sl_path == DEFAULT_SL
          else sl_path))
    except (FileNotFoundError, ckpt.CheckpointMismatchError) as e:
      raise stages.StageError(f"--sl-checkpoint: {e}") from None
    log(f"p_σ: {sl_path} step {sl_step}, {model.num_layers}x"
        f"{model.filters} on {model.board_size}x{model.board_size}")
    # A path names whatever network is there now: a run resumed against a
    # different p_σ (e.g. a newer checkpoints/sl_policy) would silently
    # play its matches against another opponent, so the step is checked.
    recorded_step = saved.get("sl_step") if resuming else None
    if recorded_step is not None and recorded_step != sl_step:
      raise stages.StageError(
          f"{call.files.config_path}: this run was trained from p_σ step "
          f"{recorded_step}, but {sl_path} now holds step {sl_step}; put "
          f"that network back at {sl_path} (or edit sl_checkpoint) to "
          f"resume")
  else:
    sl_step = None
  if not resuming:
    try:
      config = build_config(options, model)
    except ValueError as e:
      raise stages.refused(str(e)) from None
  if variables is None:  # --quick: p_σ is the fresh network of the seed.
    fresh = rl.init_reinforce_state(config, seed)
    variables = jax.tree.map(lambda x: x.copy(), variables_of(fresh))
  call.record({
      "config": config.to_json(), "sl_checkpoint": sl_path, "sl_step": sl_step,
      "seed": seed, "iterations": iterations,
      "eval_games": recorded_eval_games, "cpu_devices": devices})
  state, _ = call.train(
      rl.train_reinforce, config, seed=seed, variables=variables,
      num_iterations=iterations, output_dir=command.output, mesh=mesh)
  done = int(state.iteration)
  fields = f"iterations={done} games={done * config.games_per_iteration}"
  if eval_games >= 2:
    per = eval_games // 2
    result = policy_games.policy_match(
        config.model, variables_of(state), config.model, variables,
        jax.random.key(seed + 1), games_per_colour=per, temperature=1.0,
        game=config.game, max_moves=config.max_moves,
        batch_games=min(128, 2 * per), mesh=mesh,
        sgf_dir=os.path.join(command.output, match_sgf.GAMES_DIR),
        sgf=policy_games.SgfNames(
            match=f"p-rho-vs-p-sigma-iteration-{done:06d}",
            player_a=match_sgf.Player(f"p_rho iteration {done}"),
            player_b=match_sgf.Player(
                f"p_sigma {sl_path} step {sl_step}" if sl_path is not None
                else "p_sigma (the fresh network of the seed)"),
            seed=seed + 1))
    log(f"p_ρ vs p_σ: {result['wins']} wins, {result['losses']} losses, "
        f"{result['draws']} draws of {result['games']}: win rate "
        f"{result['win_rate']:.3f} [{result['ci_low']:.3f}, "
        f"{result['ci_high']:.3f}] (95% Wilson), as Black "
        f"{result['black_win_rate']:.3f}, mean length "
        f"{result['mean_length']:.1f}")
    fields += (f" eval_games={result['games']} "
               f"win_rate={result['win_rate']:.4f} "
               f"ci_low={result['ci_low']:.4f} "
               f"ci_high={result['ci_high']:.4f}")
  print(f"RESULT {fields}", flush=True)
  return 0


stages.register(__name__)
