"""Result files (core.result_file): what a measuring command writes beside
its printed figures."""

import datetime
import json
import os
import shlex

import numpy as np
import pytest

from alphago_jax.core import result_file


def test_a_result_file_records_the_command_commit_and_date(tmp_path,
                                                           monkeypatch):
  monkeypatch.chdir(tmp_path)
  data = tmp_path / "data" / "kgs"
  path = tmp_path / "results" / "eval.json"
  before = datetime.datetime.now(datetime.timezone.utc).replace(
      microsecond=0)
  out = result_file.write_result(
      str(path), {"top1": 0.5, "top1_interval": [0.4, 0.6]},
      argv=["--data", str(data), "--output=" + str(path), "--limit", "7"],
      script=str(tmp_path / "eval.py"))
  assert json.loads(path.read_text()) == out
  assert out["top1"] == 0.5 and out["top1_interval"] == [0.4, 0.6]
  # Absolute paths are written relative to the working directory.
  assert shlex.split(out["command"]) == [
      "python", "eval.py", "--data", os.path.join("data", "kgs"),
      "--output=" + os.path.join("results", "eval.json"), "--limit", "7"]
  assert str(tmp_path) not in path.read_text()
  assert out["commit"] is None or len(out["commit"]) == 40
  date = datetime.datetime.fromisoformat(out["date"])
  assert before <= date <= datetime.datetime.now(datetime.timezone.utc)
  assert os.listdir(tmp_path / "results") == ["eval.json"]


@pytest.mark.parametrize("record, match", [
    ({"commit": "x"}, "written by write_result"),
    ({"mse": float("nan")}, "Out of range float"),
    ({"weights": np.zeros(2)}, "not JSON serializable")])
def test_a_bad_record_is_refused_and_the_old_file_kept(tmp_path, record,
                                                       match):
  path = tmp_path / "r.json"
  path.write_text("{}\n")
  with pytest.raises(ValueError, match=match):
    result_file.write_result(str(path), record, argv=[], script="x.py")
  assert path.read_text() == "{}\n" and os.listdir(tmp_path) == ["r.json"]


def test_the_variables_hash_is_of_the_values_not_their_container():
  a = {"params": {"conv": {"kernel": np.arange(6.0).reshape(2, 3),
                           "bias": np.zeros(3, np.float32)}}}
  b = {"params": {"conv": {"bias": np.zeros(3, np.float32),
                           "kernel": np.arange(6.0).reshape(2, 3)}}}
  h = result_file.variables_sha256(a)
  assert h == result_file.variables_sha256(b) and len(h) == 64
  changed = {"params": {"conv": {"kernel": np.arange(6.0).reshape(2, 3),
                                 "bias": np.array([0, 0, 1e-7],
                                                  np.float32)}}}
  assert result_file.variables_sha256(changed) != h
  reshaped = {"params": {"conv": {"kernel": np.arange(6.0).reshape(3, 2),
                                  "bias": np.zeros(3, np.float32)}}}
  assert result_file.variables_sha256(reshaped) != h
  retyped = {"params": {"conv": {"kernel": np.arange(6.0).reshape(2, 3),
                                 "bias": np.zeros(3, np.float64)}}}
  assert result_file.variables_sha256(retyped) != h
