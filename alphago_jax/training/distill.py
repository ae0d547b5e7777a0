"""Distillation of AlphaGo's 2016 networks into the loop's two-headed ResNet.

The teachers: the policy network p_σ (`models.policy`) and the value
network v_θ (`models.value`), both reading AlphaGo's feature planes. The
student: the AlphaZero loop's `PolicyValueNet` (`models.resnet`), reading
the game's own observation, so that the distilled network can seed the
compiled self-play/learn loop (`alphazero --init-from`) or play under its
search.

Positions come from games the teachers play: each step plays `num_games`
games of p_σ against itself on the device (vmapped, in one `play_loop`),
every move sampled from p_σ's softmax at `temperature` among
`policy_games.sensible_mask`'s moves (no filling of one's own eye; pass
only when nothing else is left), under the student's game (the loop's
rules: positional superko, komi 7.5). Every position met before a game's
end is an example whose targets are the teachers' outputs there:

* policy: p_σ's softmax over the legal moves (pass included), the same
  distribution the AlphaGo search takes as its prior; the student's policy
  head learns it by cross-entropy;
* value: v_θ's value for the player to move, the sign convention of the
  loop's value head (`PolicyValueNet`: the player to move); the student's
  value head learns it by squared error.

The same compiled step then takes `gradient_steps` steps on batches drawn
uniformly from that step's positions (`replay`, a transient buffer), each
row under a random one of the 8 board symmetries (`augment.
dihedral_augment`: observation, legal mask and policy target transformed
alike, the value unchanged), with the loop's loss (`learner.loss_fn`) and
the position stages' optimiser and schedule (`optim`). Nothing but the
network, the optimiser and the step counter is carried: step `s` plays
from `fold_in(key, s)`, so a run is a function of its seed and its step
count, and a resumed run continues exactly.

Held-out positions come from games seeded apart from the training stream
(`held_out_key`): the validation split is evaluated in the learning curve,
the test split is left to the reported figures (read once per network).
Both are measured against the teachers themselves on the positions as they
stand (no symmetry): top-1 agreement with p_σ, cross-entropy and KL from
p_σ's distribution, MSE against v_θ.
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
from alphago_jax.core.checks import check as _check, check_int, is_real
from alphago_jax.games import go as go_lib
from alphago_jax.games.go_feature_game import feature_planes_game
from alphago_jax.models.policy import PolicyNet, PolicyNetConfig, make_policy_fn
from alphago_jax.models.resnet import (PolicyValueNet, ResNetConfig,
                                       init_variables, make_network)
from alphago_jax.models.value import ValueNet, ValueNetConfig, make_value_fn
from alphago_jax.play.arena import play_loop
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import optim, policy_games
from alphago_jax.training.augment import dihedral_augment
from alphago_jax.training.learner import loss_fn, scan_gradient_steps
from alphago_jax.training.replay import (Sample, identity_augment,
                                         replay_add, replay_init,
                                         replay_sample)
from alphago_jax.training.stage import Stage, StageRun, register, run_stage
from alphago_jax.training.state import TrainState, variables_of

STAGE = "distill"
# `fold_in` tags of the run's root key: the training stream, the two
# held-out splits and the student's initialisation draw from distinct
# keys, so no held-out game is one the student trained on.
TRAIN, VALIDATION, TEST, INIT = 0, 1, 2, 3
SPLITS = {"validation": VALIDATION, "test": TEST}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Teacher:
  """The teachers' architectures (their weights travel apart, as the
  argument `{"policy": ..., "value": ...}` of the compiled programs).

  Attributes:
    policy: p_σ's config (or p_ρ's: any `PolicyNetConfig`).
    value: v_θ's config, for the same board.
  """
  policy: PolicyNetConfig
  value: ValueNetConfig

  def __post_init__(self):
    _check("policy", isinstance(self.policy, PolicyNetConfig), self.policy,
           "a PolicyNetConfig")
    _check("value", isinstance(self.value, ValueNetConfig), self.value,
           "a ValueNetConfig")
    if self.policy.board_size != self.value.board_size:
      raise ValueError(f"the policy network is for {self.policy.board_size}"
                       f"x{self.policy.board_size}, the value network for "
                       f"{self.value.board_size}x{self.value.board_size}")

  @property
  def board_size(self) -> int:
    return self.policy.board_size


@dataclasses.dataclass(frozen=True, kw_only=True)
class DistillConfig(optim.ScheduleConfig, config_codec.JsonMethods):
  """A distillation run: the student, the games and the optimiser (the
  fields of `optim.ScheduleConfig`, in gradient steps: `total_samples`
  positions trained on set the horizon; `weight_decay` is c of the loop's
  c ||θ||²) and these.

  Attributes:
    model: the student, the loop's ResNet.
    num_games: games the teachers play a step (even).
    gradient_steps: gradient steps a step, on batches of that step's
      positions.
    temperature: p_σ's sampling temperature in the games (0: greedy with
      random tie-breaks).
    max_moves: the games' ply cap (None: the game's own, 2N²); a game it
      stops gives its positions so far.
    augment: a random board symmetry per training row.
  """
  model: ResNetConfig
  num_games: int = 32
  gradient_steps: int = 16
  temperature: float = 1.0
  max_moves: Optional[int] = None
  augment: bool = True
  batch_size: int = 256
  learning_rate: float = 2e-3
  warmup_steps: int = 100
  total_samples: int = 4_000_000
  weight_decay: float = 1e-4

  def __post_init__(self):
    _check("model", isinstance(self.model, ResNetConfig), self.model,
           "a ResNetConfig")
    super().__post_init__()
    _check("num_games", isinstance(self.num_games, int)
           and not isinstance(self.num_games, bool) and self.num_games >= 2
           and self.num_games % 2 == 0, self.num_games,
           "an even integer >= 2")
    check_int("gradient_steps", self.gradient_steps, 1)
    _check("temperature", is_real(self.temperature)
           and self.temperature >= 0, self.temperature, "a number >= 0")
    check_int("max_moves", self.max_moves, 1, optional=True)
    _check("augment", isinstance(self.augment, bool), self.augment,
           "a bool")

  @property
  def samples_per_step(self) -> int:
    return self.batch_size * self.gradient_steps

  @property
  def num_steps(self) -> int:
    """Steps of the run: `total_samples` positions trained on."""
    return max(1, self.total_samples // self.samples_per_step)

  def architecture(self, game: go_lib.Go) -> Dict[str, Any]:
    """What a checkpoint must match to be restored: the stage, and the
    fields `TrainConfig.architecture` names the loop's network by (game,
    actions, observations, model), so that a new AlphaZero run can start
    from it (`warm_start`)."""
    return {"stage": STAGE, "game": game.name,
            "num_actions": int(game.num_actions),
            "observation_shape": [int(d) for d in game.observation_shape],
            "model": config_codec.to_json(self.model),
            "optimizer": self.optimizer}


def check_game(game: go_lib.Go, teacher: Teacher) -> None:
  """Raises ValueError unless `game` is Go on the teachers' board."""
  if not isinstance(game, go_lib.Go):
    raise ValueError(f"distill: the teachers play Go, not {game!r}")
  if game.size != teacher.board_size:
    raise ValueError(f"distill: the teachers are for {teacher.board_size}x"
                     f"{teacher.board_size}, the game is {game.size}x"
                     f"{game.size}")


@dataclasses.dataclass(frozen=True)
class TeacherFns:
  """The teachers as functions of a batch of states of the student's game.

  Attributes:
    planes: `states [B] -> float32 [B, N, N, C]`, the planes both read.
    policy_logits: `(variables, planes, legal [B, A]) -> [B, A]`, p_σ's
      logits, illegal moves masked.
    value: `(variables, planes) -> [B]`, v_θ for the player to move.
  """
  planes: Callable
  policy_logits: Callable
  value: Callable


def teacher_fns(game: go_lib.Go, teacher: Teacher) -> TeacherFns:
  """p_σ and v_θ on `game`'s states: one computation of the union of their
  planes (`go_feature_game`), each network taking its own channels."""
  check_game(game, teacher)
  planes_game = feature_planes_game(
      game.size, [teacher.policy.features, teacher.value.features],
      komi=game.komi, superko=game.superko,
      history_length=game.history_length, max_moves=game.max_moves)
  policy = make_policy_fn(PolicyNet(teacher.policy))
  value = make_value_fn(ValueNet(teacher.value))
  policy_channels = jnp.asarray(planes_game.plane_indices(
      teacher.policy.features))
  value_channels = jnp.asarray(planes_game.plane_indices(
      teacher.value.features))

  def planes(states):
    # The planes game is `game` observed otherwise: the same states.
    return jax.vmap(planes_game.observe)(states)

  def policy_logits(variables, planes, legal):
    return policy(variables["policy"],
                  jnp.take(planes, policy_channels, axis=-1), legal)

  def value_of(variables, planes):
    return value(variables["value"],
                 jnp.take(planes, value_channels, axis=-1))

  return TeacherFns(planes=planes, policy_logits=policy_logits,
                    value=value_of)


def targets(game: go_lib.Go, teacher: Teacher, variables,
            states: go_lib.GoState) -> Tuple[Sample, chex.Array]:
  """The examples of `states` `[B]`: the student's observation and legal
  mask, p_σ's softmax over the legal moves (`policy` `[B, A]`) and v_θ's
  value for the player to move (`value` `[B]`); and p_σ's masked logits
  `[B, A]` (the games sample from them)."""
  fns = teacher_fns(game, teacher)
  planes = fns.planes(states)
  legal = states.legal_action_mask
  logits = fns.policy_logits(variables, planes, legal)
  sample = Sample(observation=jax.vmap(game.observe)(states),
                  legal_action_mask=legal,
                  policy=jax.nn.softmax(logits, axis=-1),
                  value=fns.value(variables, planes))
  return sample, logits


def teacher_games(game: go_lib.Go, teacher: Teacher, variables,
                  key: chex.PRNGKey, *, num_games: int,
                  temperature: float = 1.0,
                  max_moves: Optional[int] = None
                  ) -> Tuple[Sample, chex.Array, chex.Array]:
  """Plays `num_games` = B games of p_σ against itself; every position
  before a game's end is an example (`targets`).

  Traceable (jit it): `play_loop` over plies up to `max_moves` (T; default
  `game.move_cap`), stopping when every game has ended.

  Returns:
    (examples `Sample` `[T * B]` (ply-major), valid bool `[T * B]`, game
    lengths int32 `[B]`).
  """
  cap = game.move_cap if max_moves is None else max_moves
  check_int("max_moves", cap, 1)
  n, a = game.size, game.num_actions
  c = game.observation_shape[-1]
  record = Sample(
      observation=jnp.zeros((cap, num_games, n, n, c), jnp.float32),
      legal_action_mask=jnp.zeros((cap, num_games, a), jnp.bool_),
      policy=jnp.zeros((cap, num_games, a), jnp.float32),
      value=jnp.zeros((cap, num_games), jnp.float32))
  valid = jnp.zeros((cap, num_games), jnp.bool_)

  def body(t, states, keys, carry):
    record, valid = carry
    (sample_key,) = keys
    sample, logits = targets(game, teacher, variables, states)
    mask = policy_games.sensible_mask(game, states)
    actions = policy_games.sample_actions(sample_key, logits, mask,
                                          temperature)
    running = ~states.terminated
    record = jax.tree.map(lambda r, x: r.at[t].set(x), record, sample)
    valid = valid.at[t].set(running)
    return jax.vmap(game.step)(states, actions), (record, valid)

  states, (record, valid), _ = play_loop(
      game, body, key, num_games=num_games, carry=(record, valid),
      max_rounds=cap, keys_per_round=1)
  flat = lambda x: x.reshape((-1,) + x.shape[2:])
  return (jax.tree.map(flat, record), flat(valid),
          states.step_count.astype(jnp.int32))


def held_out_key(seed: int, split: str) -> chex.PRNGKey:
  """The key of a held-out split's games ("validation" or "test"): folded
  from the run's seed apart from the training stream's."""
  if split not in SPLITS:
    raise ValueError(f"split must be one of {sorted(SPLITS)}, got "
                     f"{split!r}")
  return jax.random.fold_in(jax.random.key(seed), SPLITS[split])


def train_key(seed: int) -> chex.PRNGKey:
  """The root of the training stream (step `s` plays from
  `fold_in(train_key, s)`; the state's `key`)."""
  return jax.random.fold_in(jax.random.key(seed), TRAIN)


@functools.lru_cache(maxsize=8)
def _games_fn(game, teacher, num_games, temperature, max_moves):
  return jax.jit(lambda variables, key: teacher_games(
      game, teacher, variables, key, num_games=num_games,
      temperature=temperature, max_moves=max_moves))


def held_out_positions(game: go_lib.Go, teacher: Teacher, variables, *,
                       seed: int, split: str, num_games: int,
                       temperature: float = 1.0,
                       max_moves: Optional[int] = None,
                       batch_games: int = 64, with_games: bool = False):
  """Every position of `num_games` held-out games of `split` (host arrays
  `[P, ...]`), played as the training games are, in batches of at most
  `batch_games` (batch `i` from `fold_in(held_out_key(seed, split), i)`).
  With `with_games`, also each position's game (int `[P]`, for intervals
  that treat games as the independent draws).
  """
  check_int("num_games", num_games, 2)
  if num_games % 2:
    raise ValueError(f"num_games must be even, got {num_games}")
  root = held_out_key(seed, split)
  parts, games = [], []
  left, index, first = num_games, 0, 0
  while left > 0:
    size = min(left, batch_games)
    size += size % 2
    play = _games_fn(game, teacher, size, float(temperature), max_moves)
    sample, valid, _ = jax.device_get(
        play(variables, jax.random.fold_in(root, index)))
    keep = np.flatnonzero(np.asarray(valid))
    parts.append(jax.tree.map(lambda x: np.asarray(x)[keep], sample))
    games.append(first + keep % size)  # rows are ply-major
    left -= size
    index += 1
    first += size
  positions = jax.tree.map(lambda *xs: np.concatenate(xs), *parts)
  return (positions, np.concatenate(games)) if with_games else positions


# -- The stage ------------------------------------------------------------------

def init_state(game: go_lib.Go, config: DistillConfig, seed: int
               ) -> TrainState:
  """A fresh run: random student, fresh optimiser, step 0, no buffer."""
  state = _init_fn(game, config)(jax.random.key(seed))
  return jax.device_put(state, jax.local_devices()[0])


@functools.lru_cache(maxsize=8)
def _init_fn(game: go_lib.Go, config: DistillConfig):
  """Jitted `root key -> fresh state` (one compiled program instead of
  the many small eager ones of an initialisation)."""
  network = make_network(game, config.model)

  @jax.jit
  def init(root):
    variables = init_variables(game, network, jax.random.fold_in(root, INIT))
    return TrainState(
        params=variables["params"], batch_stats=variables["batch_stats"],
        opt_state=optim.make_optimizer(config).init(variables["params"]),
        buffer=None,
        key=jax.random.key_data(jax.random.fold_in(root, TRAIN)),
        iteration=jnp.int32(0))
  return init


@functools.lru_cache(maxsize=8)
def make_step(game: go_lib.Go, teacher: Teacher, config: DistillConfig
              ) -> Callable[[TrainState, Any], Tuple[TrainState, Dict]]:
  """The jitted `step(state, teacher_variables) -> (state, metrics)`: one
  batch of teacher games, then `gradient_steps` gradient steps on its
  positions. Metrics are float32 scalars: the loss terms' means over the
  gradient steps (`learner.loss_fn`'s, less its outcome accuracy),
  `loss_first`/`loss_last`, `lr`, the positions played and the games'
  mean length."""
  check_game(game, teacher)
  network = make_network(game, config.model)
  optimizer = optim.make_optimizer(config)
  schedule = optim.make_schedule(config)
  augment = dihedral_augment(game.size) if config.augment \
      else identity_augment
  cap = game.move_cap if config.max_moves is None else config.max_moves

  def grad_step(buffer, carry, key):
    params, batch_stats, opt_state = carry
    batch = replay_sample(buffer, key, config.batch_size, augment)
    grads, (batch_stats, metrics) = jax.grad(loss_fn, has_aux=True)(
        params, batch_stats, batch, network=network,
        weight_decay=config.weight_decay)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    metrics.pop("value_accuracy")  # an outcome's notion, not a target's
    return (optax.apply_updates(params, updates), batch_stats,
            opt_state), metrics

  def step(state: TrainState, teacher_variables):
    key = jax.random.fold_in(jax.random.wrap_key_data(state.key),
                             state.iteration)
    play_key, learn_key = jax.random.split(key)
    examples, valid, lengths = teacher_games(
        game, teacher, teacher_variables, play_key,
        num_games=config.num_games, temperature=config.temperature,
        max_moves=cap)
    buffer = replay_add(replay_init(cap * config.num_games,
                                    game.observation_shape,
                                    game.num_actions), examples, valid)
    (params, batch_stats, opt_state), metrics = scan_gradient_steps(
        grad_step, buffer, (state.params, state.batch_stats, state.opt_state),
        learn_key, config.gradient_steps)
    metrics["lr"] = jnp.asarray(
        schedule(state.iteration * config.gradient_steps), jnp.float32)
    metrics["positions"] = buffer.size.astype(jnp.float32)
    metrics["mean_game_length"] = jnp.mean(lengths.astype(jnp.float32))
    return state.replace(params=params, batch_stats=batch_stats,
                         opt_state=opt_state,
                         iteration=state.iteration + 1), metrics

  return jax.jit(step, donate_argnums=0)


@functools.lru_cache(maxsize=8)
def _eval_fn(game: go_lib.Go, model: ResNetConfig):
  network = make_network(game, model)

  @jax.jit
  def measures(variables, batch: Sample):
    logits, value = network.apply(variables, batch.observation,
                                  batch.legal_action_mask, train=False)
    log_p = jax.nn.log_softmax(logits)
    target = batch.policy
    cross = -jnp.sum(target * log_p, axis=-1)
    entropy = -jnp.sum(jnp.where(target > 0, target * jnp.log(
        jnp.where(target > 0, target, 1.0)), 0.0), axis=-1)
    return {"agreement": (jnp.argmax(logits, -1) == jnp.argmax(target, -1)
                          ).astype(jnp.float32),
            "cross_entropy": cross, "kl": cross - entropy,
            "teacher_entropy": entropy,
            "value_sq_error": (value - batch.value) ** 2}
  return measures


def per_position(variables, game: go_lib.Go, model: ResNetConfig,
                 positions: Sample, *, batch_size: int = 512
                 ) -> Dict[str, np.ndarray]:
  """The student (`variables`, inference mode) against the teachers'
  targets on each of `positions` (host `Sample` `[P]`, as they stand):
  `agreement` (1 where its top move is p_σ's), `cross_entropy` and `kl`
  from p_σ's distribution, p_σ's own `teacher_entropy`, and
  `value_sq_error` against v_θ; host arrays `[P]`."""
  count = int(positions.value.shape[0])
  if count == 0:
    raise ValueError("distill: no positions to evaluate")
  measures = _eval_fn(game, model)
  parts: Dict[str, List[np.ndarray]] = {}
  for start in range(0, count, batch_size):
    index = np.arange(start, start + batch_size) % count  # pad the last
    batch = jax.tree.map(lambda x: x[index], positions)
    keep = min(batch_size, count - start)
    for k, v in jax.device_get(measures(variables, batch)).items():
      parts.setdefault(k, []).append(np.asarray(v)[:keep])
  return {k: np.concatenate(v) for k, v in parts.items()}


def evaluate(variables, game: go_lib.Go, model: ResNetConfig,
             positions: Sample, *, batch_size: int = 512) -> Dict[str, float]:
  """The means of `per_position`: `agreement` (top-1 with p_σ),
  `cross_entropy`, `kl`, `teacher_entropy`, `value_mse` (against v_θ),
  and `positions`."""
  values = per_position(variables, game, model, positions,
                        batch_size=batch_size)
  out = {k: float(np.mean(v)) for k, v in values.items()}
  out["value_mse"] = out.pop("value_sq_error")
  return {**out, "positions": int(positions.value.shape[0])}


@dataclasses.dataclass(frozen=True)
class DistillInputs:
  """What a distillation run reads besides its config.

  Attributes:
    game: the student's game (Go on the teachers' board).
    teacher: the teachers' architectures.
    teacher_variables: `{"policy": p_σ's variables, "value": v_θ's}`.
    eval_games: held-out validation games of the learning curve (0: no
      evaluation).
  """
  game: go_lib.Go
  teacher: Teacher
  teacher_variables: Any
  eval_games: int = 64


def _evaluator(run: StageRun):
  inputs = run.inputs
  if not inputs.eval_games:
    return None
  positions = []  # played on first use, once per call

  def evaluator(state):
    if not positions:
      positions.append(held_out_positions(
          inputs.game, inputs.teacher, inputs.teacher_variables,
          seed=run.seed, split="validation", num_games=inputs.eval_games,
          temperature=run.config.temperature,
          max_moves=run.config.max_moves))
    result = evaluate(variables_of(state), inputs.game, run.config.model,
                      positions[0])
    return {f"validation_{k}": v for k, v in result.items()}
  return evaluator


def _loop_defaults(run: StageRun) -> Dict[str, Any]:
  per_step = run.config.samples_per_step

  def summarize(metrics, *, step, steps, seconds):
    return {"samples": step * per_step,
            "samples_per_second": steps * per_step / seconds,
            "positions_per_second": metrics["positions"] * steps / seconds}

  def resumed(done, seconds):
    return (f"resumed from step {done} ({done * per_step} samples, "
            f"{seconds / 3600:.2f} h of training)")

  return dict(log_every=10, evaluate_every=100, evaluate_on_stop=True,
              checkpoint_seconds=600.0, handle_signals=True,
              summarize=summarize, resumed_message=resumed,
              progress_unit="pos", progress_scale=per_step,
              postfix=lambda record: {
                  "kl": f"{record['policy_kl']:.3f}",
                  "v_mse": f"{record['value_loss']:.3f}",
                  "pos_s": f"{record['samples_per_second']:.0f}"})


def _make_step(run: StageRun, start: TrainState):
  del start  # step s plays from fold_in(key, s): nothing to skip to
  inputs = run.inputs
  step = make_step(inputs.game, inputs.teacher, run.config)
  variables = jax.device_put(inputs.teacher_variables)
  return lambda state: step(state, variables)


TRAINING_STAGE = register(Stage(
    name=STAGE, config_type=DistillConfig,
    init=lambda run: init_state(run.inputs.game, run.config, run.seed),
    make_step=_make_step,
    architecture=lambda run: run.config.architecture(run.inputs.game),
    evaluate=_evaluator, loop_defaults=_loop_defaults))


def train_distill(config: DistillConfig, inputs: DistillInputs, *,
                  seed: int, num_steps: Optional[int] = None,
                  **loop_options) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) a distillation up to `num_steps` steps (default
  `config.num_steps`).

  Args:
    loop_options: `host_loop.run`'s (`output_dir`, `resume`, `log_every`,
      `evaluate_every`, checkpoint periods, budgets, `log`, `progress`,
      `tensorboard`, ...), over the stage's defaults.

  Returns:
    the final state and this call's records.

  Raises:
    CheckpointMismatchError: the run directory's checkpoint is of another
      network or game.
    ValueError: a game off the teachers' board.
  """
  check_game(inputs.game, inputs.teacher)
  steps = config.num_steps if num_steps is None else num_steps
  check_int("num_steps", steps, 0)
  return run_stage(TRAINING_STAGE, config, seed=seed, num_steps=steps,
                   inputs=inputs, **loop_options)


def load_student(directory: str, *, step: Optional[int] = None
                 ) -> Tuple[Dict[str, Any], Dict[str, Any], int]:
  """(architecture, variables, step) of a distillation checkpoint (a run
  directory or its `checkpoints/`): the student alone.

  Raises:
    FileNotFoundError: no checkpoint there.
    CheckpointMismatchError: a checkpoint of another stage.
  """
  steps_dir = ckpt.steps_directory(directory)
  if ckpt.latest_step(steps_dir) is None:
    raise FileNotFoundError(f"no checkpoint in {directory}")
  meta = ckpt.read_metadata(steps_dir, step)
  if meta.get("stage") != STAGE:
    raise ckpt.CheckpointMismatchError(
        f"{directory}: not a distillation checkpoint (stage "
        f"{meta.get('stage')!r})")
  try:
    model = config_codec.from_json(ResNetConfig, meta["model"], "model")
    shape = tuple(int(d) for d in meta["observation_shape"])
    network = PolicyValueNet(num_actions=int(meta["num_actions"]),
                             config=model)
  except (KeyError, TypeError, ValueError) as e:
    raise ckpt.CheckpointMismatchError(
        f"{directory}: damaged distillation metadata ({e})") from None
  template = network.init(jax.random.key(0),
                          jnp.zeros((1,) + shape, jnp.float32))
  return ckpt.restore_network(steps_dir, template, step=step)
