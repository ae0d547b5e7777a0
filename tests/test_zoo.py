"""The zoo: one loader for every committed network, and the preset table."""

import os

import pytest

from alphago_jax.training.checkpoint import CheckpointMismatchError
from alphago_jax.zoo import checkpoints, loaders, presets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CKPTS = checkpoints.checkpoints_root()


@pytest.mark.parametrize("folder,kind,size,step", [
    ("go9", "alphazero", 9, 48),
    ("sl9", "sl_policy", 9, 4687),
    ("rl9", "rl_policy", 9, 41),
    ("value9s2", "value_net", 9, 23437),
    ("rollout9", "rollout_policy", 9, 3906),
    ("sl_policy_ladders", "sl_policy", 19, 32812),
])
def test_load_reads_the_kind_from_the_folder(folder, kind, size, step):
  # The steps are the committed step folders' (and go9's snapshot) names.
  net = loaders.load(os.path.join(CKPTS, folder))
  assert (net.kind, net.board_size, net.step) == (kind, size, step)
  assert net.name == f"{folder}@{step}"
  assert net.game.size == size
  assert (net.evaluate is not None) == (kind == "alphazero")


def test_load_refuses_a_kind_the_caller_cannot_use():
  with pytest.raises(CheckpointMismatchError,
                     match=r"value9s2 holds a value_net network; expected "
                           r"sl_policy or rl_policy"):
    loaders.load(os.path.join(CKPTS, "value9s2"),
                 expect=loaders.POLICY_KINDS)


def test_load_names_an_empty_or_missing_folder(tmp_path):
  with pytest.raises(FileNotFoundError, match="no network here"):
    loaders.load(str(tmp_path))
  with pytest.raises(FileNotFoundError, match="no such folder"):
    loaders.load(str(tmp_path / "absent"))
  (tmp_path / "config.json").write_text('{"kind": "something else"}')
  with pytest.raises(CheckpointMismatchError, match="not a network"):
    loaders.load(str(tmp_path))
  (tmp_path / "config.json").write_text("{not json")
  with pytest.raises(CheckpointMismatchError, match="unreadable"):
    loaders.load(str(tmp_path))


GOOD = '''
[[preset]]
name = "p"
board_size = 9
player = "policy"
networks = { policy = "sl9" }
description = "d"
'''


def test_the_table_parses_a_record():
  (preset,) = presets.parse_table(GOOD, "t.toml")
  assert (preset.name, preset.player, preset.searches) == ("p", "policy",
                                                            False)
  assert preset.directories == ["sl9"] and preset.evidence is None


@pytest.mark.parametrize("edit,message", [
    (("description = \"d\"", "description = \"d\"\ncolour = 1"),
     "preset 'p': unknown field 'colour'"),
    (("description = \"d\"\n", ""), "preset 'p': missing field 'description'"),
    (("player = \"policy\"", "player = \"telepathy\""),
     "player must be one of"),
    (("{ policy = \"sl9\" }", "{ value = \"sl9\" }"),
     "networks must name 'policy'"),
    (("description = \"d\"", "description = \"d\"\nsearch = { c_puct = 1.0 }"),
     "player 'policy' takes no search settings"),
    (("description = \"d\"", "description = \"d\"\noptions = { fast = true }"),
     "unknown option 'fast'"),
    (("board_size = 9", "board_size = 1"), "board_size"),
    (("name = \"p\"", "name = \"p\"\nname = \"q\""), "t.toml"),
])
def test_a_bad_record_is_named(edit, message):
  text = GOOD.replace(*edit)
  assert text != GOOD
  with pytest.raises(ValueError, match=message):
    presets.parse_table(text, "t.toml")


def test_a_name_used_twice_is_refused():
  with pytest.raises(ValueError, match="the name is used twice"):
    presets.parse_table(GOOD + GOOD, "t.toml")


def test_every_preset_names_committed_evidence_that_exists():
  named = [p for p in presets.registered_presets() if p.evidence]
  assert len(named) >= 6
  for p in named:
    assert os.path.exists(os.path.join(ROOT, p.evidence)), (p.name,
                                                            p.evidence)


def test_search_presets_give_their_search_a_default_budget():
  for p in presets.registered_presets():
    if p.searches:
      assert p.search["num_simulations"] >= 1, p.name


def test_the_strongest_preset_is_the_table_record():
  p = presets.get_preset("strongest-9x9")
  assert p.networks == {"policy": "sl9", "value": "value9s2"}
  assert p.search["num_simulations"] == 576 and p.search["mixing"] == 0.0
