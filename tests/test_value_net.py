"""The value network v_θ and its data: the generator keeps one position a
game, the move at U is legal and the stored position is the engine's, U is
uniform, chunks resume and damage is named; the network's configs, the
quick run's MSE falls, a resumed run equals an uninterrupted one, and
checkpoints of another network are refused.

Everything shares one generated 5x5 folder (two chunks of 256 games of a
tiny random policy, U_max = the 50-move cap, so that games ending before U
are discarded) and one compiled training step."""

import dataclasses
import functools
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.core import config_codec
from alphago_jax.data import features
from alphago_jax.data.positions import unpack_stones
from alphago_jax.games import go_features
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.models.value import (ValueNet, ValueNetConfig,
                                      init_value_variables, make_value_fn,
                                      symmetric_mean)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import policy_games
from alphago_jax.training import read_metrics
from alphago_jax.training import optim
from alphago_jax.training import supervised as sl
from alphago_jax.training import value_data as vd
from alphago_jax.training import value_net as vn

from record_files import PRO
from resume_checks import assert_resumed_equals_whole, interrupt_and_resume

SIZE = 5
U_MAX = 50  # the 5x5 move cap: many games end before U
CONFIG = vd.ValueDataConfig(board_size=SIZE, chunk_games=256,
                            max_random_ply=U_MAX, test_fraction=0.25, seed=3)
POLICY = PolicyNetConfig.tiny(board_size=SIZE)


@pytest.fixture(scope="module")
def policy():
  return POLICY, init_policy_variables(PolicyNet(POLICY), jax.random.key(0))


@pytest.fixture(scope="module")
def folder(tmp_path_factory, policy):
  path = tmp_path_factory.mktemp("value5")
  vd.generate(path, CONFIG, policy, games=2 * CONFIG.chunk_games,
              sources={"sl": "tiny random"})
  return path


def _chunks(folder):
  return [vd._read_chunk(vd.chunk_path(str(folder), c))  # pylint: disable=protected-access
          for c in vd.finished_chunks(str(folder))]


def test_one_position_a_game_and_the_discard_rule(folder):
  chunks = _chunks(folder)
  assert len(chunks) == 2
  for c, a in enumerate(chunks):
    b = CONFIG.chunk_games
    # Exactly one position per kept game, none for a discarded one.
    np.testing.assert_array_equal(a["game"], c * b + np.flatnonzero(
        a["kept"]))
    # Kept exactly when the game reached ply U: longer than U moves.
    np.testing.assert_array_equal(a["kept"], a["length"] > a["random_ply"])
    kept = a["kept"]
    np.testing.assert_array_equal(a["ply"], a["random_ply"][kept] + 1)
    assert 0 < kept.sum() < b  # both cases happen at U_max = the cap
  train, test, summary = vd.load_value_data(folder)
  assert summary["positions"] == len(train) + len(test) == sum(
      int(a["kept"].sum()) for a in chunks)
  assert summary["games"] == 512
  assert summary["discarded"] == 512 - summary["positions"]
  assert not set(train.game) & set(test.game)
  assert 0.1 < len(test) / summary["positions"] < 0.4


def test_u_is_uniform():
  # The draw itself: 200k draws cover exactly {0, .., U_max - 1}, evenly
  # (chi-square, 49 degrees of freedom: 85.35 is the 0.999 quantile, so a
  # correct sampler fails for 1 key in 1,000; this key is fixed).
  u = np.asarray(vd.draw_random_plies(jax.random.key(11), 200_000, U_MAX))
  counts = np.bincount(u, minlength=U_MAX)
  assert counts.size == U_MAX and counts.min() > 0
  expected = 200_000 / U_MAX
  assert np.sum((counts - expected) ** 2 / expected) < 85.35


def test_u_of_the_games_is_uniform_over_the_range(folder):
  # Every game's U (kept or not): 10 bins of 5 plies, chi-square with 9
  # degrees of freedom below 27.88, its 0.999 quantile (fixed seed).
  u = np.concatenate([a["random_ply"] for a in _chunks(folder)])
  assert u.min() >= 0 and u.max() < U_MAX
  counts = np.bincount(u // 5, minlength=10)
  expected = len(u) / 10
  assert np.sum((counts - expected) ** 2 / expected) < 27.88, counts


def test_random_move_is_legal_and_the_position_is_the_engines(folder):
  """Replays every game's moves in the engine (simple ko, as played): the
  move at U is a legal point, the recorded position rebuilds to the
  engine's state after it (board, ko, player, ply, legal mask), the next
  move is the one recorded, and the final score
  and the outcome agree."""
  game = CONFIG.game()
  chunks = _chunks(folder)
  moves = np.concatenate([a["moves"] for a in chunks])        # [G, T]
  u = np.concatenate([a["random_ply"] for a in chunks])
  kept = np.concatenate([a["kept"] for a in chunks])
  score = np.concatenate([a["score"] for a in chunks])
  g = len(u)
  n2 = SIZE * SIZE

  @jax.jit
  def replay(moves, u):
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), g))

    def body(carry, t):
      states, before, after = carry
      a = moves[:, t]
      at_u = (t == u)[:, None]
      before = jnp.where(at_u, states.legal_action_mask, before)
      states = jax.vmap(game.step)(states, jnp.where(a >= 0, a, n2))
      after = jax.tree.map(
          lambda x, y: jnp.where(at_u.reshape((g,) + (1,) * (x.ndim - 1)),
                                 y, x), after, states)
      return (states, before, after), None

    init = (states, states.legal_action_mask, states)
    (final, before, after), _ = jax.lax.scan(body, init,
                                             jnp.arange(moves.shape[1]))
    return final, before, after

  final, before, after = jax.device_get(replay(
      jnp.asarray(moves, jnp.int32), jnp.asarray(u, jnp.int32)))
  np.testing.assert_array_equal(final.terminated, True)
  np.testing.assert_allclose(final.score, score)
  idx = np.flatnonzero(kept)
  random_move = moves[idx, u[idx]]
  # A legal point; pass only when no point is legal (a full 5x5 board).
  assert before[idx, random_move].all()
  passed = random_move == n2
  assert not before[idx[passed], :n2].any()
  assert passed.mean() < 0.05
  train, test, _ = vd.load_value_data(folder)
  rows = {int(gi): (p, i) for p in (train, test)
          for i, gi in enumerate(p.game)}
  order = [rows[int(i)] for i in idx]
  batch = {f: np.stack([getattr(p, f)[i] for p, i in order])
           for f in ("stones", "recent", "ply", "ko", "to_play", "action",
                     "outcome")}
  np.testing.assert_array_equal(
      unpack_stones(batch["stones"], SIZE),
      np.sign(after.board[idx]).astype(np.int8))
  np.testing.assert_array_equal(batch["ko"], after.ko[idx])
  np.testing.assert_array_equal(batch["to_play"], after.current_player[idx])
  np.testing.assert_array_equal(batch["ply"], after.step_count[idx])
  nxt = np.where(u[idx] + 1 < moves.shape[1],
                 moves[idx, np.minimum(u[idx] + 1, moves.shape[1] - 1)], -1)
  np.testing.assert_array_equal(batch["action"], nxt)
  black = np.sign(score[idx])
  np.testing.assert_array_equal(
      batch["outcome"], np.where(batch["to_play"] == 0, black, -black))
  fgame = features.feature_game(SIZE)
  rebuilt = jax.jit(jax.vmap(lambda p: features.rebuild_state(fgame, p)))(
      batch)
  np.testing.assert_array_equal(np.sign(rebuilt.board),
                                np.sign(after.board[idx]))
  # A random move that ends the game (the move cap, or a second pass)
  # leaves a terminal position, which the engine gives no legal move; its
  # rebuilt state is the position as if play went on.
  ended = after.terminated[idx]
  np.testing.assert_array_equal(ended, (batch["ply"] == game.move_cap) | (
      passed & (batch["recent"][:, 1] == n2)))
  assert ended.mean() < 0.1
  live = ~ended
  np.testing.assert_array_equal(rebuilt.legal_action_mask[live],
                                after.legal_action_mask[idx][live])


def test_playout_temperature_zero_plays_the_greedy_move_after_u(policy):
  """With `playout_temperature` 0 and p_σ for both parts, every move after
  the random one is the greedy move of p_σ among the sensible moves
  (replayed in the engine, logits recomputed), while the moves before U
  are samples (at temperature 1 some differ from the greedy move)."""
  model, variables = policy
  game = CONFIG.game()
  g = 32
  out = jax.device_get(jax.jit(functools.partial(
      vd.play_value_games, game, model, variables, None, None,
      num_games=g, max_random_ply=20, playout_temperature=0.0,
      record=True))(jax.random.key(5)))
  moves, u = out["actions"].T, out["random_ply"]            # [G, T], [G]
  logits_fn = policy_games.policy_logits_fn(model, game)

  @jax.jit
  def greedy_moves(moves):
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), g))

    def body(states, t):
      mask = policy_games.sensible_mask(game, states)
      best = jnp.argmax(jnp.where(mask, logits_fn(variables, states),
                                  -jnp.inf), axis=-1)
      a = moves[:, t]
      states = jax.vmap(game.step)(states, jnp.where(a >= 0, a, n2))
      return states, best

    return jax.lax.scan(body, states, jnp.arange(moves.shape[1]))[1].T

  n2 = SIZE * SIZE
  best = np.asarray(greedy_moves(jnp.asarray(moves, jnp.int32)))
  t = np.arange(moves.shape[1])[None, :]
  played = moves >= 0
  after = played & (t > u[:, None])
  before = played & (t < u[:, None])
  assert after.sum() > 200 and before.sum() > 100
  np.testing.assert_array_equal(moves[after], best[after])
  assert (moves[before] != best[before]).mean() > 0.2


def test_playout_temperature_default_keeps_older_folders_settings():
  """None (the default) is left out of the pinned settings, so folders
  made before the option existed still resume; a value is pinned."""
  assert "playout_temperature" not in config_codec.to_json(
      vd.ValueDataConfig())
  assert config_codec.to_json(vd.ValueDataConfig(playout_temperature=0.5))[
      "playout_temperature"] == 0.5


def test_chunks_resume_and_damage_is_named(folder, policy, tmp_path):
  before = {c: vd._read_chunk(vd.chunk_path(str(folder), c))  # pylint: disable=protected-access
            for c in (0, 1)}
  # A run over the same folder plays nothing new; with chunk 1 gone and a
  # killed writer's temporary file left, it replays exactly chunk 1.
  again = vd.generate(folder, CONFIG, policy, games=512,
                      sources={"sl": "tiny random"})
  assert again["new_games"] == 0
  os.remove(vd.chunk_path(str(folder), 1))
  junk = vd.chunk_path(str(folder), 1) + ".tmp-12345"
  with open(junk, "wb") as f:
    f.write(b"half a chunk")
  redone = vd.generate(folder, CONFIG, policy, games=300,
                       sources={"sl": "tiny random"})
  assert redone["new_games"] == 256 and not os.path.exists(junk)
  after = vd._read_chunk(vd.chunk_path(str(folder), 1))  # pylint: disable=protected-access
  for k, v in before[1].items():
    np.testing.assert_array_equal(after[k], v)
  # Other settings are refused, naming what differs.
  with pytest.raises(vd.ValueDataError, match="seed"):
    vd.generate(folder, dataclasses.replace(CONFIG, seed=4), policy,
                games=512, sources={"sl": "tiny random"})
  # A missing folder, a folder that is not value data, a damaged chunk.
  with pytest.raises(vd.ValueDataError, match=f"{tmp_path / 'none'}.*does "
                     f"not exist"):
    vd.load_value_data(tmp_path / "none")
  with pytest.raises(vd.ValueDataError, match="no config.json"):
    vd.load_value_data(tmp_path)
  broken = tmp_path / "broken"
  broken.mkdir()
  for name in ("config.json", "chunk-00000.npz"):
    data = (folder / name).read_bytes()
    (broken / name).write_bytes(data[:len(data) // 2] if name.endswith(
        "npz") else data)
  with pytest.raises(vd.ValueDataError,
                     match=f"{broken / 'chunk-00000.npz'}.*unreadable"):
    vd.load_value_data(broken)


TWO_DEVICES = """
import sys
import jax, numpy as np
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.training.mesh import make_mesh
from alphago_jax.training import value_data as vd
assert jax.device_count() == 2, jax.devices()
model = PolicyNetConfig.tiny(board_size=5)
# Committed to one device, as a loaded checkpoint is (regression: the
# 2-device generator refused such networks).
policy = (model, jax.device_put(init_policy_variables(
    PolicyNet(model), jax.random.key(0)), jax.devices()[0]))
config = vd.ValueDataConfig(board_size=5, chunk_games=8, max_random_ply=12,
                            test_fraction=0.25, seed=3)
one, two = sys.argv[1], sys.argv[2]
vd.generate(one, config, policy, games=24)
# 3 chunks on 2 devices: a pair, then a last group of one (padded).
vd.generate(two, config, policy, games=24, mesh=make_mesh())
assert vd.finished_chunks(one) == vd.finished_chunks(two) == [0, 1, 2]
read = vd._read_chunk  # pylint: disable=protected-access
for c in range(3):
  a, b = read(vd.chunk_path(one, c)), read(vd.chunk_path(two, c))
  assert a.keys() == b.keys()
  for k in a:
    np.testing.assert_array_equal(a[k], b[k], err_msg=f"chunk {c} {k}")
# The chunks differ from each other (each its own key).
assert not np.array_equal(read(vd.chunk_path(one, 0))["moves"],
                          read(vd.chunk_path(one, 1))["moves"])
print("OK")
"""


def test_two_devices_play_the_chunks_one_device_plays(tmp_path, two_devices):
  """Chunks played two at a time on a 2-device mesh (and a last one
  alone) equal the chunks of one device: the folder does not depend on
  the device count, so a run may resume on another machine."""
  out = two_devices.run(TWO_DEVICES, tmp_path / "one", tmp_path / "two")
  assert out.strip().splitlines()[-1] == "OK"


def test_data_config_errors_name_the_field():
  for bad, field in ((dict(board_size=4), "board_size"),
                     (dict(max_random_ply=0), "max_random_ply"),
                     (dict(board_size=9, max_random_ply=163),
                      "max_random_ply"),
                     (dict(chunk_games=3), "chunk_games"),
                     (dict(test_fraction=1.0), "test_fraction"),
                     (dict(temperature=0), "temperature"),
                     (dict(playout_temperature=-1.0), "playout_temperature"),
                     (dict(playout_temperature=True), "playout_temperature"),
                     (dict(komi=float("nan")), "komi")):
    with pytest.raises(ValueError, match=field):
      vd.ValueDataConfig(**bad)
  assert vd.ValueDataConfig().u_max == 450
  assert vd.ValueDataConfig(board_size=9).u_max == 101


def test_regression_value_wsd_schedule_had_no_decay_fraction():
  # ValueTrainConfig took "wsd" but lacked the decay_fraction it reads, so
  # making its optimiser raised AttributeError. Both configs now share
  # `optim.ScheduleConfig`: the value run's wsd rate is the policy run's.
  shared = dict(batch_size=10, learning_rate=1.0, warmup_steps=10,
                total_samples=1000, schedule="wsd", decay_fraction=0.2,
                final_lr_fraction=0.1)
  value_rate = optim.make_schedule(vn.ValueTrainConfig(**shared))
  policy_rate = optim.make_schedule(sl.SupervisedConfig(**shared))
  for step, expected in {0: 0.0, 10: 1.0, 80: 1.0, 90: 0.55, 100: 0.1}.items():
    assert float(value_rate(step)) == pytest.approx(expected, abs=1e-6)
    assert float(policy_rate(step)) == pytest.approx(expected, abs=1e-6)
  vn.make_optimizer(vn.ValueTrainConfig(**shared))
  with pytest.raises(ValueError, match="decay_fraction"):
    vn.ValueTrainConfig(schedule="wsd", decay_fraction=1.5)
  # The value stage keeps its own defaults over the shared ones.
  assert (vn.ValueTrainConfig().warmup_steps,
          vn.ValueTrainConfig().weight_decay) == (200, 1e-5)
  assert (sl.SupervisedConfig().warmup_steps,
          sl.SupervisedConfig().weight_decay) == (500, 0.0)


def test_value_net_shapes_and_configs():
  config = ValueNetConfig.tiny(board_size=SIZE)
  assert config.features[-1] == "player_colour"
  assert config.num_planes == go_features.num_planes(
      go_features.DEFAULT_POLICY_FEATURES) + 1
  net = ValueNet(config)
  variables = init_value_variables(net, jax.random.key(0))
  planes = jax.random.uniform(jax.random.key(1), (4, SIZE, SIZE,
                                                   config.num_planes))
  values = make_value_fn(net)(variables, planes)
  assert values.shape == (4,) and bool(jnp.all(jnp.abs(values) <= 1))
  # The 8-symmetry mean is the same for every orientation of the boards;
  # one orientation alone is not (the untrained net is not symmetric).
  from alphago_jax.games import symmetry  # pylint: disable=import-outside-toplevel
  # Jitted: one compilation for the 8 orientations, not op-by-op dispatch.
  sym_mean = jax.jit(functools.partial(symmetric_mean, make_value_fn(net)))
  mean = sym_mean(variables, planes)
  assert mean.shape == (4,)
  for j in range(1, 8):
    turned = symmetry.transform_observation(planes, j)
    np.testing.assert_allclose(sym_mean(variables, turned), mean, atol=1e-5)
  assert not np.allclose(make_value_fn(net)(
      variables, symmetry.transform_observation(planes, 1)), values,
                         atol=1e-5)
  # The paper's network: 13 convolutions of 192 on 49 planes, 5x5 first,
  # then a 1x1 of one filter, 256 ReLU units and one tanh output.
  paper = ValueNetConfig.paper()
  assert paper.num_planes == 49
  shapes = jax.eval_shape(lambda k: init_value_variables(ValueNet(paper), k),
                          jax.random.key(0))["params"]
  assert shapes["Conv_0"]["kernel"].shape == (5, 5, 49, 192)
  assert shapes["Conv_11"]["kernel"].shape == (3, 3, 192, 192)
  assert shapes["Conv_12"]["kernel"].shape == (1, 1, 192, 1)
  assert shapes["Dense_0"]["kernel"].shape == (361, 256)
  assert shapes["Dense_1"]["kernel"].shape == (256, 1)
  assert ValueNetConfig.cpu() == ValueNetConfig()
  for bad, field in ((dict(num_layers=1), "num_layers"),
                     (dict(filters=0), "filters"),
                     (dict(hidden=0), "hidden"),
                     (dict(board_size=True), "board_size"),
                     (dict(features="stone_colour"), "features"),
                     (dict(features=("stone_colour", "nope")), "nope")):
    with pytest.raises(ValueError, match=field):
      ValueNetConfig(**bad)
  for bad, field in ((dict(batch_size=0), "batch_size"),
                     (dict(optimizer="rmsprop"), "optimizer"),
                     (dict(learning_rate=-1.0), "learning_rate"),
                     (dict(model=PolicyNetConfig()), "model")):
    with pytest.raises(ValueError, match=field):
      vn.ValueTrainConfig(**bad)
  round_trip = vn.ValueTrainConfig.from_json(json.loads(json.dumps(
      vn.ValueTrainConfig(model=paper).to_json())))
  assert round_trip.model == paper


def _tiny(**kw):
  kw.setdefault("model", ValueNetConfig.tiny(board_size=SIZE))
  kw.setdefault("batch_size", 32)
  kw.setdefault("learning_rate", 3e-3)
  kw.setdefault("schedule", "constant")
  kw.setdefault("warmup_steps", 0)
  kw.setdefault("weight_decay", 0.0)
  return vn.ValueTrainConfig(**kw)


def test_quick_run_mse_falls_and_resume_equals_uninterrupted(folder,
                                                             tmp_path):
  train, test, _ = vd.load_value_data(folder)
  config = _tiny(total_samples=80 * 32)
  kw = dict(seed=1, checkpoint_seconds=0, tensorboard=False)
  whole, history = vn.train_value(
      config, train, eval_sets={"train": train, "test": test},
      output_dir=str(tmp_path / "a"), log_every=10, eval_every=40, **kw)
  evals = [r for r in history if "train_mse" in r]
  assert [r["iteration"] for r in evals] == [40, 80]
  first = vn.evaluate_value(
      {"params": vn.init_value_state(config, 1).params}, config.model, train)
  # An untrained net (values near 0) scores about 1; training fits.
  assert first["mse"] > 0.9 and first["positions"] == len(train)
  # Measured: train 1.00 -> 0.79 -> 0.52, test -> 0.84 -> 0.60.
  assert evals[-1]["train_mse"] < first["mse"] - 0.15, (first, evals)
  assert evals[-1]["test_mse"] < 0.9, evals
  assert history[-1]["stop"] == "num_steps"
  # Interrupted at step 30, resumed: the same params as the whole run.
  resumed = interrupt_and_resume(
      functools.partial(vn.train_value, config, train, log_every=10, **kw),
      str(tmp_path / "b"), interrupted_at=30, batch_size=32)
  assert_resumed_equals_whole(whole, resumed, tmp_path / "a", tmp_path / "b",
                              metric="mse", iterations=(80, 40))
  model, variables, step = vn.load_value(tmp_path / "a" / "checkpoints")
  assert model == config.model and step == 80
  again = vn.evaluate_value(variables, model, train)
  assert again["mse"] == pytest.approx(evals[-1]["train_mse"], rel=1e-5)
  # Per position (eval_value's path), with an odd batch padded: the same
  # MSE, and outcomes from the mover's side as the training step reads them.
  v, z = vn.predict_values(variables, model, test, batch_size=7)
  assert v.shape == z.shape == (len(test),)
  assert set(np.unique(z)) <= {-1.0, 1.0}
  assert float(np.mean((v - z) ** 2)) == pytest.approx(
      vn.evaluate_value(variables, model, test)["mse"], rel=1e-5)
  v8, z8 = vn.predict_values(variables, model, test, batch_size=7,
                             symmetries=8)
  np.testing.assert_array_equal(z8, z)
  assert not np.allclose(v8, v) and np.all(np.abs(v8) <= 1)
  with pytest.raises(ValueError, match="symmetries must be 1 or 8"):
    vn.predict_values(variables, model, test, symmetries=4)


def test_checkpoint_of_another_network_is_refused(tmp_path):
  config = _tiny()
  # A policy-network checkpoint where a value network is asked for, and
  # the other way round.
  policy = sl.SupervisedConfig(model=POLICY)
  ckpt.save_checkpoint(tmp_path / "policy", sl.init_supervised_state(
      policy, 0), with_buffer=False, architecture=policy.architecture())
  with pytest.raises(ckpt.CheckpointMismatchError,
                     match=f"{tmp_path / 'policy'}.*not a value-network"):
    vn.load_value(tmp_path / "policy")
  with pytest.raises(ckpt.CheckpointMismatchError, match="stage"):
    ckpt.restore_checkpoint(tmp_path / "policy",
                            vn.init_value_state(config, 0),
                            architecture=config.architecture())
  value_dir = tmp_path / "value"
  ckpt.save_checkpoint(value_dir, vn.init_value_state(config, 0),
                       with_buffer=False, architecture=config.architecture())
  with pytest.raises(ckpt.CheckpointMismatchError,
                     match="not a policy-network"):
    sl.load_policy(value_dir)
  # Another value network: the differing field is named.
  wider = dataclasses.replace(config, model=dataclasses.replace(
      config.model, hidden=32))
  with pytest.raises(ckpt.CheckpointMismatchError, match="hidden"):
    ckpt.restore_checkpoint(value_dir, vn.init_value_state(wider, 0),
                            architecture=wider.architecture())
  with pytest.raises(FileNotFoundError, match="no checkpoint"):
    vn.load_value(tmp_path / "none")


@pytest.mark.slow
def test_value_data_and_value_net_commands(tmp_path):
  from helpers import ROOT, run_mains  # pylint: disable=import-outside-toplevel
  value_data = os.path.join(ROOT, "experiments", "alphago", "value_data.py")
  value_net = os.path.join(ROOT, "experiments", "alphago", "value_net.py")
  eval_value = os.path.join(ROOT, "experiments", "alphago", "eval_value.py")
  out, run = tmp_path / "data", tmp_path / "run"
  gen = [value_data, ["--quick", "--size", "5", "--output", out]]
  # --monitor-split test: the runs' test curves are what eval_value must
  # reproduce below (new runs monitor validation: tests/test_held_out.py).
  train = [value_net, ["--quick", "--data", out, "--output", run,
                       "--monitor-split", "test"]]
  (made, again, summary, trained, refused, resumed, missing,
   whole, whole_resumed, evaluated, evaluated_whole, no_split) = run_mains([
       gen, gen, (value_data, ["--summary", "--output", out]), train, train,
       (value_net, ["--resume", "--output", run]),
       (value_net, ["--quick", "--data", tmp_path / "nowhere", "--output",
                    tmp_path / "run2"]),
       # The overfitting comparison's source: every position of game
       # records, split by game as asked.
       (value_net, ["--quick", "--kgs", PRO, "--size", "9", "--min-rank",
                    "none", "--fractions", "0.8", "0.1", "0.1", "--cache",
                    tmp_path / "cache", "--output", tmp_path / "whole",
                    "--monitor-split", "test"]),
       # Regression: a resume without --cache built a second cache in the
       # default folder instead of reading the run's own.
       (value_net, ["--resume", "--output", tmp_path / "whole"]),
       # eval_value, per position, against the training run's sums: the
       # value data's test chunks, and the records' own test split.
       (eval_value, ["--value-data", out, "--checkpoint", run]),
       (eval_value, ["--data", PRO, "--checkpoint", tmp_path / "whole",
                     "--min-rank", "none", "--cache", tmp_path / "cache"]),
       (eval_value, ["--data", PRO, "--checkpoint", run, "--split",
                     "test"])],
      devices=2)
  for res, run_dir in ((evaluated, run), (evaluated_whole,
                                          tmp_path / "whole")):
    assert res.returncode == 0, res.stderr[-3000:]
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("RESULT mse="), last
    trained_mse = [m for m in read_metrics(run_dir / "metrics.jsonl")
                   if "test_mse" in m][-1]["test_mse"]
    assert float(last.split()[1].split("=")[1]) == pytest.approx(
        trained_mse, abs=2e-4)
    assert "95% CI [" in res.stdout
  assert no_split.returncode == 2 and "not trained on" in no_split.stderr
  assert whole.returncode == 0, whole.stderr[-3000:]
  assert whole.stdout.strip().splitlines()[-1].startswith("RESULT ")
  source = json.loads((tmp_path / "whole" / "config.json").read_text())[
      "source"]
  assert source["kind"] == "kgs"
  assert source["dataset"]["fractions"] == [0.8, 0.1, 0.1]
  assert whole_resumed.returncode == 0, whole_resumed.stderr[-3000:]
  assert f"KGS cache {tmp_path / 'cache'}" in (whole_resumed.stdout
                                              + whole_resumed.stderr)
  assert made.returncode == 0, made.stderr[-3000:]
  assert made.stdout.strip().splitlines()[-1].startswith("RESULT games=64 ")
  assert again.returncode == 0 and " new_games=0 " in again.stdout
  assert summary.returncode == 0 and "games=64" in summary.stdout
  assert trained.returncode == 0, trained.stderr[-3000:]
  result = trained.stdout.strip().splitlines()[-1]
  assert result.startswith("RESULT train_mse=") and " test_mse=" in result
  saved = json.loads((run / "config.json").read_text())
  assert saved["config"]["model"]["board_size"] == 5
  assert saved["source"]["kind"] == "value_data"
  assert refused.returncode != 0 and "--resume" in refused.stderr
  assert resumed.returncode == 0, resumed.stderr[-3000:]
  assert resumed.stdout.strip().splitlines()[-1].startswith("RESULT ")
  assert missing.returncode == 1
  assert str(tmp_path / "nowhere") in missing.stderr


def test_eval_value_writes_a_result_file_of_what_it_printed(tmp_path):
  """eval_value's --output: the printed figures, the checkpoint's weights
  by hash, the records by their archive's size and CRC."""
  import zlib  # pylint: disable=import-outside-toplevel
  from helpers import ROOT, run_mains  # pylint: disable=import-outside-toplevel
  from record_files import PRO, PRO_ARCHIVE, need  # pylint: disable=import-outside-toplevel
  from alphago_jax.core import result_file  # pylint: disable=import-outside-toplevel
  need(PRO)
  checkpoint = os.path.join(ROOT, "checkpoints", "value9s2")
  path = tmp_path / "results" / "value.json"
  (res,) = run_mains([(os.path.join(ROOT, "experiments", "alphago",
                                    "eval_value.py"),
                       ["--data", PRO, "--checkpoint", checkpoint,
                        "--min-rank", "none", "--limit", "300", "--cache",
                        tmp_path / "cache", "--output", path])])
  assert res.returncode == 0, res.stderr[-3000:]
  printed = dict(kv.split("=") for kv in
                 res.stdout.strip().splitlines()[-1].split()[1:])
  written = json.loads(path.read_text())
  assert f"{written['mse']:.4f}" == printed["mse"]
  assert f"{written['sign_accuracy']:.4f}" == printed["sign_accuracy"]
  assert written["positions"] == 300 == int(printed["positions"])
  assert written["games"] == int(printed["games"]) > 1
  lo, hi = written["mse_interval"]
  assert 0 <= lo < written["mse"] < hi
  _, variables, step = vn.load_value(
      os.path.join(checkpoint, "checkpoints"))
  assert written["checkpoint_step"] == step
  assert written["variables_sha256"] == result_file.variables_sha256(
      variables)
  with open(PRO_ARCHIVE, "rb") as f:
    archive = f.read()
  assert written["dataset"]["archives"] == [{
      "name": os.path.basename(PRO_ARCHIVE), "num_bytes": len(archive),
      "crc32": zlib.crc32(archive)}]
  assert written["split"] == "all" and written["dataset"]["filters"][
      "size"] == 9
