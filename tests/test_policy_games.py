"""Batched policy games: the move mask, sampling, and games that replay
legally through the engine to the same score, never filling an own eye and
ending within the cap."""

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.games import go_features
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.training import policy_games as pg

MODEL = PolicyNetConfig.tiny(board_size=5)
GAME = pg.make_game(5)
NUM_GAMES = 8


@pytest.fixture(scope="module")
def played():
  net = PolicyNet(MODEL)
  va = init_policy_variables(net, jax.random.key(0))
  vb = init_policy_variables(net, jax.random.key(1))
  play = pg.make_play_fn(GAME, (MODEL, MODEL), num_games=NUM_GAMES,
                         record=True)
  states, outcome, rec = play(va, vb, jax.random.key(2), jnp.float32(1.0))
  return jax.device_get((states, outcome, rec))


def test_sensible_mask_keeps_own_eyes_and_passes_for_last():
  # Black to move: the top-left corner (point 0) is its eye.
  state = GAME.from_ascii("""
      .X...
      X....
      .....
      .....
      .....""")
  batch = jax.tree.map(lambda x: x[None], state)
  mask = np.asarray(pg.sensible_mask(GAME, batch))[0]
  assert not mask[0]                     # own eye at the corner
  assert mask[2] and mask[12]            # ordinary points
  assert not mask[1] and not mask[5]     # occupied
  assert not mask[GAME.pass_action]      # other moves remain
  assert pg.sensible_mask(GAME, batch, allow_pass=True)[0, -1]
  # Every other empty point is allowed.
  assert mask.sum() == 25 - 2 - 1  # two stones, one eye
  eyes_only = GAME.from_ascii("""
      .X.X.
      XXXXX
      .X.X.
      XXXXX
      .X.X.""")
  m = np.asarray(pg.sensible_mask(
      GAME, jax.tree.map(lambda x: x[None], eyes_only)))[0]
  assert m[GAME.pass_action] and m.sum() == 1


def test_sample_actions_greedy_ties_masks_and_temperature():
  logits = jnp.array([[1.0, 3.0, 3.0, 0.0], [5.0, 0.0, 0.0, 0.0]])
  mask = jnp.array([[True, True, True, True], [False, True, True, True]])
  sample = jax.jit(pg.sample_actions)
  picks = np.stack([np.asarray(sample(jax.random.key(i), logits, mask,
                                      jnp.float32(0.0))) for i in range(40)])
  assert set(picks[:, 0]) == {1, 2}       # greedy, ties broken at random
  assert set(picks[:, 1]) <= {1, 2, 3} and len(set(picks[:, 1])) > 1
  # At temperature 1 every allowed move turns up, the masked one never.
  hot = np.asarray(sample(jax.random.key(0), jnp.zeros((4000, 4)),
                          jnp.tile(mask[1:], (4000, 1)), jnp.float32(1.0)))
  counts = np.bincount(hot, minlength=4)
  assert counts[0] == 0 and (counts[1:] > 1100).all()
  # A low temperature concentrates on the best move.
  cold = np.asarray(sample(jax.random.key(1), jnp.tile(logits[:1], (400, 1)),
                           jnp.tile(mask[:1], (400, 1)), jnp.float32(0.05)))
  assert np.isin(cold, (1, 2)).all()


def test_games_replay_legally_to_the_same_score(played):
  states, outcome, rec = played
  moves = rec.moves                                    # [T, B]
  assert int(outcome.plies) <= GAME.move_cap
  assert (outcome.lengths <= GAME.move_cap).all()
  assert outcome.finished.all()
  step = jax.jit(jax.vmap(GAME.step))
  eyes = jax.jit(jax.vmap(functools.partial(go_features.own_eyes, GAME)))
  replay = jax.vmap(GAME.init)(jax.random.split(jax.random.key(0),
                                                NUM_GAMES))
  n2 = GAME.num_points
  for t in range(int(outcome.plies)):
    running = ~np.asarray(replay.terminated)
    np.testing.assert_array_equal(moves[t] >= 0, running)
    a = np.where(running, moves[t], n2)
    legal = np.asarray(replay.legal_action_mask)
    assert legal[np.arange(NUM_GAMES), a][running].all(), t
    eye = np.asarray(eyes(replay))
    on_board = a < n2
    assert not eye[np.arange(NUM_GAMES), np.minimum(a, n2 - 1)][
        running & on_board].any(), f"own eye filled at ply {t}"
    # Pass only when no sensible point was left.
    no_point = ~(legal[:, :n2] & ~eye).any(axis=1)
    assert (no_point[running & ~on_board]).all(), t
    replay = step(replay, jnp.asarray(a))
  assert np.asarray(replay.terminated).all()
  np.testing.assert_array_equal(np.asarray(replay.score), outcome.score)
  np.testing.assert_array_equal(np.asarray(replay.step_count),
                                outcome.lengths)
  black = np.sign(outcome.score)
  np.testing.assert_array_equal(outcome.reward_a,
                                np.where(np.arange(NUM_GAMES) < 4, black,
                                         -black))


def test_record_holds_player_a_moves(played):
  _, outcome, rec = played
  plies = int(outcome.plies)
  valid = rec.valid[:plies]
  # A is Black in games 0-3 (even plies) and White in 4-7 (odd plies).
  np.testing.assert_array_equal(rec.games[0], np.arange(4))
  np.testing.assert_array_equal(rec.games[1], np.arange(4, 8))
  played_moves = np.take_along_axis(rec.moves[:plies], rec.games[:plies], 1)
  np.testing.assert_array_equal(rec.actions[:plies][valid],
                                played_moves[valid])
  allowed = np.take_along_axis(rec.masks[:plies],
                               rec.actions[:plies][..., None], 2)[..., 0]
  assert allowed[valid].all()
  # A moves in each of its games about half the plies of that game.
  per_game = np.zeros(NUM_GAMES, int)
  np.add.at(per_game, rec.games[:plies][valid], 1)
  np.testing.assert_array_equal(per_game, (outcome.lengths + np.where(
      np.arange(NUM_GAMES) < 4, 1, 0)) // 2)
  assert rec.planes.dtype == np.uint8 and rec.planes.max() == 1
  assert not rec.valid[plies:].any()


def test_moves_only_record_is_the_full_records_games(played):
  # The same key plays the same games whether A's planes are recorded,
  # only the moves, or nothing.
  _, outcome, rec = jax.device_get(played)
  net = PolicyNet(MODEL)
  va = init_policy_variables(net, jax.random.key(0))
  vb = init_policy_variables(net, jax.random.key(1))
  for record in ("moves", False):
    play = pg.make_play_fn(GAME, (MODEL, MODEL), num_games=NUM_GAMES,
                           record=record)
    _, again, moves = play(va, vb, jax.random.key(2), jnp.float32(1.0))
    np.testing.assert_array_equal(again.score, outcome.score)
    np.testing.assert_array_equal(again.lengths, outcome.lengths)
    if record:
      assert moves.planes is None and moves.masks is None
      np.testing.assert_array_equal(moves.moves, rec.moves)
    else:
      assert moves is None
  with pytest.raises(ValueError, match="record must be"):
    pg.play_games(GAME, (MODEL, MODEL), (va, vb), jax.random.key(0),
                  num_games=2, record="planes")


def test_policy_match_writes_games_that_replay_to_their_results(tmp_path):
  from alphago_jax.games import match_sgf, sgf  # pylint: disable=import-outside-toplevel
  from alphago_jax.games.go import BLACK  # pylint: disable=import-outside-toplevel
  net = PolicyNet(MODEL)
  va = init_policy_variables(net, jax.random.key(0))
  vb = init_policy_variables(net, jax.random.key(1))
  key = jax.random.key(3)
  # Two batches of 4 games (one compiled program each way, with the moves
  # recorded and without), capped at 30 moves.
  kwargs = dict(games_per_colour=4, batch_games=4, game=GAME, max_moves=30)
  plain = pg.policy_match(MODEL, va, MODEL, vb, key, **kwargs)
  names = pg.SgfNames(match="p-rho-vs-p-sigma",
                      player_a=match_sgf.Player("p_rho"),
                      player_b=match_sgf.Player("p_sigma"), seed=9)
  folder = tmp_path / "games"
  written = pg.policy_match(MODEL, va, MODEL, vb, key, sgf_dir=str(folder),
                            sgf=names, **kwargs)
  assert written == plain  # recording the moves changes no game
  files = sorted(os.listdir(folder))
  assert files == [f"p-rho-vs-p-sigma-{i:04d}.sgf" for i in range(8)]
  wins = 0
  for name in files:
    record = sgf.parse_sgf((folder / name).read_bytes(), source=name)
    assert {record.black_name, record.white_name} == {"p_rho", "p_sigma"}
    assert record.rules == "Tromp-Taylor, simple ko"
    _, states = sgf.record_to_states(record, GAME)
    last = jax.tree.map(lambda x: x[-1], states)
    score = (float(last.score) if bool(last.terminated)
             else float(GAME.area_score(last)))
    assert score == sgf.result_score(record.result), name
    assert bool(last.terminated) or len(record.moves) == 30
    wins += record.winner == (BLACK if record.black_name == "p_rho"
                              else 1 - BLACK)
  assert wins == plain["wins"]


def test_bad_arguments_raise():
  with pytest.raises(ValueError, match="num_games"):
    pg.play_games(GAME, (MODEL, MODEL), (None, None), jax.random.key(0),
                  num_games=3)
  with pytest.raises(ValueError, match="9x9"):
    pg.policy_logits_fn(PolicyNetConfig.tiny(board_size=9), GAME)
  with pytest.raises(ValueError, match="games_per_colour"):
    pg.policy_match(MODEL, None, MODEL, None, jax.random.key(0),
                    games_per_colour=0)


TWO_DEVICES = """
import jax, jax.numpy as jnp, numpy as np
from alphago_jax.models.policy import PolicyNet, PolicyNetConfig, init_policy_variables
from alphago_jax.training.mesh import make_mesh
from alphago_jax.training import policy_games as pg
assert jax.device_count() == 2
model = PolicyNetConfig.tiny(board_size=5)
game = pg.make_game(5)
net = PolicyNet(model)
va = init_policy_variables(net, jax.random.key(0))
vb = init_policy_variables(net, jax.random.key(1))
mesh = make_mesh()
key = jax.random.key(5)
play = pg.make_play_fn(game, (model, model), num_games=8, mesh=mesh)
states, outcome, _ = play(va, vb, key, jnp.float32(1.0))
reward = np.asarray(outcome.reward_a)
# Each device's block is the unsplit game of 4 with the key folded by its
# index: A Black in the first half of each block.
lengths = []
# play_games of 4, jitted (op-by-op dispatch takes longer than compiling).
unsplit = pg.make_play_fn(game, (model, model), num_games=4)
for d in range(2):
  _, alone, _ = unsplit(va, vb, jax.random.fold_in(key, d), jnp.float32(1.0))
  np.testing.assert_array_equal(reward[4 * d:4 * d + 4],
                                np.asarray(alone.reward_a))
  np.testing.assert_array_equal(np.asarray(states.step_count)[4 * d:4 * d + 4],
                                np.asarray(alone.lengths))
  lengths.append(int(alone.plies))
assert int(outcome.plies) == max(lengths)
assert pg.a_is_black_blocks(8, 2).tolist() == [True, True, False, False] * 2
# policy_match: 3 games a colour on 2 devices plays 8, counts 3 + 3.
r = pg.policy_match(model, va, model, vb, key, games_per_colour=3,
                    mesh=mesh)
assert r["games"] == 6 and r["wins"] + r["draws"] + r["losses"] == 6, r
# Regression (rl-policy's closing match crashed): A replicated over the
# mesh, as trained, and B on one device, as loaded.
on_mesh = jax.device_put(va, jax.sharding.NamedSharding(
    mesh, jax.sharding.PartitionSpec()))
on_one = jax.device_put(vb, jax.devices()[0])
again = pg.policy_match(model, on_mesh, model, on_one, key,
                        games_per_colour=3, mesh=mesh)
assert again == r, (again, r)
# Its games as SGFs over the mesh (the moves gathered from both devices):
# the same match, six files.
import os, tempfile
folder = tempfile.mkdtemp()
assert pg.policy_match(model, va, model, vb, key, games_per_colour=3,
                       mesh=mesh, sgf_dir=folder) == r
assert len(os.listdir(folder)) == 6
print("OK")
"""


def test_games_split_over_two_devices_are_the_unsplit_games_per_block(
    two_devices):
  assert two_devices.run(TWO_DEVICES).strip().splitlines()[-1] == "OK"
