"""The AlphaZero training loop: one compiled program per iteration.

`make_iteration` returns a single jitted function that plays a chunk of
self-play, inserts the examples into the on-device replay buffer and takes K
gradient steps (a `lax.scan`), so an iteration is one dispatch with no host
round trip. It is the step of the `alphazero` stage (`TRAINING_STAGE`, registered
in `training.stage.STAGES`); `train` runs it with `stage.run_stage` in the
shared host loop, which only logs metrics, evaluates and checkpoints.

Data parallelism: given a `jax.sharding.Mesh` with one axis `"data"`, the
self-play games and every training batch are sharded over it and the state
(params, optimiser, buffer) is replicated; XLA inserts the gradient
all-reduce. Everything is deterministic for a given seed on the CPU.

Multi-host: call `jax.distributed.initialize(...)` in every process first;
`make_mesh()` then spans all processes' devices and the same program runs
everywhere (self-play data is generated on the devices, so nothing is fed
from the hosts). See docs/results/alphazero.md, "Scaling out".
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from alphago_jax.core.checks import check_int
from alphago_jax.games import base as game_base
from alphago_jax.games import go as go_lib
from alphago_jax.games import match_sgf
from alphago_jax.models.resnet import (init_variables, make_evaluate_fn,
                                       make_network)
from alphago_jax.training import host_loop
from alphago_jax.training.config import TrainConfig
from alphago_jax.training.learner import (loss_fn, make_optimizer,
                                          scan_gradient_steps)
from alphago_jax.training.mesh import DATA_AXIS, check_mesh, make_mesh, replicate  # noqa: F401 (re-exported)
from alphago_jax.training.replay import (AugmentFn, identity_augment,
                                         replay_add, replay_init,
                                         replay_sample)
from alphago_jax.training.selfplay import SelfPlayGames, self_play
from alphago_jax.training.stage import Stage, StageRun, register, run_stage
from alphago_jax.training.state import TrainState, variables_of


def _check_mesh(config: TrainConfig, mesh: Optional[Mesh]) -> None:
  check_mesh(mesh, num_games=config.num_games, batch_size=config.batch_size)


def init_train_state(game: game_base.Game, config: TrainConfig, seed: int, *,
                     mesh: Optional[Mesh] = None,
                     variables: Optional[chex.ArrayTree] = None
                     ) -> TrainState:
  """A fresh run: random network (or `variables`, `{"params",
  "batch_stats"}` of the same network: `warm_start`), fresh optimiser,
  empty buffer, key from `seed`, iteration 0."""
  config.check_game(game)
  _check_mesh(config, mesh)
  init_key, run_key = jax.random.split(jax.random.key(seed))
  if variables is None:
    network = make_network(game, config.model)
    variables = init_variables(game, network, init_key)
  params = variables["params"]
  state = TrainState(
      params=params, batch_stats=variables["batch_stats"],
      opt_state=make_optimizer(config).init(params),
      buffer=replay_init(config.buffer_capacity, game.observation_shape,
                         game.num_actions),
      key=jax.random.key_data(run_key), iteration=jnp.int32(0))
  # Committed to its devices, as a restored state is, so that both reach
  # the same compiled iteration (it is keyed on its inputs' shardings).
  if mesh is not None:
    return replicate(state, mesh)
  return jax.device_put(state, jax.local_devices()[0])


def make_iteration(game: game_base.Game, config: TrainConfig, *,
                   mesh: Optional[Mesh] = None,
                   augment: AugmentFn = identity_augment
                   ) -> Callable[[TrainState], Tuple[TrainState, Dict]]:
  """The jitted `iteration(state) -> (state, metrics)`.

  One call: a self-play chunk of `num_games` games, buffer insertion, then
  `gradient_steps` steps on batches drawn uniformly from the buffer.
  Metrics are float32 scalars: the means over the K steps of the loss terms
  (plus `loss_first`/`loss_last`), and the self-play statistics.

  Cached on its (hashable) arguments, so runs of the same game and config in
  one process, e.g. a resume, reuse one compiled program.
  """
  return _make_iteration(game, config, mesh, augment)


@functools.lru_cache(maxsize=16)
def _make_iteration(game, config, mesh, augment, record_games=False):
  config.check_game(game)
  _check_mesh(config, mesh)
  network = make_network(game, config.model)
  evaluate = make_evaluate_fn(network)
  optimizer = make_optimizer(config)

  if mesh is None:
    constrain = lambda tree: tree
  else:
    batch_sharding = NamedSharding(mesh, PartitionSpec(DATA_AXIS))
    constrain = lambda tree: jax.tree.map(
        lambda x: jax.lax.with_sharding_constraint(x, batch_sharding), tree)

  def grad_step(buffer, carry, key):
    params, batch_stats, opt_state = carry
    batch = constrain(replay_sample(buffer, key, config.batch_size, augment))
    grads, (batch_stats, metrics) = jax.grad(loss_fn, has_aux=True)(
        params, batch_stats, batch, network=network,
        weight_decay=config.weight_decay)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return (params, batch_stats, opt_state), metrics

  def iteration(state: TrainState):
    key = jax.random.wrap_key_data(state.key)
    key, play_key, train_key = jax.random.split(key, 3)
    examples, valid, stats, *games = self_play(
        game, evaluate, variables_of(state), play_key,
        num_games=config.num_games, max_moves=config.max_moves,
        config=config.search,
        random_opening_moves=config.random_opening_moves,
        constrain=constrain, **(
            {"record_games": True} if record_games else {}))
    buffer = replay_add(state.buffer, examples, valid)
    (params, batch_stats, opt_state), metrics = scan_gradient_steps(
        grad_step, buffer, (state.params, state.batch_stats, state.opt_state),
        train_key, config.gradient_steps)
    metrics.update(stats.as_dict())
    metrics["examples_added"] = jnp.sum(valid.astype(jnp.float32))
    metrics["buffer_size"] = buffer.size.astype(jnp.float32)
    new_state = TrainState(params=params, batch_stats=batch_stats,
                           opt_state=opt_state, buffer=buffer,
                           key=jax.random.key_data(key),
                           iteration=state.iteration + 1)
    return (new_state, metrics, *games)

  if mesh is None:
    return jax.jit(iteration)
  replicated = NamedSharding(mesh, PartitionSpec())
  return jax.jit(iteration, in_shardings=replicated,
                 out_shardings=replicated)


def game_sgfs(game: go_lib.Go, config: TrainConfig, games: SelfPlayGames,
              iteration: int) -> List[match_sgf.PlayedGame]:
  """The first `config.sgf_games` finished games of a chunk as
  `PlayedGame`s (`iteration-NNNNNN`, numbered by their place in the
  chunk): the search's root value as the mover's winrate, its visits."""
  g = jax.device_get(games)
  player = match_sgf.Player("self-play", (
      ("num_simulations", config.search.num_simulations),
      ("iteration", iteration)))
  settings = (("num_games", config.num_games),
              ("max_moves", config.max_moves),
              ("random_opening_moves", config.random_opening_moves))
  out = []
  for i in np.flatnonzero(g.finished)[:config.sgf_games]:
    if g.resigned[i]:
      result = match_sgf.result_text(
          "resign", winner=go_lib.BLACK if g.outcome0[i] > 0
          else go_lib.WHITE)
    else:
      result = match_sgf.result_text("score", score=float(g.score[i]))
    played = g.actions[i] >= 0
    out.append(match_sgf.PlayedGame(
        game=game, actions=g.actions[i][played], black=player, white=player,
        result=result, match=f"iteration-{iteration:06d}", index=int(i),
        settings=settings,
        winrates=np.clip((g.root_values[i][played] + 1.0) / 2.0, 0.0, 1.0),
        visits=np.where(g.visits[i][played] >= 0, g.visits[i][played],
                        np.nan)))
  return out


@dataclasses.dataclass(frozen=True)
class RecordingIteration:
  """`iteration(state) -> (state, metrics)` that also writes the chunk's
  first `config.sgf_games` finished games to `folder` as SGF
  (`game_sgfs`). Its compiled program returns the games as well; the
  games and the state are those of the plain iteration."""
  compiled: Callable
  game: go_lib.Go
  config: TrainConfig
  folder: str

  def __call__(self, state: TrainState):
    iteration = int(jax.device_get(state.iteration))
    state, metrics, games = self.compiled(state)
    if jax.process_index() == 0:
      match_sgf.write_games(self.folder, game_sgfs(
          self.game, self.config, games, iteration))
    return state, metrics


def _make_step(run: StageRun):
  """The stage's step: the plain iteration, or with `sgf_games` and a run
  directory the recording one."""
  game, config = run.inputs.game, run.config
  if not config.sgf_games or run.output_dir is None:
    return make_iteration(game, config, mesh=run.mesh,
                          augment=run.inputs.augment)
  config.check_game(game)
  return RecordingIteration(
      _make_iteration(game, config, run.mesh, run.inputs.augment, True),
      game, config, os.path.join(run.output_dir, match_sgf.GAMES_DIR))


Evaluator = host_loop.Evaluator


@dataclasses.dataclass(frozen=True)
class AlphaZeroInputs:
  """What an AlphaZero run reads besides its config: the game it plays,
  how its replay samples are augmented, and the network a new run starts
  from (None: random; a resumed run starts from its checkpoint)."""
  game: game_base.Game
  augment: AugmentFn = identity_augment
  init_variables: Optional[chex.ArrayTree] = None


def _loop_defaults(run: StageRun) -> Dict[str, Any]:
  moves = run.config.num_games * run.config.max_moves

  def summarize(metrics, *, step, steps, seconds):
    del step, steps  # one iteration a record
    return {"examples_per_second": metrics["examples_added"] / seconds,
            "moves_per_second": moves / seconds}

  return dict(summarize=summarize, postfix=lambda record: {
      "loss": f"{record['loss']:.3f}",
      "examples_s": f"{record['examples_per_second']:.0f}",
      "moves_s": f"{record['moves_per_second']:.0f}"})


TRAINING_STAGE = register(Stage(
    name="alphazero", config_type=TrainConfig,
    init=lambda run: init_train_state(run.inputs.game, run.config, run.seed,
                                      mesh=run.mesh,
                                      variables=run.inputs.init_variables),
    make_step=lambda run, start: _make_step(run),
    architecture=lambda run: run.config.architecture(run.inputs.game),
    with_buffer=lambda run: run.config.save_buffer, loop_defaults=_loop_defaults))


def train(game: game_base.Game, config: TrainConfig, *, seed: int,
          num_iterations: int, output_dir: Optional[str] = None,
          mesh: Optional[Mesh] = None, augment: AugmentFn = identity_augment,
          checkpoint_every: int = 10, evaluator: Optional[Evaluator] = None,
          evaluate_every: int = 0,
          stop_when: Optional[Callable[[Dict[str, Any]], bool]] = None,
          resume: bool = True, log: Optional[Callable[[str], None]] = None,
          progress: bool = False, tensorboard: Optional[bool] = None,
          handle_signals: bool = False,
          stall_seconds: Optional[float] = None,
          init_variables: Optional[chex.ArrayTree] = None
          ) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) training up to `num_iterations` iterations (the
  `alphazero` stage in `stage.run_stage`).

  With `output_dir`, metrics go to `output_dir/metrics.jsonl` (one record
  per iteration) and checkpoints to `output_dir/checkpoints` (every
  `checkpoint_every` iterations and at the end); with `resume`, the latest
  checkpoint there is loaded first (after the architecture check).

  Args:
    evaluator: called every `evaluate_every` iterations (and at the last);
      its dict is merged into that iteration's record.
    stop_when: called with each record; True stops early (after saving).
    log: called with one line per iteration.
    progress: show a progress bar (tqdm, on stderr) with the iteration and
      its throughput; `log` lines then go above the bar.
    tensorboard: with `output_dir`, also write every metric as a TensorBoard
      scalar to `output_dir/tensorboard`: True always (needs tensorboardX),
      None (default) when tensorboardX is installed, False never.
    handle_signals: SIGINT/SIGTERM stop the run after the current iteration,
      with a checkpoint and its metrics record (`stop` is the signal's
      name); a second one kills the process at once, leaving the last
      complete checkpoint.
    stall_seconds: end the process with status `host_loop.STALL_EXIT_STATUS`
      when no iteration, evaluation or checkpoint finishes for this long (a
      hung XLA CPU collective cannot be interrupted otherwise); None: never.
    init_variables: the network a new run starts from (`warm_start.
      network_from_run`); None: random. A resumed run reads its own.

  Returns:
    the final state and the records of this call.
  """
  check_int("num_iterations", num_iterations, 0)
  return run_stage(
      TRAINING_STAGE, config, seed=seed, num_steps=num_iterations,
      inputs=AlphaZeroInputs(game, augment, init_variables), mesh=mesh,
      output_dir=output_dir, resume=resume, evaluator=evaluator,
      evaluate_every=evaluate_every, checkpoint_every=checkpoint_every,
      stop_when=stop_when, handle_signals=handle_signals, log=log,
      progress=progress, tensorboard=tensorboard,
      stall_seconds=stall_seconds)
