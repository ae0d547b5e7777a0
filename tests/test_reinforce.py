"""REINFORCE for p_ρ: the gradient's sign, the opponent pool holds only
earlier snapshots, the quick command beats its starting network, a resumed
run ends where an uninterrupted one does, other checkpoints and bad configs
are refused by name."""

import contextlib
import importlib.util
import io
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import read_metrics
from alphago_jax.training import reinforce as rl
from alphago_jax.training import supervised as sl

import helpers
from helpers import ROOT

MODEL = PolicyNetConfig.tiny(board_size=5)
# The --quick config of experiments/alphago/rl_policy.py: every test here
# shares its one compiled iteration.
CONFIG = rl.ReinforceConfig(model=MODEL, games_per_iteration=32,
                            optimizer="adam", learning_rate=1e-2,
                            pool_size=4, snapshot_every=3, grad_chunk=256)


def _copy(tree):
  return jax.tree.map(lambda x: np.array(x), tree)


def test_policy_gradient_sign_on_a_toy():
  net = PolicyNet(MODEL)
  variables = init_policy_variables(net, jax.random.key(0))
  planes = jax.random.bernoulli(jax.random.key(1), 0.3, (
      3, 5, 5, MODEL.num_planes)).astype(jnp.uint8)
  mask = jnp.ones((3, MODEL.num_actions), bool).at[:, 3].set(False)
  action = jnp.full(3, 12, jnp.int32)   # the winning move, every time

  @jax.jit   # One compile: both chunkings, the step and the start.
  def prob_after_step(weights):
    def grad(chunk):
      return rl.policy_gradient_loss(
          variables["params"], {}, planes, action, mask, weights,
          network=net, normalizer=3.0, chunk=chunk)
    loss, grads = grad(3)
    loss2, grads2 = grad(2)
    new = optax.apply_updates(variables["params"],
                              jax.tree.map(lambda g: -0.5 * g, grads))
    logits = net.apply({"params": new}, planes[:1], mask[:1])
    start = jax.nn.softmax(net.apply(variables, planes, mask))[:, 12]
    return (jax.nn.softmax(logits)[0, 12], start, loss, grads, loss2,
            grads2)

  won, start, loss, grads, loss2, grads2 = prob_after_step(jnp.ones(3))
  before = start[0]
  lost = prob_after_step(-jnp.ones(3))[0]
  assert won > before * 1.05 and lost < before * 0.95
  np.testing.assert_allclose(loss, -jnp.mean(jnp.log(start)), rtol=1e-4)
  # Chunks of 2 (one padded row) give the same gradient; zero weights none.
  np.testing.assert_allclose(loss2, loss, rtol=1e-5)
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6),
               grads, grads2)
  none = prob_after_step(jnp.zeros(3))[5]
  assert float(optax.global_norm(none)) == 0.0


def test_the_pool_holds_only_earlier_snapshots():
  state = rl.init_reinforce_state(CONFIG, 0)
  step = rl.make_iteration(CONFIG)
  after = {0: _copy(state.params)}   # params after each iteration
  opponents = []
  for i in range(15):
    stored = set(np.asarray(state.buffer.iterations).tolist()) - {-1}
    state, metrics = step(state)
    opponent = int(metrics["opponent"])
    assert opponent in stored and opponent <= i, (i, opponent, stored)
    opponents.append(opponent)
    after[i + 1] = _copy(state.params)
  # Snapshots at 0, 3, ..., 15 in a ring of 4: 12 and 15 overwrote 0 and 3.
  pool = state.buffer
  np.testing.assert_array_equal(pool.iterations, [12, 15, 6, 9])
  assert int(pool.added) == 6
  for slot, it in enumerate(np.asarray(pool.iterations)):
    jax.tree.map(lambda s, p, k=slot: np.testing.assert_array_equal(s[k], p),
                 pool.params, after[int(it)])
  assert len(set(opponents)) >= 3
  # The learner moved on from the snapshot it was last compared with.
  assert not np.array_equal(after[15]["Conv_0"]["kernel"],
                            after[12]["Conv_0"]["kernel"])


def test_quick_command_beats_its_starting_network(tmp_path):
  spec = importlib.util.spec_from_file_location(
      "rl_policy", os.path.join(ROOT, "experiments", "alphago",
                                "rl_policy.py"))
  rl_policy = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(rl_policy)
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    assert rl_policy.main(["--quick", "--output", str(tmp_path)]) == 0
  result = [l for l in out.getvalue().splitlines()
            if l.startswith("RESULT ")][-1]
  fields = dict(f.split("=") for f in result.split()[1:])
  assert int(fields["iterations"]) == 12 and int(fields["eval_games"]) == 128
  assert float(fields["ci_low"]) > 0.5, result   # p_ρ beats p_σ
  saved = json.load(open(tmp_path / "config.json"))
  assert rl.ReinforceConfig.from_json(saved["config"]) == CONFIG
  records = read_metrics(str(tmp_path / "metrics.jsonl"))
  assert [r["iteration"] for r in records] == list(range(1, 13))
  assert {"win_rate", "mean_length", "loss", "grad_norm"} <= set(records[0])
  model, variables, step = rl.load_rl_policy(tmp_path / "checkpoints")
  assert model == MODEL and step == 12 and "Conv_0" in variables["params"]
  # The match's games, one SGF each, p_ρ Black in the first half.
  from alphago_jax.games import sgf  # pylint: disable=import-outside-toplevel
  games = sorted(os.listdir(tmp_path / "games"))
  assert games == [f"p-rho-vs-p-sigma-iteration-000012-{k:04d}.sgf"
                   for k in range(128)]
  first = sgf.parse_sgf((tmp_path / "games" / games[0]).read_bytes())
  assert first.black_name == "p_rho iteration 12" and first.result
  # A resumed call may skip the match; the run keeps its own count.
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    assert rl_policy.main(["--output", str(tmp_path), "--resume",
                           "--iterations", "13", "--eval-games", "0"]) == 0
  assert "p_ρ vs p_σ" not in out.getvalue()
  assert out.getvalue().splitlines()[-1] == "RESULT iterations=13 games=416"
  assert json.load(open(tmp_path / "config.json"))["eval_games"] == 128


def test_resumed_run_equals_uninterrupted(tmp_path):
  whole, _ = rl.train_reinforce(CONFIG, seed=3, num_iterations=4,
                                output_dir=str(tmp_path / "a"))
  rl.train_reinforce(CONFIG, seed=3, num_iterations=2,
                     output_dir=str(tmp_path / "b"))
  resumed, history = rl.train_reinforce(CONFIG, seed=3, num_iterations=4,
                                        output_dir=str(tmp_path / "b"))
  assert [r["iteration"] for r in history] == [3, 4]
  jax.tree.map(np.testing.assert_array_equal, _copy(whole.params),
               _copy(resumed.params))
  jax.tree.map(np.testing.assert_array_equal, _copy(whole.buffer),
               _copy(resumed.buffer))
  _, variables, step = rl.load_any_policy(tmp_path / "b" / "checkpoints")
  assert step == 4
  jax.tree.map(np.testing.assert_array_equal, _copy(whole.params),
               _copy(variables["params"]))


def test_self_play_sample_is_written_and_changes_no_game(tmp_path):
  # 4 games of every 2nd iteration as SGF: the same run as without
  # (equal parameters after 3 iterations), and the games replay legally to
  # their recorded results under the run's rules. Off, nothing is written.
  from alphago_jax.games import sgf  # pylint: disable=import-outside-toplevel
  import dataclasses  # pylint: disable=import-outside-toplevel
  sampled = dataclasses.replace(CONFIG, sgf_games=4, sgf_every=2)
  assert "sgf_games" not in CONFIG.to_json()  # off: configs unchanged
  assert rl.ReinforceConfig.from_json(sampled.to_json()) == sampled
  plain, _ = rl.train_reinforce(CONFIG, seed=3, num_iterations=3,
                                output_dir=str(tmp_path / "plain"))
  written, _ = rl.train_reinforce(sampled, seed=3, num_iterations=3,
                                  output_dir=str(tmp_path / "sgf"))
  jax.tree.map(np.testing.assert_array_equal, _copy(plain.params),
               _copy(written.params))
  assert not (tmp_path / "plain" / "games").exists()
  folder = tmp_path / "sgf" / "games"
  assert sorted(os.listdir(folder)) == [
      f"iteration-{i:06d}-{k:04d}.sgf" for i in (0, 2) for k in range(4)]
  game = CONFIG.game
  for name in sorted(os.listdir(folder)):
    record = sgf.parse_sgf((folder / name).read_bytes(), source=name)
    k = int(name[-8:-4])
    learner = record.black_name if k < 2 else record.white_name
    assert learner.startswith("p_rho iteration"), (name, learner)
    _, states = sgf.record_to_states(record, game)
    last = jax.tree.map(lambda x: x[-1], states)
    score = (float(last.score) if bool(last.terminated)
             else float(game.area_score(last)))
    assert score == sgf.result_score(record.result), name
  with pytest.raises(ValueError, match="sgf_games"):
    dataclasses.replace(CONFIG, sgf_games=33)


def test_checkpoints_of_other_networks_are_refused(tmp_path):
  sl_config = sl.SupervisedConfig(model=MODEL)
  ckpt.save_checkpoint(str(tmp_path / "checkpoints"),
                       sl.init_supervised_state(sl_config, 0),
                       architecture=sl_config.architecture(),
                       with_buffer=False)
  with pytest.raises(ckpt.CheckpointMismatchError, match="stage"):
    rl.train_reinforce(CONFIG, seed=0, num_iterations=1,
                       output_dir=str(tmp_path))
  with pytest.raises(ckpt.CheckpointMismatchError, match="not an RL policy"):
    rl.load_rl_policy(tmp_path / "checkpoints")
  # load_any_policy reads it as the p_σ it is.
  model, _, _ = rl.load_any_policy(tmp_path / "checkpoints")
  assert model == MODEL
  with pytest.raises(FileNotFoundError):
    rl.load_rl_policy(tmp_path / "nothing")


@pytest.mark.parametrize("field,value", [
    ("games_per_iteration", 3), ("games_per_iteration", 0),
    ("optimizer", "rmsprop"), ("learning_rate", 0.0),
    ("learning_rate", float("nan")), ("momentum", 1.0),
    ("baseline", "value"), ("pool_size", 0), ("snapshot_every", 0),
    ("temperature", -1.0), ("max_moves", 0), ("grad_chunk", 0),
    ("komi", float("inf")), ("allow_pass", 1), ("model", "6x64"),
    ("pool_size", True)])
def test_bad_config_values_name_the_field(field, value):
  with pytest.raises(ValueError, match=field):
    rl.ReinforceConfig(**{field: value})


TWO_DEVICES = """
import json, sys
import jax, jax.numpy as jnp, numpy as np
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.training.mesh import make_mesh
from alphago_jax.training import reinforce as rl
assert jax.device_count() == 2, jax.devices()
config = rl.ReinforceConfig(model=PolicyNetConfig.tiny(board_size=5),
                            games_per_iteration=8, optimizer="sgd",
                            learning_rate=0.5, grad_chunk=16)
mesh = make_mesh()
it = rl.make_iteration(config, mesh=mesh)
state = rl.init_reinforce_state(config, 1, mesh=mesh)
(batch, order), info = it.play(state)
planes, actions, masks, weights = (np.asarray(x) for x in batch)
order, z = np.asarray(order), np.asarray(info["z"])
positions = np.asarray(info["positions"])
rows = len(actions) // 2
# The baseline is the mean over all 8 games, not each device's 4 (whose
# means differ in this draw, so a per-device baseline would show).
assert z[:4].mean() != z[4:].mean(), z
allowed = z - z.mean()
for w in weights[weights != 0]:
  assert np.isclose(allowed, w).any(), (w, z)
# Each device played its own games (keys folded with the device index).
first = lambda d: actions[d * rows:(d + 1) * rows][:4]
assert not np.array_equal(first(0), first(1))
# The summed chunk gradients equal the REINFORCE formula over both devices'
# records, each device's rows taken whole (no chunking, no mesh).
loss, grads = it.gradient(state, (batch, jnp.asarray(order)), info)
network = rl.PolicyNet(config.model)
# Jitted: one compilation for both devices' rows, where op-by-op dispatch
# of the gradient takes longer.
formula = jax.jit(lambda *args: rl.policy_gradient_loss(
    *args, network=network, normalizer=8.0, chunk=rows))
expect_loss, expect = 0.0, None
for d in range(2):
  block = slice(d * rows, (d + 1) * rows)
  l, g = formula(
      jax.device_get(state.params), jax.device_get(state.batch_stats),
      planes[block], actions[block], masks[block], weights[block])
  expect_loss += float(l)
  expect = g if expect is None else jax.tree.map(np.add, expect, g)
np.testing.assert_allclose(float(loss), expect_loss, rtol=1e-4, atol=1e-6)
jax.tree.map(lambda a, b: np.testing.assert_allclose(
    np.asarray(a), np.asarray(b), rtol=2e-3, atol=1e-6), grads, expect)
# The SGF sample over the mesh: the same games, the first device's 3
# written (2 with p_rho Black), each replaying legally.
import dataclasses, os, tempfile
from alphago_jax.games import sgf
sampled = dataclasses.replace(config, sgf_games=3)
_, sample_info = rl.make_iteration(sampled, mesh=mesh).play(state)
assert np.array_equal(np.asarray(sample_info["z"]), z)
folder = tempfile.mkdtemp()
paths = rl.SelfPlaySgf(folder, sampled, games=3).write(state, sample_info)
assert len(paths) == 3, paths
for path in paths:
  record = sgf.parse_sgf(open(path, "rb").read())
  sgf.record_to_states(record, config.game)
# The step applies it: plain SGD moves the parameters by -lr x gradient.
before = jax.device_get(state.params)
new, metrics = it.apply(state, (loss, grads), info)
jax.tree.map(lambda a, b, g: np.testing.assert_allclose(
    np.asarray(a), np.asarray(b) - 0.5 * np.asarray(g), rtol=1e-4,
    atol=1e-6), jax.device_get(new.params), before, expect)
leaf = jax.tree.leaves(new.params)[0]
assert leaf.sharding.is_fully_replicated and len(leaf.devices()) == 2
assert float(metrics["positions"]) == positions.sum()
print("OK", positions.tolist())
"""


def test_games_and_gradient_split_over_two_devices(two_devices):
  """On 2 devices each plays half the games and the summed gradient is the
  one-device formula over all of them (a psum or normaliser slip, or a
  chunk count taken from one device, shows)."""
  assert two_devices.run(TWO_DEVICES).strip().splitlines()[-1].startswith(
      "OK")


def test_games_must_split_evenly_over_the_mesh():
  mesh = jax.sharding.Mesh(np.asarray(jax.devices()[:1]), ("data",))
  rl.make_iteration(CONFIG, mesh=mesh)  # One device divides everything.
  with pytest.raises(ValueError, match="mesh needs an axis"):
    rl.make_iteration(CONFIG, mesh=jax.sharding.Mesh(
        np.asarray(jax.devices()[:1]), ("batch",)))


def test_default_sl_checkpoint_is_recorded_by_its_repository_name(
    tmp_path, capsys, monkeypatch):
  """Run from outside the repository with p_σ by default: config.json names
  `checkpoints/sl_policy`, not this machine's path, and it still loads."""
  monkeypatch.chdir(tmp_path)
  out = tmp_path / "run"
  status, stdout, err = helpers.run_cli(
      capsys, "train", "rl-policy", "--output", out, "--iterations", "0",
      "--eval-games", "0", "--cpu-devices", "1")
  assert status == 0, err[-2000:]
  assert "p_σ: checkpoints/sl_policy step" in stdout
  saved = json.load(open(out / "config.json"))
  assert saved["sl_checkpoint"] == os.path.join("checkpoints", "sl_policy")
  assert saved["cpu_devices"] == 1


def test_resume_against_a_different_sl_policy_is_refused(tmp_path, capsys):
  """config.json names p_σ by path; a resumed run whose path now holds
  another network (a newer checkpoints/sl_policy, say) must not silently
  play its matches against that one: the step it started from is checked."""
  sl_config = sl.SupervisedConfig(model=MODEL)
  sl_dir = tmp_path / "sl" / "checkpoints"
  state = sl.init_supervised_state(sl_config, 0)
  ckpt.save_checkpoint(str(sl_dir), state.replace(iteration=5),
                       architecture=sl_config.architecture(),
                       with_buffer=False)
  out = tmp_path / "rl"
  base = ["train", "rl-policy", "--output", out, "--iterations", "0",
          "--eval-games", "0"]
  assert helpers.run_cli(capsys, *base, "--sl-checkpoint", sl_dir,
                         "--cpu-devices", "1")[0] == 0
  assert json.load(open(out / "config.json"))["sl_step"] == 5
  # The same p_σ: the resume goes on.
  assert helpers.run_cli(capsys, *base, "--resume")[0] == 0
  # Another network at the same path: refused, naming both steps.
  ckpt.save_checkpoint(str(sl_dir), state.replace(iteration=9),
                       architecture=sl_config.architecture(),
                       with_buffer=False)
  status, _, err = helpers.run_cli(capsys, *base, "--resume")
  assert status == 1
  assert "trained from p_σ step 5" in err and "now holds step 9" in err, err
