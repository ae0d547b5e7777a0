"""AlphaZero training: buffer, self-play targets, the compiled iteration,
checkpoints, metrics, configs and data parallelism."""

import dataclasses
import functools
import hashlib
import os
import sys
import textwrap
from unittest import mock

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games, models, search, training
from alphago_jax.training.replay import (Sample, replay_add, replay_init,
                                         replay_sample)
from alphago_jax.training.metrics import MetricsWriter
from alphago_jax.training.mesh import make_mesh
from alphago_jax.training.learner import loss_fn
from alphago_jax.training.checkpoint import (CheckpointMismatchError,
                                             latest_step, read_metadata,
                                             restore_checkpoint,
                                             save_checkpoint)
from alphago_jax.games.tictactoe import TicTacToe
from alphago_jax.training import loop


GAME = games.make("tictactoe")


def tiny_config(**overrides):
  kw = dict(
      model=models.ResNetConfig(num_blocks=1, channels=8, value_hidden=8),
      search=search.AlphaZeroSearchConfig(
          num_simulations=4, max_num_considered_actions=4,
          temperature_moves=9),
      max_moves=9, num_games=8, random_opening_moves=2,
      buffer_capacity=512, batch_size=32, gradient_steps=4,
      learning_rate=1e-2)
  kw.update(overrides)
  return training.TrainConfig(**kw)


CONFIG = tiny_config()


def leaves_equal(a, b):
  la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
  return len(la) == len(lb) and all(
      np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))


# --- replay buffer -----------------------------------------------------------

def samples(values):
  n = len(values)
  return Sample(
      observation=jnp.zeros((n, 3, 3, 2)),
      legal_action_mask=jnp.ones((n, 9), bool),
      policy=jnp.full((n, 9), 1 / 9), value=jnp.asarray(values, jnp.float32))


def test_buffer_inserts_valid_rows_only_and_wraps():
  buf = replay_init(4, (3, 3, 2), 9)
  buf = replay_add(buf, samples([1, 2, 3]),
                            jnp.array([True, False, True]))
  assert int(buf.size) == 2 and int(buf.next_index) == 2
  np.testing.assert_array_equal(buf.data.value, [1, 3, 0, 0])
  buf = replay_add(buf, samples([4, 5, 6]), jnp.ones(3, bool))
  # Ring: 4, 5 fill rows 2, 3; 6 overwrites the oldest row 0.
  np.testing.assert_array_equal(buf.data.value, [6, 3, 4, 5])
  assert int(buf.size) == 4 and int(buf.next_index) == 1
  with pytest.raises(ValueError, match="capacity"):
    replay_add(buf, samples([0] * 5), jnp.ones(5, bool))


def test_buffer_samples_uniformly_from_filled_rows():
  buf = replay_init(100, (3, 3, 2), 9)
  buf = replay_add(buf, samples([0, 1, 2, 3]), jnp.ones(4, bool))
  rows = replay_sample(buf, jax.random.key(0), 4000)
  counts = np.bincount(np.asarray(rows.value, int), minlength=4)
  assert counts.sum() == 4000 and len(counts) == 4  # Never an empty row.
  assert np.all(np.abs(counts - 1000) < 150)


# --- self-play ---------------------------------------------------------------

def x_is_lost_net(gloom, obs, legal):
  """A uniform prior; the value is `gloom` * (-1 if X is to move else +1).

  gloom = 0 is the zero network: with 4 simulations a root's value, the mean
  of its own 0 and 4 backed-up values, stays >= -0.8, above the resignation
  threshold -0.95. gloom = 1 is sure X is lost (root value -1), so X wants
  to resign at once. One function, so both tests share one compilation.
  """
  del legal
  x_to_move = obs[..., 0].sum((1, 2)) == obs[..., 1].sum((1, 2))
  return (jnp.zeros((obs.shape[0], 9)),
          gloom * jnp.where(x_to_move, -1.0, 1.0))


@functools.lru_cache(maxsize=None)
def compiled_self_play():
  config = search.AlphaZeroSearchConfig(
      num_simulations=4, max_num_considered_actions=4, resign_threshold=-0.95,
      resign_disabled_fraction=0.5)
  return jax.jit(lambda gloom, key: training.self_play(
      GAME, x_is_lost_net, gloom, key, num_games=64, max_moves=9,
      config=config))


def test_self_play_targets_follow_the_outcome():
  ex, valid, stats = compiled_self_play()(0.0, jax.random.key(0))
  assert ex.observation.shape == (64 * 9, 3, 3, 2)
  assert ex.policy.shape == (64 * 9, 9) and valid.shape == (64 * 9,)
  assert float(stats.games_finished) == 64  # Tic-tac-toe ends in 9 moves.
  assert float(stats.resignations) == float(stats.would_resign) == 0
  v = np.asarray(valid).reshape(64, 9)
  z = np.asarray(ex.value).reshape(64, 9)
  lengths = v.sum(1)
  assert float(stats.mean_game_length) == pytest.approx(lengths.mean())
  for g in range(64):
    zs = z[g, :lengths[g]]
    # Alternating movers: z flips sign every move; the last mover won or drew.
    np.testing.assert_array_equal(zs[1:], -zs[:-1])
    assert zs[-1] >= 0
    assert not v[g, lengths[g]:].any()
  pol = np.asarray(ex.policy)[np.asarray(valid)]
  legal = np.asarray(ex.legal_action_mask)[np.asarray(valid)]
  np.testing.assert_allclose(pol.sum(-1), 1, atol=1e-5)
  assert np.all(pol[~legal] == 0)


def test_resignation_and_false_resignation_accounting():
  # X resigns at once where allowed; in the other half of the games the
  # would-be resignation is recorded and the game played out.
  ex, valid, stats = compiled_self_play()(1.0, jax.random.key(1))
  resigned, would = float(stats.resignations), float(stats.would_resign)
  assert resigned + would == 64 and 16 < resigned < 48
  assert 0 <= float(stats.false_resignations) <= would
  z = np.asarray(ex.value).reshape(64, 9)
  v = np.asarray(valid).reshape(64, 9)
  one_move = v.sum(1) == 1  # Resigned at move 0: X's only example, z = -1.
  assert one_move.sum() == resigned
  np.testing.assert_array_equal(z[one_move, 0], -1.0)


# --- the compiled iteration --------------------------------------------------

@pytest.fixture(scope="module")
def three_iterations():
  """3 iterations of CONFIG, tracing counted by a Python side effect."""
  traces = []
  real = loop.self_play

  def counting(*args, **kwargs):
    traces.append(1)  # Runs once per trace, never per call.
    return real(*args, **kwargs)

  with pytest.MonkeyPatch.context() as mp:
    mp.setattr(loop, "self_play", counting)
    loop._make_iteration.cache_clear()
    it = training.make_iteration(GAME, CONFIG)
    state = training.init_train_state(GAME, CONFIG, 0)
    history = []
    for _ in range(3):
      state, m = it(state)
      history.append(jax.device_get(m))
  return it, state, history, len(traces)


def test_one_program_no_retrace_no_callbacks(three_iterations):
  it, state, _, traces = three_iterations
  assert traces == 1 and it._cache_size() == 1
  assert training.make_iteration(GAME, CONFIG) is it  # Cached.
  text = it.lower(state).as_text()
  assert "callback" not in text.lower()
  assert int(state.iteration) == 3


def test_iteration_metrics(three_iterations):
  _, state, history, _ = three_iterations
  m = history[-1]
  for k in ("loss", "value_loss", "policy_loss", "policy_entropy",
            "value_accuracy", "mean_game_length", "examples_added"):
    assert np.isfinite(m[k]), k
  assert 0 <= m["value_accuracy"] <= 1
  assert 0 < m["policy_entropy"] <= np.log(9) + 1e-5
  assert int(state.buffer.size) == sum(h["examples_added"] for h in history)


def test_deterministic_for_a_seed(three_iterations):
  it, state, _, _ = three_iterations
  again = training.init_train_state(GAME, CONFIG, 0)
  for _ in range(3):
    again, _ = it(again)
  assert leaves_equal(state, again)
  other = training.init_train_state(GAME, CONFIG, 1)
  assert not leaves_equal(state.params, other.params)


def test_loss_falls():
  # One run is noisy (over 100 seeds, the 12-iteration ratio below ranged
  # 0.74-1.11), so the median of 5 seeds of 80 iterations (one compilation,
  # ~1 s a seed). Figures are from 100 seeds: group medians of 5, and, for
  # contrast, the same runs with the parameter update removed.
  loss_ratio, kl_ratio, value_ratio = [], [], []
  for seed in range(5):
    state, history = training.train(GAME, CONFIG, seed=seed,
                                    num_iterations=80)
    # The logged loss, last iterations against the first step (random
    # init): learning <= 0.59, without updates >= 0.94.
    losses = [h["loss"] for h in history]
    loss_ratio.append(np.mean(losses[-5:]) / history[0]["loss_first"])
    # Self-play targets move as the network improves, so the logged loss
    # could also fall by easier targets: on the same data, the final buffer,
    # the trained network must fit both targets better than its own init
    # (without updates the ratios are exactly 1). Over 20 seeds, per seed:
    # policy KL <= 0.47, value loss <= 0.69.
    assert int(state.buffer.size) == CONFIG.buffer_capacity  # One shape.
    init = training.init_train_state(GAME, CONFIG, seed)
    before, after = (buffer_fit(params, state.batch_stats, state.buffer.data)
                     for params in (init.params, state.params))
    kl_ratio.append(after["policy_kl"] / before["policy_kl"])
    value_ratio.append(after["value_loss"] / before["value_loss"])
  assert np.median(loss_ratio) < 0.75, loss_ratio
  assert np.median(kl_ratio) < 0.7, kl_ratio
  assert np.median(value_ratio) < 0.85, value_ratio


@jax.jit
def buffer_fit(params, batch_stats, data):
  """The loss terms of `params` on all of `data`. Batch norm is in training
  mode: it normalises by the data's own statistics, not `batch_stats`."""
  _, (_, metrics) = loss_fn(
      params, batch_stats, data, weight_decay=0.0,
      network=models.make_network(GAME, CONFIG.model))
  return metrics


# --- checkpoints and metrics -------------------------------------------------

def test_train_writes_metrics_and_resumes_identically(tmp_path, capsys):
  straight, _ = training.train(GAME, CONFIG, seed=3, num_iterations=4)
  out = str(tmp_path / "run")
  training.train(GAME, CONFIG, seed=3, num_iterations=2, output_dir=out,
                 checkpoint_every=1)
  assert latest_step(os.path.join(out, "checkpoints")) == 2
  lines = []
  resumed, history = training.train(GAME, CONFIG, seed=3, num_iterations=4,
                                    output_dir=out, progress=True,
                                    tensorboard=True, log=lines.append)
  assert [h["iteration"] for h in history] == [3, 4]
  assert leaves_equal(straight, resumed)
  # The three runs, the restored one included, shared one compiled program
  # (a restored state arrives committed to its device; a fresh one must
  # too, or the resume compiles the iteration again).
  assert training.make_iteration(GAME, CONFIG)._cache_size() == 1
  records = training.read_metrics(os.path.join(out, "metrics.jsonl"))
  assert [r["iteration"] for r in records] == [1, 2, 3, 4]
  assert all("loss" in r and "examples_per_second" in r for r in records)
  # TensorBoard (tensorboardX is in the dev extra, so the default None
  # wrote the first call too) holds the same numbers as the JSONL.
  scalars = tensorboard_scalars(os.path.join(out, "tensorboard"))
  for tag in ("loss", "examples_per_second", "policy_entropy"):
    assert scalars[tag] == {r["iteration"]: pytest.approx(r[tag], rel=1e-6)
                            for r in records}, tag
  # The progress bar printed the log lines above itself; the bar itself
  # (tqdm, on stderr) shows iterations, the loss and throughput.
  assert len(lines) == 3 and lines[0].startswith("resumed from iteration 2")
  err = capsys.readouterr().err
  assert "examples_s=" in err and "loss=" in err


def test_sgf_games_are_the_games_played_and_replay_to_their_results(
    tmp_path):
  # 5x5 Go, 4 games an iteration, the first 3 finished kept as SGF: the
  # same run as without them, and each game replays legally under our
  # rules to its recorded result. Off, no games/ and no field in the JSON.
  import re  # pylint: disable=import-outside-toplevel
  from alphago_jax.core import config_codec  # pylint: disable=import-outside-toplevel
  from alphago_jax.games import sgf  # pylint: disable=import-outside-toplevel
  go5 = games.Go(size=5)
  config = training.TrainConfig(
      model=models.ResNetConfig(num_blocks=1, channels=8, value_hidden=8),
      search=search.AlphaZeroSearchConfig(
          num_simulations=4, max_num_considered_actions=4),
      max_moves=go5.move_cap, num_games=4, random_opening_moves=2,
      buffer_capacity=256, batch_size=16, gradient_steps=1)
  recording = dataclasses.replace(config, sgf_games=3)
  assert "sgf_games" not in config_codec.to_json(config)
  assert config_codec.to_json(recording)["sgf_games"] == 3
  plain, _ = training.train(go5, config, seed=2, num_iterations=2,
                            output_dir=str(tmp_path / "plain"))
  recorded, _ = training.train(go5, recording, seed=2, num_iterations=2,
                               output_dir=str(tmp_path / "sgf"))
  assert leaves_equal(plain, recorded)
  assert not os.path.exists(tmp_path / "plain" / "games")
  folder = tmp_path / "sgf" / "games"
  names = sorted(os.listdir(folder))
  assert [n[:16] for n in names] == ["iteration-000000"] * 3 + [
      "iteration-000001"] * 3, names
  for name in names:
    data = (folder / name).read_bytes()
    record = sgf.parse_sgf(data, source=name)
    _, states = sgf.record_to_states(record, go5)
    last = jax.tree.map(lambda x: x[-1], states)
    if record.result.endswith("+R"):
      assert not bool(last.terminated), name
    else:
      assert bool(last.terminated), name
      assert float(last.score) == sgf.result_score(record.result), name
    comments = re.findall(rb"C\[(winrate [01]\.\d\d visits \d+)\]", data)
    assert comments, name  # the searched moves carry their statistics
  with pytest.raises(ValueError, match="Go games only"):
    recording.check_game(GAME)


def tensorboard_scalars(logdir):
  """{tag: {step: value}} from every event file under `logdir`."""
  import struct
  from tensorboardX.proto import event_pb2
  out = {}
  for name in sorted(os.listdir(logdir)):
    with open(os.path.join(logdir, name), "rb") as f:
      data = f.read()
    pos = 0
    while pos < len(data):  # TFRecord: length, crc, payload, crc.
      (length,) = struct.unpack("<Q", data[pos:pos + 8])
      event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
      pos += 16 + length
      for v in event.summary.value:
        out.setdefault(v.tag, {})[event.step] = v.simple_value
  return out


def test_tensorboard_writers_opened_in_one_second_keep_both_files(tmp_path):
  # Regression (CI): a resume that started within the same second as the
  # previous run reused tensorboardX's time-and-host file name and erased
  # iterations 1-2 from TensorBoard.
  pytest.importorskip("tensorboardX")
  logdir = tmp_path / "tb"
  with mock.patch("time.time", return_value=1_700_000_000.0):
    for iteration in (1, 2):
      board = training.metrics.TensorBoardWriter(logdir)
      board.write({"iteration": iteration, "loss": float(iteration)})
      board.close()
  assert tensorboard_scalars(str(logdir))["loss"] == {1: 1.0, 2: 2.0}


def test_tensorboard_true_without_tensorboardx_names_the_package(
    tmp_path, monkeypatch):
  monkeypatch.setitem(sys.modules, "tensorboardX", None)
  with pytest.raises(ImportError, match="tensorboardX"):
    training.train(GAME, CONFIG, seed=0, num_iterations=1,
                   output_dir=str(tmp_path), tensorboard=True)
  assert training.metrics.make_tensorboard_writer(tmp_path, None) is None


def tree_digest(directory):
  h = hashlib.sha256()
  for root, dirs, files in sorted(os.walk(directory)):
    dirs.sort()
    for f in sorted(files):
      path = os.path.join(root, f)
      h.update(path.encode())
      with open(path, "rb") as fh:
        h.update(fh.read())
  return h.hexdigest()


@dataclasses.dataclass(frozen=True)
class OtherGame(TicTacToe):
  @property
  def name(self):
    return "other-tictactoe"


def test_checkpoint_roundtrip_and_architecture_check(tmp_path,
                                                     three_iterations):
  _, state, _, _ = three_iterations
  d = str(tmp_path / "ckpt")
  arch = CONFIG.architecture(GAME)
  save_checkpoint(d, state, architecture=arch)
  # Orbax writes into a temporary directory and renames it when complete:
  # nothing but finished step directories remains.
  assert sorted(os.listdir(d)) == ["3"]
  template = training.init_train_state(GAME, CONFIG, 99)
  restored = restore_checkpoint(d, template, architecture=arch)
  assert leaves_equal(state, restored)
  assert read_metadata(d)["game"] == "tictactoe"

  before = tree_digest(d)
  wide = tiny_config(model=models.ResNetConfig(num_blocks=1, channels=16,
                                               value_hidden=8))
  with pytest.raises(CheckpointMismatchError,
                     match="model: checkpoint has"):
    restore_checkpoint(
        d, training.init_train_state(GAME, wide, 0),
        architecture=wide.architecture(GAME))
  with pytest.raises(CheckpointMismatchError, match="game"):
    restore_checkpoint(d, template,
                                architecture=CONFIG.architecture(OtherGame()))
  assert tree_digest(d) == before


def test_unfinished_checkpoint_is_ignored(tmp_path, three_iterations):
  _, state, _, _ = three_iterations
  d = str(tmp_path / "ckpt")
  save_checkpoint(d, state, architecture=CONFIG.architecture(GAME))
  # What a crash mid-save leaves: orbax's temporary step directory.
  os.makedirs(os.path.join(d, "7.orbax-checkpoint-tmp-1234567", "state"))
  assert latest_step(d) == 3


def test_resume_refuses_other_architecture(tmp_path, three_iterations):
  _, state, _, _ = three_iterations
  out = tmp_path / "run"
  ck = str(out / "checkpoints")
  save_checkpoint(ck, state, architecture=CONFIG.architecture(GAME))
  before = tree_digest(ck)
  wide = tiny_config(model=models.ResNetConfig(num_blocks=2, channels=8,
                                               value_hidden=8))
  with pytest.raises(CheckpointMismatchError, match="num_blocks"):
    training.train(GAME, wide, seed=0, num_iterations=5, output_dir=str(out))
  assert tree_digest(ck) == before


# --- configs -----------------------------------------------------------------

@pytest.mark.parametrize("overrides,match", [
    (dict(num_games=0), "num_games"),
    (dict(max_moves=0), "max_moves"),
    (dict(buffer_capacity=10), "buffer_capacity"),
    (dict(optimizer="rmsprop"), "optimizer"),
    (dict(learning_rate=-1.0), "learning_rate"),
    (dict(lr_boundaries=(10, 5)), "lr_boundaries"),
    (dict(gradient_steps=0), "gradient_steps"),
    (dict(weight_decay=-1e-4), "weight_decay"),
    (dict(random_opening_moves=-1), "random_opening_moves"),
    (dict(search="puct"), "AlphaZeroSearchConfig"),
])
def test_bad_train_config(overrides, match):
  with pytest.raises(ValueError, match=match):
    tiny_config(**overrides)


def test_config_checks_the_game():
  config = tiny_config(search=search.AlphaZeroSearchConfig(
      num_simulations=4, max_num_considered_actions=12))
  with pytest.raises(ValueError, match="max_num_considered_actions=12"):
    training.init_train_state(GAME, config, 0)


def test_mesh_must_divide_the_batches():
  mesh = make_mesh(jax.devices()[:1])
  training.make_iteration(GAME, CONFIG, mesh=mesh)  # 1 divides everything.
  with pytest.raises(ValueError, match="mesh needs an axis"):
    training.make_iteration(GAME, CONFIG, mesh=jax.sharding.Mesh(
        np.asarray(jax.devices()[:1]), ("batch",)))


SHARDED = textwrap.dedent("""
    import dataclasses
    import jax, numpy as np
    from alphago_jax import games, training
    from alphago_jax.training.mesh import make_mesh
    from helpers import tiny_train_config
    assert jax.device_count() == 2, jax.devices()
    game = games.make("tictactoe")
    # Plain SGD: the step is proportional to the gradient, so a gradient
    # summed over the 2 devices instead of averaged shows (Adam's normalised
    # step would hide it).
    config = dataclasses.replace(tiny_train_config(), optimizer="sgd",
                                 momentum=0.0, learning_rate=0.1)
    mesh = make_mesh()
    it = training.make_iteration(game, config, mesh=mesh)
    state = training.init_train_state(game, config, 0, mesh=mesh)
    ref_it = training.make_iteration(game, config)
    ref = init = training.init_train_state(game, config, 0)
    for _ in range(2):
      state, m = it(state)
      ref, rm = ref_it(ref)
    leaf = jax.tree.leaves(state.params)[0]
    assert leaf.sharding.is_fully_replicated and len(leaf.devices()) == 2
    # Inside, the self-play games are split over the 2 devices.
    text = it.lower(state).as_text()
    # (GSPMD spells it devices=[2,...], Shardy names the mesh axis.)
    assert "devices=[2" in text or '{"data"}' in text, "no batch sharding"

    # Same keys, same games: every move, so every observation, legal mask
    # and outcome, is identical. The policy targets are not bit for bit:
    # XLA:CPU rounds the value head's [B, 8] x [8, 1] product differently
    # for one device's share of the rows than for all of them, so the search's Q-values
    # and the targets built from them differ in the last bits (measured
    # max 3.9e-7 at seed 0, 1.4e-6 over seeds 0-3).
    buf, ref_buf = state.buffer, ref.buffer
    assert int(buf.size) == int(ref_buf.size) > 0
    assert int(buf.next_index) == int(ref_buf.next_index)
    for name in ("observation", "legal_action_mask", "value"):
      np.testing.assert_array_equal(getattr(buf.data, name),
                                    getattr(ref_buf.data, name), name)
    np.testing.assert_allclose(buf.data.policy, ref_buf.data.policy, rtol=0,
                               atol=1e-5)
    # Training: the all-reduce sums in another order, nothing more
    # (measured after 8 steps: params within 1.2e-7, batch stats 6e-8,
    # metrics within 2e-7 relative). A summed gradient would move every
    # leaf 2x as far; the smallest leaf moved 0.02, so by >= 0.02.
    leaves = jax.tree.leaves
    for a, b, b0 in zip(leaves(state.params), leaves(ref.params),
                        leaves(init.params)):
      assert np.abs(np.asarray(b) - np.asarray(b0)).max() > 1e-3
      np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(leaves(state.batch_stats), leaves(ref.batch_stats)):
      np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for k in rm:
      np.testing.assert_allclose(m[k], rm[k], rtol=1e-5, atol=1e-6, err_msg=k)
    print("SHARDED-OK")
""")


def test_data_parallel_on_two_cpu_devices(two_devices):
  assert "SHARDED-OK" in two_devices.run(SHARDED)


# --- loss, optimiser and metrics file, by hand --------------------------------

def test_loss_is_the_alphago_zero_formula():
  from alphago_jax.training import learner  # pylint: disable=import-outside-toplevel
  net = models.PolicyValueNet(GAME.num_actions, CONFIG.model)
  rng = np.random.default_rng(0)
  obs = jnp.asarray(rng.normal(size=(3, 3, 3, 2)), jnp.float32)
  legal = jnp.asarray(rng.random((3, 9)) < 0.7).at[:, 0].set(True)
  policy = np.where(legal, rng.random((3, 9)), 0.0)
  policy = jnp.asarray(policy / policy.sum(-1, keepdims=True), jnp.float32)
  z = jnp.asarray([1.0, -1.0, 0.0])
  variables = net.init(jax.random.key(0), obs, legal)
  batch = Sample(observation=obs, legal_action_mask=legal,
                          policy=policy, value=z)
  total, (_, metrics) = learner.loss_fn(
      variables["params"], variables["batch_stats"], batch, network=net,
      weight_decay=1e-3)
  (logits, v), _ = net.apply(variables, obs, legal, train=True,
                             mutable=["batch_stats"])
  # By hand, in float64.
  x = np.asarray(logits, np.float64)
  log_p = x - x.max(-1, keepdims=True)
  log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
  value_loss = np.mean((np.asarray(z) - np.asarray(v)) ** 2)
  policy_loss = np.mean(-(np.asarray(policy) * log_p).sum(-1))
  l2 = sum(float((np.asarray(p, np.float64) ** 2).sum())
           for p in jax.tree.leaves(variables["params"]))
  np.testing.assert_allclose(float(metrics["value_loss"]), value_loss,
                             rtol=1e-5)
  np.testing.assert_allclose(float(metrics["policy_loss"]), policy_loss,
                             rtol=1e-5)
  np.testing.assert_allclose(float(metrics["l2"]), l2, rtol=1e-5)
  np.testing.assert_allclose(float(total), value_loss + policy_loss
                             + 1e-3 * l2, rtol=1e-5)


def test_sgd_schedule_steps_down_at_its_boundaries():
  from alphago_jax.training import learner  # pylint: disable=import-outside-toplevel
  config = tiny_config(optimizer="sgd", learning_rate=0.1, momentum=0.0,
                       lr_boundaries=(2, 4), lr_decay=0.1)
  opt = learner.make_optimizer(config)
  params = {"w": jnp.zeros(())}
  state = opt.init(params)
  steps = []
  for _ in range(5):  # a constant gradient of 1: the update is -rate
    updates, state = opt.update({"w": jnp.ones(())}, state, params)
    steps.append(float(updates["w"]))
  np.testing.assert_allclose(steps, [-0.1, -0.1, -0.01, -0.01, -0.001],
                             rtol=1e-6)


def test_metrics_lines_are_fsynced_and_a_torn_line_is_cut(tmp_path):
  path = tmp_path / "metrics.jsonl"
  writer = MetricsWriter(path)
  with mock.patch("os.fsync", wraps=os.fsync) as fsync:
    writer.write({"iteration": 1, "loss": 1.5})
    writer.write({"iteration": 2, "loss": float("nan")})
  assert fsync.call_count == 2
  # A crash in the middle of a write leaves a torn last line; the next run's
  # writer cuts it before appending, so no record is glued onto it.
  with open(path, "a") as f:
    f.write('{"iteration": 3, "lo')
  assert [r["iteration"] for r in training.read_metrics(path)] == [1, 2]
  MetricsWriter(path).write({"iteration": 3, "loss": 0.5})
  records = training.read_metrics(path)
  assert [r["iteration"] for r in records] == [1, 2, 3]
  assert records[1]["loss"] == "nan" and records[2]["loss"] == 0.5
