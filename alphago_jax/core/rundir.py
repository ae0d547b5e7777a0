"""Run directories: `config.json`, the full typed config of a run.

A run directory holds `config.json` (written atomically: a temporary file,
fsynced, then renamed), `metrics.jsonl` and `checkpoints/`. The config file
records the command and stage, the typed run config as nested JSON, the
package version and the git commit of the code (null outside a git
checkout), so that the run can be repeated from the directory alone.

The config is written and read by `config_codec`: strictly, so that a
hand-edited or damaged file never runs with a value other than the one it
shows; any problem raises `RunConfigError` naming the field, e.g.
`config.train.search.num_simulations`. The records' envelopes (format,
stage, version, commit) are checked here with the same errors.
"""

from __future__ import annotations

import json
import os
import subprocess
from importlib import metadata
from typing import Any, Dict, Optional, Tuple

from alphago_jax.core.atomic_files import read_json, write_atomic
from alphago_jax.core.config_codec import RunConfigError, describe, fail
from alphago_jax.core.config_codec import from_json, to_json

CONFIG_FILE = "config.json"
FORMAT = 1
_TOP_FIELDS = ("format", "command", "stage", "version", "git_commit",
               "config")


def package_version() -> str:
  try:
    return metadata.version("alphago-jax")
  except metadata.PackageNotFoundError:
    return "unknown"


def git_commit() -> Optional[str]:
  """The commit of the source checkout the package runs from, or None."""
  here = os.path.dirname(os.path.abspath(__file__))
  try:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here,
                         capture_output=True, text=True, timeout=10,
                         check=False)
  except (OSError, subprocess.TimeoutExpired):
    return None
  commit = out.stdout.strip()
  return commit if out.returncode == 0 and len(commit) == 40 else None


def write_config(run_dir: str, *, command: str, stage: str,
                 config: Any) -> Dict[str, Any]:
  """Writes `run_dir/config.json` atomically; returns what it wrote."""
  record = {"format": FORMAT, "command": command, "stage": stage,
            "version": package_version(), "git_commit": git_commit(),
            "config": to_json(config)}
  write_atomic(os.path.join(run_dir, CONFIG_FILE),
               json.dumps(record, indent=1, allow_nan=False) + "\n",
               make_dirs=True)
  return record


def _no_constants(name):
  raise ValueError(f"{name} is not valid JSON")


# config.json files written before runs recorded how to repeat them: by the
# experiments/alphago/ commands before they kept command.json, and by the
# first AlphaZero runs (checkpoints/go9), whose config.json is only the
# network's architecture. Their top-level keys name the writer. None holds
# every setting of its run (the logging, evaluation and time flags; go9's
# whole training config), so none can be repeated exactly: reading one is
# an error that names the command to run instead, never a guessed repeat.
_LEGACY_SCRIPTS = (
    ({"config", "dataset", "data", "cache", "seed"}, "sl_policy.py"),
    ({"config", "sl_checkpoint", "seed", "iterations", "eval_games"},
     "rl_policy.py"),
    ({"config", "source", "seed"}, "value_net.py"),
    ({"data", "dataset", "features", "kind", "seed", "step", "train"},
     "rollout_policy.py"),
)
_ARCHITECTURE = {"game", "num_actions", "observation_shape", "model",
                 "optimizer", "buffer_capacity"}


def _check_not_legacy(path: str, record: Dict[str, Any]) -> None:
  """Raises `RunConfigError` naming the command to use for a config.json
  of a run that predates `--from-run` (see `_LEGACY_SCRIPTS`)."""
  run_dir = os.path.dirname(path) or "."
  if record.get("command") == "train" and record.get("stage") == "sl-policy":
    # `train sl-policy` once took the library's nested config (--sl.*);
    # its runs hold settings that the stage's options cannot express.
    raise RunConfigError(
        f"{path}: a run of `alphago-jax train sl-policy` from before it "
        f"became the sl_policy.py stage (its --sl.* flags are gone), so it "
        f"cannot be repeated exactly. Start it again with `alphago-jax "
        f"train sl-policy --data ... --output NEW` and the settings in this "
        f"file (--layers, --filters, --batch-size, --lr, --total-samples)")
  if "format" in record or "command" in record:
    return
  keys = set(record)
  if keys == _ARCHITECTURE:
    game = "go9" if record["game"] == "go" else "tictactoe"
    raise RunConfigError(
        f"{path}: the network architecture that the first AlphaZero runs "
        f"wrote, not a run's config: the run predates config.json run "
        f"files and cannot be repeated exactly. Start a run from today's "
        f"{game} defaults with `alphago-jax train {game} --output NEW`"
        + (f", or continue this network with `python experiments/"
           f"train_go9.py --start-from {run_dir}`" if game == "go9" else ""))
  for signature, script in _LEGACY_SCRIPTS:
    if signature <= keys:
      command = f"python experiments/alphago/{script}"
      raise RunConfigError(
          f"{path}: written by `{command}` before its runs recorded the "
          f"command that started them (command.json), so it cannot be "
          f"repeated exactly: this file lacks some of the command's "
          f"settings. Run `{command}` again with the settings in this file "
          f"(`{command} --resume --output {run_dir} ...` continues this "
          f"run); runs it starts now can be repeated with `alphago-jax "
          f"train --from-run`")


def _check_envelope(record: dict, fields, fmt: int, stages) -> None:
  """The checks every run record shares: exactly `fields`, format `fmt`, a
  known stage, and a string-or-null version and commit."""
  unknown = sorted(set(record) - set(fields))
  if unknown:
    fail(unknown[0], "unknown field")
  for name in fields:
    if name not in record:
      fail(name, "missing")
  if isinstance(record["format"], bool) or record["format"] != fmt:
    fail("format", f"must be {fmt}, got {describe(record['format'])}")
  if not isinstance(record["stage"], str) or record["stage"] not in stages:
    fail("stage", f"must be one of {sorted(stages)}, got "
          f"{describe(record['stage'])}")
  for name in ("version", "git_commit"):
    if record[name] is not None and not isinstance(record[name], str):
      fail(name, f"must be a string or null, got "
            f"{describe(record[name])}")


def read_config(run_dir: str, stages: Dict[str, type]
                ) -> Tuple[str, Any, Dict[str, Any]]:
  """`(stage, config, record)` from `run_dir/config.json`.

  Args:
    stages: stage name -> the config dataclass of that stage.

  Raises:
    RunConfigError: no such file, not JSON, or any field wrong (named).
  """
  path = os.path.join(run_dir, CONFIG_FILE)
  try:
    with open(path, "rb") as f:
      text = f.read().decode("utf-8")
    record = json.loads(text, parse_constant=_no_constants)
  except FileNotFoundError:
    raise RunConfigError(f"{path}: no such file (not a run directory)"
                         ) from None
  except (UnicodeDecodeError, ValueError, RecursionError) as e:
    raise RunConfigError(f"{path}: not a valid config file: {e}") from None
  if not isinstance(record, dict):
    raise RunConfigError(f"{path}: must hold a JSON object")
  _check_not_legacy(path, record)
  try:
    _check_envelope(record, _TOP_FIELDS, FORMAT, stages)
    if record["command"] != "train":
      fail("command", f"must be \"train\", got "
            f"{describe(record['command'])}")
    config = from_json(stages[record["stage"]], record["config"])
  except RunConfigError as e:
    raise RunConfigError(f"{path}: {e}") from None
  return record["stage"], config, record


# --- command.json: how an experiments/alphago/ command started a run --------
#
# The 2016 stages' commands are argparse scripts, each with its own
# config.json; what repeats one of their runs is its command line. The
# record leaves out the flags that say where and for how long a call runs
# (an exact repeat goes elsewhere, and --resume/--hours belong to one call),
# keeping everything that says what the run computes. Paths are kept as
# given: relative ones are relative to where the command ran, never made
# absolute.

COMMAND_FILE = "command.json"
_CALL_FLAGS = {"--output": True, "--resume": False, "--hours": True}
_COMMAND_FIELDS = ("format", "script", "argv", "version", "git_commit")


def without_call_flags(argv) -> list:
  """`argv` without --output DIR, --resume and --hours H (either spelling,
  `--flag value` or `--flag=value`)."""
  out, rest = [], [str(a) for a in argv]
  i = 0
  while i < len(rest):
    name = rest[i].split("=", 1)[0]
    if name in _CALL_FLAGS:
      i += 1 if "=" in rest[i] or not _CALL_FLAGS[name] else 2
      continue
    out.append(rest[i])
    i += 1
  return out


def write_command(run_dir: str, *, script: str, argv) -> None:
  """Writes `run_dir/command.json` atomically unless it exists: the record
  of the call that started the run, which later calls (resumes) keep."""
  path = os.path.join(run_dir, COMMAND_FILE)
  if os.path.exists(path):
    return
  os.makedirs(run_dir, exist_ok=True)
  record = {"format": FORMAT, "script": script,
            "argv": without_call_flags(argv), "version": package_version(),
            "git_commit": git_commit()}
  write_atomic(path, json.dumps(record, indent=1) + "\n", make_dirs=True)


def read_command(run_dir: str, scripts) -> Tuple[str, list, Dict[str, Any]]:
  """(script, argv, record) of `run_dir/command.json`, checked strictly:
  `script` must be one of `scripts`, `argv` a list of strings.

  Raises:
    RunConfigError: a missing, damaged or foreign file, naming the field.
  """
  path = os.path.join(run_dir, COMMAND_FILE)
  record = read_json(path, error=RunConfigError,
                     missing=f"{path}: no such file",
                     unreadable=lambda e: f"{path}: not readable JSON ({e})")
  if not isinstance(record, dict):
    fail(path, "must hold a JSON object")
  missing = [k for k in _COMMAND_FIELDS if k not in record]
  unknown = sorted(set(record) - set(_COMMAND_FIELDS))
  if missing or unknown:
    fail(path, f"missing fields {missing}, unknown fields {unknown}")
  if record["format"] != FORMAT:
    fail(f"{path}: format", f"must be {FORMAT}, got "
          f"{describe(record['format'])}")
  if record["script"] not in scripts:
    fail(f"{path}: script", f"must be one of {sorted(scripts)}, got "
          f"{describe(record['script'])}")
  argv = record["argv"]
  if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
    fail(f"{path}: argv", "must be a list of strings")
  return record["script"], argv, record


# --- command.json of format 2: a stage's resolved options --------------------
#
# The stages of `alphago_jax.cli.stages` record their typed options, every
# field with its default filled in, so that a repeat runs the values the
# run ran even where a later commit changes a default. Format 1 files (the
# command lines above) stay readable.

STAGE_FORMAT = 2
_STAGE_FIELDS = ("format", "stage", "options", "version", "git_commit")


def command_format(run_dir: str) -> Any:
  """The `format` of `run_dir/command.json` (None when unreadable; the
  readers say why)."""
  try:
    with open(os.path.join(run_dir, COMMAND_FILE)) as f:
      record = json.load(f)
  except (OSError, ValueError):
    return None
  return record.get("format") if isinstance(record, dict) else None


def write_stage(run_dir: str, *, stage: str, options: Any) -> None:
  """Writes `run_dir/command.json` (format 2) atomically unless it exists:
  the options of the call that started the run, which resumes keep."""
  path = os.path.join(run_dir, COMMAND_FILE)
  if os.path.exists(path):
    return
  record = {"format": STAGE_FORMAT, "stage": stage,
            "options": to_json(options), "version": package_version(),
            "git_commit": git_commit()}
  write_atomic(path, json.dumps(record, indent=1, allow_nan=False) + "\n",
               make_dirs=True)


def read_stage(run_dir: str, stages: Dict[str, type]
               ) -> Tuple[str, Any, Dict[str, Any]]:
  """(stage, options, record) of a format-2 `run_dir/command.json`, read as
  strictly as config.json (`config_codec.from_json`).

  Args:
    stages: stage name -> its options dataclass.

  Raises:
    RunConfigError: a missing, damaged or foreign file, naming the field.
  """
  path = os.path.join(run_dir, COMMAND_FILE)
  record = read_json(path, error=RunConfigError,
                     missing=f"{path}: no such file",
                     unreadable=lambda e: f"{path}: not readable JSON ({e})",
                     parse_constant=_no_constants)
  try:
    if not isinstance(record, dict):
      fail("command.json", "must hold a JSON object")
    _check_envelope(record, _STAGE_FIELDS, STAGE_FORMAT, stages)
    options = from_json(stages[record["stage"]], record["options"],
                        "options")
  except RunConfigError as e:
    raise RunConfigError(f"{path}: {e}") from None
  return record["stage"], options, record
