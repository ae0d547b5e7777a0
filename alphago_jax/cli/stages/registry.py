"""The registry of the stage commands (`alphago-jax train STAGE`): each
stage module of this package registers its `StageCommand` at its end, and
the registry imports the package's modules on first use, so no list names
the stages. Also the errors a stage's `run` raises, and parsing and
running one stage's command line.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import pkgutil
import sys
from typing import Any, Callable, Dict, List, Optional

from alphago_jax.cli import parsing
from alphago_jax.cli.parsing import fail, flag
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.core.registry import Registry


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
    for info in pkgutil.iter_modules([os.path.dirname(__file__)]):
      importlib.import_module(f"{__package__}.{info.name}")
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


def check_exact_repeat(iterations: Optional[int],
                       hours: Optional[float]) -> None:
  """Refuses a new budget on --from-run, which repeats a run as it was
  recorded (a new budget belongs to --resume).

  Raises:
    RunConfigError: `iterations` or `hours` is given.
  """
  if iterations is not None or hours is not None:
    raise RunConfigError("--from-run repeats the run exactly: "
                         "--iterations and --hours are for --resume")
