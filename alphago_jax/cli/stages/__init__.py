"""AlphaGo's later 2016 stages as typed commands: `alphago-jax train STAGE`.

Each stage is one module here that registers itself at its end
(`register(__name__)`: a `StageCommand`): `STAGE`, its name; `Options` (a
frozen dataclass of what the run computes; its run directory's
command.json records them resolved, every default filled in, so that
`--from-run` repeats the values the run used even after a default
changes); `Command` (the options plus the flags of one call: --output,
and --resume/--hours where the stage has them); `EXAMPLES`; and
`run(command) -> int`, which may raise `StageError`. The registry imports
the package's modules on first use (`names`, `get`), so no list names the
stages and `alphago-jax --help` imports none of them. The training
stages' `Command` is `TrainingCommand` of their options, and their `run`
goes through one path, `begin` and the `TrainingCall` it returns (the run
files, devices, resume, the host loop's limits); option fields several
stages share are the dataclass bases of `groups`. The scripts of
experiments/alphago/ are thin wrappers over `main`, so their command
lines keep working.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import pkgutil
import sys
from typing import (Annotated, Any, Callable, Dict, Generic, List, Optional,
                    TypeVar)

import jax
import tyro
from jax.experimental import multihost_utils

from alphago_jax.cli import parsing
from alphago_jax.cli.parsing import fail, flag  # stages.fail, stages.flag
from alphago_jax.core import checks, cpu_devices, rundir
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.core.checks import check_int  # noqa: F401  (stages.check_int)
from alphago_jax.core.registry import Registry
from alphago_jax.data import run_dataset
from alphago_jax.data.records import DataError
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training.mesh import make_mesh


@dataclasses.dataclass(frozen=True, kw_only=True)
class StageCommand:
  """One stage's command line, as its module registers it.

  Attributes:
    name: the stage's name on the command line (`train NAME`) and in
      command.json.
    module: its module (`__name__`); experiments/alphago/ has a script of
      the module's last name, which command.json of format 1 records.
    options: its `Options` class.
    command: its `Command` class (`options` and the call's flags).
    examples: the examples --help ends with.
    run: `command -> status`; may raise `StageError`.
  """
  name: str
  module: str
  options: type
  command: type
  examples: str
  run: Callable[[Any], int]

  @property
  def script(self) -> str:
    return self.module.rsplit(".", 1)[-1] + ".py"


_COMMANDS: Registry[StageCommand] = Registry("stage")
_found = False


def register(module_name: str) -> StageCommand:
  """Registers the stage module `module_name` (a call at its end): its
  `STAGE` (the name), `Options`, `Command`, `EXAMPLES` and `run`."""
  module = sys.modules[module_name]
  return _COMMANDS.register(module.STAGE, StageCommand(
      name=module.STAGE, module=module_name, options=module.Options,
      command=module.Command, examples=module.EXAMPLES, run=module.run))


def _registry() -> Registry[StageCommand]:
  """The registry, once every module of the package has been imported
  (each stage's registers it)."""
  global _found
  if not _found:
    for info in pkgutil.iter_modules(__path__):
      importlib.import_module(f"{__name__}.{info.name}")
    _found = True
  return _COMMANDS


def names() -> List[str]:
  """The stages' names."""
  return _registry().names()


def get(stage: str) -> StageCommand:
  """The command of `stage` (ValueError for an unknown one)."""
  return _registry().get(stage)


def load(stage: str):
  """The module of `stage`."""
  return importlib.import_module(get(stage).module)


def scripts() -> Dict[str, str]:
  """experiments/alphago/ script -> its stage (command.json of format 1
  names the script a run was started with)."""
  return {entry.script: name for name, entry in
          ((n, get(n)) for n in names())}


def options_types() -> Dict[str, type]:
  """stage -> its `Options` class (what `rundir.read_stage` checks)."""
  return {stage: get(stage).options for stage in names()}


class StageError(Exception):
  """A call that cannot go on: `error: MESSAGE` on stderr and the exit
  `status` (2: the call's options are refused, as a usage error; 1: a
  failure, such as unreadable data or a checkpoint of another network)."""

  def __init__(self, message: str, status: int = 1):
    super().__init__(message)
    self.status = status


def refused(message: str) -> StageError:
  """A `StageError` of status 2 (a usage error)."""
  return StageError(message, status=2)


def execute(stage: str, command: Any) -> int:
  """Runs `command` of `stage`; its status (a `StageError`'s, with its
  message on stderr)."""
  try:
    return get(stage).run(command)
  except StageError as e:
    fail(str(e))  # `error: MESSAGE` on stderr
    return e.status


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


def start_cpu_devices(count: int) -> None:
  """Gives the process `count` XLA CPU devices before JAX starts (a
  process whose JAX has started keeps its devices: a stage called from a
  test or a chain).

  Raises:
    StageError: a bad count (status 2).
  """
  try:
    cpu_devices.use_cpu_devices(count)
  except ValueError as e:
    raise refused(f"--cpu-devices: {e}") from None
  except RuntimeError:
    pass


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


def data_mesh(devices: Optional[int] = None):
  """The `"data"` mesh over the first `devices` of the process's devices
  (default all); None for one device."""
  count = jax.device_count() if devices is None else devices
  if count <= 1:
    return None
  return make_mesh(None if devices is None else jax.devices()[:devices])


def open_splits(data: str, cache_root: Optional[str], dataset: Any):
  """(cache, train, test) of game records `data` under `cache_root`
  (`data.run_dataset.open_splits`).

  Raises:
    StageError: unreadable records or cache.
  """
  try:
    return run_dataset.open_splits(data, cache_root, dataset, log=log)
  except DataError as e:
    raise StageError(str(e)) from None


def _own_devices(options: Any, saved: Optional[Dict[str, Any]]
                 ) -> Optional[int]:
  del saved
  return getattr(options, "cpu_devices", None)


@dataclasses.dataclass(frozen=True)
class TrainingCall:
  """A training stage's call once `begin` has set it up: the resolved
  options, its devices started, the run it continues or starts (a new run
  checked not to be written over one).

  Attributes:
    stage: the stage's name (command.json records it).
    command: the call.
    options: `command.options`, resolved.
    files: the run directory and the config.json it resumes.
  """
  stage: str
  command: TrainingCommand
  options: Any
  files: RunFiles

  @property
  def saved(self) -> Optional[Dict[str, Any]]:
    return self.files.saved

  @property
  def resuming(self) -> bool:
    return self.files.resuming

  def record(self, config: Dict[str, Any], *, once: bool = False,
             sort_keys: bool = False) -> None:
    """Writes the run's command.json (when it starts the run) and
    config.json (`config`; with `once`, only where there is none yet), by
    process 0; every process waits for them."""
    if jax.process_index() == 0 and not (
        once and os.path.exists(self.files.config_path)):
      if not self.resuming:
        record(self.command.output, self.stage, self.options)
      write_json(self.files.config_path, config, sort_keys=sort_keys)
    if jax.process_count() > 1:
      multihost_utils.sync_global_devices(f"{self.stage}: output ready")

  def train(self, train_fn: Callable[..., Any], *args: Any,
            **kwargs: Any) -> Any:
    """`train_fn(*args, **kwargs)` with the host loop's limits of this
    call (`loop_limits`).

    Raises:
      StageError: the run directory's checkpoint is of another network.
    """
    try:
      return train_fn(*args, **kwargs,
                      **loop_limits(self.command, self.options))
    except ckpt.CheckpointMismatchError as e:
      raise StageError(str(e)) from None


def begin(stage: str, command: TrainingCommand, *,
          devices: Callable[[Any, Optional[Dict[str, Any]]],
                            Optional[int]] = _own_devices,
          before_jax: Optional[Callable[[], None]] = None) -> TrainingCall:
  """Sets up a call of a training stage: resolves its options, gives the
  process its XLA CPU devices (`devices(options, saved config.json)`; None:
  the options' `cpu_devices`, where they have one), calls `before_jax`
  (e.g. `jax.distributed.initialize`), then reads the run it resumes or
  checks that a new one writes over none.

  Raises:
    StageError: refused options or device count, or a new run over one
      (status 2).
  """
  try:
    options = command.options.resolved()
  except ValueError as e:
    raise refused(str(e)) from None
  files = RunFiles.of(command)
  count = devices(options, files.saved)
  if count is not None:
    start_cpu_devices(count)
  if before_jax is not None:
    before_jax()
  try:
    files.check_fresh()
  except ValueError as e:
    raise refused(str(e)) from None
  return TrainingCall(stage, command, options, files)


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
  entry = get(stage)
  try:
    return parsing.parse(entry.command, argv, prog=prog,
                         examples=entry.examples,
                         summary=load(stage).__doc__.split("\n\n")[0])
  except ValueError as e:
    fields = [f.name for cls in (entry.options, entry.command)
              for f in dataclasses.fields(cls)]
    raise RunConfigError(_named(str(e), fields)) from None


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
  return execute(stage, command)


def command_for(stage: str, options: Any, *, output: str,
                resume: bool = False, hours: Optional[float] = None,
                stall_minutes: Optional[float] = None):
  """The stage's `Command` for recorded `options` (a repeat or a resume);
  `resume`, `hours` and `stall_minutes` where the stage has those flags."""
  entry = get(stage)
  names = {f.name for f in dataclasses.fields(entry.command)}
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
  return entry.command(**call)


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
