"""AlphaZero's command: `alphago-jax train GAME` (a game of
`training.game_specs`) and the --from-run/--resume of its runs.

A run starts from the game's measured defaults with any field overridden
(`cli.configs.AlphaZeroRun`, the `--train.*` fields nested). Unlike the
2016 stages, which record their options in command.json, an AlphaZero run
records the run itself in config.json (`core.rundir.write_config`), and
--resume may give it a new budget (--iterations, --hours), recorded
there. The run goes through the training stages' path all the same: the
devices (`start_cpu_devices`), the run directory (`RunFiles`), the stall
limit and the statuses (`StageError`). Ctrl-C (or SIGTERM) stops a run
after the current iteration with a checkpoint and says how to resume; a
second Ctrl-C stops it at once, and kill -9 too leaves the last complete
checkpoint to resume from. A new run's last line is `RESULT
iterations=<n> stop=<why>`.

Not in the registry of `alphago-jax train STAGE`: the dispatcher reaches
it by game name and by a run's config.json.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from typing import Annotated, Any, Callable, Dict, List, Optional

import jax
import tyro
from jax.experimental import multihost_utils

from alphago_jax import training
from alphago_jax.cli import parsing
from alphago_jax.cli.configs import STAGES, AlphaZeroRun, alphazero_defaults
from alphago_jax.cli.stages.registry import check_exact_repeat, refused
from alphago_jax.cli.stages.training_call import (RunFiles, check_positive,
                                                  note_other_commit,
                                                  log as print_line,
                                                  start_cpu_devices,
                                                  stall_seconds)
from alphago_jax.core import config_codec, rundir
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.search.agents import random_agent
from alphago_jax.training import game_specs, snapshots, warm_start
from alphago_jax.training.checkpoint import CheckpointMismatchError
from alphago_jax.training.augment import dihedral_augment
from alphago_jax.training.evaluators import (make_reference_evaluator,
                                             make_solver_evaluator)
from alphago_jax.training.mesh import make_mesh
from alphago_jax.training.replay import identity_augment

STAGE = "alphazero"

Log = Callable[[str], None]


def resume_hint(output: str) -> str:
  """The command that continues the run in `output`."""
  return f"`alphago-jax train --resume {output}`"


def check_new(output: str) -> None:
  """Refuses to start a run in a directory that holds one (its
  config.json or a complete checkpoint).

  Raises:
    StageError: status 2.
  """
  if RunFiles(output, None).started:
    raise refused(f"{output} already holds a run; continue it with "
                  f"{resume_hint(output)} or choose another --output")


def _say_if_stopped_by_signal(history: List[Dict[str, Any]], output: str,
                              log: Log) -> None:
  last = history[-1] if history else {}
  if last.get("stop") in ("SIGINT", "SIGTERM"):
    log(f"stopped by {last['stop']} after iteration {last['iteration']}, "
        f"saved: continue with {resume_hint(output)}")


def run_alphazero(run: AlphaZeroRun, output: str, *,
                  progress: Optional[bool] = None, log: Log = print_line,
                  start_from: Optional[str] = None,
                  stall_minutes: Optional[float] = None
                  ) -> List[Dict[str, Any]]:
  """Runs (or resumes) `run` in `output`; returns this call's records.

  Writes `output/config.json` first (process 0), then trains with
  `training.train` (metrics, checkpoints, resume from the last one).
  `start_from`: a run directory whose checkpoints seed `output` when it has
  none yet (copied, never written into). `run.init_from`: a run whose
  network a new run starts from (`training.warm_start`), read before
  anything is written. `stall_minutes`: this call ends with status 75 when
  no iteration, evaluation or checkpoint finishes for that long (not
  recorded in config.json: it is about this machine).

  Raises:
    StageError: `run.init_from` holds no checkpoint or another network
      (status 2, the message naming each differing field).
  """
  start_cpu_devices(run.cpu_devices, log=log)
  config = run.train
  files = RunFiles(output, None)
  writer = jax.process_index() == 0  # multi-host: OUTPUT is shared
  spec = game_specs.get(run.game)
  game = spec.make()
  # Read (and checked) before anything is written: a refused source
  # leaves no run behind.
  init_variables = None
  if run.init_from is not None and not (files.has_checkpoint or start_from):
    try:
      init_variables = warm_start.network_from_run(run.init_from, game,
                                                   config)
    except (FileNotFoundError, CheckpointMismatchError) as e:
      raise refused(f"--init-from: {e}") from None
    log(f"starting from the network of {run.init_from}")
  if writer:
    os.makedirs(output, exist_ok=True)
    if start_from and not files.has_checkpoint:
      shutil.copytree(os.path.join(start_from, "checkpoints"),
                      files.ckpt_dir, dirs_exist_ok=True)
    rundir.write_config(output, command="train", stage=STAGE, config=run)
  if jax.process_count() > 1:
    multihost_utils.sync_global_devices("alphago-jax train: output ready")
  if spec.evaluation == "solver":
    evaluator = make_solver_evaluator(
        game, config, games_per_colour=run.eval_games, seed=run.seed + 1)
  else:
    vs_random = make_reference_evaluator(
        game, config, random_agent, games_per_colour=run.eval_games,
        seed=run.seed + 1, name="random")

    def evaluator(state):
      if writer:
        snapshots.save(os.path.join(output, "snapshots"), state,
                       architecture=config.architecture(game))
      return vs_random(state)

  augment = (dihedral_augment(game.size) if run.augment
             else identity_augment)
  n = jax.device_count()
  mesh = make_mesh() if n > 1 and not (
      config.num_games % n or config.batch_size % n) else None
  deadline = None if run.hours is None else (
      time.perf_counter() + 3600 * run.hours)

  def stop_when(record):
    if deadline is not None and time.perf_counter() > deadline:
      return True
    return run.stop_when_perfect and (
        record.get("solver_policy_losses") == 0 and
        record.get("solver_search_losses") == 0)

  if progress is None:  # a bar on a terminal, plain lines in logs
    progress = sys.stderr.isatty()
  try:
    _, history = training.train(
        game, config, seed=run.seed, num_iterations=run.iterations,
        output_dir=output, mesh=mesh, augment=augment,
        evaluator=evaluator if run.eval_every else None,
        evaluate_every=run.eval_every,
        checkpoint_every=run.checkpoint_every, stop_when=stop_when,
        log=log, progress=progress, handle_signals=True,
        stall_seconds=stall_seconds(stall_minutes),
        init_variables=init_variables)
  except KeyboardInterrupt:
    log(f"interrupted: {output} keeps its last checkpoint; continue with "
        f"{resume_hint(output)}")
    raise
  _say_if_stopped_by_signal(history, output, log)
  return history


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command:
  """AlphaZero from random initialisation (defaults: the game's spec in
  `training.game_specs`).

  Attributes:
    output: the run directory (must not hold a run yet).
    dry_run: print the resolved config.json and stop.
    progress: a progress bar (default: when stderr is a terminal).
    stall_minutes: end this call with status 75 when no iteration,
      evaluation or checkpoint finishes for this many minutes (a hung XLA
      CPU collective cannot be interrupted otherwise); the last checkpoint
      is intact: continue with --resume. Off by default.
  """
  output: str
  dry_run: bool = False
  progress: Optional[bool] = None
  stall_minutes: Optional[float] = None
  run: Annotated[AlphaZeroRun, tyro.conf.arg(name="")]

  def __post_init__(self):
    check_positive("stall_minutes", self.stall_minutes)


def command_type() -> Any:
  """The games' subcommands (`train GAME`), each with its defaults."""
  return tyro.extras.subcommand_type_from_defaults(
      {name: Command(output=f"runs/{name}", run=alphazero_defaults(name))
       for name in game_specs.names()})


def parse(argv: List[str], prog: str, examples: str) -> Command:
  """The `Command` of `train GAME ARGS` (tyro: --help, usage errors exit).

  Raises:
    StageError: a value the run's validation refuses (status 2).
  """
  try:
    return parsing.parse(command_type(), argv, prog=prog, examples=examples,
                         summary="Train a network in a run directory.")
  except ValueError as e:  # the run config's own validation
    raise refused(str(e)) from None


def show(run: AlphaZeroRun) -> None:
  """Prints the run's resolved config (what --dry-run shows)."""
  print(json.dumps({"stage": STAGE, "config": config_codec.to_json(run)},
                   indent=1))


def _train(run: AlphaZeroRun, output: str, progress: Optional[bool],
           stall_minutes: Optional[float], *, result: bool) -> int:
  """Trains `run` in `output`; status 0 (with `result`, after the RESULT
  line), 130 on a second Ctrl-C."""
  try:
    history = run_alphazero(run, output, progress=progress,
                            stall_minutes=stall_minutes)
  except KeyboardInterrupt:
    return 130
  if result:
    last = history[-1] if history else {}
    print(f"RESULT iterations={last.get('iteration')} "
          f"stop={last.get('stop')}", flush=True)
  return 0


def start(command: Command) -> int:
  """`train GAME`: a new run (or its --dry-run); the exit status.

  Raises:
    StageError: OUTPUT already holds a run (status 2).
  """
  if command.dry_run:
    show(command.run)
    return 0
  check_new(command.output)
  return _train(command.run, command.output, command.progress,
                command.stall_minutes, result=True)


def read(source: str) -> AlphaZeroRun:
  """The run recorded in `source`'s config.json (notes another commit's).

  Raises:
    StageError: no readable AlphaZero config.json (status 2).
  """
  try:
    _, run, record = rundir.read_config(source, STAGES)
  except RunConfigError as e:
    raise refused(str(e)) from None
  note_other_commit(source, record)
  return run


def repeat(source: str, output: Optional[str], *,
           iterations: Optional[int] = None, hours: Optional[float] = None,
           stall_minutes: Optional[float] = None, dry_run: bool = False,
           progress: Optional[bool] = None) -> int:
  """--from-run `source` into `output` (the run exactly as recorded), or,
  with `output` None, --resume `source` in place with a new budget
  (`iterations`, `hours`; recorded in its config.json); the exit status.

  Raises:
    RunConfigError: a new budget on --from-run.
    StageError: a bad budget, or OUTPUT holding a run (status 2).
  """
  run = read(source)
  if output is not None:
    check_exact_repeat(iterations, hours)
    if not dry_run:
      check_new(output)
  else:
    output = source
    changes = {k: v for k, v in (("iterations", iterations),
                                 ("hours", hours)) if v is not None}
    try:
      run = dataclasses.replace(run, **changes)
    except ValueError as e:
      raise refused(f"--{str(e).split()[0]}: {e}") from None
  if dry_run:
    show(run)
    return 0
  return _train(run, output, progress, stall_minutes, result=False)

