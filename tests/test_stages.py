"""The later AlphaGo stages as typed commands (`alphago_jax.cli.stages`):
help with examples, errors naming the flag, and command.json records of
every resolved option that `train --from-run` repeats and reads strictly."""

import dataclasses
import json
import os

import pytest

from alphago_jax.cli import stages
from alphago_jax.core import rundir
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.training import read_metrics
from helpers import ROOT, run_cli, run_mains

CLI = os.path.join(ROOT, "alphago_jax", "cli", "main.py")
EXPERIMENTS = os.path.join(ROOT, "experiments", "alphago")
# The options each stage requires.
REQUIRED = {"rollout-policy": {"data": "games"},
            "sl-policy": {"data": "games"}}


@pytest.mark.parametrize("stage", sorted(stages.names()))
def test_stage_help_shows_options_and_examples(capsys, stage):
  status, out, _ = run_cli(capsys, "train", stage, "--help")
  assert status == 0
  assert "examples:" in out and f"alphago-jax train {stage} " in out
  for field in dataclasses.fields(stages.load(stage).Options):
    assert stages.flag(field.name) in out, (stage, field.name)


@pytest.mark.parametrize("stage,flags,named", [
    ("value-net", ["--batch-size", "0"], "--batch-size: batch_size"),
    ("value-net", ["--data", "a", "--kgs", "b"], "--data: "),
    ("value-net", ["--hours", "0"], "hours must be a finite number > 0"),
    ("rollout-policy", ["--data", "d", "--pattern-bits", "0"],
     "--pattern-bits: pattern_bits"),
    ("rollout-policy", ["--data", "d", "--fractions", "0.9", "0.1"],
     "--fractions"),
    ("rl-policy", ["--games", "3"], "--games: games must be even"),
    ("value-data", ["--test-fraction", "1"], "--test-fraction: test_frac"),
    ("gnugo-games", ["--chunk-size", "0"], "--chunk-size: chunk_size"),
    ("chain-9x9", ["--workers", "0"], "--workers: workers"),
    ("chain-9x9", ["--stop-after", "nope"], "--stop-after"),
    ("gnugo-games", ["--base-seed", "0"], "--base-seed: base_seed"),
    ("rl-policy", ["--optimizer", "rmsprop"], "--optimizer"),
    ("sl-policy", ["--data", "d", "--min-ply", "-1"], "--min-ply: min_ply"),
    ("sl-policy", ["--data", "d", "--process-id", "-1"],
     "process_id must be an integer >= 0"),
    ("sl-policy", ["--data", "d", "--trunk", "dense"], "--trunk"),
])
def test_a_bad_value_names_its_flag(capsys, stage, flags, named):
  status, _, err = run_cli(capsys, "train", stage, "--output", "x", *flags)
  assert status == 2 and named in err, err


def _record(tmp_path, stage, options):
  stages.record(str(tmp_path), stage, options)
  path = tmp_path / rundir.COMMAND_FILE
  return path, json.loads(path.read_text())


@pytest.mark.parametrize("stage", sorted(stages.names()))
def test_records_are_read_strictly_naming_the_field(tmp_path, stage):
  options = stages.load(stage).Options
  names = [f.name for f in dataclasses.fields(options)]
  flag = "quick" if "quick" in names else "quiet"
  default = options(**{flag: True}, **REQUIRED.get(stage, {})).resolved()
  path, record = _record(tmp_path, stage, default)
  # Every field is recorded, but for those left out at their default
  # (`config_codec.omit_at_default`: options added later, recorded only
  # when given, so older records stay as they were).
  fields = {f.name: f for f in dataclasses.fields(options)}
  missing = set(fields) - set(record["options"])
  assert set(record["options"]) <= set(fields)
  assert all(fields[n].metadata and getattr(default, n) == fields[n].default
             for n in missing), missing
  types = stages.options_types()
  assert rundir.read_stage(str(tmp_path), types)[1] == default
  first = dataclasses.fields(options)[0].name
  for change, message in (
      ({"options": dict(record["options"], bogus=1)},
       "options.bogus: unknown field"),
      ({"options": {k: v for k, v in record["options"].items()
                    if k != first}}, f"options.{first}: missing"),
      ({"options": dict(record["options"], **{flag: 1})},
       f"options.{flag}: must be true or false"),
      ({"stage": "nope"}, "stage: must be one of"),
      ({"extra": 1}, "extra: unknown field"),
      ({"format": 3}, "format: must be 2")):
    path.write_text(json.dumps(dict(record, **change)))
    with pytest.raises(RunConfigError, match=message):
      rundir.read_stage(str(tmp_path), types)


def test_sl_policy_options_match_the_library_and_resolve_once():
  # The flags' choices are the library's, and the record's resolved
  # options build the network and schedule the unresolved ones did.
  from alphago_jax.models import policy  # pylint: disable=import-outside-toplevel
  from alphago_jax.training import supervised as sl  # pylint: disable=import-outside-toplevel
  module = stages.load("sl-policy")
  hints = {f.name: f.type for f in dataclasses.fields(module.Options)}
  assert all(f"'{o}'" in hints["optimizer"] for o in sl.OPTIMIZERS)
  assert all(f"'{t}'" in hints["trunk"] for t in policy.TRUNKS)
  for preset in ("cpu", "paper"):
    for quick in (False, True):
      options = module.Options(data="d", size=9, preset=preset, quick=quick)
      resolved = options.resolved()
      assert module.build_config(resolved) == module.build_config(options)
      assert resolved.resolved() == resolved
      assert resolved.limit == (300 if quick else None)
      assert resolved.ladders == (preset == "paper" and not quick)
  ladders = module.Options(data="d", size=9, ladders=True)
  assert module.build_config(ladders.resolved()).model.num_planes == 48


@pytest.fixture(scope="module")
def stage_runs(tmp_path_factory):
  """The value-data, value-net and rl-policy commands of the two tests
  below, run, repeated and resumed in one process (helpers.run_mains):
  {"value"|"rl": (folder, results)}. Two XLA devices, for value-net's
  data-parallel steps; a quick rl-policy run records and uses one."""
  value, rl = tmp_path_factory.mktemp("value"), tmp_path_factory.mktemp("rl")
  data, out, again = value / "data", value / "run", value / "again"
  value_data = os.path.join(EXPERIMENTS, "value_data.py")
  value_net = os.path.join(EXPERIMENTS, "value_net.py")
  rl_policy = os.path.join(EXPERIMENTS, "rl_policy.py")
  results = run_mains([
      (value_data, ["--quick", "--size", "5", "--output", data]),
      (CLI, ["train", "--from-run", data, "--output", value / "data2"]),
      (value_net, ["--quick", "--data", data, "--output", out,
                   "--eval-every", "10"]),
      (CLI, ["train", "--from-run", out, "--output", again]),
      (CLI, ["train", "--resume", again, "--hours", "0.5", "--dry-run"]),
      (rl_policy, ["--quick", "--iterations", "2", "--eval-games", "8",
                   "--sgf-games", "2", "--sgf-every", "1", "--output",
                   rl / "run"]),
      (CLI, ["train", "--from-run", rl / "run", "--output", rl / "again"]),
      (CLI, ["train", "--resume", rl / "again", "--iterations", "3"])],
      devices=2)
  return {"value": (value, results[:5]), "rl": (rl, results[5:])}


def test_value_data_and_net_from_run_repeat_their_resolved_options(
    stage_runs):
  tmp_path, (made, made_again, trained, repeated, resume) = stage_runs[
      "value"]
  data, out, again = tmp_path / "data", tmp_path / "run", tmp_path / "again"
  assert made.returncode == 0, made.stderr[-3000:]
  assert made_again.returncode == 0, made_again.stderr[-3000:]
  assert made.stdout.split()[-6:-2] == made_again.stdout.split()[-6:-2]
  chunks = sorted(f for f in os.listdir(data) if f.endswith(".npz"))
  assert chunks and all((data / f).read_bytes() == (
      tmp_path / "data2" / f).read_bytes() for f in chunks)
  options = json.loads((data / rundir.COMMAND_FILE).read_text())["options"]
  assert (options["games"], options["chunk_games"]) == (64, 32)
  assert trained.returncode == 0, trained.stderr[-3000:]
  assert repeated.returncode == 0, repeated.stderr[-3000:]
  result = trained.stdout.strip().splitlines()[-1]
  assert repeated.stdout.strip().splitlines()[-1] == result
  losses = [[r["mse"] for r in read_metrics(d / "metrics.jsonl")
             if "mse" in r] for d in (out, again)]
  assert losses[0] == losses[1] and len(losses[0]) > 1
  record = json.loads((out / rundir.COMMAND_FILE).read_text())
  assert record["stage"] == "value-net" and record["git_commit"] == (
      rundir.git_commit())
  # Every field, the defaults that depend on --quick resolved.
  assert record["options"]["log_every"] == 5
  assert record["options"]["eval_every"] == 10
  assert record["options"]["cpu_devices"] >= 1
  assert json.loads((again / rundir.COMMAND_FILE).read_text())[
      "options"] == record["options"]
  assert resume.returncode == 0, resume.stderr
  shown = json.loads(resume.stdout)
  assert shown["output"] == str(again)
  assert shown["options"] == record["options"]


def test_runs_recorded_as_command_lines_still_repeat(capsys, tmp_path):
  # command.json of format 1 (checkpoints/rollout9 has one): the command
  # line again, now run by the package's stage command.
  source = os.path.join(ROOT, "checkpoints", "rollout9")
  status, out, err = run_cli(capsys, "train", "--from-run", source,
                             "--output", tmp_path / "x", "--dry-run")
  assert status == 0, err
  assert out.startswith("python experiments/alphago/rollout_policy.py "
                        "--data ")
  argv = out.split()[2:]
  command = stages.parse("rollout-policy", argv, "x")
  assert command.options.fractions == (0.9, 0.05, 0.05)
  assert command.options.min_rank == "none" and command.options.min_ply == 4


def test_rl_policy_from_run_repeats_and_resume_extends(stage_runs):
  from alphago_jax.training import reinforce as rl  # pylint: disable=import-outside-toplevel
  options = stages.load("rl-policy").Options
  hints = {f.name: f.type for f in dataclasses.fields(options)}
  assert "sgd" in hints["optimizer"] and "mean" in hints["baseline"]
  assert rl.OPTIMIZERS == ("sgd", "adam") and rl.BASELINES == ("none", "mean")
  tmp_path, (trained, repeated, extended) = stage_runs["rl"]
  out, again = tmp_path / "run", tmp_path / "again"
  assert trained.returncode == 0, trained.stderr[-3000:]
  assert repeated.returncode == 0, repeated.stderr[-3000:]
  result = trained.stdout.strip().splitlines()[-1]
  assert result.startswith("RESULT iterations=2 ")
  assert repeated.stdout.strip().splitlines()[-1] == result
  configs = [json.loads((d / "config.json").read_text()) for d in (out, again)]
  assert configs[0]["config"] == configs[1]["config"]
  assert configs[0]["config"]["sgf_games"] == 2
  # Two self-play games of each iteration and the closing match's eight,
  # written alike by the repeated run.
  names = sorted(os.listdir(out / "games"))
  assert names == sorted(
      [f"iteration-{i:06d}-{k:04d}.sgf" for i in (0, 1) for k in (0, 1)]
      + [f"p-rho-vs-p-sigma-iteration-000002-{k:04d}.sgf" for k in range(8)])
  for name in names:
    assert (out / "games" / name).read_bytes() == (
        again / "games" / name).read_bytes(), name
  assert configs[0]["iterations"] == 2 and configs[1]["iterations"] == 3
  options = json.loads((out / rundir.COMMAND_FILE).read_text())["options"]
  assert (options["iterations"], options["games"], options["optimizer"],
          options["eval_games"], options["size"]) == (2, 32, "adam", 8, 5)
  assert options["cpu_devices"] == 1  # of the process's two
  assert extended.returncode == 0, extended.stderr[-3000:]
  assert extended.stdout.strip().splitlines()[-1].startswith(
      "RESULT iterations=3 ")


def test_gnugo_games_from_run_repeats_the_games(tmp_path):
  from alphago_jax import engines  # pylint: disable=import-outside-toplevel
  from alphago_jax.data import gnugo_games as gg  # pylint: disable=import-outside-toplevel
  if engines.find_gnugo() is None:
    pytest.skip("GNU Go is not installed (apt-get install gnugo)")
  out, again = tmp_path / "games", tmp_path / "again"
  made, repeated = run_mains([
      (os.path.join(EXPERIMENTS, "gnugo_games.py"),
       ["--output", out, "--games", "2", "--chunk-size", "2", "--levels",
        "1", "--opening-moves", "2", "--quiet"]),
      (CLI, ["train", "--from-run", out, "--output", again])])
  assert made.returncode == 0, made.stderr[-3000:]
  assert repeated.returncode == 0, repeated.stderr[-3000:]
  options = json.loads((out / rundir.COMMAND_FILE).read_text())["options"]
  assert options["levels"] == [1] and options["games"] == 2
  records = [gg.read_chunk(gg.chunk_path(str(d), 0)).records
             for d in (out, again)]
  assert records[0] == records[1] and len(records[0]) == 2
