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
import math
import sys
from typing import Annotated, Any, Dict, Generic, List, Optional, TypeVar

import tyro

from alphago_jax.cli import rundir

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
  """
  output: str
  resume: bool = False
  hours: Optional[float] = None
  options: Annotated[OptionsT, tyro.conf.arg(name="")]

  def __post_init__(self):
    check_positive("hours", self.hours)


def load(stage: str):
  return importlib.import_module(f"alphago_jax.cli.stages.{MODULES[stage]}")


def options_types() -> Dict[str, type]:
  """stage -> its `Options` class (what `rundir.read_stage` checks)."""
  return {stage: load(stage).Options for stage in MODULES}


def flag(name: str) -> str:
  return "--" + name.replace("_", "-")


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
  description = module.__doc__.split("\n\n")[0] + "\n\n" + module.EXAMPLES
  try:
    return tyro.cli(module.Command, args=argv, prog=prog,
                    description=description)
  except ValueError as e:
    names = [f.name for cls in (module.Options, module.Command)
             for f in dataclasses.fields(cls)]
    raise rundir.RunConfigError(_named(str(e), names)) from None


def main(stage: str, argv: Optional[List[str]] = None,
         prog: Optional[str] = None) -> int:
  """`alphago-jax train STAGE ARGV` (or the stage's script); the status."""
  argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
  prog = prog or f"alphago-jax train {stage}"
  try:
    command = parse(stage, argv, prog)
  except rundir.RunConfigError as e:
    print(f"{prog}: error: {e}", file=sys.stderr)
    return 2
  return load(stage).run(command)


def command_for(stage: str, options: Any, *, output: str,
                resume: bool = False, hours: Optional[float] = None):
  """The stage's `Command` for recorded `options` (a repeat or a resume);
  `resume` and `hours` where the stage has those flags."""
  module = load(stage)
  names = {f.name for f in dataclasses.fields(module.Command)}
  call = {"output": output, "options": options}
  if "resume" in names:
    call["resume"] = resume
  if hours is not None:
    if "hours" not in names:
      raise rundir.RunConfigError(f"--hours: the {stage} stage has no time "
                                  "limit")
    call["hours"] = hours
  return module.Command(**call)


def record(output: str, stage: str, options: Any) -> None:
  """command.json of a run a stage starts (kept by its resumes)."""
  rundir.write_stage(output, stage=stage, options=options)


def write_json(path: str, obj: Any, *, sort_keys: bool = False) -> None:
  """A run's own JSON state (config.json, chain.json), atomically: what
  --resume and reruns read is never a file a kill cut short."""
  rundir.atomic_write(path, json.dumps(obj, indent=1, sort_keys=sort_keys))


def fail(message: str) -> int:
  """A refusal before anything ran: `error: message`, status 2."""
  print(f"error: {message}", file=sys.stderr)
  return 2


# --- the options' validation: ValueError whose message starts with the field

def check_int(name: str, value: Any, low: int) -> None:
  if isinstance(value, bool) or not isinstance(value, int) or value < low:
    raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def check_positive(name: str, value: Any, *, zero: bool = False) -> None:
  """A finite number > 0 (>= 0 with `zero`), or None."""
  if value is None:
    return
  if (isinstance(value, bool) or not isinstance(value, (int, float))
      or not math.isfinite(value) or value < 0 or (value == 0 and not zero)):
    raise ValueError(f"{name} must be a finite number "
                     f"{'>= 0' if zero else '> 0'}, got {value!r}")


def check_optional_ints(options: Any, low: Dict[str, int]) -> None:
  """Each field of `low` is None or an integer >= its bound."""
  for name, bound in low.items():
    if getattr(options, name) is not None:
      check_int(name, getattr(options, name), bound)
