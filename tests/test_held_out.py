"""Held out means held out: the training stages' learning curves read the
validation split (--monitor-split); the test split is left to the
evaluation scripts. Runs recorded before the option read as they ran
(the test split)."""

import dataclasses
import glob
import json
import os

import numpy as np
import pytest

from alphago_jax.cli import stages
from alphago_jax.cli.stages import rollout_policy, sl_policy, value_net
from alphago_jax.core import config_codec, rundir
from alphago_jax.data import run_dataset

from helpers import ROOT
from record_files import PRO, need

MONITORING = ("sl-policy", "rollout-policy", "value-net")


def _committed():
  found = []
  for path in sorted(glob.glob(os.path.join(ROOT, "checkpoints", "*",
                                            "command.json"))):
    with open(path) as f:
      if json.load(f).get("stage") in MONITORING:
        found.append(os.path.dirname(path))
  return found


def test_committed_runs_read_as_monitoring_the_test_split():
  runs = _committed()
  assert runs, "no committed run of a monitoring stage"
  for run in runs:
    stage, options, record = rundir.read_stage(run, stages.options_types())
    assert stage in MONITORING
    assert "monitor_split" not in record["options"], run
    assert options.monitor_split == "test", run


@pytest.mark.parametrize("options", [
    sl_policy.Options(data="d"), rollout_policy.Options(data="d"),
    value_net.Options(data="d")])
def test_new_runs_record_the_validation_split(options):
  assert options.monitor_split == "validation"
  written = config_codec.to_json(options)
  assert written["monitor_split"] == "validation"
  assert config_codec.from_json(type(options), written) == options
  older = {k: v for k, v in written.items() if k != "monitor_split"}
  assert config_codec.from_json(type(options), older).monitor_split == "test"
  with pytest.raises(config_codec.RunConfigError, match="monitor_split"):
    config_codec.from_json(type(options), dict(written, monitor_split="x"))


def _dataset(fractions=None):
  options = sl_policy.Options(data=PRO, size=9, min_rank="none",
                              fractions=fractions)
  return run_dataset.dataset_from_args(options, limit=300)


def _keys(cache, split, positions):
  """The game keys of `positions`, rows of `split` of `cache`."""
  games = cache.games(split)
  return {games[g]["key"] for g in np.unique(np.asarray(positions.game))}


def test_the_monitored_positions_are_the_validation_split(tmp_path):
  need(PRO)
  cache, train, monitored = stages.open_splits(
      PRO, str(tmp_path), _dataset(), "validation")
  validation, test = cache.split("validation"), cache.split("test")
  assert len(monitored) == len(validation) > 0
  np.testing.assert_array_equal(monitored.stones, validation.stones)
  np.testing.assert_array_equal(monitored.action, validation.action)
  held = _keys(cache, "validation", monitored)
  assert held == {g["key"] for g in cache.games("validation")}
  assert not held & _keys(cache, "test", test)
  assert not held & _keys(cache, "train", train)
  _, _, old = stages.open_splits(PRO, str(tmp_path), _dataset(), "test")
  np.testing.assert_array_equal(old.stones, test.stones)


def test_an_empty_validation_split_is_refused_by_name(tmp_path):
  need(PRO)
  with pytest.raises(stages.StageError,
                     match=r"validation split holds no position \(fractions "
                           r"0.5 0 0.5.*--fractions"):
    stages.open_splits(PRO, str(tmp_path), _dataset((0.5, 0.0, 0.5)),
                       "validation")


def test_value_data_validation_is_held_out_of_training_by_game(tmp_path):
  from alphago_jax.training import value_data as vd  # pylint: disable=import-outside-toplevel
  folder = tmp_path / "vd"
  folder.mkdir()
  config = vd.ValueDataConfig(board_size=5, test_fraction=0.2)
  (folder / "config.json").write_text(json.dumps(
      {"format": vd.FORMAT, "format_version": vd.FORMAT_VERSION,
       "config": config_codec.to_json(config)}))
  n = 2000
  train = vd.Positions(
      size=5, split="train", stones=np.zeros((n, 2, 4), np.uint8),
      recent=np.zeros((n,), np.int16), ply=np.zeros((n,), np.int16),
      ko=np.zeros((n,), np.int16), to_play=np.ones((n,), np.int8),
      action=np.zeros((n,), np.int16), outcome=np.ones((n,), np.int8),
      game=np.arange(n, dtype=np.int32) * 3)
  kept, held = vd.hold_out_validation(train, folder)
  assert len(kept) + len(held) == n
  assert not set(kept.game.tolist()) & set(held.game.tolist())
  # About test_fraction of all games: 0.25 of the train games.
  assert 0.2 * n < len(held) < 0.3 * n
  again_kept, again = vd.hold_out_validation(dataclasses.replace(
      train, **{f: a[: n // 2] for f, a in train.arrays().items()}), folder)
  assert set(again.game.tolist()) <= set(held.game.tolist())
  assert held.split == "validation" and kept.split == "train"
  del again_kept
