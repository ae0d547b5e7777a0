"""Held out means held out: the training stages' learning curves read the
validation split (--monitor-split); the test split is left to the
evaluation scripts. Runs recorded before the option read as they ran
(the test split). A run records its dataset's identity and held-out games
(`data.held_out`), and a run started from another (--init-from) never
trains on that run's test games: refused, with their number, or when they
cannot be verified."""

import dataclasses
import glob
import hashlib
import json
import os

import numpy as np
import pytest

from alphago_jax.cli import stages
from alphago_jax.cli.stages import rollout_policy, sl_policy, value_net
from alphago_jax.core import config_codec, rundir
from alphago_jax import data as data_lib
from alphago_jax.data import held_out, records, run_dataset

from helpers import ROOT, run_cli
from record_files import PRO, PRO_ARCHIVE, need

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


# -- A run's dataset identity, and --init-from never leaking test games -------

def _cache(root, *, fractions=(0.95, 0.025, 0.025), seed=0):
  """The first 300 9x9 pro games, any rank, under `fractions` and `seed`."""
  need(PRO)
  return data_lib.prepare(PRO, str(root), data_lib.DatasetConfig(
      filters=data_lib.Filters(size=9, min_rank=None), fractions=fractions,
      seed=seed, limit=300))


def _parent(run_dir, cache, **config):
  """A run directory recording `cache`'s identity as the stages do."""
  entries, files = held_out.run_files(cache)
  os.makedirs(run_dir, exist_ok=True)
  for name, obj in files.items():
    stages.write_json(os.path.join(run_dir, name), obj)
  stages.write_json(os.path.join(run_dir, "config.json"),
                    dict(config, **entries))
  return str(run_dir)


def _no_log(line):
  del line


def test_the_identity_names_the_data_filters_split_and_held_out_games(
    tmp_path):
  cache = _cache(tmp_path, fractions=(0.8, 0.1, 0.1), seed=3)
  identity, games = held_out.identity_of(cache, min_ply=4)
  assert [a.name for a in identity.archives] == [os.path.basename(
      PRO_ARCHIVE)]
  assert identity.archives[0].num_bytes == os.path.getsize(PRO_ARCHIVE)
  assert identity.filters == data_lib.Filters(size=9, min_rank=None)
  assert (identity.fractions, identity.seed, identity.limit,
          identity.min_ply) == ((0.8, 0.1, 0.1), 3, 300, 4)
  counts = tuple(len(cache.games(s)) for s in data_lib.SPLITS)
  assert identity.games == counts and sum(counts) == 300
  # The hashes, computed here from the cache's game table.
  for split in ("validation", "test"):
    keys = sorted(g["key"] for g in cache.games(split))
    assert list(getattr(games, split)) == keys and keys
    digest = hashlib.sha256("\n".join(keys).encode()).hexdigest()
    assert getattr(identity, f"{split}_sha256") == digest
  assert identity.validation_sha256 != identity.test_sha256
  back = held_out.DatasetIdentity.from_json(
      json.loads(json.dumps(identity.to_json())))
  assert back == identity
  assert held_out.HeldOutGames.from_json(games.to_json()) == games
  with pytest.raises(config_codec.RunConfigError, match="format"):
    held_out.HeldOutGames.from_json(dict(games.to_json(), format="other"))


def test_a_child_on_its_parents_dataset_is_allowed(tmp_path):
  cache = _cache(tmp_path / "cache")
  parent = _parent(tmp_path / "parent", cache)
  checked = held_out.check_parent(
      parent, held_out.split_keys(cache, "train"), data=PRO, log=_no_log)
  assert checked == len(cache.games("test")) == 10


@pytest.mark.parametrize("change", [{"fractions": (0.95, 0.025, 0.025)},
                                    {"seed": 1}])
def test_a_child_training_on_its_parents_test_games_is_refused_by_count(
    tmp_path, change):
  parent_cache = _cache(tmp_path / "cache", fractions=(0.8, 0.1, 0.1))
  parent = _parent(tmp_path / "parent", parent_cache)
  child = _cache(tmp_path / "cache", **dict(dict(fractions=(0.8, 0.1, 0.1)),
                                           **change))
  # The parent's test games the child's split puts in training, by the
  # split's own rule (`records.split_of`).
  config = data_lib.DatasetConfig.from_json(child.manifest["config"])
  test = [g["key"] for g in parent_cache.games("test")]
  leaked = sum(records.split_of(k, config.fractions, config.seed) == "train"
               for k in test)
  assert 0 < leaked < len(test)
  with pytest.raises(held_out.HeldOutError,
                     match=rf"^{leaked} of the {len(test)} test games of the "
                           rf"parent run .*parent are in this run's training "
                           rf"split"):
    held_out.check_parent(parent, held_out.split_keys(child, "train"),
                          data=PRO, log=_no_log)


def test_an_older_parent_is_checked_on_its_split_rebuilt(tmp_path):
  """A run recorded before the identity existed (a committed one): its
  test split rebuilt from the dataset and data its config.json names."""
  cache = _cache(tmp_path / "cache", fractions=(0.8, 0.1, 0.1))
  dataset = dict(cache.manifest["config"], min_ply=0)
  old = tmp_path / "old"
  old.mkdir()
  stages.write_json(str(old / "config.json"),
                    {"dataset": dataset, "data": "../elsewhere/" +
                     os.path.basename(PRO), "seed": 0})
  lines = []
  test = held_out.parent_test_games(str(old), data=PRO,
                                    cache_root=str(tmp_path / "cache"),
                                    log=lines.append)
  assert test == held_out.split_keys(cache, "test") and test
  assert any("rebuilding the test split" in line for line in lines)
  child = _cache(tmp_path / "cache")
  with pytest.raises(held_out.HeldOutError, match=r"^\d+ of the "
                     rf"{len(test)} test games"):
    held_out.check_parent(str(old), held_out.split_keys(child, "train"),
                          data=PRO, cache_root=str(tmp_path / "cache"),
                          log=_no_log)


def test_a_parent_that_cannot_be_verified_is_refused_by_name(tmp_path):
  cache = _cache(tmp_path / "cache")
  train = held_out.split_keys(cache, "train")
  check = lambda run: held_out.check_parent(str(run), train, data=PRO,
                                            log=_no_log)
  bare = tmp_path / "bare"
  bare.mkdir()
  with pytest.raises(held_out.HeldOutError, match="has no config.json.*"
                     "cannot be verified"):
    check(bare)
  selfplay = tmp_path / "selfplay"
  selfplay.mkdir()
  (selfplay / "config.json").write_text(json.dumps({"config": {}}))
  with pytest.raises(held_out.HeldOutError, match="records no dataset.*"
                     "cannot be verified"):
    check(selfplay)
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  (elsewhere / "config.json").write_text(json.dumps(
      {"dataset": dict(cache.manifest["config"]), "data": "gone/records"}))
  with pytest.raises(held_out.HeldOutError, match=r"its data \(gone/records"
                     r"\) is neither .*cannot be verified"):
    check(elsewhere)
  # A record whose list no longer matches its hash.
  altered = _parent(tmp_path / "altered", cache)
  path = os.path.join(altered, held_out.GAMES_FILE)
  with open(path) as f:
    games = json.load(f)
  games["test"] = games["test"][1:]
  stages.write_json(path, games)
  with pytest.raises(held_out.HeldOutError, match="do not hash to the "
                     "test_sha256 .*altered"):
    check(altered)


def test_value_net_runs_on_records_record_their_identity(tmp_path, capsys):
  # (The rollout-policy run's record: tests/test_rollout_policy.py.)
  need(PRO)
  # Two steps: the record is written before training starts.
  common = ["--quick", "--size", "9", "--min-rank", "none", "--cache",
            tmp_path / "cache", "--fractions", "0.8", "0.1", "0.1",
            "--total-samples", "64", "--eval-positions", "64"]
  value = tmp_path / "value"
  status, _, err = run_cli(capsys, "train", "value-net", "--kgs", PRO,
                           "--output", value, *common)
  assert status == 0, err[-3000:]
  cache = _cache(tmp_path / "cache", fractions=(0.8, 0.1, 0.1))
  want, files = held_out.run_files(cache)
  saved = json.loads((value / "config.json").read_text())
  assert saved[held_out.IDENTITY_KEY] == want[held_out.IDENTITY_KEY]
  assert json.loads((value / held_out.GAMES_FILE).read_text()) == files[
      held_out.GAMES_FILE]