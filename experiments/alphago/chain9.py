"""Runs AlphaGo's whole 2016 chain on 9×9 from nothing, stage by stage.

    python experiments/alphago/chain9.py --output runs/chain9
    python experiments/alphago/chain9.py --output runs/chain9 --games-dir data/gnugo9
    python experiments/alphago/chain9.py --quick --output /tmp/chain  # smoke

Stages, each the command of its own (in `experiments/alphago/`), each in a
subfolder of OUTPUT, each reading the one before:

1. `games/`: GNU Go plays itself (`gnugo_games.py`; skipped with
   --games-dir, which reads existing records instead);
2. `sl/`: the supervised policy p_σ on those games (`sl_policy.py`);
3. `rollout/`: the fast rollout policy p_π on the same games
   (`rollout_policy.py`);
4. `rl/`: p_ρ by REINFORCE from p_σ (`rl_policy.py`);
5. `value_data/`: one self-play position a game, p_σ then a random move
   then p_ρ (`value_data.py`);
6. `value/`: the value network v_θ on them (`value_net.py`).

`chain.json` (written atomically) records the settings and, per finished
stage, its `RESULT` line and time; `logs/<stage>.log` holds each stage's
output. Rerunning the same command skips finished stages and continues an
interrupted one where it stopped (each stage's own resume); other settings
than the recorded ones are refused, by name. The defaults are the runs
behind the committed 9×9 networks (several hours on 2 cores); --quick is a
smoke run of a minute or two (12 GNU Go level-1 games, tiny networks, a few
steps each). The last line: `RESULT stages=<n> sl_top1=.. rl_win_rate=..
value_test_mse=..`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from alphago_jax.cli import rundir

HERE = os.path.dirname(os.path.abspath(__file__))
STAGES = ("games", "sl", "rollout", "rl", "value_data", "value")


def stage_commands(out: str, games_dir: str, quick: bool, workers: int):
  """`{stage: (script, argv, resume_argv)}`; resume_argv is what a rerun of
  an interrupted stage adds (None: the same command resumes)."""
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
      "games": ("gnugo_games.py", ["--output", games_dir, "--workers",
                                   str(workers), "--quiet"]
                + commands["games"], None),
      "sl": ("sl_policy.py", ["--data", games_dir, "--cache", cache,
                              "--output", d("sl")] + split + commands["sl"],
             ["--resume"]),
      "rollout": ("rollout_policy.py",
                  ["--data", games_dir, "--cache", cache, "--output",
                   d("rollout")] + split + commands["rollout"], ["--resume"]),
      "rl": ("rl_policy.py", ["--sl-checkpoint", d("sl"), "--output",
                              d("rl")] + commands["rl"], ["--resume"]),
      "value_data": ("value_data.py",
                     ["--sl-checkpoint", d("sl"), "--rl-checkpoint", d("rl"),
                      "--output", d("value_data")] + commands["value_data"],
                     None),
      "value": ("value_net.py", ["--data", d("value_data"), "--output",
                                 d("value")] + commands["value"],
                ["--resume"]),
  }


def write_json(path: str, obj) -> None:
  tmp = path + ".tmp"
  with open(tmp, "w") as f:
    json.dump(obj, f, indent=1, sort_keys=True)
    f.flush()
    os.fsync(f.fileno())
  os.replace(tmp, path)


def result_fields(line: str) -> dict:
  return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def run_stage(name, script, argv, log_path) -> tuple[int, str]:
  """Runs one stage's command, its output appended to `log_path`; returns
  (exit status, its last RESULT line or "")."""
  cmd = [sys.executable, os.path.join(HERE, script), *argv]
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


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--output", required=True, help="the chain's run folder")
  p.add_argument("--games-dir", default=None,
                 help="existing 9x9 game records (a folder or archive) "
                 "instead of generating them")
  p.add_argument("--quick", action="store_true",
                 help="a smoke run (see the module docstring)")
  p.add_argument("--workers", type=int, default=2,
                 help="GNU Go processes in parallel")
  p.add_argument("--stop-after", choices=STAGES, default=None,
                 help="stop after this stage (rerun to go on)")
  args = p.parse_args(argv)
  out = args.output
  os.makedirs(os.path.join(out, "logs"), exist_ok=True)
  rundir.write_command(out, script=os.path.basename(__file__),
                       argv=sys.argv[1:] if argv is None else argv)
  settings = {"quick": args.quick, "games_dir": args.games_dir,
              "workers": args.workers}
  state_path = os.path.join(out, "chain.json")
  state = {"settings": settings, "stages": {}}
  if os.path.exists(state_path):
    with open(state_path) as f:
      state = json.load(f)
    changed = [k for k, v in settings.items()
               if k != "workers" and state["settings"].get(k) != v]
    if changed:
      p.error(f"{out} is a chain run with other settings ("
              + ", ".join(f"{k}={state['settings'].get(k)!r}"
                          for k in changed)
              + "); give the same flags or another --output")
  games_dir = args.games_dir or os.path.join(out, "games")
  commands = stage_commands(out, games_dir, args.quick, args.workers)
  for name in STAGES:
    done = state["stages"].get(name, {})
    if done.get("status") == "done":
      print(f"{name}: done earlier: {done['result']}", flush=True)
    elif name == "games" and args.games_dir is not None:
      state["stages"][name] = {"status": "done", "seconds": 0.0,
                               "result": f"RESULT games_dir={games_dir}"}
      print(f"{name}: reading {games_dir}", flush=True)
    else:
      script, stage_argv, resume_argv = commands[name]
      started = os.path.exists(os.path.join(out, name, "config.json"))
      if started and resume_argv:
        stage_argv = stage_argv + resume_argv
      print(f"{name}: {'continuing' if started else 'running'} {script} "
            f"(log: {os.path.join(out, 'logs', name + '.log')})", flush=True)
      t0 = time.time()
      code, result = run_stage(name, script, stage_argv,
                               os.path.join(out, "logs", name + ".log"))
      seconds = time.time() - t0 + done.get("seconds", 0.0)
      if name == "games" and code == 0:
        result = f"RESULT games_dir={games_dir}"
      if code != 0 or not result:
        state["stages"][name] = {"status": "failed", "seconds": seconds}
        write_json(state_path, state)
        print(f"{name}: failed (exit status {code}); see its log, then "
              "rerun the same command to continue", file=sys.stderr)
        return 1
      state["stages"][name] = {"status": "done", "seconds": seconds,
                               "result": result}
      print(f"{name}: {result} ({seconds:.0f} s)", flush=True)
    write_json(state_path, state)
    if name == args.stop_after:
      return 0
  fields = {n: result_fields(state["stages"][n]["result"]) for n in STAGES}
  print(f"RESULT stages={len(STAGES)} "
        f"sl_top1={fields['sl'].get('test_top1', 'nan')} "
        f"rollout_top1={fields['rollout'].get('test_top1', 'nan')} "
        f"rl_win_rate={fields['rl'].get('win_rate', 'nan')} "
        f"value_test_mse={fields['value'].get('test_mse', 'nan')}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
