"""The one config codec (`core.config_codec`): every committed config file
reads through it and writes back byte for byte; every persisted config
class round-trips; and a wrong type, a missing field, an unknown field or a
value the class refuses raises `RunConfigError` naming the field's dotted
path, nested ones included."""

import copy
import dataclasses
import glob
import json
import os
import typing

import pytest
from hypothesis import given, settings, strategies as st

from alphago_jax.cli import stages
from alphago_jax.cli.configs import STAGES
from alphago_jax.core import config_codec, rundir
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.data.gnugo_games import GameResult
from alphago_jax.data.held_out import (Archive, DatasetIdentity,
                                       HeldOutGames)
from alphago_jax.data.positions import DatasetConfig, cache_name
from alphago_jax.data.records import Filters
from alphago_jax.evaluation import ablation
from alphago_jax.games import go_features, go_patterns
from alphago_jax.games.go_patterns import PatternConfig
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.training.distill import DistillConfig
from alphago_jax.models.resnet import ResNetConfig
from alphago_jax.models.value import ValueNetConfig
from alphago_jax.training.reinforce import ReinforceConfig
from alphago_jax.training.rollout_policy import RolloutTrainConfig
from alphago_jax.training.supervised import SupervisedConfig
from alphago_jax.training.value_data import ValueDataConfig
from alphago_jax.training.value_net import ValueTrainConfig

import profiles

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), os.pardir))

# -- Committed files -------------------------------------------------------------

# The ways the writers of committed files call json.dumps; sorted first: a
# file with sorted keys reads back in that order, so the unsorted form
# would also reproduce it.
_FORMATS = [(dict(indent=1, sort_keys=True), ""),
            (dict(indent=1, sort_keys=True), "\n"),
            (dict(indent=1), "\n"), (dict(indent=1), ""), ({}, ""),
            ({}, "\n")]


def _format_of(path, text):
  """The json.dumps arguments that wrote `text` (checked by rewriting the
  parsed file with them)."""
  data = json.loads(text)
  for kwargs, end in _FORMATS:
    if json.dumps(data, **kwargs) + end == text:
      return kwargs, end
  raise AssertionError(f"{path}: written in none of the known formats")


def _get(data, path):
  for key in path:
    data = data[key]
  return data


def _default(field):
  if field.default is not dataclasses.MISSING:
    return field.default
  return field.default_factory()


def _without_added(cls, out, data):
  """`out` (`cls` as JSON) less the `ADDED_FIELDS`, of `cls` and of the
  configs nested in it, that the record `data` lacks: each must have come
  back at its default, or at the value a dict of `ADDED_FIELDS` gives."""
  hints = typing.get_type_hints(cls)
  added = getattr(cls, "ADDED_FIELDS", ())
  for f in dataclasses.fields(cls):
    if f.name not in data and f.name in added:
      want = added[f.name] if isinstance(added, dict) else _default(f)
      assert out.pop(f.name) == config_codec.to_json(want), f.name
    elif dataclasses.is_dataclass(hints[f.name]) and f.name in data:
      _without_added(hints[f.name], out[f.name], data[f.name])
  return out


def _through_codec(cls, data, where):
  """`data` read as `cls` and written back (less the fields it lacks that
  were added later), followed by the keys that are not the class's (a
  run's `min_ply` after its dataset)."""
  names = {f.name for f in dataclasses.fields(cls)} | set(
      getattr(cls, "JSON_CONSTANTS", {}))
  own = {k: v for k, v in data.items() if k in names}
  out = config_codec.to_json(config_codec.from_json(cls, own, where))
  out = _without_added(cls, out, own)
  out.update((k, v) for k, v in data.items() if k not in names)
  return out


def _same_file(relpath, out, text, kwargs, end):
  """`out`, the rewritten record, is `text` byte for byte; or, for a file
  written when its class declared its fields in another order, holds the
  same keys and values."""
  if relpath in _EARLIER_FIELD_ORDER:
    assert json.dumps(out, **kwargs) + end != text, (
        f"{relpath} is written in today's order: drop it from "
        f"_EARLIER_FIELD_ORDER")
    assert out == json.loads(text)
  else:
    assert json.dumps(out, **kwargs) + end == text


def _stage_parts(data):
  """(key path, class) of each config in a 2016 stage's config.json, by
  the keys it holds."""
  # The dataset's identity, in runs recorded since it existed.
  held = [(("held_out",), DatasetIdentity)] if "held_out" in data else []
  if "train" in data:  # rollout_policy.py: the weights folder's config.json
    return [(("train",), RolloutTrainConfig), (("features",), PatternConfig),
            (("dataset",), DatasetConfig)] + held
  config = data["config"]
  if "teachers" in data:  # distill.py
    return [(("config",), DistillConfig)]
  if "games_per_iteration" in config:
    return [(("config",), ReinforceConfig)]
  if "mask_illegal" in config:
    return [(("config",), SupervisedConfig),
            (("dataset",), DatasetConfig)] + held
  parts = [(("config",), ValueTrainConfig)] + held
  if "dataset" in data.get("source", {}):
    parts.append((("source", "dataset"), DatasetConfig))
  return parts


def _committed(pattern):
  paths = sorted(glob.glob(os.path.join(ROOT, pattern)))
  assert paths, pattern
  return [os.path.relpath(p, ROOT) for p in paths]


def _read(relpath):
  with open(os.path.join(ROOT, relpath), encoding="utf-8") as f:
    return f.read()


# Files written when their config classes declared the fields in another
# order (`model` first, before the stages shared `optim.ScheduleConfig`):
# the codec reads them to the same values, and writes today's order.
_EARLIER_FIELD_ORDER = {
    "checkpoints/sl9/config.json", "checkpoints/sl12-partial/config.json",
    "checkpoints/sl_policy/config.json",
    "checkpoints/sl_policy_long/config.json",
    "checkpoints/value9/config.json",
    "checkpoints/value9s/config.json", "checkpoints/value9s2/config.json",
    "checkpoints/value19/config.json", "docs/value9-whole/config.json",
    "docs/value19-whole/config.json"}

# The config.json files of checkpoints/ that are no codec's: the first
# AlphaZero run's architecture (`rundir` refuses it by name), and the
# `alphago-jax train` run read by `test_committed_run_records_round_trip`.
_NOT_STAGE_CONFIGS = {"checkpoints/go9/config.json",
                      "checkpoints/az9-b4c64-partial/config.json"}


@pytest.mark.parametrize("relpath", [
    p for p in _committed("checkpoints/*/config.json")
    + _committed("docs/value*-whole/config.json")
    if p not in _NOT_STAGE_CONFIGS])
def test_committed_stage_configs_round_trip_byte_for_byte(relpath):
  text = _read(relpath)
  kwargs, end = _format_of(relpath, text)
  data = json.loads(text)
  out = copy.deepcopy(data)
  for path, cls in _stage_parts(data):
    rewritten = _through_codec(cls, _get(data, path), ".".join(path))
    _get(out, path[:-1])[path[-1]] = rewritten
  _same_file(relpath, out, text, kwargs, end)


@pytest.mark.parametrize("relpath", _committed(
    "checkpoints/*/checkpoints/*/metadata/metadata"))
def test_committed_checkpoint_metadata_round_trips(relpath):
  text = _read(relpath)
  kwargs, end = _format_of(relpath, text)
  meta = json.loads(text)
  model = {"sl_policy": PolicyNetConfig, "rl_policy": PolicyNetConfig,
           "value_net": ValueNetConfig}.get(meta.get("stage"), ResNetConfig)
  assert "stage" in meta or "game" in meta  # a 2016 stage's, or AlphaZero's
  meta["model"] = _through_codec(model, meta["model"], "model")
  _same_file(relpath, meta, text, kwargs, end)


@pytest.mark.parametrize("relpath", _committed(
    "checkpoints/az9-b4c64-partial/config.json")
    + _committed("docs/ablations/*/config.json"))
def test_committed_run_records_round_trip(relpath):
  text = _read(relpath)
  run_dir = os.path.join(ROOT, os.path.dirname(relpath))
  if "/ablations/" in relpath:
    _, config = ablation.read_config(run_dir)
  else:
    _, config, _ = rundir.read_config(run_dir, STAGES)
  record = json.loads(text)
  record["config"] = _without_added(type(config), config_codec.to_json(
      config), record["config"])
  assert json.dumps(record, indent=1, allow_nan=False) + "\n" == text


def _stage_commands():
  out = []
  for path in (_committed("checkpoints/*/command.json")
               + _committed("docs/*/command.json")):
    if json.loads(_read(path)).get("format") == rundir.STAGE_FORMAT:
      out.append(path)
  assert out
  return out


@pytest.mark.parametrize("relpath", _stage_commands())
def test_committed_stage_commands_round_trip(relpath):
  text = _read(relpath)
  _, options, record = rundir.read_stage(
      os.path.join(ROOT, os.path.dirname(relpath)), stages.options_types())
  record["options"] = _without_added(type(options), config_codec.to_json(
      options), record["options"])
  # The same keys and values; not the same bytes where the options' fields
  # now come from shared bases in another order (nothing is derived from
  # a command.json's bytes).
  assert record == json.loads(text)


@pytest.mark.parametrize("run,data,name", [
    ("rollout9", "gnugo9", "gnugo9-9x9-8036adb943"),
    ("sl_policy", "kgs-6d", "kgs-6d-19x19-6dcbff722d"),
    ("sl_policy_ladders", "kgs-6d", "kgs-6d-19x19-77860a60a9")])
def test_cache_names_of_committed_datasets_are_unchanged(run, data, name):
  """A cache's name hashes its dataset's JSON: the committed runs' datasets
  name the caches they named when the runs were made (`ladders` left out
  unless True)."""
  dataset = json.loads(_read(f"checkpoints/{run}/config.json"))["dataset"]
  dataset.pop("min_ply", None)
  config = DatasetConfig.from_json(dataset)
  assert cache_name(os.path.join("records", data), config) == name


# -- Round trips -----------------------------------------------------------------

_finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_sha256 = st.binary(min_size=32, max_size=32).map(bytes.hex)
_policy_features = st.sampled_from([
    go_features.DEFAULT_POLICY_FEATURES, go_features.ALPHAGO_POLICY_FEATURES])
_value_features = st.sampled_from([
    go_features.DEFAULT_VALUE_FEATURES, go_features.ALPHAGO_VALUE_FEATURES])
_plane = dict(filters=st.integers(1, 256), board_size=st.integers(2, 19),
              first_kernel=st.integers(1, 7))
_schedule = dict(
    batch_size=st.integers(1, 4096), optimizer=st.sampled_from(["sgd", "adam"]),
    learning_rate=st.floats(1e-6, 1.0), momentum=st.floats(0.0, 0.99),
    schedule=st.sampled_from(["cosine", "constant", "wsd"]),
    warmup_steps=st.integers(0, 1000), total_samples=st.integers(1, 10**8),
    final_lr_fraction=st.floats(0.0, 1.0), decay_fraction=st.floats(0.01, 1.0),
    weight_decay=st.floats(0.0, 1.0), augment=st.booleans())

patterns = st.builds(PatternConfig, pattern_bits=st.integers(4, 24),
                     response_bits=st.integers(4, 24))
policy_nets = st.builds(PolicyNetConfig, num_layers=st.integers(1, 7).map(
    lambda n: 2 * n), features=_policy_features,
                        trunk=st.sampled_from(["plain", "residual"]), **_plane)
value_nets = st.builds(ValueNetConfig, num_layers=st.integers(2, 13),
                       features=_value_features, hidden=st.integers(1, 512),
                       **_plane)
filters = st.builds(Filters, size=st.integers(5, 19),
                    min_rank=st.sampled_from([None, "6d", "2k", "1p"]),
                    allow_handicap=st.booleans(),
                    min_moves=st.integers(0, 100))

CLASSES = {
    PatternConfig: patterns,
    PolicyNetConfig: policy_nets,
    ValueNetConfig: value_nets,
    SupervisedConfig: st.builds(SupervisedConfig, model=policy_nets,
                                mask_illegal=st.booleans(), **_schedule),
    ValueTrainConfig: st.builds(ValueTrainConfig, model=value_nets,
                                **_schedule),
    ReinforceConfig: st.builds(
        ReinforceConfig, model=policy_nets,
        games_per_iteration=st.integers(1, 100).map(lambda n: 2 * n),
        optimizer=st.sampled_from(["sgd", "adam"]),
        learning_rate=st.floats(1e-6, 1.0), momentum=st.floats(0.0, 0.99),
        baseline=st.sampled_from(["none", "mean"]),
        pool_size=st.integers(1, 64), snapshot_every=st.integers(1, 100),
        temperature=st.floats(0.0, 5.0),
        max_moves=st.none() | st.integers(1, 800),
        grad_chunk=st.integers(1, 4096), komi=_finite,
        allow_pass=st.booleans()),
    RolloutTrainConfig: st.builds(
        RolloutTrainConfig, board_size=st.integers(5, 19), features=patterns,
        batch_size=st.integers(1, 4096), learning_rate=st.floats(1e-6, 1.0),
        schedule=st.sampled_from(["constant", "cosine"]),
        weight_decay=st.floats(0.0, 1.0),
        total_samples=st.integers(1, 10**8)),
    ValueDataConfig: st.integers(5, 19).flatmap(lambda n: st.builds(
        ValueDataConfig, board_size=st.just(n), komi=_finite,
        max_random_ply=st.none() | st.integers(1, 2 * n * n),
        chunk_games=st.integers(1, 512).map(lambda k: 2 * k),
        test_fraction=st.floats(0.0, 0.99), temperature=st.floats(0.01, 5.0),
        playout_temperature=st.none() | st.floats(0.0, 5.0),
        seed=st.integers(-2**31, 2**31))),
    DatasetConfig: st.builds(
        DatasetConfig, filters=filters,
        fractions=st.sampled_from([(0.9, 0.05, 0.05), (1.0, 0.0, 0.0),
                                   (0.95, 0.025, 0.025)]),
        seed=st.integers(0, 2**31), limit=st.none() | st.integers(1, 10**6),
        ladders=st.booleans()),
    DatasetIdentity: st.builds(
        DatasetIdentity,
        archives=st.lists(st.builds(
            Archive, name=_text, num_bytes=st.integers(0, 2**40),
            crc32=st.none() | st.integers(0, 2**32 - 1)), max_size=3).map(
                tuple),
        filters=filters,
        fractions=st.sampled_from([(0.9, 0.05, 0.05), (1.0, 0.0, 0.0)]),
        seed=st.integers(0, 2**31), limit=st.none() | st.integers(1, 10**6),
        min_ply=st.integers(0, 20),
        games=st.tuples(*[st.integers(0, 10**5)] * 3),
        validation_sha256=_sha256, test_sha256=_sha256),
    HeldOutGames: st.builds(
        HeldOutGames,
        validation=st.sets(_sha256, max_size=4).map(sorted).map(tuple),
        test=st.sets(_sha256, max_size=4).map(sorted).map(tuple)),
    GameResult: st.builds(
        GameResult, seed=st.integers(0, 2**31), level=st.integers(1, 10),
        dropped=st.none() | _text,
        sgf=st.none() | _text.map(lambda s: s.encode("utf-8")),
        gnugo_score=st.none() | _finite, tromp_taylor=st.none() | _finite,
        moves=st.integers(0, 1000), seconds=st.floats(0.0, 1e4),
        gnugo_cpu_seconds=st.floats(0.0, 1e4), message=_text),
}
configs = st.sampled_from(sorted(CLASSES, key=lambda c: c.__name__)).flatmap(
    lambda cls: st.tuples(st.just(cls), CLASSES[cls]))


@settings(max_examples=profiles.examples(200), deadline=None)
@given(item=configs)
def test_every_config_round_trips_through_json(item):
  cls, config = item
  text = json.dumps(config_codec.to_json(config), allow_nan=False)
  back = config_codec.from_json(cls, json.loads(text))
  assert back == config
  assert json.dumps(config_codec.to_json(back)) == text


def test_format_rules_are_declared_once_in_the_codec():
  """A field left out at its default reads as it; a pinned key is written
  and checked; bytes are utf-8 text."""
  assert "playout_temperature" not in config_codec.to_json(ValueDataConfig())
  assert config_codec.to_json(ValueDataConfig(playout_temperature=0.5))[
      "playout_temperature"] == 0.5
  assert "ladders" not in DatasetConfig().to_json()
  assert DatasetConfig(ladders=True).to_json()["ladders"] is True
  assert config_codec.to_json(PatternConfig())["slots"] == list(
      go_patterns.SLOTS)
  record = config_codec.to_json(GameResult(seed=1, level=2, sgf="(;C[é])"
                                           .encode("utf-8")))
  assert record["sgf"] == "(;C[é])"
  assert config_codec.from_json(GameResult, record).sgf == "(;C[é])".encode()
  for bad, message in (
      (list(reversed(go_patterns.SLOTS)), "config.features.slots: must be "),
      (None, "config.features.slots: missing")):
    record = RolloutTrainConfig().to_json()
    if bad is None:
      del record["features"]["slots"]
    else:
      record["features"]["slots"] = bad
    with pytest.raises(RunConfigError, match=message):
      RolloutTrainConfig.from_json(record)


# -- Errors that name the field ---------------------------------------------------

def _leaves(cls, prefix=()):
  """(key path, type) of every field of `cls`, nested dataclasses' too."""
  hints = typing.get_type_hints(cls)
  for f in dataclasses.fields(cls):
    if not f.init:
      continue
    tp = hints[f.name]
    yield prefix + (f.name,), tp, cls
    if dataclasses.is_dataclass(tp):
      yield from _leaves(tp, prefix + (f.name,))


def _wrong_value(tp):
  """A JSON value that no field of type `tp` takes."""
  args = [a for a in typing.get_args(tp) if a is not type(None)]
  base = args[0] if typing.get_origin(tp) is typing.Union else tp
  return 1.5 if base in (str, bytes) else "x"


def _optional(cls, name):
  field = {f.name: f for f in dataclasses.fields(cls)}[name]
  return (name in getattr(cls, "ADDED_FIELDS", ())
          or config_codec._OMIT_AT_DEFAULT in field.metadata)  # pylint: disable=protected-access


@settings(max_examples=profiles.examples(200), deadline=None)
@given(item=configs, data=st.data(),
       kind=st.sampled_from(["type", "missing", "unknown"]))
def test_errors_name_the_dotted_path_of_the_field(item, data, kind):
  cls, config = item
  path, tp, owner = data.draw(st.sampled_from(list(_leaves(cls))))
  record = config_codec.to_json(config)
  parent = _get(record, path[:-1])
  name = path[-1]
  dotted = ".".join(("config",) + path)
  if kind == "type":
    parent[name] = _wrong_value(tp)
    want = f"{dotted}: must be "
  elif kind == "missing":
    if _optional(owner, name):
      parent.pop(name, None)  # read as its default: no error
      config_codec.from_json(cls, record)
      return
    del parent[name]
    want = f"{dotted}: missing"
  else:
    parent["no_such_field"] = 1
    want = (".".join(("config",) + path[:-1] + ("no_such_field",))
            + f": unknown field of {owner.__name__}")
  with pytest.raises(RunConfigError) as e:
    config_codec.from_json(cls, record)
  assert str(e.value).startswith(want), (str(e.value), want)


@pytest.mark.parametrize("cls,path,value,named,message", [
    (RolloutTrainConfig, "board_size", 3, "board_size", "board_size must"),
    (RolloutTrainConfig, "features.pattern_bits", 30, "features.pattern_bits",
     "pattern_bits must be"),
    (SupervisedConfig, "model.trunk", "spiral", "model.trunk",
     "trunk must be"),
    # Refused for the pair (a residual trunk, an odd depth): the first of
    # the two the message names.
    (SupervisedConfig, "model.num_layers", 3, "model.trunk",
     "a residual trunk needs an even num_layers"),
    (SupervisedConfig, "schedule", "linear", "schedule", "schedule must be"),
    (ValueTrainConfig, "model.features", ["no_such_plane"], "model.features",
     "unknown feature 'no_such_plane'"),
    (ReinforceConfig, "games_per_iteration", 3, "games_per_iteration",
     "an even integer"),
    (ValueDataConfig, "max_random_ply", 10**6, "max_random_ply",
     "max_random_ply must be"),
    (DatasetConfig, "fractions", [0.5, 0.5, 0.5], "fractions",
     "fractions must be"),
    (DatasetConfig, "filters.min_rank", "strong", "filters.min_rank",
     "min_rank must be"),
    (DatasetConfig, "filters.size", None, "filters", "set filters.size"),
])
def test_values_a_class_refuses_are_named_by_field(cls, path, value, named,
                                                    message):
  record = config_codec.to_json(cls())
  if path == "model.num_layers":
    record["model"]["trunk"] = "residual"
  keys = path.split(".")
  _get(record, keys[:-1])[keys[-1]] = value
  with pytest.raises(RunConfigError) as e:
    config_codec.from_json(cls, record)
  assert str(e.value).startswith(f"config.{named}: "), str(e.value)
  assert message in str(e.value)
