"""The one path every training stage's `run` takes: its `Command`
(`TrainingCommand` of its options), its run directory (`RunFiles`), and
`begin`, which resolves the options, starts the devices, reads the run it
resumes and returns the `TrainingCall` that records the run and drives the
host loop with the call's limits. Also the helpers the stages share to
record runs and validate options.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Annotated, Any, Callable, Dict, Generic, Optional, TypeVar

import jax
import tyro
from jax.experimental import multihost_utils

from alphago_jax.cli.stages.registry import StageError, refused
from alphago_jax.core import checks, cpu_devices, rundir
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.core.checks import check_int
from alphago_jax.data import run_dataset
from alphago_jax.data.records import DataError
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training.mesh import make_mesh


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
  def has_checkpoint(self) -> bool:
    """A complete checkpoint is there (reading it starts JAX)."""
    return ckpt.latest_step(self.ckpt_dir) is not None

  @property
  def started(self) -> bool:
    """A run is there: its config.json or a complete checkpoint."""
    return os.path.exists(self.config_path) or self.has_checkpoint

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
    if not self.resuming and self.has_checkpoint:
      raise ValueError(f"{self.output} already holds a run; pass --resume "
                       f"to continue it or choose another --output")


def log(line: str) -> None:
  """A stage's progress line (flushed: runs are watched through pipes)."""
  print(line, flush=True)


def start_cpu_devices(count: int,
                      log: Optional[Callable[[str], None]] = None) -> None:
  """Gives the process `count` XLA CPU devices before JAX starts (a
  process whose JAX has started keeps its devices: a stage called from a
  test or a chain; with `log`, a note says so when the counts differ).

  Raises:
    StageError: a bad count (status 2).
  """
  try:
    cpu_devices.use_cpu_devices(count)
  except ValueError as e:
    raise refused(f"--cpu-devices: {e}") from None
  except RuntimeError:
    if log is not None and jax.local_device_count() != count:
      log(f"note: JAX already runs with {jax.local_device_count()} "
          f"device(s) in this process; cpu_devices={count} takes effect "
          f"in a new process")


def stall_seconds(stall_minutes: Optional[float]) -> Optional[float]:
  """The host loop's stall limit of a call's --stall-minutes (None:
  off)."""
  return None if stall_minutes is None else 60 * stall_minutes


def note_other_commit(source: str, record: Dict[str, Any]) -> None:
  """A note on stderr when the run in `source` (its config.json or
  command.json `record`) was written by another commit than this one."""
  here = rundir.git_commit()
  if record["git_commit"] and here and record["git_commit"] != here:
    print(f"note: {source} was written by commit {record['git_commit'][:12]}"
          f", this is {here[:12]}", file=sys.stderr)


def loop_limits(command: TrainingCommand, options: Any) -> Dict[str, Any]:
  """The host loop's keyword arguments every training stage passes alike:
  this call's --hours and --stall-minutes, the run's training-time budget
  (where the stage has one), the checkpoint and metrics periods, resume,
  log and progress."""
  limits = dict(
      max_seconds=None if command.hours is None else 3600 * command.hours,
      stall_seconds=stall_seconds(command.stall_minutes),
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


def open_splits(data: str, cache_root: Optional[str], dataset: Any,
                monitor: str = "test"):
  """(cache, train, monitored) of game records `data` under `cache_root`
  (`data.run_dataset.open_splits`): the train split and the `monitor`
  split, the one the learning curve reads.

  Raises:
    StageError: unreadable records or cache, or an empty `monitor` split.
  """
  try:
    cache, train, monitored = run_dataset.open_splits(
        data, cache_root, dataset, monitor=monitor, log=log)
  except DataError as e:
    raise StageError(str(e)) from None
  check_monitored(monitor, len(monitored),
                  tuple(dataset.get("fractions", ())))
  return cache, train, monitored


def check_monitored(split: str, count: int, fractions=()) -> None:
  """Refuses (StageError) a learning curve on an empty `split`."""
  if count:
    return
  shares = " ".join(f"{f:g}" for f in fractions) or "the defaults"
  raise StageError(
      f"the {split} split holds no position (fractions {shares}, TRAIN "
      f"VAL TEST): nothing to monitor the run on; give --fractions with a "
      f"larger {split} share, or more records")


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

  def monitor_split(self) -> str:
    """The held-out split the run's learning curve reads: the options'
    `monitor_split`, or on a resume the run's own (its command.json's; a
    run recorded before the option, or with no command.json, read test),
    so that a curve never changes split midway.

    Raises:
      StageError: a resumed run's command.json that cannot be read.
    """
    if not self.resuming:
      return self.options.monitor_split
    if not os.path.exists(os.path.join(self.files.output,
                                       rundir.COMMAND_FILE)):
      return "test"
    try:
      _, recorded, _ = rundir.read_stage(self.files.output,
                                         {self.stage: type(self.options)})
    except rundir.RunConfigError as e:
      raise StageError(str(e)) from None
    if recorded.monitor_split != self.options.monitor_split:
      log(f"monitoring the {recorded.monitor_split} split, as the run "
          f"started (its command.json)")
    return recorded.monitor_split

  def record(self, config: Dict[str, Any], *, once: bool = False,
             sort_keys: bool = False,
             files: Optional[Dict[str, Any]] = None) -> None:
    """Writes the run's command.json (when it starts the run), config.json
    (`config`; with `once`, only where there is none yet) and, with it,
    the run's other JSON `files` (name -> object, e.g. its held-out
    games), by process 0; every process waits for them."""
    if jax.process_index() == 0 and not (
        once and os.path.exists(self.files.config_path)):
      if not self.resuming:
        record(self.command.output, self.stage, self.options)
      for name, obj in (files or {}).items():
        write_json(os.path.join(self.command.output, name), obj)
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
