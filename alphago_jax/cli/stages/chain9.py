"""Runs AlphaGo's whole 2016 chain on 9×9 from nothing, stage by stage.

Stages, each its own command in a subprocess, each in a subfolder of
OUTPUT, each reading the one before:

1. `games/`: GNU Go plays itself (`train gnugo-games`; skipped with
   --games-dir, which reads existing records instead);
2. `sl/`: the supervised policy p_σ on those games (`train sl-policy`);
3. `rollout/`: the fast rollout policy p_π on the same games
   (`train rollout-policy`);
4. `rl/`: p_ρ by REINFORCE from p_σ (`train rl-policy`);
5. `value_data/`: one self-play position a game, p_σ then a random move
   then p_ρ (`train value-data`);
6. `value/`: the value network v_θ on them (`train value-net`).

`chain.json` (written atomically) records the settings and, per finished
stage, its `RESULT` line and time; `logs/<stage>.log` holds each stage's
output; command.json these options. Rerunning the same command skips
finished stages and continues an interrupted one where it stopped (each
stage's own resume); other settings than the recorded ones are refused,
by name. The defaults are the runs behind the committed 9×9 networks
(several hours on 2 cores); --quick is a smoke run of a minute or two (12
GNU Go level-1 games, tiny networks, a few steps each). The last line:
`RESULT stages=<n> sl_top1=.. rl_win_rate=.. value_mse=..` (the
validation figures the stages monitor).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from typing import Annotated, Literal, Optional

import tyro

from alphago_jax.cli import stages

STAGE = "chain-9x9"
STAGES = ("games", "sl", "rollout", "rl", "value_data", "value")
EXAMPLES = """examples:
  alphago-jax train chain-9x9 --output runs/chain9
  alphago-jax train chain-9x9 --output runs/chain9 --games-dir data/gnugo9
  alphago-jax train chain-9x9 --quick --output /tmp/chain   (a smoke run)"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options:
  """What a chain run computes (recorded in command.json).

  Attributes:
    games_dir: existing 9x9 game records (a folder or archive) instead of
      generating them.
    quick: a smoke run (see above).
    workers: GNU Go processes in parallel.
    stop_after: stop after this stage (rerun to go on).
  """
  games_dir: Optional[str] = None
  quick: bool = False
  workers: int = 2
  stop_after: Optional[Literal["games", "sl", "rollout", "rl", "value_data",
                               "value"]] = None

  def __post_init__(self):
    stages.check_int("workers", self.workers, 1)
    if self.stop_after is not None and self.stop_after not in STAGES:
      raise ValueError(f"stop_after must be one of {STAGES}, got "
                       f"{self.stop_after!r}")

  def resolved(self) -> "Options":
    return self  # Every default is a value already.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command:
  """A call of the chain.

  Attributes:
    output: the chain's run folder.
  """
  output: str
  options: Annotated[Options, tyro.conf.arg(name="")]


def stage_commands(out: str, games_dir: str, quick: bool, workers: int):
  """`{stage: (command, argv, resume_argv)}`: command a stage of `train`
  or a script of experiments/alphago/; resume_argv is what a rerun of an
  interrupted stage adds (None: the same command resumes)."""
  def d(name):
    return os.path.join(out, name)
  cache = d("cache")
  split = ["--size", "9", "--min-rank", "none", "--min-ply", "4"]
  if quick:
    commands = {
        "games": ["--games", "12", "--chunk-size", "6", "--levels", "1",
                  "--opening-moves", "4"],
        "sl": ["--quick", "--fractions", "0.5", "0.25", "0.25"],
        "rollout": ["--quick", "--fractions", "0.5", "0.25", "0.25",
                    "--eval-positions", "200"],
        "rl": ["--iterations", "3", "--games", "16", "--eval-games", "16",
               "--pool-size", "2", "--snapshot-every", "1"],
        "value_data": ["--games", "64", "--chunk-games", "32"],
        "value": ["--quick"],
    }
  else:
    commands = {
        "games": ["--games", "1200", "--levels", "1", "5",
                  "--opening-moves", "4"],
        "sl": ["--fractions", "0.9", "0.05", "0.05",
               "--total-samples", "600000"],
        "rollout": ["--fractions", "0.9", "0.05", "0.05"],
        "rl": ["--iterations", "40"],
        "value_data": ["--games", "40000"],
        "value": ["--total-samples", "1000000", "--eval-every", "500"],
    }
  return {
      "games": ("gnugo-games", ["--output", games_dir, "--workers",
                                str(workers), "--quiet"]
                + commands["games"], None),
      "sl": ("sl-policy", ["--data", games_dir, "--cache", cache,
                           "--output", d("sl")] + split + commands["sl"],
             ["--resume"]),
      "rollout": ("rollout-policy",
                  ["--data", games_dir, "--cache", cache, "--output",
                   d("rollout")] + split + commands["rollout"], ["--resume"]),
      "rl": ("rl-policy", ["--sl-checkpoint", d("sl"), "--output",
                           d("rl")] + commands["rl"], ["--resume"]),
      "value_data": ("value-data",
                     ["--sl-checkpoint", d("sl"), "--rl-checkpoint", d("rl"),
                      "--output", d("value_data")] + commands["value_data"],
                     None),
      "value": ("value-net", ["--data", d("value_data"), "--output",
                              d("value")] + commands["value"],
                ["--resume"]),
  }


def result_fields(line: str) -> dict:
  return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def process_argv(command: str, argv) -> list:
  """The subprocess of a stage: `alphago-jax train STAGE` of this package."""
  return [sys.executable, "-m", "alphago_jax.cli", "train", command, *argv]


def run_stage(name, command, argv, log_path) -> tuple[int, str]:
  """Runs one stage's command, its output appended to `log_path`; returns
  (exit status, its last RESULT line or "")."""
  cmd = process_argv(command, argv)
  result = ""
  with open(log_path, "a") as log:
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    for line in proc.stdout:
      log.write(line)
      if line.startswith("RESULT "):
        result = line.strip()
      elif line.startswith(("error", "Error")) or " error: " in line:
        print(f"  [{name}] {line.rstrip()}", flush=True)
    code = proc.wait()
  return code, result


def run(command: Command) -> int:
  """Runs (or continues) the chain of `command`; the exit status."""
  options, out = command.options.resolved(), command.output
  os.makedirs(os.path.join(out, "logs"), exist_ok=True)
  settings = {"quick": options.quick, "games_dir": options.games_dir,
              "workers": options.workers}
  state_path = os.path.join(out, "chain.json")
  state = {"settings": settings, "stages": {}}
  if os.path.exists(state_path):
    with open(state_path) as f:
      state = json.load(f)
    changed = [k for k, v in settings.items()
               if k != "workers" and state["settings"].get(k) != v]
    if changed:
      return stages.fail(
          f"{out} is a chain run with other settings ("
          + ", ".join(f"{k}={state['settings'].get(k)!r}" for k in changed)
          + "); give the same flags or another --output")
  stages.record(out, STAGE, options)
  games_dir = options.games_dir or os.path.join(out, "games")
  commands = stage_commands(out, games_dir, options.quick, options.workers)
  for name in STAGES:
    done = state["stages"].get(name, {})
    if done.get("status") == "done":
      print(f"{name}: done earlier: {done['result']}", flush=True)
    elif name == "games" and options.games_dir is not None:
      state["stages"][name] = {"status": "done", "seconds": 0.0,
                               "result": f"RESULT games_dir={games_dir}"}
      print(f"{name}: reading {games_dir}", flush=True)
    else:
      stage, stage_argv, resume_argv = commands[name]
      started = os.path.exists(os.path.join(out, name, "config.json"))
      if started and resume_argv:
        stage_argv = stage_argv + resume_argv
      print(f"{name}: {'continuing' if started else 'running'} {stage} "
            f"(log: {os.path.join(out, 'logs', name + '.log')})", flush=True)
      t0 = time.time()
      code, result = run_stage(name, stage, stage_argv,
                               os.path.join(out, "logs", name + ".log"))
      seconds = time.time() - t0 + done.get("seconds", 0.0)
      if name == "games" and code == 0:
        result = f"RESULT games_dir={games_dir}"
      if code != 0 or not result:
        state["stages"][name] = {"status": "failed", "seconds": seconds}
        stages.write_json(state_path, state, sort_keys=True)
        print(f"{name}: failed (exit status {code}); see its log, then "
              "rerun the same command to continue", file=sys.stderr)
        return 1
      state["stages"][name] = {"status": "done", "seconds": seconds,
                               "result": result}
      print(f"{name}: {result} ({seconds:.0f} s)", flush=True)
    stages.write_json(state_path, state, sort_keys=True)
    if name == options.stop_after:
      return 0
  fields = {n: result_fields(state["stages"][n]["result"]) for n in STAGES}

  def held(stage, name):
    # The monitored split's figure (validation; test in chain.json files
    # written before --monitor-split).
    got = fields[stage]
    return got.get(f"validation_{name}", got.get(f"test_{name}", "nan"))
  print(f"RESULT stages={len(STAGES)} "
        f"sl_top1={held('sl', 'top1')} "
        f"rollout_top1={held('rollout', 'top1')} "
        f"rl_win_rate={fields['rl'].get('win_rate', 'nan')} "
        f"value_mse={held('value', 'mse')}")
  return 0


stages.register(__name__)
