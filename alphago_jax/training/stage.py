"""The contract every training stage implements, its registry, and the one
driver that runs any of them.

A stage (AlphaZero, the SL policy p_σ, the rollout policy p_π, the RL
policy p_ρ, the value network v_θ) is a `Stage`: a few pure functions of a
`StageRun` (the stage's config, the seed, the mesh and the stage's own
inputs: positions, a game, a starting network) that say how to make the
fresh state, the compiled step, the evaluation and the architecture a
checkpoint must match. `run_stage` drives any of them through
`host_loop.run`, which does resume, metrics, checkpoints, budgets and
signals the same way for all; a stage never writes that plumbing itself.
Each stage's module registers its `Stage` in `STAGES` when imported, and
its public train function is `run_stage` of it.

A state is a pytree with an `iteration` counter (a `TrainState`); a step is
`step(state) -> (state, metrics)`, metrics a dict of scalars.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Dict, Generic, List, Optional, Tuple, TypeVar

import jax
from jax.sharding import Mesh

from alphago_jax.core.registry import Registry
from alphago_jax.training import host_loop

ConfigT = TypeVar("ConfigT")
State = Any
Step = Callable[[State], Tuple[State, Dict[str, Any]]]


@dataclasses.dataclass(frozen=True)
class StageRun(Generic[ConfigT]):
  """One run of a stage: what each of the stage's functions reads.

  Attributes:
    config: the stage's config (an instance of `Stage.config_type`).
    seed: every key of the run derives from `jax.random.key(seed)`.
    mesh: the `"data"` mesh the batches are sharded over (None: one
      device).
    inputs: the stage's own inputs, whatever it defines (training
      positions, a game, a starting network; None when it needs none).
    output_dir: the run's directory (None: nothing is written), for a
      step that writes files of its own (game records).
  """
  config: ConfigT
  seed: int
  mesh: Optional[Mesh] = None
  inputs: Any = None
  output_dir: Optional[str] = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Stage(Generic[ConfigT]):
  """What a training stage provides (the host loop does the rest).

  Attributes:
    name: its name in `STAGES`.
    config_type: the class of its config (`to_json`/`from_json`: the run
      directory's config.json records it).
    init: `run -> state`, the fresh state (step 0) of `run.seed`: the
      template a checkpoint is restored into.
    make_step: `(run, start) -> step`, called once with the state the loop
      starts from (fresh or restored), so a data stream can start where it
      left off.
    architecture: `run -> dict` (JSON-able), what a checkpoint must match
      to be restored (`checkpoint.CheckpointMismatchError` otherwise).
    evaluate: `run -> evaluator` or None: `evaluator(state) -> fields`
      merged into a metrics record every `evaluate_every` steps.
    with_buffer: `run -> bool`, whether checkpoints hold `state.buffer`.
    loop_defaults: `run -> host_loop.run keywords`, the stage's own
      defaults: how its records and progress bar read (`summarize`,
      `postfix`, `resumed_message`, `progress_unit`, `progress_scale`),
      its periods (`log_every`, `checkpoint_seconds`), `handle_signals`;
      a caller's keywords win.
    artifacts: files the run directory holds besides `checkpoints/`,
      `metrics.jsonl` and `tensorboard/` (written by `export`).
    export: `(run, state, output_dir) -> None`, writes `artifacts` after
      the loop stops (process 0 only); None: the stage has none.
  """
  name: str
  config_type: type
  init: Callable[[StageRun], State]
  make_step: Callable[[StageRun, State], Step]
  architecture: Callable[[StageRun], Dict[str, Any]]
  evaluate: Optional[Callable[[StageRun], Optional[host_loop.Evaluator]]] = (
      None)
  with_buffer: Callable[[StageRun], bool] = lambda run: False
  loop_defaults: Callable[[StageRun], Dict[str, Any]] = lambda run: {}
  artifacts: Tuple[str, ...] = ()
  export: Optional[Callable[[StageRun, State, str], None]] = None


STAGES: Registry[Stage] = Registry("training stage")


def register(stage: Stage) -> Stage:
  """Adds `stage` to `STAGES` under its name (which must be new)."""
  return STAGES.register(stage.name, stage)


def run_stage(stage: Stage, config: Any, *, seed: int, num_steps: int,
              inputs: Any = None, mesh: Optional[Mesh] = None,
              output_dir: Optional[str] = None,
              evaluator: Optional[host_loop.Evaluator] = None,
              **loop_options: Any) -> Tuple[State, List[Dict[str, Any]]]:
  """Runs (or resumes) `stage` with `config` up to `num_steps` steps.

  Args:
    stage: the stage (e.g. `STAGES.get(name)`).
    config: its config, a `stage.config_type`.
    seed, inputs, mesh: the rest of the `StageRun`.
    output_dir: `metrics.jsonl`, `tensorboard/`, `checkpoints/` and the
      stage's artifacts go there; with `resume` (the default), its latest
      checkpoint is restored first.
    evaluator: this call's own evaluator, instead of `stage.evaluate`'s.
    loop_options: the rest of `host_loop.run`'s keywords (`log_every`,
      `evaluate_every`, checkpoint periods, budgets, `log`, `progress`,
      `stop_when`, `handle_signals`, ...), over the stage's
      `loop_defaults`.

  Returns:
    the final state and this call's records.

  Raises:
    TypeError: `config` is not a `stage.config_type`.
    CheckpointMismatchError: `output_dir` holds a checkpoint of another
      architecture.
  """
  if not isinstance(config, stage.config_type):
    raise TypeError(f"stage {stage.name!r} takes a "
                    f"{stage.config_type.__name__}, got "
                    f"{type(config).__name__}")
  run = StageRun(config=config, seed=seed, mesh=mesh, inputs=inputs,
                 output_dir=output_dir)
  if evaluator is None and stage.evaluate is not None:
    evaluator = stage.evaluate(run)
  options = {**stage.loop_defaults(run), **loop_options}
  state, history = host_loop.run(
      stage.init(run), lambda start: stage.make_step(run, start),
      num_steps=num_steps, architecture=stage.architecture(run),
      output_dir=output_dir, with_buffer=stage.with_buffer(run), mesh=mesh,
      evaluator=evaluator, **options)
  if (stage.export is not None and output_dir is not None
      and jax.process_index() == 0):
    os.makedirs(output_dir, exist_ok=True)
    stage.export(run, state, output_dir)
  return state, history
