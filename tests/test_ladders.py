"""The ladder planes read on the host (`data.ladders`) for the position
cache: hand-worked ladders, equality with the engine's own reading
(`go_features.ladder_moves`) on expert and random positions, the cache
that stores them and the feature batch that uses them."""

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import data
from alphago_jax.data.positions import build_cache
from alphago_jax.data import features, ladders, positions
from alphago_jax.games import go, go_features
from alphago_jax.training import policy_games

from record_files import KGS, need as _need, write_tar as _tar
from test_data import ANY9, _sgf
# The hand-worked ladders of the engine's own reading: LADDER (White's
# stone in atari at (2,2)), RUNNING (a ladder to the lower right) and
# KO_NET (Black's (1,2) takes at (1,1), starting a ko; White's (0,2) is
# then caught, as retaking is banned and extending is suicide).
from test_go_features import KO_NET, LADDER, RUNNING

GAME = go.Go(size=9, superko=False)


def _with(text, r, c, stone):
  rows = [list(line.strip()) for line in text.strip().splitlines()]
  rows[r][c] = stone
  return "\n".join(map("".join, rows))


def _planes(state, size=9):
  """bool `[2, N, N]` (capture, escape) of one engine state."""
  out = ladders.ladder_planes(np.sign(np.asarray(state.board))[None],
                              np.asarray(state.ko)[None],
                              np.asarray(state.current_player)[None], size)
  return out[0].reshape(2, size, size)


def _points(plane):
  return sorted((int(r), int(c)) for r, c in zip(*np.nonzero(plane)))


def test_hand_worked_ladders():
  capture, escape = _planes(GAME.from_ascii(LADDER))
  # Either atari drives the stone into the edge.
  assert _points(capture) == [(2, 3), (3, 2)] and not escape.any()
  # White has no black chain to chase.
  assert not _planes(GAME.from_ascii(LADDER, to_play=go.WHITE)).any()
  # A white stone at (3,1) gives the extension at (3,2) a third liberty:
  # only the atari at (3,2) still works.
  capture, _ = _planes(GAME.from_ascii(_with(LADDER, 3, 1, "O")))
  assert _points(capture) == [(3, 2)]
  # Running out is no escape, unless a white stone breaks the ladder.
  assert not _planes(GAME.from_ascii(RUNNING, to_play=go.WHITE))[1].any()
  _, escape = _planes(GAME.from_ascii(_with(RUNNING, 5, 5, "O"),
                                      to_play=go.WHITE))
  assert _points(escape) == [(2, 3)]


def test_reading_obeys_simple_ko():
  capture, _ = _planes(GAME.from_ascii(KO_NET))
  assert capture[1, 2]


def test_the_ko_point_of_the_position_is_no_candidate():
  # The same net with the ko already lit on (1,2): Black may not play there.
  s = GAME.from_ascii(KO_NET)
  stones = np.sign(np.asarray(s.board))[None]
  free = ladders.ladder_planes(stones, np.array([-1]), np.array([go.BLACK]),
                               9)
  banned = ladders.ladder_planes(stones, np.array([1 * 9 + 2]),
                                 np.array([go.BLACK]), 9)
  assert free[0, 0, 1 * 9 + 2] and not banned[0, 0, 1 * 9 + 2]


@functools.lru_cache(None)
def _engine_ladders(size):
  game = features.feature_game(size)
  return jax.jit(jax.vmap(lambda b: jnp.stack(go_features.ladder_moves(
      game, features.rebuild_state(game, b)))))


def _random_positions(game, num, plies, seed):
  """`num` positions of `game` after `plies` random legal non-pass moves:
  many chains in atari, so many ladders to read."""

  def one(key):
    def body(state, k):
      logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
      return game.step(state, jax.random.categorical(
          k, logits.at[-1].set(-jnp.inf))), None
    k0, k1 = jax.random.split(key)
    state, _ = jax.lax.scan(body, game.init(k0), jax.random.split(k1, plies))
    return state
  return jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(seed), num))


@pytest.mark.parametrize("plies,seed", [(15, 0), (35, 1), (55, 2), (75, 3)])
def test_equal_to_the_engine_reading_random_9x9(plies, seed):
  states = _random_positions(features.feature_game(9), 48, plies, seed)
  stones = np.sign(np.asarray(states.board)).astype(np.int8)
  mine = ladders.ladder_planes(stones, np.asarray(states.ko),
                               np.asarray(states.current_player), 9)
  batch = {"stones": positions.pack_stones(stones),
           "recent": np.full((48, positions.HISTORY), -1, np.int16),
           "ply": np.asarray(states.step_count, np.int16),
           "ko": np.asarray(states.ko, np.int16),
           "to_play": np.asarray(states.current_player, np.int8)}
  engine = np.asarray(_engine_ladders(9)(batch))
  np.testing.assert_array_equal(mine, engine)
  if plies >= 35:
    assert engine[:, 0].any() and engine[:, 1].any()  # both were compared


@pytest.fixture(scope="module")
def kgs_ladder_cache(tmp_path_factory):
  _need(KGS)
  path = os.path.join(KGS, "KGS-2017_02-19-525-.tar.gz")
  _need(path)
  root = tmp_path_factory.mktemp("caches")
  config = data.DatasetConfig(fractions=(1, 0, 0), limit=4, ladders=True)
  return build_cache(path, root, config)


def test_cached_planes_equal_the_engine_reading_kgs_19x19(kgs_ladder_cache):
  train = kgs_ladder_cache.split("train")
  assert train.ladder is not None and len(train) > 300
  index = np.arange(0, len(train), 10)  # every tenth: a tenth of the cost
  batch = train.take(index)
  engine = np.concatenate([
      np.asarray(_engine_ladders(19)({k: v[i:i + 1] for k, v in
                                      batch.items() if k != "ladder"}))
      for i in range(len(index))])
  cached = np.unpackbits(batch["ladder"], axis=-1)[..., :361].astype(bool)
  np.testing.assert_array_equal(cached, engine)
  assert engine[:, 0].sum() > 5 and engine[:, 1].sum() > 0


def test_feature_batch_takes_the_cached_planes(kgs_ladder_cache):
  train = kgs_ladder_cache.split("train")
  batch = train.take(np.arange(40, 56))
  assert batch["ladder"].any()  # planes with ladders in them are compared
  names = go_features.ALPHAGO_POLICY_FEATURES
  fn = jax.jit(functools.partial(features.feature_batch, size=19,
                                 names=names))
  without = {k: v for k, v in batch.items() if k != "ladder"}
  key = jax.random.key(7)
  got, want = fn(batch, key), fn(without, key)  # read here, in XLA
  assert int(got["symmetry"].max()) > 0  # symmetries were applied
  for k in want:
    np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]))


def test_cache_with_ladders_is_its_own_cache(tmp_path):
  path = _tar(tmp_path / "g.tar.gz",
              [("g.sgf", _sgf([2, 20, 10, 11, 18, 12, 29]))])
  plain = data.DatasetConfig(filters=ANY9, fractions=(1, 0, 0))
  with_ladders = data.DatasetConfig(filters=ANY9, fractions=(1, 0, 0),
                                    ladders=True)
  # Caches built before the option keep their names.
  assert "ladders" not in plain.to_json()
  assert positions.cache_name(path, plain) != positions.cache_name(
      path, with_ladders)
  a = build_cache(path, tmp_path / "c", plain).split("train")
  b = build_cache(path, tmp_path / "c", with_ladders).split("train")
  assert a.ladder is None and "ladder" not in a.take(np.arange(2))
  assert b.ladder.shape == (len(b), 2, 11)
  for f in positions.ARRAYS:
    np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
  # The stored planes are a reading of the stored positions.
  np.testing.assert_array_equal(b.ladder, ladders.packed_planes(
      positions.unpack_stones(b.stones, 9), b.ko, b.to_play, 9))
  with pytest.raises(ValueError, match="ladders must be True or False"):
    data.DatasetConfig(filters=ANY9, ladders=1)


@pytest.mark.parametrize("stones,ko,to_play,match", [
    (np.zeros((1, 80), np.int8), [-1], [0], r"stones must be \[P, 81\]"),
    (np.zeros((2, 81), np.int8), [-1], [0, 0], "2 positions but 1 ko"),
    (np.full((1, 81), 2, np.int8), [-1], [0], "stones must be"),
    (np.zeros((1, 81), np.int8), [81], [0], "ko point outside"),
])
def test_bad_input_is_named(stones, ko, to_play, match):
  with pytest.raises(ValueError, match=match):
    ladders.ladder_planes(stones, np.asarray(ko), np.asarray(to_play), 9)


# In play, states come from a game under positional superko, and a network
# on the 48 planes reads its ladders on the host (`read_ladders`).
SUPERKO = go.Go(size=9)
LADDER_NAMES = go_features.ALPHAGO_POLICY_FEATURES


def _engine_planes(game, states):
  return jax.jit(jax.vmap(lambda s: go_features.alphago_features(
      game, s, LADDER_NAMES)))(states)


def test_play_planes_equal_the_engine_reading_under_superko():
  states = _random_positions(SUPERKO, 32, 45, 4)
  fast = np.asarray(jax.jit(lambda s: policy_games.planes_of(
      SUPERKO, s, LADDER_NAMES))(states))
  np.testing.assert_array_equal(fast, _engine_planes(SUPERKO, states))
  for name in go_features.LADDER_FEATURES:  # both were compared
    plane = go_features.num_planes(LADDER_NAMES[:LADDER_NAMES.index(name)])
    assert fast[..., plane].any()


def test_play_planes_under_an_outer_vmap():
  states = _random_positions(SUPERKO, 8, 45, 5)
  pairs = jax.tree.map(lambda x: x.reshape((2, 4) + x.shape[1:]), states)
  fast = jax.jit(jax.vmap(lambda s: policy_games.planes_of(
      SUPERKO, s, LADDER_NAMES)))(pairs)
  np.testing.assert_array_equal(
      np.asarray(fast).reshape((8,) + fast.shape[2:]),
      _engine_planes(SUPERKO, states))


def test_a_move_banned_by_superko_starts_no_ladder():
  # LADDER's captures at (2,3) and (3,2), with (2,3) marked illegal as a
  # superko ban would: neither reading offers it.
  state = SUPERKO.from_ascii(LADDER)
  banned = state.replace(legal_action_mask=state.legal_action_mask.at[
      2 * 9 + 3].set(False))
  batch = jax.tree.map(lambda x: x[None], banned)
  host = np.asarray(ladders.read_ladders(SUPERKO, batch))[0]
  engine = np.stack([np.asarray(p) for p in go_features.ladder_moves(
      SUPERKO, banned)])
  np.testing.assert_array_equal(host, engine)
  assert _points(host[0].reshape(9, 9)) == [(3, 2)]


def test_read_ladders_names_bad_states():
  with pytest.raises(ValueError, match="batch"):
    ladders.read_ladders(SUPERKO, SUPERKO.init(jax.random.key(0)))
  with pytest.raises(ValueError, match="Go game"):
    ladders.read_ladders("go", SUPERKO.init(jax.random.key(0)))
