"""`alphago-jax train`: the dispatcher of the training commands.

Three forms:

    alphago-jax train tictactoe --output runs/ttt [--train.num-games 64 ...]
    alphago-jax train --from-run runs/ttt --output runs/ttt-again
    alphago-jax train --resume runs/ttt [--iterations 400]

A game's name is AlphaZero's command (`cli.stages.alphazero`); a stage's
name is that stage's command (the registry of `cli.stages`); `--from-run`
repeats a run exactly from its record in a new directory and `--resume`
continues it in its own directory, each through the command of the stage
the run records (its command.json, or an AlphaZero run's config.json).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import List, Optional

from alphago_jax.cli import parsing, stages
from alphago_jax.cli.stages import alphazero
from alphago_jax.cli.stages.alphazero import run_alphazero
from alphago_jax.core import config_codec, rundir
from alphago_jax.core.config_codec import RunConfigError

# AlphaZero's run as a library call is importable from here too.
__all__ = ["Repeat", "main", "run_alphazero"]


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
  return alphazero.repeat(
      source, args.output if args.from_run is not None else None,
      iterations=args.iterations, hours=args.hours,
      stall_minutes=args.stall_minutes, dry_run=args.dry_run,
      progress=args.progress)


def _repeat_stage(args: Repeat, source: str) -> int:
  """--from-run / --resume of a stage's run from its recorded options
  (command.json of format 2): the same options, resolved as they ran."""
  stage, options, record = rundir.read_stage(source, stages.options_types())
  stages.note_other_commit(source, record)
  if args.from_run is not None:
    stages.check_exact_repeat(args.iterations, args.hours)
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
  stages.note_other_commit(source, record)
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
    return alphazero.start(alphazero.parse(argv, prog, _examples()))
  except RunConfigError as e:
    return parsing.fail(str(e))
  except stages.StageError as e:
    parsing.fail(str(e))
    return e.status
  except KeyboardInterrupt:
    return 130
