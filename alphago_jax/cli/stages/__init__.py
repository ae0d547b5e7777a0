"""AlphaGo's later 2016 stages as typed commands: `alphago-jax train STAGE`.

Each stage module holds `Options` (a frozen dataclass of what the run
computes; its run directory's command.json records them resolved, every
default filled in, so that `--from-run` repeats the values the run used
even after a default changes), `Command` (the options plus the flags of
one call: --output, and --resume/--hours where the stage has them),
`EXAMPLES`, and `run(command) -> int`. The training stages' `Command` is
`TrainingCommand` of their options; option fields several stages share
are the dataclass bases of `groups`. The scripts of experiments/alphago/
are thin wrappers over `main`, so their command lines keep working.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
from typing import Annotated, Any, Dict, Generic, List, Optional, TypeVar

import tyro

from alphago_jax.cli import parsing
from alphago_jax.cli.parsing import fail, flag  # stages.fail, stages.flag
from alphago_jax.core import checks, cpu_devices, rundir
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.core.checks import check_int  # noqa: F401  (stages.check_int)
from alphago_jax.training import checkpoint as ckpt

# stage -> its module here (and the experiments/alphago/ script, `.py`).
MODULES = {
    "sl-policy": "sl_policy",
    "gnugo-games": "gnugo_games",
    "rollout-policy": "rollout_policy",
    "rl-policy": "rl_policy",
    "value-data": "value_data",
    "value-net": "value_net",
    "chain-9x9": "chain9",
}
# command.json of format 1 names the script a run was started with.
SCRIPTS = {f"{module}.py": stage for stage, module in MODULES.items()}


OptionsT = TypeVar("OptionsT")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingCommand(Generic[OptionsT]):
  """A call of a training stage: its options and where and how long this
  call runs (a stage subclasses it as `Command(TrainingCommand[Options])`,
  a class rather than the alias, so that `dataclasses.fields` reads it).

  Attributes:
    output: the run directory.
    resume: continue the run in OUTPUT with its config.json.
    hours: stop after this much wall-clock time in this call.
    stall_minutes: end this call with status 75 when no step, evaluation
      or checkpoint finishes for this many minutes (a hung XLA CPU
      collective cannot be interrupted otherwise); the last checkpoint is
      intact: rerun with --resume. Off by default.
  """
  output: str
  resume: bool = False
  hours: Optional[float] = None
  stall_minutes: Optional[float] = None
  options: Annotated[OptionsT, tyro.conf.arg(name="")]

  def __post_init__(self):
    check_positive("hours", self.hours)
    check_positive("stall_minutes", self.stall_minutes)


@dataclasses.dataclass(frozen=True)
class RunFiles:
  """A training call's run directory: its config.json, its checkpoints,
  and the config.json it resumes (`saved`; None when the call starts the
  run). Reading it starts no JAX backend, so that a resumed run's
  recorded device count can still be applied."""
  output: str
  saved: Optional[Dict[str, Any]]

  @classmethod
  def of(cls, command: TrainingCommand) -> "RunFiles":
    """The run `command` continues (--resume with a config.json) or
    starts."""
    path = cls(command.output, None).config_path
    if command.resume and os.path.exists(path):
      with open(path) as f:
        return cls(command.output, json.load(f))
    return cls(command.output, None)

  @property
  def resuming(self) -> bool:
    return self.saved is not None

  @property
  def config_path(self) -> str:
    return os.path.join(self.output, "config.json")

  @property
  def ckpt_dir(self) -> str:
    return os.path.join(self.output, "checkpoints")

  def check_fresh(self) -> None:
    """Refuses to start a run over one (call once the devices are set:
    reading checkpoints starts JAX).

    Raises:
      ValueError: the directory holds a complete checkpoint.
    """
    if not self.resuming and ckpt.latest_step(self.ckpt_dir) is not None:
      raise ValueError(f"{self.output} already holds a run; pass --resume "
                       f"to continue it or choose another --output")


def log(line: str) -> None:
  """A stage's progress line (flushed: runs are watched through pipes)."""
  print(line, flush=True)


def start_cpu_devices(count: int) -> Optional[int]:
  """Gives the process `count` XLA CPU devices before JAX starts; an error
  status for a bad count, else None (a process whose JAX has started keeps
  its devices: a stage called from a test or a chain)."""
  try:
    cpu_devices.use_cpu_devices(count)
  except ValueError as e:
    return fail(f"--cpu-devices: {e}")
  except RuntimeError:
    pass
  return None


def loop_limits(command: TrainingCommand, options: Any) -> Dict[str, Any]:
  """The host loop's keyword arguments every training stage passes alike:
  this call's --hours and --stall-minutes, the run's training-time budget
  (where the stage has one), the checkpoint and metrics periods, resume,
  log and progress."""
  limits = dict(
      max_seconds=None if command.hours is None else 3600 * command.hours,
      stall_seconds=(None if command.stall_minutes is None
                     else 60 * command.stall_minutes),
      log_every=options.log_every,
      checkpoint_seconds=60 * options.checkpoint_minutes, resume=True,
      log=log, progress=sys.stderr.isatty())
  if hasattr(options, "max_train_hours"):
    limits["max_train_seconds"] = 3600 * options.max_train_hours
  return limits


def load(stage: str):
  return importlib.import_module(f"alphago_jax.cli.stages.{MODULES[stage]}")


def options_types() -> Dict[str, type]:
  """stage -> its `Options` class (what `rundir.read_stage` checks)."""
  return {stage: load(stage).Options for stage in MODULES}


def _named(message: str, fields) -> str:
  """`message` with the flag of the field it starts with in front (the
  validators' messages start with the field's name)."""
  for name in sorted(fields, key=len, reverse=True):
    rest = message[len(name):len(name) + 1]
    if message.startswith(name) and not (rest.isalnum() or rest == "_"):
      return f"{flag(name)}: {message}"
  return message


def parse(stage: str, argv: List[str], prog: str):
  """The stage's `Command` from `argv` (tyro: --help, usage errors exit).

  Raises:
    RunConfigError: a value the options' validation refuses, naming its
      flag.
  """
  module = load(stage)
  try:
    return parsing.parse(module.Command, argv, prog=prog,
                         examples=module.EXAMPLES,
                         summary=module.__doc__.split("\n\n")[0])
  except ValueError as e:
    names = [f.name for cls in (module.Options, module.Command)
             for f in dataclasses.fields(cls)]
    raise RunConfigError(_named(str(e), names)) from None


def main(stage: str, argv: Optional[List[str]] = None,
         prog: Optional[str] = None) -> int:
  """`alphago-jax train STAGE ARGV` (or the stage's script); the status."""
  argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
  prog = prog or f"alphago-jax train {stage}"
  try:
    command = parse(stage, argv, prog)
  except RunConfigError as e:
    print(f"{prog}: error: {e}", file=sys.stderr)
    return 2
  return load(stage).run(command)


def command_for(stage: str, options: Any, *, output: str,
                resume: bool = False, hours: Optional[float] = None,
                stall_minutes: Optional[float] = None):
  """The stage's `Command` for recorded `options` (a repeat or a resume);
  `resume`, `hours` and `stall_minutes` where the stage has those flags."""
  module = load(stage)
  names = {f.name for f in dataclasses.fields(module.Command)}
  call = {"output": output, "options": options}
  if "resume" in names:
    call["resume"] = resume
  if hours is not None:
    if "hours" not in names:
      raise RunConfigError(f"--hours: the {stage} stage has no time "
                           "limit")
    call["hours"] = hours
  if stall_minutes is not None:
    if "stall_minutes" not in names:
      raise RunConfigError(f"--stall-minutes: the {stage} stage has "
                           "no training loop to watch")
    call["stall_minutes"] = stall_minutes
  return module.Command(**call)


def with_given(config: Any, **values: Any) -> Any:
  """`config` (a frozen dataclass) with the fields of `values` replaced
  that a call gives: a None value is an option left to its default (the
  preset's or the library's), so that field keeps its value."""
  return dataclasses.replace(
      config, **{k: v for k, v in values.items() if v is not None})


def record(output: str, stage: str, options: Any) -> None:
  """command.json of a run a stage starts (kept by its resumes)."""
  rundir.write_stage(output, stage=stage, options=options)


def write_json(path: str, obj: Any, *, sort_keys: bool = False) -> None:
  """A run's own JSON state (config.json, chain.json), atomically: what
  --resume and reruns read is never a file a kill cut short."""
  write_atomic(path, json.dumps(obj, indent=1, sort_keys=sort_keys),
               make_dirs=True)


# --- the options' validation: ValueError whose message starts with the field

def check_positive(name: str, value: Any, *, zero: bool = False) -> None:
  """A finite number > 0 (>= 0 with `zero`), or None (an option's
  default)."""
  checks.check_positive(name, value, zero=zero, optional=True)


def check_optional_ints(options: Any, low: Dict[str, int]) -> None:
  """Each field of `low` is None or an integer >= its bound."""
  for name, bound in low.items():
    if getattr(options, name) is not None:
      check_int(name, getattr(options, name), bound)
