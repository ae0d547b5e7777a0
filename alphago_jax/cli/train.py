"""`alphago-jax train`: a training run in a run directory.

Three forms:

    alphago-jax train tictactoe --output runs/ttt [--train.num-games 64 ...]
    alphago-jax train --from-run runs/ttt --output runs/ttt-again
    alphago-jax train --resume runs/ttt [--iterations 400]

The first starts a run from the game's measured defaults with any field
overridden; `--from-run` repeats a run exactly from its config.json in a new
directory; `--resume` continues a run in its own directory from its last
checkpoint. Ctrl-C (or SIGTERM) stops a run after the current iteration
with a checkpoint and says how to resume; a second Ctrl-C stops it at
once, and kill -9 too leaves the last complete checkpoint to resume from.
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
from alphago_jax.training.mesh import make_mesh
from alphago_jax.training.evaluators import (make_reference_evaluator,
                                             make_solver_evaluator)
from alphago_jax.training.checkpoint import latest_step
from alphago_jax.cli import parsing, stages
from alphago_jax.cli.configs import STAGES, AlphaZeroRun, alphazero_defaults
from alphago_jax.core import config_codec, cpu_devices, rundir
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.search.agents import random_agent
from alphago_jax.training import game_specs, snapshots
from alphago_jax.training.augment import dihedral_augment
from alphago_jax.training.replay import identity_augment

Log = Callable[[str], None]


def _print(line: str) -> None:
  print(line, flush=True)


def _use_cpu_devices(count: int, log: Log) -> None:
  try:
    cpu_devices.use_cpu_devices(count)
  except RuntimeError:
    if jax.local_device_count() != count:
      log(f"note: JAX already runs with {jax.local_device_count()} "
          f"device(s) in "
          f"this process; cpu_devices={count} takes effect in a new process")


def _say_if_stopped_by_signal(history: List[Dict[str, Any]], output: str,
                              log: Log) -> None:
  last = history[-1] if history else {}
  if last.get("stop") in ("SIGINT", "SIGTERM"):
    log(f"stopped by {last['stop']} after iteration {last['iteration']}, "
        f"saved: continue with `alphago-jax train --resume {output}`")


def _check_fresh(output: str) -> None:
  if os.path.exists(os.path.join(output, rundir.CONFIG_FILE)) or (
      latest_step(os.path.join(output, "checkpoints")) is not None):
    raise RunConfigError(
        f"{output} already holds a run; continue it with `alphago-jax "
        f"train --resume {output}` or choose another --output")


def run_alphazero(run: AlphaZeroRun, output: str, *,
                  progress: Optional[bool] = None, log: Log = _print,
                  start_from: Optional[str] = None,
                  stall_minutes: Optional[float] = None
                  ) -> List[Dict[str, Any]]:
  """Runs (or resumes) `run` in `output`; returns this call's records.

  Writes `output/config.json` first (process 0), then trains with
  `training.train` (metrics, checkpoints, resume from the last one).
  `start_from`: a run directory whose checkpoints seed `output` when it has
  none yet (copied, never written into). `stall_minutes`: this call ends
  with status 75 when no iteration, evaluation or checkpoint finishes for
  that long (not recorded in config.json: it is about this machine).
  """
  _use_cpu_devices(run.cpu_devices, log)


  config = run.train
  writer = jax.process_index() == 0  # multi-host: OUTPUT is shared
  ckpts = os.path.join(output, "checkpoints")
  if writer:
    os.makedirs(output, exist_ok=True)
    if start_from and latest_step(ckpts) is None:
      shutil.copytree(os.path.join(start_from, "checkpoints"), ckpts,
                      dirs_exist_ok=True)
    rundir.write_config(output, command="train", stage="alphazero",
                        config=run)
  if jax.process_count() > 1:
    multihost_utils.sync_global_devices("alphago-jax train: output ready")
  spec = game_specs.get(run.game)
  game = spec.make()
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
        stall_seconds=None if stall_minutes is None else 60 * stall_minutes)
  except KeyboardInterrupt:
    log(f"interrupted: {output} keeps its last checkpoint; continue with "
        f"`alphago-jax train --resume {output}`")
    raise
  _say_if_stopped_by_signal(history, output, log)
  return history


# --- the command line ---------------------------------------------------------

@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainAlphaZero:
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
    stages.check_positive("stall_minutes", self.stall_minutes)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Repeat:
  """Repeat a run from its config.json, or continue it.

  Attributes:
    from_run: a run directory whose config.json is repeated exactly, in
      --output (for a run of a later AlphaGo stage: its command.json, the
      resolved options, or for older runs the command line, that started
      it).
    resume: a run directory to continue from its last checkpoint.
    output: the new run directory (with --from-run).
    iterations: with --resume: a new iteration budget (recorded in
      config.json; rl-policy: in its config.json).
    hours: with --resume: a new wall-clock limit per call (recorded).
    stall_minutes: end this call with status 75 when no step, evaluation
      or checkpoint finishes for this many minutes (not recorded); resume
      again. Off by default.
    dry_run: print the resolved config.json and stop.
    progress: a progress bar (default: when stderr is a terminal).
  """
  from_run: Optional[str] = None
  resume: Optional[str] = None
  output: Optional[str] = None
  iterations: Optional[int] = None
  hours: Optional[float] = None
  stall_minutes: Optional[float] = None
  dry_run: bool = False
  progress: Optional[bool] = None

  def __post_init__(self):
    stages.check_positive("stall_minutes", self.stall_minutes)


EXAMPLES = """examples:
  alphago-jax train tictactoe --output runs/ttt --stop-when-perfect
  alphago-jax train go9 --output runs/go9 --hours 3 --train.num-games 32
  alphago-jax train --from-run runs/ttt --output runs/ttt-again
  alphago-jax train --resume runs/go9 --hours 2 --stall-minutes 15

AlphaGo's 2016 stages (each with --help, --resume or rerun, --quick):
{stages}
  alphago-jax train --from-run runs/rl9 --output runs/rl9-again   (any of them)
  alphago-jax train --resume runs/rl9 --hours 1"""


def _examples() -> str:
  """`EXAMPLES` with each registered stage's first example."""
  return EXAMPLES.format(stages="\n".join(
      stages.get(name).examples.splitlines()[1] for name in stages.names()))


def _defaults():
  return {name: TrainAlphaZero(output=f"runs/{name}",
                               run=alphazero_defaults(name))
          for name in game_specs.names()}


def _show(stage: str, run: Any) -> None:
  print(json.dumps({"stage": stage, "config": config_codec.to_json(run)},
                   indent=1))


def _note_other_commit(source: str, record: Dict[str, Any]) -> None:
  here = rundir.git_commit()
  if record["git_commit"] and here and record["git_commit"] != here:
    print(f"note: {source} was written by commit {record['git_commit'][:12]}"
          f", this is {here[:12]}", file=sys.stderr)


def _check_exact_repeat(args: Repeat) -> None:
  """Refuses a new budget on --from-run, which repeats the run as it was
  recorded (a new budget belongs to --resume).

  Raises:
    RunConfigError: --iterations or --hours is given.
  """
  if args.iterations is not None or args.hours is not None:
    raise RunConfigError("--from-run repeats the run exactly: "
                         "--iterations and --hours are for --resume")


def _repeat(args: Repeat) -> int:
  if (args.from_run is None) == (args.resume is None):
    raise RunConfigError("give exactly one of --from-run DIR and "
                         "--resume DIR")
  source = args.from_run or args.resume
  if args.from_run is not None:
    if args.output is None:
      raise RunConfigError("--from-run needs --output NEW_DIR (the "
                           "repeat is written there)")
    if os.path.abspath(args.output) == os.path.abspath(source):
      raise RunConfigError("--output must differ from --from-run")
  elif args.output is not None:
    raise RunConfigError("--resume continues the run in its own "
                         "directory: no --output")
  if os.path.exists(os.path.join(source, rundir.COMMAND_FILE)):
    return _repeat_command(args, source)
  stage, run, record = rundir.read_config(source, STAGES)
  _note_other_commit(source, record)
  if args.from_run is not None:
    _check_exact_repeat(args)
    output = args.output
    if not args.dry_run:
      _check_fresh(output)
  else:
    output = args.resume
    changes = {k: v for k, v in (("iterations", args.iterations),
                                 ("hours", args.hours)) if v is not None}
    try:
      run = dataclasses.replace(run, **changes)
    except ValueError as e:
      raise RunConfigError(f"--{str(e).split()[0]}: {e}") from None
  if args.dry_run:
    _show(stage, run)
    return 0
  run_alphazero(run, output, progress=args.progress,
                stall_minutes=args.stall_minutes)
  return 0


def _repeat_stage(args: Repeat, source: str) -> int:
  """--from-run / --resume of a stage's run from its recorded options
  (command.json of format 2): the same options, resolved as they ran."""
  stage, options, record = rundir.read_stage(source, stages.options_types())
  _note_other_commit(source, record)
  if args.from_run is not None:
    _check_exact_repeat(args)
    command = stages.command_for(stage, options, output=args.output,
                                 stall_minutes=args.stall_minutes)
  else:
    if args.iterations is not None:
      if not hasattr(options, "iterations"):
        raise RunConfigError(f"--iterations: the {stage} stage has "
                             "other budget options")
      # A new budget for the rest of the run (the stage reads it on
      # --resume); command.json keeps the options the run started with.
      options = dataclasses.replace(options, iterations=args.iterations)
    command = stages.command_for(stage, options, output=source, resume=True,
                                 hours=args.hours,
                                 stall_minutes=args.stall_minutes)
  if args.dry_run:
    print(json.dumps({"stage": stage, "output": command.output,
                      "options": config_codec.to_json(options)}, indent=1))
    return 0
  return stages.execute(stage, command)


def _repeat_command(args: Repeat, source: str) -> int:
  """--from-run / --resume of a run an experiments/alphago/ command made:
  that command again, from its command.json."""
  if rundir.command_format(source) == rundir.STAGE_FORMAT:
    return _repeat_stage(args, source)
  # Runs of the experiments/alphago/ scripts that recorded their command
  # line (command.json of format 1) repeat through the stage's command,
  # which takes the same flags; the training stages (a --resume flag, and
  # --hours) continue through it, the others by running it again.
  scripts = stages.scripts()
  script, argv, record = rundir.read_command(source, scripts)
  trains = issubclass(stages.get(scripts[script]).command,
                      stages.TrainingCommand)
  _note_other_commit(source, record)
  if args.iterations is not None:
    raise RunConfigError(f"--iterations: {script} runs have their "
                         "own budget flags (in its command line)")
  if args.from_run is not None:
    if args.hours is not None:
      raise RunConfigError("--from-run repeats the run exactly: "
                           "--hours is for --resume")
    call = argv + ["--output", args.output]
  else:
    if args.hours is not None and not trains:
      raise RunConfigError(f"--hours: {script} has no time limit")
    call = argv + ["--output", source]
    if trains:
      call.append("--resume")
    if args.hours is not None:
      call += ["--hours", repr(float(args.hours))]
  if args.stall_minutes is not None:
    if not trains:
      raise RunConfigError(f"--stall-minutes: {script} has no "
                           "training loop to watch")
    call += ["--stall-minutes", repr(float(args.stall_minutes))]
  prog = f"python experiments/alphago/{script}"
  if args.dry_run:
    print(" ".join([prog] + call))
    return 0
  return stages.main(scripts[script], call, prog)


def main(argv: List[str]) -> int:
  """`alphago-jax train ARGS`; returns the exit status."""
  prog = "alphago-jax train"
  if argv and argv[0] in stages.names():
    return stages.main(argv[0], argv[1:])
  try:
    if any(a.split("=")[0] in ("--from-run", "--resume", "--from_run")
           for a in argv):
      try:
        args = parsing.parse(Repeat, argv, prog=prog, examples=_examples())
      except ValueError as e:  # Repeat's own validation
        raise RunConfigError(f"--stall-minutes: {e}") from None
      return _repeat(args)
    try:
      cmd = parsing.parse(
          tyro.extras.subcommand_type_from_defaults(_defaults()), argv,
          prog=prog, examples=_examples(),
          summary="Train a network in a run directory.")
    except ValueError as e:  # the run config's own validation
      raise RunConfigError(str(e)) from None
    if cmd.dry_run:
      _show("alphazero", cmd.run)
      return 0
    _check_fresh(cmd.output)
    history = run_alphazero(cmd.run, cmd.output, progress=cmd.progress,
                            stall_minutes=cmd.stall_minutes)
  except RunConfigError as e:
    return parsing.fail(str(e))
  except KeyboardInterrupt:
    return 130
  last = history[-1] if history else {}
  print(f"RESULT iterations={last.get('iteration')} "
        f"stop={last.get('stop')}", flush=True)
  return 0
