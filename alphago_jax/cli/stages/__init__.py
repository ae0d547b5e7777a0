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

AlphaZero's command (`alphazero`, `alphago-jax train GAME`) is the one
module here outside the registry: its runs record config.json rather
than command.json, and `cli.train` reaches it by game name; it shares the
run directory, devices, stall limit and statuses of `training_call`.
"""

from __future__ import annotations

from alphago_jax.cli.parsing import fail, flag
from alphago_jax.cli.stages.registry import (StageCommand, StageError,
                                             check_exact_repeat,
                                             execute, get, load, main,
                                             names, options_types, parse,
                                             refused, register, scripts,
                                             command_for)
from alphago_jax.cli.stages.training_call import (
    RunFiles, TrainingCall, TrainingCommand, begin, check_int,
    check_monitored,
    check_optional_ints, check_positive, data_mesh, log, loop_limits,
    note_other_commit, open_splits, record, stall_seconds,
    start_cpu_devices, with_given, write_json)

__all__ = [
    "RunFiles", "StageCommand", "StageError", "TrainingCall",
    "TrainingCommand", "begin", "check_exact_repeat", "check_int", "check_monitored", "check_optional_ints",
    "check_positive", "command_for", "data_mesh", "execute", "fail", "flag",
    "get", "load", "log", "loop_limits", "main", "names",
    "note_other_commit", "open_splits",
    "options_types", "parse", "record", "refused", "register", "scripts",
    "stall_seconds", "start_cpu_devices", "with_given", "write_json"]
