"""The learning-from-records pipeline: records, position cache, batches,
features.

Synthetic SGF archives (built in tmp_path) cover filters, dedup, splits and
bad input; real records (`$ALPHAGO_JAX_DATA`, default `../shared/data` next
to the repository; skipped, saying so, when absent) check the cache against
the engine's own replay (`sgf.record_to_states`).
"""

import functools
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import data
from alphago_jax.data.records import (SPLITS, filter_reason, game_key,
                                      rank_value, split_of)
from alphago_jax.data.positions import build_cache, default_cache_root
from alphago_jax.data.batches import sequential_batches
from alphago_jax.data import features, positions
from alphago_jax.games import go_features, sgf, symmetry
from alphago_jax.games.go import BLACK, WHITE

from record_files import KGS, PRO_ARCHIVE, need, write_tar

ANY9 = data.Filters(size=9, min_rank=None)


def _sgf(moves, size=9, header=""):
  letters = "abcdefghijklmnopqrs"
  body = "".join(
      f";{'BW'[i % 2]}[{letters[a % size] + letters[a // size]}]"
      for i, a in enumerate(moves))
  return f"(;GM[1]SZ[{size}]BR[7d]WR[6d]RE[B+R]{header}{body})".encode()


def _distinct_games(n):
  """n different 2-move 9x9 games (two stones never capture)."""
  pairs = [(a, b) for a in range(81) for b in range(81) if a != b]
  return [_sgf(pairs[i]) for i in range(n)]


@functools.lru_cache(maxsize=None)
def _feature_fn(size, augment=True, reference=False):
  return features.make_feature_fn(size, augment=augment, reference=reference)


# -- A hand-checked position ---------------------------------------------------

# 9x9: Black surrounds White's E5 (action 40) on three sides; Black to play
# E4 (row 5, col 4: action 49) captures it. Then White passes.
HAND = (b"(;GM[1]SZ[9]KM[7]RE[W+2];B[de];W[ee];B[fe];W[ai];B[ed];W[bi];"
        b"B[ef];W[])")
C = {n: sum(go_features.FEATURES[m] for m in
            go_features.DEFAULT_POLICY_FEATURES[
                :go_features.DEFAULT_POLICY_FEATURES.index(n)])
     for n in go_features.DEFAULT_POLICY_FEATURES}  # first channel of each


def test_hand_checked_position_lines_up_under_every_symmetry():
  record = sgf.parse_sgf(HAND)
  arrays = positions.replay_positions(record)
  k = 6  # before B[ef]
  assert int(arrays["action"][k]) == 49 and int(arrays["to_play"][k]) == BLACK
  assert arrays["recent"][k].tolist() == [73, 31, 72, 41, 40, 39, -1]
  assert int(arrays["ply"][k]) == 6 and int(arrays["ko"][k]) == -1
  assert int(arrays["outcome"][k]) == -1  # White won
  assert int(arrays["action"][7]) == 81 and int(arrays["outcome"][7]) == 1
  one = {f: a[k:k + 2] for f, a in arrays.items()}
  one["stones"] = positions.pack_stones(one["stones"])
  # 64 copies of the two positions: the drawn symmetries cover all 8.
  batch = {f: np.tile(a, (32,) + (1,) * (a.ndim - 1)) for f, a in one.items()}
  out = _feature_fn(9)(batch, jax.random.PRNGKey(3))
  syms = np.asarray(out["symmetry"])
  assert set(syms.tolist()) == set(range(8))
  src = np.arange(64) % 2
  plain = [np.asarray(out["planes"][np.flatnonzero((syms == 0) & (src == j))[
      0]]) for j in (0, 1)]  # the identity's planes of each position
  planes = plain[0].reshape(81, -1)
  at = planes[49]  # the move played, by hand:
  assert at[C["stone_colour"] + 2] == 1          # empty
  assert at[C["capture_size"] + 1] == 1          # takes one stone
  assert at[C["liberties_after_move"] + 3] == 1  # then has 4 liberties
  assert at[C["self_atari_size"]:C["self_atari_size"] + 8].sum() == 0
  assert at[C["sensibleness"]] == 1
  assert planes[40, C["stone_colour"] + 1] == 1  # White's E5: opponent,
  assert planes[40, C["liberties"] + 0] == 1     # in atari,
  assert planes[40, C["turns_since"] + 4] == 1   # played 5 plies ago
  assert planes[73, C["turns_since"] + 0] == 1   # the last move
  assert planes[39, C["stone_colour"]] == 1      # Black's own D5
  for b in range(64):
    i = int(syms[b])
    label = int(out["action"][b])
    assert label == int(symmetry.transform_action(
        int(batch["action"][b]), i, 9))
    np.testing.assert_array_equal(
        np.asarray(out["planes"][b]),
        np.asarray(symmetry.transform_observation(plain[src[b]], i)))
    if src[b] == 1:
      assert label == 81  # pass stays pass
    else:
      np.testing.assert_array_equal(
          np.asarray(out["planes"][b]).reshape(81, -1)[label], at)
  # One by hand: a quarter turn counter-clockwise takes (row 5, col 4) to
  # (row 8 - 4, col 5), F5.
  b = int(np.flatnonzero((syms == 1) & (src == 0))[0])
  assert int(out["action"][b]) == 4 * 9 + 5
  assert np.asarray(out["outcome"]).tolist()[:2] == [-1.0, 1.0]


# -- Against the engine --------------------------------------------------------

def _canonical(boards):
  """Chain ids renamed by first appearance: same partition, same ids."""
  out = np.zeros_like(boards)
  for i, row in enumerate(boards):
    first = {}
    for p, v in enumerate(row.tolist()):
      if v:
        first.setdefault(v, p)
    out[i] = [np.sign(v) * (first[v] + 1) if v else 0 for v in row.tolist()]
  return out


@functools.lru_cache(maxsize=None)
def _jitted(size):
  game = features.feature_game(size)
  def rebuild_and_planes(batch, every):
    states = jax.vmap(functools.partial(features.rebuild_state, game))(batch)
    some = jax.tree.map(lambda x: x[::every], states)
    return states, jax.vmap(lambda s: go_features.alphago_features(game, s))(
        some)
  # The reference plays every move with the engine for the per-move planes.
  return (jax.jit(rebuild_and_planes, static_argnums=1),
          jax.jit(jax.vmap(lambda s: go_features.alphago_features(
              game, s, reference=True))))


def _check_against_engine(games, planes_every=1):
  """The cached positions of `games` (one size) rebuild the engine's states
  (and, on every `planes_every`-th, its planes): one batch, one compile."""
  parts, engine = [], []
  for record in games:
    parts.append(positions.replay_positions(record))
    _, states = sgf.record_to_states(record)
    _, _, index = sgf.engine_actions(record)
    real = np.flatnonzero(index >= 0)
    engine.append(jax.tree.map(lambda x: x[real], states))
  batch = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
  engine = jax.tree.map(lambda *x: np.concatenate(x), *engine)
  np.testing.assert_array_equal(batch["stones"], np.sign(engine.board))
  batch["stones"] = positions.pack_stones(batch["stones"])
  rebuild_and_planes, ref = _jitted(games[0].size)
  rebuilt, planes = rebuild_and_planes(batch, planes_every)
  np.testing.assert_array_equal(_canonical(np.asarray(rebuilt.board)),
                                _canonical(engine.board))
  for field in ("ko", "current_player", "step_count", "legal_action_mask",
                "zobrist"):
    np.testing.assert_array_equal(np.asarray(getattr(rebuilt, field)),
                                  getattr(engine, field), err_msg=field)
  np.testing.assert_array_equal(np.asarray(planes), np.asarray(ref(
      jax.tree.map(lambda x: jnp.asarray(x[::planes_every]), engine))))
  return batch


def test_cache_rebuilds_the_engine_states_and_planes_pro_9x9():
  need(PRO_ARCHIVE)
  games, _ = data.select_games(PRO_ARCHIVE, ANY9, fractions=(1, 0, 0), limit=40)
  batch = _check_against_engine(games["train"][:3], planes_every=2)
  assert (batch["ko"] >= 0).sum() > 0  # simple-ko positions were compared


def test_cache_rebuilds_the_engine_states_kgs_19x19():
  need(KGS)
  path = os.path.join(KGS, "KGS-2017_02-19-525-.tar.gz")
  need(path)
  games, _ = data.select_games(path, fractions=(1, 0, 0), limit=20)
  _check_against_engine(games["train"][:1], planes_every=24)


def test_engine_actions_match_record_to_actions():
  record = sgf.parse_sgf(b"(;SZ[9]HA[2];B[cc];B[gg];W[ee];B[];W[aa])")
  first, actions, index = sgf.engine_actions(record)
  initial, actions2, index2 = sgf.record_to_actions(record)
  assert first == int(initial.current_player) == BLACK
  np.testing.assert_array_equal(actions, actions2)
  np.testing.assert_array_equal(index, index2)
  arrays = positions.replay_positions(record)
  # Inserted passes are plies, not examples.
  assert arrays["action"].tolist() == [20, 60, 40, 81, 0]
  assert arrays["ply"].tolist() == [0, 2, 3, 4, 5]
  assert arrays["recent"][4].tolist() == [81, 40, 60, 81, 20, -1, -1]
  assert arrays["to_play"].tolist() == [BLACK, BLACK, WHITE, BLACK, WHITE]


@pytest.mark.parametrize("moves,why", [
    (b";B[ee];W[ee]", "occupied"), (b";B[ba];W[ee];B[ab];W[aa]", "suicide"),
    (b";B[ee];W[];B[];W[aa]", "ended after two consecutive passes")])
def test_host_replay_rejects_what_the_engine_rejects(moves, why):
  record = sgf.parse_sgf(b"(;SZ[9]" + moves + b")", source="x.sgf")
  with pytest.raises(sgf.SGFError, match=why) as e:
    positions.replay_positions(record)
  assert e.value.reason == "illegal move" and "x.sgf" in str(e.value)
  with pytest.raises(sgf.SGFError, match=why):
    sgf.record_to_states(record)


def test_cache_skips_a_setup_chain_without_liberties_like_the_engine():
  # Found by tests/test_sgf_fuzz.py: the cache's host replay kept a setup
  # stone with no liberties, a position the engine rejects and cannot hold.
  record = sgf.parse_sgf(b"(;SZ[9]AB[aa]AW[ab][ba];W[ee])", source="x.sgf")
  for replay in (positions.replay_positions, sgf.record_to_states):
    with pytest.raises(sgf.SGFError, match="chain at A9 has no liberties"
                       ) as e:
      replay(record)
    assert e.value.reason == "setup stones" and "x.sgf" in str(e.value)


def test_host_replay_simple_ko():
  ko = b"(;SZ[5]AB[ba][ab][bc]AW[ca][cc][db];W[bb];B[cb];W[ee];B[ea];W[bb])"
  arrays = positions.replay_positions(sgf.parse_sgf(ko))
  assert arrays["ko"].tolist() == [-1, -1, 6, -1, -1]
  with pytest.raises(sgf.SGFError, match="simple ko"):
    positions.replay_positions(sgf.parse_sgf(ko[:-1] + b";B[cb];W[bb])"))


# -- Filters, dedup, splits ----------------------------------------------------

def test_rank_order_and_filters():
  assert [rank_value(r) for r in ("30k", "1k", "1d", "6d?", "9d", "1p",
                                       " 7D ", "", None, "?", "6x")] == [
      -29, 0, 1, 6, 9, 21, 7, None, None, None, None]
  f = data.Filters(size=9)  # >= 6d, no handicap
  def reason(header, size=9, filters=f):
    return filter_reason(sgf.parse_sgf(
        f"(;SZ[{size}]{header};B[aa])".encode()), filters)
  assert reason("BR[6d]WR[1p]") is None
  assert reason("BR[5d]WR[7d]") == "rank below 6d"
  assert reason("BR[6d]") == "rank unknown"
  assert reason("BR[6d]WR[6d]HA[2]") == "handicap"
  assert reason("BR[6d]WR[6d]AB[cc]") == "handicap"
  assert reason("BR[6d]WR[6d]", size=13) == "not 9x9"
  assert reason("BR[5d]WR[7d]", filters=data.Filters(size=9,
                                                     min_rank="5d")) is None
  assert reason("HA[3]AB[cc][gg][gc]", filters=data.Filters(
      size=9, min_rank=None, allow_handicap=True)) is None
  assert filter_reason(sgf.parse_sgf(b"(;SZ[9]BR[7d]WR[7d])"),
                            f) == "too few moves"
  with pytest.raises(ValueError, match="min_rank"):
    data.Filters(min_rank="strong")


def test_split_by_game_duplicates_on_one_side(tmp_path):
  games = _distinct_games(400)
  members = [(f"g{i}.sgf", g) for i, g in enumerate(games)]
  # Copies under other names, one with other players: the same game.
  members += [(f"copy{i}.sgf", games[i]) for i in range(0, 400, 20)]
  members.append(("renamed.sgf", games[7].replace(b"BR[7d]",
                                                  b"PB[x]BR[7d]")))
  path = write_tar(tmp_path / "g.tar.gz", members)
  split, report = data.select_games(path, ANY9, fractions=(0.6, 0.2, 0.2),
                                    seed=3)
  assert report.duplicates == 21 and report.records == 421
  keys = {s: {game_key(r) for r in split[s]} for s in SPLITS}
  assert sum(len(k) for k in keys.values()) == 400
  assert not (keys["train"] & keys["validation"]) and not (
      keys["train"] & keys["test"]) and not (keys["validation"] & keys["test"])
  assert 200 < len(split["train"]) < 280 and len(split["test"]) > 50
  # A copy, wherever it is read, belongs to its twin's split.
  for s in SPLITS:
    for r in split[s]:
      assert split_of(game_key(r), (0.6, 0.2, 0.2), 3) == s
  again, _ = data.select_games(path, ANY9, fractions=(0.6, 0.2, 0.2), seed=3)
  assert [r.source for r in again["test"]] == [r.source for r in split["test"]]
  other, _ = data.select_games(path, ANY9, fractions=(0.6, 0.2, 0.2), seed=4)
  assert {r.source for r in other["test"]} != {r.source for r in split["test"]}
  with pytest.raises(ValueError, match="fractions"):
    data.select_games(path, ANY9, fractions=(0.5, 0.5, 0.5))

  # The cache: positions of a game all on its side.
  config = data.DatasetConfig(filters=ANY9, fractions=(0.6, 0.2, 0.2), seed=3)
  cache = build_cache(path, tmp_path / "cache", config)
  assert cache.report.games == report.games and cache.report.duplicates == 21
  seen = {}
  for s in SPLITS:
    table = cache.games(s)
    pos = cache.split(s)
    assert len(pos) == cache.report.positions[s] == 2 * len(table)
    for i, g in enumerate(table):
      assert seen.setdefault(g["key"], s) == s
      rows = pos.game[g["start"]:g["start"] + g["positions"]]
      assert (np.asarray(rows) == i).all()
  assert set(seen) == set().union(*keys.values())


# -- Bad input -----------------------------------------------------------------

def test_missing_or_empty_data_path_names_it(tmp_path):
  missing = tmp_path / "nowhere"
  with pytest.raises(data.DataError, match=f"{missing} does not exist"):
    data.select_games(missing)
  with pytest.raises(data.DataError, match=f"{missing} does not exist"):
    data.prepare(missing, tmp_path / "c")
  (tmp_path / "empty").mkdir()
  with pytest.raises(data.DataError, match="no .sgf game records found in "
                     f"{tmp_path / 'empty'}"):
    build_cache(tmp_path / "empty", tmp_path / "c")
  empty = write_tar(tmp_path / "empty.tar.gz", [("README", b"no games")])
  with pytest.raises(data.DataError, match=f"no .sgf game records found in "
                     f"{empty}"):
    data.select_games(empty)
  assert not (tmp_path / "c").exists() or not os.listdir(tmp_path / "c")


def test_archive_with_no_usable_game_names_it_and_counts(tmp_path):
  path = write_tar(tmp_path / "bad.tar.gz", [
      ("syntax.sgf", b"(;SZ[9];B[ee]"), ("big.sgf", b"(;SZ[30];B[aa])"),
      ("weak.sgf", b"(;SZ[19]BR[2k]WR[6d];B[aa])"),
      ("handicap.sgf", b"(;SZ[19]HA[2]BR[7d]WR[7d]AB[dd][pp];W[aa])"),
      ("illegal.sgf", b"(;SZ[19]BR[7d]WR[7d];B[aa];W[aa])")])
  with pytest.raises(data.DataError, match=f"none of the 5 records in "
                     f"{path} is usable") as e:
    build_cache(path, tmp_path / "c")
  for why in ("syntax: 1", "board size: 1", "rank below 6d: 1",
              "handicap: 1", "illegal move: 1"):
    assert why in str(e.value)


def test_bad_records_are_skipped_and_counted(tmp_path):
  games = _distinct_games(30)
  path = write_tar(tmp_path / "mixed.tar.gz",
                   [(f"g{i}.sgf", g) for i, g in enumerate(games)] +
                   [("cut.sgf", games[0][:20]),
                    ("occupied.sgf", _sgf([5, 5])),
                    ("thirteen.sgf", _sgf([1, 2], size=13))])
  cache = build_cache(path, tmp_path / "c",
                           data.DatasetConfig(filters=ANY9))
  assert cache.report.records == 33
  assert dict(cache.report.skipped) == {"syntax": 1, "illegal move": 1,
                                        "not 9x9": 1}
  assert sum(cache.report.games.values()) == 30
  assert any("occupied.sgf" in s for s, _ in cache.report.examples)


@pytest.fixture
def small_cache(tmp_path):
  path = write_tar(
      tmp_path / "g.tar.gz",
      [(f"g{i}.sgf", g) for i, g in enumerate(_distinct_games(60))])
  config = data.DatasetConfig(filters=ANY9, fractions=(0.5, 0.25, 0.25))
  return path, tmp_path / "caches", config, build_cache(
      path, tmp_path / "caches", config)


def test_corrupt_cache_names_the_file(small_cache):
  _, _, _, cache = small_cache
  data.open_cache(cache.path)
  target = os.path.join(cache.path, "train.action.npy")
  blob = bytearray(open(target, "rb").read())
  blob[-1] ^= 0xFF  # same size, other content
  open(target, "wb").write(bytes(blob))
  with pytest.raises(data.CacheError, match=f"{target} fails its checksum"):
    data.open_cache(cache.path)
  open(target, "wb").write(bytes(blob[:-10]))
  with pytest.raises(data.CacheError, match=f"{target} has .* bytes.*"
                     "truncated"):
    data.open_cache(cache.path, verify=False)
  os.remove(target)
  with pytest.raises(data.CacheError, match=f"{target} is missing"):
    data.open_cache(cache.path)
  manifest = os.path.join(cache.path, "manifest.json")
  open(manifest, "w").write("{not json")
  with pytest.raises(data.CacheError, match=f"{manifest} is unreadable"):
    data.open_cache(cache.path)
  os.remove(manifest)
  with pytest.raises(data.CacheError, match="no manifest.json"):
    data.open_cache(cache.path)


def test_prepare_reuses_then_rebuilds_a_stale_cache(small_cache):
  path, root, config, cache = small_cache
  again = data.prepare(path, root, config)
  assert again.path == cache.path
  assert again.manifest["created"] == cache.manifest["created"]
  # Only the cache itself under root: the temporary folder was renamed.
  assert os.listdir(root) == [os.path.basename(cache.path)]
  # A copy of the data (new modification times, same contents) is the
  # same data; the same size and new contents is not.
  st = os.stat(path)
  os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
  lines = []
  copied = data.prepare(path, root, config, log=lines.append)
  assert not lines and copied.manifest == cache.manifest  # not rebuilt
  saved = copied.manifest["sources"]
  assert positions._same_sources(saved, [str(path)], str(path))  # pylint: disable=protected-access
  changed = dict(saved[0], crc32=saved[0]["crc32"] ^ 1)
  assert not positions._same_sources([changed], [str(path)], str(path))  # pylint: disable=protected-access
  os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
  assert positions._same_sources([changed], [str(path)], str(path))  # pylint: disable=protected-access
  with open(os.path.join(cache.path, "manifest.json")) as f:
    manifest = json.load(f)
  manifest["sources"][0]["bytes"] += 1  # as if the data had changed
  with open(os.path.join(cache.path, "manifest.json"), "w") as f:
    json.dump(manifest, f)
  rebuilt = data.prepare(path, root, config, verify=False, log=lines.append)
  assert any("stale" in line for line in lines)
  assert rebuilt.manifest["sources"][0]["bytes"] == os.path.getsize(path)
  assert os.listdir(root) == [os.path.basename(cache.path)]
  # Other settings, another cache.
  other = data.prepare(path, root, data.DatasetConfig(filters=ANY9, seed=1))
  assert other.path != cache.path


def test_default_cache_root_is_never_a_read_only_data_folder(tmp_path,
                                                             monkeypatch):
  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
  ro = tmp_path / "ro"
  (ro / "set").mkdir(parents=True)
  os.chmod(ro, 0o555)
  try:
    assert default_cache_root(ro / "set") == str(
        tmp_path / "xdg" / "alphago_jax")
  finally:
    os.chmod(ro, 0o755)
  assert default_cache_root(ro / "set") == str(ro / "alphago_jax_cache")
  (ro / ".git").mkdir()  # never into a repository
  assert default_cache_root(ro / "set") == str(
      tmp_path / "xdg" / "alphago_jax")


# -- Streaming -----------------------------------------------------------------

def test_stream_is_deterministic_resumable_and_covers_each_epoch(small_cache):
  *_, cache = small_cache
  train = cache.split("train")
  n = len(train)
  def actions(stream):
    return [tuple(b["game"] * 1000 + b["ply"]) for b in stream]
  first = actions(data.batches(train, 8, seed=5, num_steps=12))
  assert first == actions(data.batches(train, 8, seed=5, num_steps=12))
  assert first != actions(data.batches(train, 8, seed=6, num_steps=12))
  assert first[7:] == actions(data.batches(train, 8, seed=5, start_step=7,
                                           num_steps=5))
  per_epoch = n // 8
  epoch = [x for batch in first[:per_epoch] for x in batch]
  assert len(set(epoch)) == per_epoch * 8  # no position twice in an epoch
  batch = next(data.batches(train, 8, seed=5))
  assert batch["stones"].shape == (8, 2, 11) and batch["recent"].shape == (
      8, 7)
  assert all(isinstance(a, np.ndarray) and not isinstance(a, np.memmap)
             for a in batch.values())
  with pytest.raises(ValueError, match="fewer than one batch"):
    next(data.batches(train, n + 1))


def test_sequential_batches_read_a_split_once_in_order(small_cache):
  *_, cache = small_cache
  test = cache.split("test")
  out = list(sequential_batches(test, 8))
  assert len(out) == -(-len(test) // 8)
  valid = np.concatenate([b["valid"] for b in out])
  assert valid.sum() == len(test) and all(len(b["action"]) == 8 for b in out)
  np.testing.assert_array_equal(
      np.concatenate([b["action"] for b in out])[valid], np.asarray(
          test.action))


def test_from_ply_keeps_exactly_the_later_positions(small_cache):
  train = small_cache[3].split("train")
  cut = int(np.max(train.ply))  # the last position of the longest games
  later = train.from_ply(cut)
  keep = np.asarray(train.ply) >= cut
  assert 0 < len(later) < len(train) and len(later) == int(keep.sum())
  for name, array in later.arrays().items():
    np.testing.assert_array_equal(array, np.asarray(getattr(train, name))[keep])
  assert train.from_ply(0) is train
  with pytest.raises(ValueError, match="min_ply"):
    train.from_ply(-1)
