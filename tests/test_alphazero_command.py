"""AlphaZero's command (`cli.stages.alphazero`) on the shared run files:
what a run directory holds decides between a new run and a refusal, with
no training (the runs themselves: tests/test_cli.py)."""

import json
import os

from alphago_jax.cli.configs import alphazero_defaults
from alphago_jax.cli.stages import alphazero
from alphago_jax.core import rundir

from helpers import ROOT, run_cli


def test_a_directory_with_only_config_json_holds_a_run(tmp_path, capsys):
  # A run killed before its first checkpoint still has its config.json:
  # a new run there is refused, naming the command that continues it.
  out = str(tmp_path / "run")
  rundir.write_config(out, command="train", stage="alphazero",
                      config=alphazero_defaults("tictactoe"))
  status, _, err = run_cli(capsys, "train", "tictactoe", "--output", out)
  assert status == 2
  assert err == (f"error: {out} already holds a run; continue it with "
                 f"`alphago-jax train --resume {out}` or choose another "
                 f"--output\n")
  # --dry-run writes nothing and checks nothing.
  status, shown, _ = run_cli(capsys, "train", "tictactoe", "--output", out,
                             "--dry-run")
  assert status == 0 and json.loads(shown)["stage"] == "alphazero"


def test_the_committed_partial_run_repeats_and_resumes_dry(tmp_path,
                                                           capsys):
  source = os.path.join(ROOT, "checkpoints", "az9-b4c64-partial")
  _, recorded, _ = rundir.read_config(source, {"alphazero": type(
      alphazero_defaults("go9"))})
  status, out, err = run_cli(capsys, "train", "--resume", source,
                             "--iterations", "7", "--dry-run")
  assert status == 0, err
  shown = json.loads(out)
  assert shown["config"]["iterations"] == 7
  status, out, err = run_cli(capsys, "train", "--from-run", source,
                             "--output", str(tmp_path / "again"),
                             "--dry-run")
  assert status == 0, err
  assert json.loads(out)["config"]["seed"] == recorded.seed
  assert not os.path.exists(tmp_path / "again")
  assert not alphazero.RunFiles(str(tmp_path / "again"), None).started
