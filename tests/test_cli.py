"""The `alphago-jax` command line: help, typed overrides with errors that
name the field, run directories (config.json), repeating and resuming a run,
and a fuzz of hand-edited config files."""

import copy
import dataclasses
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import jax
import numpy as np
import pytest

from alphago_jax import games, search, training
from alphago_jax.training.checkpoint import latest_step, restore_checkpoint
from alphago_jax.cli import main as cli_main
from alphago_jax.cli import stages
from alphago_jax.core import config_codec, rundir
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.cli.configs import STAGES, AlphaZeroRun, alphazero_defaults

from helpers import run_cli

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
# A tiny tic-tac-toe run (seconds an iteration), as command-line overrides.
TINY = ["--iterations", "2", "--eval-every", "0", "--checkpoint-every", "1",
        "--train.num-games", "8", "--train.batch-size", "16",
        "--train.buffer-capacity", "288", "--train.gradient-steps", "2",
        "--train.model.channels", "4", "--train.model.value-hidden", "8",
        "--train.search.num-simulations", "2"]


@pytest.mark.parametrize("command", ["demo", "train", "selfplay", "arena",
                                     "show", "reproduce", "gtp", "sweep"])
def test_every_subcommand_has_help_with_an_example(capsys, command):
  status, out, _ = run_cli(capsys, command, "--help")
  assert status == 0
  assert "examples:" in out and f"alphago-jax {command}" in out, out[:2000]


def test_top_level_help_lists_the_commands_and_rejects_unknown_ones(capsys):
  status, out, _ = run_cli(capsys, "--help")
  assert status == 0
  for name in ("demo", "train", "selfplay", "arena", "gtp", "show",
               "reproduce"):
    assert re.search(rf"^  {name} ", out, re.M), name
  status, _, err = run_cli(capsys, "frobnicate")
  assert status == 2 and "unknown command 'frobnicate'" in err


def test_train_defaults_per_game_and_overrides(capsys):
  status, out, _ = run_cli(capsys, "train", "tictactoe", "--output", "x",
                           "--dry-run", "--train.search.num-simulations",
                           "7", "--train.lr-boundaries", "5", "9")
  assert status == 0
  shown = json.loads(out)
  assert shown["stage"] == "alphazero"
  config = config_codec.from_json(AlphaZeroRun, shown["config"])
  want = alphazero_defaults("tictactoe")
  assert config.train.search.num_simulations == 7
  assert config.train.lr_boundaries == (5, 9)
  # Everything not overridden is the README's preset.
  assert config.train.model == want.train.model
  assert config.train.num_games == want.train.num_games == 128
  status, out, _ = run_cli(capsys, "train", "go9", "--output", "x",
                           "--dry-run")
  go9 = config_codec.from_json(AlphaZeroRun, json.loads(out)["config"])
  assert go9 == alphazero_defaults("go9")
  assert go9.train == training.presets.go9() and go9.augment


@pytest.mark.parametrize("flag,value,field", [
    ("--train.num-games", "0", "num_games"),
    ("--train.search.dirichlet-fraction", "1.5", "dirichlet_fraction"),
    ("--train.optimizer", "rmsprop", "optimizer"),
    ("--train.search.max-num-considered-actions", "12",
     "max_num_considered_actions"),
    ("--checkpoint-every", "0", "checkpoint_every"),
])
def test_train_rejects_bad_values_naming_the_field(capsys, flag, value,
                                                   field):
  status, out, err = run_cli(capsys, "train", "tictactoe", "--output", "x",
                             "--dry-run", flag, value)
  assert status == 2 and not out
  assert field in err and "Traceback" not in err, err


def test_config_json_round_trip_and_provenance(tmp_path):
  run = alphazero_defaults("go9")
  written = rundir.write_config(str(tmp_path), command="train",
                                stage="alphazero", config=run)
  assert not [n for n in os.listdir(tmp_path) if "tmp" in n]
  stage, back, record = rundir.read_config(str(tmp_path), STAGES)
  assert (stage, back) == ("alphazero", run) and record == written
  assert record["version"] == "0.1.0"
  assert re.fullmatch(r"[0-9a-f]{40}", record["git_commit"])
  head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT,
                        capture_output=True, text=True, check=True)
  assert record["git_commit"] == head.stdout.strip()



def test_a_run_recorded_before_gumbel_move_keeps_playing_argmax(tmp_path):
  # The committed partial run's config.json has no `gumbel_move`: it ran
  # with the improved policy's argmax, which a new run's default is not.
  src = os.path.join(ROOT, "checkpoints", "az9-b4c64-partial", "config.json")
  with open(src) as f:
    record = json.load(f)
  assert "gumbel_move" not in record["config"]["train"]["search"]
  _, run, _ = rundir.read_config(os.path.dirname(src), STAGES)
  assert run.train.search.gumbel_move == "argmax"
  assert alphazero_defaults("go9").train.search.gumbel_move == "halving"
  # Written out again, the field is explicit and reads back as itself.
  rundir.write_config(str(tmp_path), command="train", stage="alphazero",
                      config=run)
  _, back, _ = rundir.read_config(str(tmp_path), STAGES)
  assert back == run
  record["config"]["train"]["search"]["gumbel_move"] = "best"
  with open(tmp_path / "config.json", "w") as f:
    json.dump(record, f)
  with pytest.raises(config_codec.RunConfigError, match="gumbel_move"):
    rundir.read_config(str(tmp_path), STAGES)

def _params(run_dir, config):
  game = games.make("tictactoe")
  template = training.init_train_state(game, config, 0)
  state = restore_checkpoint(
      os.path.join(run_dir, "checkpoints"), template,
      architecture=config.architecture(game))
  return state


def test_from_run_repeats_exactly_and_resume_continues(tmp_path, capsys):
  a, b = str(tmp_path / "a"), str(tmp_path / "b")
  status, out, err = run_cli(capsys, "train", "tictactoe", "--output", a,
                             "--seed", "3", *TINY)
  assert status == 0, err
  assert "RESULT iterations=2" in out
  status, _, err = run_cli(capsys, "train", "tictactoe", "--output", a,
                           *TINY)
  assert status == 2 and "already holds a run" in err
  status, out, err = run_cli(capsys, "train", "--from-run", a, "--output", b)
  assert status == 0, err
  _, run_a, rec_a = rundir.read_config(a, STAGES)
  _, run_b, rec_b = rundir.read_config(b, STAGES)
  assert run_a == run_b and run_a.seed == 3
  # The same file but for the commit (other work may commit meanwhile).
  assert {k: v for k, v in rec_a.items() if k != "git_commit"} == {
      k: v for k, v in rec_b.items() if k != "git_commit"}
  state_a, state_b = _params(a, run_a.train), _params(b, run_b.train)
  assert int(state_a.iteration) == int(state_b.iteration) == 2
  for x, y in zip(jax.tree.leaves(state_a.params),
                  jax.tree.leaves(state_b.params)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
  # --resume continues in place with a new budget, recorded in config.json.
  status, out, err = run_cli(capsys, "train", "--resume", a,
                             "--iterations", "3")
  assert status == 0, err
  assert "resumed from iteration 2" in out
  assert rundir.read_config(a, STAGES)[1].iterations == 3
  records = training.read_metrics(os.path.join(a, "metrics.jsonl"))
  assert [r["iteration"] for r in records] == [1, 2, 3]
  # Misuse is an error, not a traceback.
  for argv in (["--from-run", a], ["--from-run", a, "--output", a],
               ["--resume", a, "--output", b],
               ["--from-run", a, "--output", str(tmp_path / "c"),
                "--iterations", "5"],
               ["--resume", str(tmp_path / "nothing")],
               ["--resume", a, "--iterations", "-1"]):
    status, _, err = run_cli(capsys, "train", *argv)
    assert status == 2 and err.startswith("error:"), (argv, err)


def _tiny_run(capsys, tmp_path, **changes):
  """The run `train tictactoe --seed 3 TINY` makes (one compiled iteration
  with the test above), with `changes`."""
  status, out, _ = run_cli(capsys, "train", "tictactoe", "--output",
                           str(tmp_path / "unused"), "--dry-run", "--seed",
                           "3", *TINY)
  assert status == 0
  run = config_codec.from_json(AlphaZeroRun, json.loads(out)["config"])
  return dataclasses.replace(run, **changes)


def test_ctrl_c_stops_after_the_iteration_saved_and_resume_matches(
    tmp_path, capfd):
  capsys = capfd  # The signal handler's note goes straight to fd 2.
  from alphago_jax.cli import train as train_cli  # pylint: disable=import-outside-toplevel
  # Checkpoints only every 10 iterations: the one after Ctrl-C is the
  # stop's own.
  run = _tiny_run(capsys, tmp_path, iterations=4, checkpoint_every=10)
  a, b = str(tmp_path / "a"), str(tmp_path / "b")
  lines = []

  def log(line):  # Ctrl-C as iteration 1 is logged: iteration 2 is running
    lines.append(line)
    if line.startswith("iteration=1 "):
      os.kill(os.getpid(), signal.SIGINT)

  before = signal.getsignal(signal.SIGINT)
  history = train_cli.run_alphazero(run, a, progress=False, log=log)
  assert signal.getsignal(signal.SIGINT) is before  # handlers restored
  assert [r["iteration"] for r in history] == [1, 2]
  assert history[-1]["stop"] == "SIGINT"
  assert "stopping after the current step" in capsys.readouterr().err
  assert lines[-1] == (f"stopped by SIGINT after iteration 2, saved: "
                       f"continue with `alphago-jax train --resume {a}`")
  assert latest_step(os.path.join(a, "checkpoints")) == 2
  records = training.read_metrics(os.path.join(a, "metrics.jsonl"))
  assert [r["iteration"] for r in records] == [1, 2]
  # --resume continues to the end, to what an uninterrupted run reaches.
  status, out, err = run_cli(capsys, "train", "--resume", a)
  assert status == 0, err
  assert "resumed from iteration 2" in out and "stop=num_steps" in out
  train_cli.run_alphazero(run, b, progress=False, log=lambda line: None)
  state_a, state_b = _params(a, run.train), _params(b, run.train)
  assert int(state_a.iteration) == int(state_b.iteration) == 4
  for x, y in zip(jax.tree.leaves((state_a.params, state_a.batch_stats,
                                   state_a.opt_state)),
                  jax.tree.leaves((state_b.params, state_b.batch_stats,
                                   state_b.opt_state))):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
  records = training.read_metrics(os.path.join(a, "metrics.jsonl"))
  assert [r["iteration"] for r in records] == [1, 2, 3, 4]


def _start_training(out, *args):
  return subprocess.Popen(
      [sys.executable, "-m", "alphago_jax.cli", "train", "tictactoe",
       "--output", out, "--seed", "3", *TINY, *args],
      cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      env=dict(os.environ, JAX_PLATFORMS="cpu"))


def _wait_for(stream, text):
  lines = []
  for line in stream:
    lines.append(line)
    if text in line:
      return lines
  raise AssertionError(f"never saw {text!r}: {''.join(lines)[-2000:]}")


def _check_resumes_to(capsys, out, run, want):
  status, _, err = run_cli(capsys, "train", "--resume", out)
  assert status == 0, err
  got = _params(out, run.train)
  assert int(got.iteration) == run.iterations
  for x, y in zip(jax.tree.leaves((want.params, want.opt_state)),
                  jax.tree.leaves((got.params, got.opt_state))):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.slow
def test_ctrl_c_on_a_training_process_once_and_twice(tmp_path, capsys):
  # pylint: disable=import-outside-toplevel
  from alphago_jax.cli import train as train_cli
  # Once: the child stops after the iteration running, saved, exit 0, and
  # says how to resume; the resume ends where an uninterrupted run does.
  run = _tiny_run(capsys, tmp_path, iterations=40, checkpoint_every=1000)
  train_cli.run_alphazero(run, str(tmp_path / "straight"), progress=False,
                          log=lambda line: None)
  want = _params(str(tmp_path / "straight"), run.train)
  out = str(tmp_path / "once")
  proc = _start_training(out, "--iterations", "40", "--checkpoint-every",
                         "1000")
  lines = _wait_for(proc.stdout, "iteration=1 ")
  proc.send_signal(signal.SIGINT)
  rest, err = proc.communicate(timeout=300)
  text = "".join(lines) + rest
  done = latest_step(os.path.join(out, "checkpoints"))
  assert proc.returncode == 0, err[-2000:]
  assert "SIGINT: stopping after the current step" in err
  assert f"continue with `alphago-jax train --resume {out}`" in text
  assert done is not None and 2 <= done < 40, done
  _check_resumes_to(capsys, out, run, want)
  # Twice, inside a long iteration: the second ends the child at once
  # (exit 128 + SIGINT); the checkpoint of iteration 1 is intact and
  # resumes to the uninterrupted result.
  run = dataclasses.replace(
      run, iterations=3, checkpoint_every=1,
      train=dataclasses.replace(run.train, gradient_steps=3000))
  train_cli.run_alphazero(run, str(tmp_path / "straight-long"),
                          progress=False, log=lambda line: None)
  want = _params(str(tmp_path / "straight-long"), run.train)
  out = str(tmp_path / "twice")
  proc = _start_training(out, "--iterations", "3", "--checkpoint-every",
                         "1", "--train.gradient-steps", "3000")
  _wait_for(proc.stdout, "iteration=1 ")
  ckpts = os.path.join(out, "checkpoints")
  deadline = time.monotonic() + 60
  while latest_step(ckpts) != 1 and time.monotonic() < deadline:
    time.sleep(0.01)  # Iteration 1 is saved; iteration 2 runs.
  proc.send_signal(signal.SIGINT)
  _wait_for(proc.stderr, "stopping after the current step")
  proc.send_signal(signal.SIGINT)
  _, err = proc.communicate(timeout=60)
  assert proc.returncode == 128 + signal.SIGINT, err[-2000:]
  assert "SIGINT again: stopping now" in err
  assert latest_step(os.path.join(out, "checkpoints")) == 1
  with capsys.disabled():
    print(f"\nCtrl-C once: checkpoint {done} of 40; twice: exit "
          f"{proc.returncode}, checkpoint 1 of 3")
  _check_resumes_to(capsys, out, run, want)


PRO = os.path.join(os.environ.get("ALPHAGO_JAX_DATA", os.path.join(
    ROOT, os.pardir, "shared", "data")), "pro-small-boards")


def test_sl_policy_stage_trains_and_resumes(tmp_path, capsys):
  if not os.path.isdir(PRO):
    pytest.skip(f"game records not found at {PRO} (set ALPHAGO_JAX_DATA)")
  out, cache = str(tmp_path / "sl"), str(tmp_path / "cache")
  status, stdout, err = run_cli(
      capsys, "train", "sl-policy", "--data", PRO, "--size", "9",
      "--min-rank", "none", "--limit", "300", "--layers", "3", "--filters",
      "8", "--batch-size", "32", "--total-samples", "320", "--log-every",
      "5", "--eval-every", "10", "--output", out, "--cache", cache)
  assert status == 0, err
  assert "RESULT step=10 samples=320 " in stdout
  stage, options, _ = rundir.read_stage(out, stages.options_types())
  # The preset's values resolved into the record (cpu: Adam, plain trunk).
  assert stage == "sl-policy" and options.filters == 8
  assert (options.optimizer, options.trunk) == ("adam", "plain")
  records = training.read_metrics(os.path.join(out, "metrics.jsonl"))
  assert [r["iteration"] for r in records] == [5, 10]
  assert "eval_top1" in records[-1]
  status, stdout, err = run_cli(capsys, "train", "--resume", out)
  assert status == 0 and "resumed from step 10" in stdout, (stdout, err)
  status, _, err = run_cli(capsys, "train", "sl-policy", "--output",
                           str(tmp_path / "x"))
  assert status == 2 and "--data" in err


def test_sl_policy_runs_of_the_nested_form_are_refused_by_name(tmp_path,
                                                               capsys):
  # `train sl-policy` once took --sl.* flags and wrote a config.json of
  # its own form: such a run is refused, naming the command to use.
  (tmp_path / "config.json").write_text(json.dumps({
      "format": 1, "command": "train", "stage": "sl-policy",
      "version": "0", "git_commit": None, "config": {"data": "d"}}))
  for flags in (["--from-run", str(tmp_path), "--output",
                 str(tmp_path / "x")], ["--resume", str(tmp_path)]):
    status, _, err = run_cli(capsys, "train", *flags, "--dry-run")
    assert status == 2 and "alphago-jax train sl-policy --data" in err, err
    assert "cannot be repeated exactly" in err


# --- fuzz: hand-edited config.json ----------------------------------------


def _paths(tree, prefix=()):
  """Every (path, value) of a JSON tree, containers included."""
  yield prefix, tree
  if isinstance(tree, dict):
    for k, v in tree.items():
      yield from _paths(v, prefix + (k,))
  elif isinstance(tree, list):
    for i, v in enumerate(tree):
      yield from _paths(v, prefix + (i,))


def _set(tree, path, value):
  for k in path[:-1]:
    tree = tree[k]
  tree[path[-1]] = value


def _delete(tree, path):
  for k in path[:-1]:
    tree = tree[k]
  del tree[path[-1]]


REPLACEMENTS = [None, True, False, 0, -1, 1, 2, 7, 10**12, 0.5, -0.0, 1e308,
                "1", "", "gumbel", "puct", "sgd", [], [1], [3, 2], {},
                {"a": 1}, 3.7, 9, 82, 83]


def _mutate(record, rng):
  """One random edit of a config.json record: (kind, data as text)."""
  data = copy.deepcopy(record)
  kind = rng.choice(["replace", "replace", "replace", "delete", "add",
                     "text"])
  paths = [p for p, _ in _paths(data) if p]
  path = rng.choice(paths)
  if kind == "replace":
    _set(data, path, copy.deepcopy(rng.choice(REPLACEMENTS)))
  elif kind == "delete":
    if isinstance(path[-1], int):
      kind = "replace"
      _set(data, path, "x")
    else:
      _delete(data, path)
  elif kind == "add":
    parent = data
    for k in path[:-1]:
      parent = parent[k]
    if isinstance(parent, dict):
      parent[rng.choice(["extra", "num_game", "Seed", "seed "])] = 1
    else:
      parent.append(1)
  text = json.dumps(data, indent=1)
  if kind == "text":  # damage the bytes themselves
    i = rng.randrange(len(text))
    text = rng.choice([text[:i], text[:i] + text[i + 1:],
                       text[:i] + rng.choice("{}[],:\"0aN-") + text[i:],
                       text.replace("0.", "NaN", 1),
                       text.replace("1", "Infinity", 1)])
  return kind, text


def _normal(value):
  """JSON values compared as the run sees them (1 and 1.0 alike)."""
  if isinstance(value, dict):
    return {k: _normal(v) for k, v in value.items()}
  if isinstance(value, list):
    return [_normal(v) for v in value]
  if isinstance(value, (int, float)) and not isinstance(value, bool):
    return float(value)
  return value


ADDED = set(search.AlphaZeroSearchConfig.ADDED_FIELDS)


def _as_written(shown, written):
  """`shown` without the fields `written` lacks that a config class lists
  in `ADDED_FIELDS` (the reader fills those in)."""
  if isinstance(shown, dict) and isinstance(written, dict):
    return {k: _as_written(v, written.get(k)) for k, v in shown.items()
            if k in written or k not in ADDED}
  return shown

def test_fuzz_mutated_config_json_is_rejected_by_name_or_run_as_written(
    tmp_path, capsys):
  source = tmp_path / "run"
  source.mkdir()
  tiny = config_codec.from_json(AlphaZeroRun, json.loads(run_cli(
      capsys, "train", "tictactoe", "--output", "x", "--dry-run",
      *TINY)[1])["config"])
  original = rundir.write_config(str(source), command="train",
                                 stage="alphazero", config=tiny)
  rng = random.Random(0)
  tried = accepted = 0
  kinds = {}
  for i in range(400):
    kind, text = _mutate(original, rng)
    (source / "config.json").write_text(text)
    status, out, err = run_cli(capsys, "train", "--from-run", str(source),
                               "--output", str(tmp_path / f"new{i}"),
                               "--dry-run")
    tried += 1
    kinds[kind] = kinds.get(kind, 0) + 1
    assert "Traceback" not in err, (text, err)
    if status == 0:
      # Accepted: the run uses exactly the values the file shows.
      accepted += 1
      shown = json.loads(out)["config"]
      written = json.loads(text)["config"]
      # ...and a field a class gained later, deleted, at its recorded value.
      assert _normal(_as_written(shown, written)) == _normal(written), (
          text, shown)
    else:
      assert status == 2 and err.startswith("error:"), (text, err)
      assert str(source / "config.json") in err
  with capsys.disabled():
    print(f"\nmutated config.json inputs tried: {tried} ({kinds}); "
          f"accepted as written: {accepted}; rejected with a named error: "
          f"{tried - accepted}")
  assert tried == 400 and 0 < accepted < tried // 2


def test_rejections_name_the_field(tmp_path):
  run = alphazero_defaults("tictactoe")
  record = rundir.write_config(str(tmp_path), command="train",
                               stage="alphazero", config=run)
  cases = [
      (("config", "train", "search", "num_simulations"), "many",
       "config.train.search.num_simulations: must be an integer"),
      (("config", "train", "num_games"), True,
       "config.train.num_games: must be an integer"),
      (("config", "train", "search", "temperature_moves"), -2,
       "config.train.search.temperature_moves: temperature_moves must be"),
      (("config", "train", "learning_rate"), -1.0,
       "config.train.learning_rate: learning_rate must be"),
      (("config", "train", "learning_rate"), 1e400,
       "not a valid config file: Infinity is not valid JSON"),
      (("config", "train", "model"), [1],
       "config.train.model: must be an object with the fields of "
       "ResNetConfig"),
      (("config", "hours"), "3", "config.hours: must be a number"),
      (("config", "seed"), 1.5, "config.seed: must be an integer"),
      (("config", "train", "lr_boundaries"), [3, 2],
       "config.train.lr_boundaries: lr_boundaries must be"),
      (("stage",), "alphago", "stage: must be one of"),
  ]
  for path, value, message in cases:
    data = copy.deepcopy(record)
    _set(data, path, value)
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(RunConfigError) as e:
      rundir.read_config(str(tmp_path), STAGES)
    assert message in str(e.value), (path, str(e.value))
  data = copy.deepcopy(record)
  del data["config"]["train"]["model"]["channels"]
  (tmp_path / "config.json").write_text(json.dumps(data))
  with pytest.raises(RunConfigError,
                     match=r"config\.train\.model\.channels: missing"):
    rundir.read_config(str(tmp_path), STAGES)


def test_command_json_keeps_what_a_run_computes_and_is_read_strictly(
    tmp_path, capsys):
  assert rundir.without_call_flags(
      ["--quick", "--output", "a b", "--resume", "--hours=2", "--lr", "0.1",
       "--hours", "3", "--output=x", "--data", "d"]) == [
           "--quick", "--lr", "0.1", "--data", "d"]
  rundir.write_command(str(tmp_path), script="rl_policy.py",
                       argv=["--size", "9", "--output", "elsewhere"])
  # Written once: a later call (a resume) keeps the record of the first.
  rundir.write_command(str(tmp_path), script="rl_policy.py",
                       argv=["--size", "19"])
  scripts = {"rl_policy.py"}
  script, argv, record = rundir.read_command(str(tmp_path), scripts)
  assert (script, argv) == ("rl_policy.py", ["--size", "9"])
  assert record["git_commit"] == rundir.git_commit()
  status, out, _ = run_cli(capsys, "train", "--resume", str(tmp_path),
                           "--dry-run")
  assert status == 0 and out.split() == [
      "python", "experiments/alphago/rl_policy.py", "--size", "9",
      "--output", str(tmp_path), "--resume"]
  for flags, message in (
      (["--resume", str(tmp_path), "--iterations", "3"], "--iterations"),
      (["--from-run", str(tmp_path)], "--from-run needs --output"),
      (["--from-run", str(tmp_path), "--output", str(tmp_path)],
       "--output must differ"),
      (["--from-run", str(tmp_path), "--output", "x", "--hours", "1"],
       "--hours is for --resume")):
    status, _, err = run_cli(capsys, "train", *flags, "--dry-run")
    assert status == 2 and message in err, (flags, err)
  path = tmp_path / rundir.COMMAND_FILE
  for change, message in (
      ({"script": "../../evil.py"}, "script: must be one of"),
      ({"argv": "--size 9"}, "argv: must be a list of strings"),
      ({"argv": ["--size", 9]}, "argv: must be a list of strings"),
      ({"format": 2}, "format: must be 1"),
      ({"extra": 1}, "unknown fields ['extra']")):
    path.write_text(json.dumps(dict(record, **change)))
    with pytest.raises(RunConfigError, match=re.escape(message)):
      rundir.read_command(str(tmp_path), scripts)
  path.write_text('{"format": 1, "scr')
  with pytest.raises(RunConfigError, match="not readable JSON"):
    rundir.read_command(str(tmp_path), scripts)


def test_command_line_errors_show_no_traceback(tmp_path):
  # The installed entry point's path: a fresh process, a damaged file.
  (tmp_path / "config.json").write_text('{"format": 1, "command": "tr')
  proc = subprocess.run(
      [sys.executable, "-m", "alphago_jax.cli", "train", "--from-run",
       str(tmp_path), "--output", str(tmp_path / "new")],
      cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
  assert proc.returncode == 2
  assert proc.stderr.startswith("error:") and "not a valid config file" in (
      proc.stderr) and "Traceback" not in proc.stderr, proc.stderr


def test_gtp_is_dispatched_to_the_engine(monkeypatch, capsys):
  import types
  calls = []
  fake = types.ModuleType("alphago_jax.gtp.engine")
  fake.main = lambda argv: calls.append(argv) or 0
  monkeypatch.setitem(sys.modules, "alphago_jax.gtp.engine", fake)
  assert cli_main(["gtp", "--preset", "x", "--level", "3"]) == 0
  assert calls == [["--preset", "x", "--level", "3"]]


def test_gtp_reaches_the_real_engine(capsys):
  status, out, _ = run_cli(capsys, "gtp", "--list-presets")
  assert status == 0 and "az-9x9" in out


def test_arena_matches_two_agents(capsys):
  status, out, err = run_cli(capsys, "arena", "solver", "random",
                             "--games-per-colour", "8", "--json")
  assert status == 0, err
  result = json.loads(out.strip().splitlines()[-1])
  # The perfect player never loses (it wins or draws every game).
  assert result["losses"] == 0 and result["wins"] + result["draws"] == 16
  assert result["score"] == (result["wins"] + result["draws"] / 2) / 16
  status, _, err = run_cli(capsys, "arena", "uct:0", "random")
  assert status == 2 and "uct:0" in err


def test_train_runs_each_later_alphago_stage_command(capsys):
  # `alphago-jax train STAGE` is the stage's own command: its --help (the
  # command's options, under the subcommand's name) for each; a bad flag
  # is the command's error.
  from alphago_jax.cli import stages  # pylint: disable=import-outside-toplevel
  for stage in stages.names():
    assert cli_main(["train", stage, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: alphago-jax train {stage} "), out[:200]
    assert "--output" in out
  assert cli_main(["train", "value-net", "--output", "x",
                  "--no-such-flag"]) == 2
  assert "--no-such-flag" in capsys.readouterr().err


# --- selfplay and reproduce, small real runs ---------------------------------

TTT_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8),
             (0, 4, 8), (2, 4, 6)]


def _ttt_winner(moves):
  """Tic-tac-toe replayed here: the winner (0 moved first) or None; every
  move on an empty cell, none after a line."""
  board = [None] * 9
  for i, cell in enumerate(moves):
    assert board[cell] is None, moves
    board[cell] = i % 2
    for line in TTT_LINES:
      if all(board[c] == i % 2 for c in line):
        assert i == len(moves) - 1, f"moves after a win: {moves}"
        return i % 2
  assert len(moves) == 9, f"stopped before the end: {moves}"
  return None


def _tromp_taylor(board, size):
  """Area score `black - white` of an sgfmill board: stones, plus empty
  regions that reach only one colour."""
  score, seen = 0, set()
  for r in range(size):
    for c in range(size):
      colour = board.get(r, c)
      if colour is not None:
        score += 1 if colour == "b" else -1
      elif (r, c) not in seen:
        region, borders, stack = 0, set(), [(r, c)]
        seen.add((r, c))
        while stack:
          p, q = stack.pop()
          region += 1
          for n in ((p + 1, q), (p - 1, q), (p, q + 1), (p, q - 1)):
            if 0 <= n[0] < size and 0 <= n[1] < size:
              v = board.get(*n)
              if v is None and n not in seen:
                seen.add(n)
                stack.append(n)
              elif v is not None:
                borders.add(v)
        if borders == {"b"}:
          score += region
        elif borders == {"w"}:
          score -= region
  return score


def _replay_go(moves, size):
  """GTP vertices replayed on sgfmill's board (each on an empty point, not
  suicide, not a simple-ko retake); the final board."""
  from sgfmill import boards  # pylint: disable=import-outside-toplevel
  board, ko = boards.Board(size), None
  for i, vertex in enumerate(moves):
    if vertex.lower() == "pass":
      ko = None
      continue
    col = "ABCDEFGHJKLMNOPQRST".index(vertex[0].upper())
    point = (int(vertex[1:]) - 1, col)
    assert board.get(*point) is None and point != ko, (i, vertex)
    ko = board.play(*point, "bw"[i % 2])
    assert board.get(*point) is not None, f"suicide at move {i + 1}"
  return board


def test_selfplay_writes_games_that_replay_to_their_results(tmp_path,
                                                            capsys):
  out = tmp_path / "ttt"
  status, stdout, err = run_cli(capsys, "selfplay", "--agent", "random",
                                "--game", "tictactoe", "--games", "12",
                                "--seed", "3", "--output", str(out))
  assert status == 0, err
  games = [json.loads(l) for l in (out / "games.jsonl").read_text()
           .splitlines()]
  assert [g["game"] for g in games] == list(range(12))
  for g in games:
    assert g["winner"] == _ttt_winner(g["moves"]), g
    assert g["length"] == len(g["moves"])
  assert {g["winner"] for g in games} >= {0, 1}  # both sides won some
  total = sum(g["length"] for g in games)
  assert stdout.startswith(f"12 games, {total} moves in "), stdout

  out = tmp_path / "go9"
  status, stdout, err = run_cli(capsys, "selfplay", "--agent", "random",
                                "--game", "go9", "--games", "2",
                                "--output", str(out))
  assert status == 0, err
  games = [json.loads(l) for l in (out / "games.jsonl").read_text()
           .splitlines()]
  assert len(games) == 2 and sorted(os.listdir(out)) == [
      "game_0000.sgf", "game_0001.sgf", "games.jsonl"]
  from alphago_jax.games import sgf  # pylint: disable=import-outside-toplevel
  for g in games:
    record = sgf.parse_sgf((out / f"game_{g['game']:04d}.sgf").read_bytes())
    assert len(record.moves) == g["length"] == len(g["moves"])
    assert [c for c, _ in record.moves] == [i % 2 for i in range(
        g["length"])]
    board = _replay_go(g["moves"], 9)
    score = _tromp_taylor(board, 9) - 7.5
    assert g["score"] == score, g
    assert record.result == sgf.result_string(score)
    assert g["winner"] == (0 if score > 0 else 1)
  assert stdout.startswith(
      f"2 games, {sum(g['length'] for g in games)} moves in "), stdout


def test_reproduce_mcts_vs_random_small_table(capsys):
  from alphago_jax.core import stats  # pylint: disable=import-outside-toplevel
  status, stdout, err = run_cli(capsys, "reproduce", "mcts-vs-random",
                                "--games", "20", "--simulations", "0", "8",
                                "--seed", "1")
  assert status in (0, 1), err
  assert stdout.startswith("UCT (X, first) vs random (O): 20 games per "
                           "setting")
  rows = [l.split(" | ") for l in stdout.splitlines()
          if l.startswith("| ") and l[2].isdigit()]
  assert [r[0] for r in rows] == ["| 0 (pure random)", "| 8"]
  for row in rows:
    counts = []
    for cell in row[1:4]:
      m = re.fullmatch(r"([\d.]+)% \[([\d.]+), ([\d.]+)\]", cell)
      rate, lo, hi = (float(x) / 100 for x in m.groups())
      k = round(rate * 20)
      assert abs(rate - k / 20) < 1e-9, cell  # a count of 20 games
      want = stats.wilson_interval(k, 20)
      assert abs(lo - want[0]) < 6e-4 and abs(hi - want[1]) < 6e-4, cell
      counts.append(k)
    assert sum(counts) == 20, row
  # Only budgets the seed published are compared; the exit status says
  # whether all of those agreed.
  assert rows[0][5] in ("yes", "NO") and rows[1][4:6] == ["-", "-"]
  assert status == (0 if rows[0][5] == "yes" else 1)


# --- arena against GTP engines -----------------------------------------------

def _gnugo_or_skip():
  from alphago_jax import engines  # pylint: disable=import-outside-toplevel
  path = engines.find_gnugo()
  if path is None:
    pytest.skip("GNU Go is not installed (apt-get install gnugo)")
  return path


def _check_engine_games(capsys, *argv):
  """Runs `arena ... --json` and checks each listed game here: its moves
  replay legally on sgfmill's board to its score, its result and winner
  follow, and A's totals add up. Returns the JSON line."""
  from alphago_jax.games import sgf  # pylint: disable=import-outside-toplevel
  status, out, err = run_cli(capsys, "arena", *argv, "--game", "go9",
                             "--json")
  assert status == 0, err
  line = json.loads(out.strip().splitlines()[-1])
  games = line["games"]
  tally = [0, 0, 0]
  for g in games:
    assert g["reason"] in ("score", "move cap", "resign"), g  # no forfeit
    board = _replay_go(g["moves"], 9)
    assert g["score"] == _tromp_taylor(board, 9) - 7.5, g
    if g["reason"] == "resign":
      assert g["result"] == "BW"[g["winner"]] + "+R"
    else:
      assert g["result"] == sgf.result_string(g["score"])
      assert g["winner"] == (0 if g["score"] > 0 else 1)
    a_colour = 0 if g["a_black"] else 1
    assert (g["black"], g["white"]) == (tuple(line["agents"]) if g["a_black"]
                                        else tuple(line["agents"][::-1]))
    tally[0 if g["winner"] == a_colour else 2] += 1
  assert [line["wins"], line["draws"], line["losses"]] == tally
  assert sorted(g["a_black"] for g in games) == [False, True]
  for i, g in enumerate(games):
    assert (f"  game {i + 1}: black {g['black']}, white {g['white']}: "
            f"{g['result']} ") in out
  return line


PASSER = """
import sys
for line in sys.stdin:
  words = line.split()
  cid = words.pop(0) if words and words[0].isdigit() else ""
  command = words[0] if words else ""
  answer = {"genmove": "pass", "name": "passer"}.get(command, "")
  print(f"={cid} {answer}\\n", flush=True)
  if command == "quit":
    break
"""


def _passer(tmp_path):
  """`gtp:COMMAND` of a GTP engine that passes every move: in its games,
  every move of its colour must be a pass, which says who played which
  colour."""
  import shlex  # pylint: disable=import-outside-toplevel
  script = tmp_path / "passer.py"
  script.write_text(PASSER)
  return f"gtp:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def _check_passes(line, passer_is_a):
  for g in line["games"]:
    passer_colour = 0 if g["a_black"] == passer_is_a else 1
    assert all(v == "pass" for v in g["moves"][passer_colour::2]), g


def test_arena_plays_an_agent_against_gnugo_and_any_gtp_engine(capsys,
                                                               tmp_path):
  _gnugo_or_skip()
  # GNU Go at level 0, 2 games on 9x9 against random moves (gnugo_match
  # also compares GNU Go's final boards with ours).
  line = _check_engine_games(capsys, "random", "gnugo:0",
                             "--games-per-colour", "1", "--max-moves", "40")
  assert line["agents"] == ["random", "gnugo:0"]
  # Any GTP command, here as A.
  line = _check_engine_games(capsys, _passer(tmp_path), "random",
                             "--games-per-colour", "1", "--max-moves", "20")
  _check_passes(line, passer_is_a=True)


def test_arena_plays_two_gtp_engines_through_the_referee(capsys, tmp_path):
  _gnugo_or_skip()
  line = _check_engine_games(capsys, "gnugo:0", _passer(tmp_path),
                             "--games-per-colour", "1", "--max-moves", "15")
  _check_passes(line, passer_is_a=False)


def test_arena_gtp_engine_errors_name_the_problem(capsys, monkeypatch):
  from alphago_jax.engines import gnugo_player  # pylint: disable=import-outside-toplevel
  for argv, words in [
      (["random", "gnugo:1"], "add --game go9"),
      (["random", "gnugo:11", "--game", "go9"], "level must be 0..10"),
      (["random", "gtp:", "--game", "go9"], "name the engine's command"),
      (["random", "gtp:no-such-engine --mode gtp", "--game", "go9"],
       "'no-such-engine' not found"),
      (["random", "gtp:\"unclosed", "--game", "go9"], "unreadable command")]:
    status, _, err = run_cli(capsys, "arena", *argv)
    assert status == 2 and err.startswith("error:") and words in err, (
        argv, err)
  status, _, err = run_cli(capsys, "selfplay", "--agent", "gnugo:1",
                           "--game", "go9", "--output", "unused")
  assert status == 2 and "plays only in `alphago-jax arena`" in err
  monkeypatch.setattr(gnugo_player, "find_gnugo", lambda: None)
  status, _, err = run_cli(capsys, "arena", "random", "gnugo", "--game",
                           "go9")
  assert status == 2 and "GNU Go is not installed" in err, err
  assert "apt-get install gnugo" in err


# --- --from-run of experiments/alphago/ runs, today's and older ones ---------

# experiments/alphago/sl_policy.py's run repeated by `train --from-run` and
# `--resume`, and its format-1 command.json: in one process with the
# script's other commands, tests/test_supervised.py
# (test_sl_policy_and_eval_policy_commands).


@pytest.mark.parametrize("name,writer", [
    ("sl9", "`python experiments/alphago/sl_policy.py`"),
    ("sl_policy", "`python experiments/alphago/sl_policy.py`"),
    ("rl9", "`python experiments/alphago/rl_policy.py`"),
    ("value9", "`python experiments/alphago/value_net.py`"),
    ("rollout_policy", "`python experiments/alphago/rollout_policy.py`"),
    ("go9", "the network architecture that the first AlphaZero runs")])
def test_runs_older_than_from_run_say_which_command_to_use(capsys, tmp_path,
                                                           name, writer):
  # The committed runs predate command.json: --from-run and --resume must
  # refuse them, naming their command, rather than guess a repeat.
  source = os.path.join(ROOT, "checkpoints", name)
  if not os.path.exists(os.path.join(source, "config.json")):
    pytest.skip(f"{source} is not in this checkout")
  path = tmp_path / name
  path.mkdir()
  (path / "config.json").write_bytes(
      open(os.path.join(source, "config.json"), "rb").read())
  for flags in (["--from-run", str(path), "--output", str(tmp_path / "x")],
                ["--resume", str(path)]):
    status, out, err = run_cli(capsys, "train", *flags, "--dry-run")
    assert status == 2 and out == "", err
    assert err.startswith(f"error: {path / 'config.json'}: ") and (
        writer in err) and "cannot be repeated exactly" in err, err
  assert not os.path.exists(tmp_path / "x")


def test_top_level_examples_cover_every_command_with_flags_it_has(capsys):
  """Each subcommand has an example in `alphago-jax --help`, and every flag
  an example passes is one its own help lists (a misspelt or renamed flag
  fails here)."""
  import importlib  # pylint: disable=import-outside-toplevel
  cli_main = importlib.import_module("alphago_jax.cli.main")
  examples = [l.split()[1:] for l in cli_main.USAGE.splitlines()
              if l.startswith("  alphago-jax ")]
  assert {e[0] for e in examples} == set(cli_main.COMMANDS)
  for command, *args in examples:
    flags = [a for a in args if a.startswith("--")]
    if not flags:
      continue
    sub = [args[0]] if command == "train" and not args[0].startswith(
        "--") else []
    status, out, _ = run_cli(capsys, command, *sub, "--help")
    assert status == 0, (command, sub)
    for flag in flags:
      assert re.search(rf"{re.escape(flag)}(?![\w-])", out), (command, flag)
