"""The supervised policy stage: the network, top-k accuracy, the loss falls,
an interrupted run resumes to the uninterrupted result, checkpoints of
another network are refused by name, and the commands."""

import dataclasses
import functools
import json
import os
import re
import shlex
import signal

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.core import result_file
from alphago_jax.data import features, held_out
from alphago_jax.data import positions as data_lib
from alphago_jax.games import go_features
from alphago_jax.games import symmetry
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables, num_params,
                                       symmetric_log_policy)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import read_metrics
from alphago_jax.training import supervised as sl

from helpers import ROOT, assert_eval_policy_result, run_mains
from record_files import PRO, need, prepare_pro9
from resume_checks import assert_resumed_equals_whole, whole_and_resumed

SL_POLICY = os.path.join(ROOT, "experiments", "alphago", "sl_policy.py")
EVAL_POLICY = os.path.join(ROOT, "experiments", "alphago", "eval_policy.py")
GO9 = os.path.join(ROOT, "checkpoints", "go9")
CLI = os.path.join(ROOT, "alphago_jax", "cli", "main.py")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
  return prepare_pro9(tmp_path_factory)


def _tiny(**kw):
  kw.setdefault("model", PolicyNetConfig.tiny(board_size=9))
  kw.setdefault("batch_size", 32)
  kw.setdefault("learning_rate", 3e-3)
  kw.setdefault("schedule", "constant")
  kw.setdefault("warmup_steps", 0)
  return sl.SupervisedConfig(**kw)


def test_topk_correct_on_a_hand_made_batch():
  logits = jnp.array([[0.0, 5.0, 1.0, 2.0, 3.0, 4.0, -1.0],   # 1 is best
                      [0.0, 5.0, 1.0, 2.0, 3.0, 4.0, -1.0],   # 0 is 6th
                      [0.0, 5.0, 1.0, 2.0, 3.0, 4.0, -1.0],   # 2 is 5th
                      [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])   # all tied
  action = jnp.array([1, 0, 2, 3])
  np.testing.assert_array_equal(sl.topk_correct(logits, action, 1),
                                [True, False, False, False])
  np.testing.assert_array_equal(sl.topk_correct(logits, action, 5),
                                [True, False, True, False])


def test_policy_net_shapes_and_configs():
  config = PolicyNetConfig.tiny(board_size=9)
  net = PolicyNet(config)
  variables = init_policy_variables(net, jax.random.key(0))
  planes = jnp.ones((2, 9, 9, config.num_planes))
  logits = net.apply(variables, planes)
  assert logits.shape == (2, 82)
  legal = jnp.zeros((2, 82), bool).at[:, 5].set(True)
  masked = net.apply(variables, planes, legal)
  assert (jnp.argmax(masked, -1) == 5).all()
  # The paper's network: 13 layers of 192 on 48 planes, 5x5 then 3x3, and a
  # bias per point (shapes only, nothing computed).
  paper = PolicyNetConfig.paper()
  assert paper.num_planes == 48 and paper.num_actions == 362
  shapes = jax.eval_shape(lambda k: init_policy_variables(PolicyNet(paper),
                                                          k),
                          jax.random.key(0))["params"]
  assert shapes["Conv_0"]["kernel"].shape == (5, 5, 48, 192)
  assert shapes["Conv_11"]["kernel"].shape == (3, 3, 192, 192)
  assert shapes["Conv_12"]["kernel"].shape == (1, 1, 192, 1)
  assert shapes["point_bias"].shape == (361,)
  res = PolicyNetConfig(num_layers=4, filters=8, board_size=9,
                        trunk="residual")
  v = init_policy_variables(PolicyNet(res), jax.random.key(0))
  assert v["batch_stats"] and num_params(v) > 0
  for bad in (dict(num_layers=1), dict(filters=0), dict(trunk="dense"),
              dict(features=("stone_colour", "nope")),
              dict(num_layers=5, trunk="residual"),
              dict(features="stone_colour")):
    with pytest.raises(ValueError):
      PolicyNetConfig(**bad)
  with pytest.raises(ValueError, match="optimizer"):
    sl.SupervisedConfig(optimizer="rmsprop")


def test_legal_mask_and_played_move_line_up_under_the_symmetries(cache):
  positions = cache.split("train")
  batch = positions.take(np.arange(64))
  size = cache.size

  @jax.jit
  def f(batch, key):
    out = features.feature_batch(batch, key, size=size)
    return out, sl._legal_masks(batch, out["symmetry"], size)  # pylint: disable=protected-access

  out, legal = f(batch, jax.random.key(3))
  assert len(set(np.asarray(out["symmetry"]).tolist())) > 1
  # The move played is legal and on an empty point, in the same frame.
  assert np.take_along_axis(np.asarray(legal), np.asarray(
      out["action"])[:, None], 1).all()
  empty = np.asarray(out["planes"][..., 2]).reshape(64, -1)
  board = np.asarray(out["action"]) < size * size
  assert empty[board, np.asarray(out["action"])[board]].all()


def test_quick_run_loss_falls_and_curve_is_recorded(cache, tmp_path):
  config = _tiny(total_samples=60 * 32)
  test = sl.eval_subset(cache.split("test"), 256)
  _, history = sl.train_supervised(
      config, cache.split("train"), seed=0, eval_positions=test,
      output_dir=str(tmp_path), log_every=10, eval_every=30,
      checkpoint_seconds=0, tensorboard=False)
  losses = [r["loss"] for r in history]
  assert losses[-1] < losses[0] - 0.3, losses
  records = read_metrics(tmp_path / "metrics.jsonl")
  assert [r["samples"] for r in records] == [320 * i for i in range(1, 7)]
  curve = [(r["samples"], r["eval_top1"]) for r in records
           if "eval_top1" in r]
  assert [s for s, _ in curve] == [960, 1920]
  assert curve[-1][1] > 0.05  # well above 1/82
  assert records[-1]["stop"] == "num_steps"
  assert ckpt.latest_step(tmp_path / "checkpoints") == 60


def test_resume_gives_the_uninterrupted_result(cache, tmp_path):
  config = _tiny(total_samples=24 * 32, schedule="cosine", warmup_steps=4,
                 mask_illegal=True)
  whole, resumed = whole_and_resumed(
      functools.partial(sl.train_supervised, config, cache.split("train"),
                        seed=1, log_every=4, checkpoint_seconds=0,
                        tensorboard=False),
      str(tmp_path), interrupted_at=10, batch_size=32)
  assert int(resumed.iteration) == 24
  assert_resumed_equals_whole(whole, resumed, tmp_path / "a", tmp_path / "b",
                              metric="loss", iterations=(24, 20))


def test_checkpoint_of_another_network_is_refused_by_name(cache, tmp_path):
  train = cache.split("train")
  config = _tiny(total_samples=2 * 32)
  sl.train_supervised(config, train, seed=0, output_dir=str(tmp_path),
                      checkpoint_seconds=0, tensorboard=False)
  wider = dataclasses.replace(
      config, model=dataclasses.replace(config.model, filters=16))
  with pytest.raises(ckpt.CheckpointMismatchError) as e:
    sl.train_supervised(wider, train, seed=0, output_dir=str(tmp_path),
                        tensorboard=False)
  assert str(tmp_path / "checkpoints") in str(e.value)
  assert "filters" in str(e.value)
  fewer = dataclasses.replace(config, model=dataclasses.replace(
      config.model, features=go_features.DEFAULT_POLICY_FEATURES[:2]))
  with pytest.raises(ckpt.CheckpointMismatchError, match="num_planes"):
    sl.train_supervised(fewer, train, seed=0, output_dir=str(tmp_path),
                        tensorboard=False)
  # A checkpoint of an AlphaZero network is not a policy network.
  other = tmp_path / "az"
  state = sl.init_supervised_state(config, 0)
  ckpt.save_checkpoint(other, state, with_buffer=False,
                       architecture={"game": "go9", "model": {}})
  with pytest.raises(ckpt.CheckpointMismatchError,
                     match=f"{other}.*not a policy-network checkpoint"):
    sl.load_policy(other)
  with pytest.raises(FileNotFoundError, match="no checkpoint"):
    sl.load_policy(tmp_path / "none")
  model, variables, step = sl.load_policy(tmp_path / "checkpoints")
  assert model == config.model and step == 2


def test_wsd_schedule_by_hand_and_a_replanned_horizon_moves_no_rate():
  # 100 steps of 10 samples: warm-up 0 -> 1 over 10 steps, the peak until
  # step 80, then linear down to 0.1 at step 100 (decay over the last 20%).
  config = sl.SupervisedConfig(batch_size=10, learning_rate=1.0,
                               warmup_steps=10, total_samples=1000,
                               schedule="wsd", decay_fraction=0.2,
                               final_lr_fraction=0.1)
  rate = sl.make_schedule(config)
  expected = {0: 0.0, 5: 0.5, 10: 1.0, 50: 1.0, 80: 1.0, 90: 0.55,
              100: 0.1, 150: 0.1}
  for step, value in expected.items():
    assert float(rate(step)) == pytest.approx(value, abs=1e-6), step
  # Doubling the horizon at step 50 keeps the rate there; a cosine's jumps.
  longer = sl.make_schedule(dataclasses.replace(config, total_samples=2000))
  assert float(longer(50)) == float(rate(50)) == 1.0
  cosine = dataclasses.replace(config, schedule="cosine")
  assert float(sl.make_schedule(cosine)(50)) != pytest.approx(float(
      sl.make_schedule(dataclasses.replace(cosine, total_samples=2000))(50)))
  with pytest.raises(ValueError, match="decay_fraction"):
    sl.SupervisedConfig(schedule="wsd", decay_fraction=0.0)
  with pytest.raises(ValueError, match="schedule"):
    sl.SupervisedConfig(schedule="step")


def test_evaluation_counts_and_ensemble(cache):
  config = PolicyNetConfig.tiny(board_size=9)
  variables = init_policy_variables(PolicyNet(config), jax.random.key(0))
  test = cache.split("test")
  one = sl.evaluate_policy(variables, config, test, batch_size=128,
                           limit=300)
  assert one["positions"] == 300 and 0 <= one["top1"] <= one["top5"] <= 1
  ens = sl.evaluate_policy(variables, config, test, batch_size=128,
                           limit=300, ensemble=True)
  assert ens["positions"] == 300 and 0 <= ens["top1"] <= ens["top5"] <= 1
  assert ens["nll"] != pytest.approx(one["nll"], abs=1e-6)
  # The same figures from the network's logits on the first 300 positions,
  # ranked here in numpy (the batches of 128 leave a padded last one). One
  # compiled program: the features op by op would compile each operation.
  @jax.jit
  def reference(variables, batch):
    inputs = features.feature_batch(batch, jax.random.key(0), size=9,
                                    names=config.features, augment=False)
    return PolicyNet(config).apply(variables, inputs["planes"]), inputs

  logits, inputs = reference(variables, test.take(np.arange(300)))
  logits = np.asarray(logits, np.float64)
  played = np.asarray(inputs["action"])
  rank = (logits > logits[np.arange(300), played][:, None]).sum(axis=1)
  assert one["top1_hits"] == int((rank < 1).sum())
  assert one["top5_hits"] == int((rank < 5).sum()) > 0
  logp = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(
      1, keepdims=True)) - logits.max(1, keepdims=True)
  assert one["nll"] == pytest.approx(-logp[np.arange(300), played].mean(),
                                     rel=1e-4)
  with pytest.raises(ValueError, match="19x19"):
    sl.evaluate_policy(variables, PolicyNetConfig.tiny(board_size=19), test)


def test_symmetric_log_policy_is_the_mean_of_the_eight_orientations():
  size = 5
  config = PolicyNetConfig.tiny(board_size=size)
  net = PolicyNet(config)
  variables = init_policy_variables(net, jax.random.key(0))
  apply = lambda v, x: net.apply(v, x, train=False)
  planes = jax.random.uniform(jax.random.key(1),
                              (3, size, size, config.num_planes))
  logp = symmetric_log_policy(apply, variables, planes)
  assert logp.shape == (3, size * size + 1)
  # Independently: the move a under orientation i is the point
  # `transform_action(a, i)` of the turned board; pass stays pass.
  actions = jnp.arange(size * size + 1)
  expected = np.mean([np.asarray(jax.nn.softmax(
      apply(variables, symmetry.transform_observation(planes, i))))[
          :, np.asarray(symmetry.transform_action(actions, i, size))]
                      for i in range(8)], axis=0)
  np.testing.assert_allclose(np.exp(logp), expected, atol=1e-6)
  np.testing.assert_allclose(np.exp(logp).sum(-1), 1.0, atol=1e-5)
  # The ensemble turns with the board; one orientation alone does not.
  for i in range(1, 8):
    turned = symmetric_log_policy(
        apply, variables, symmetry.transform_observation(planes, i))
    np.testing.assert_allclose(
        turned, symmetry.transform_policy(logp, i, size), atol=1e-5)
  single = jax.nn.log_softmax(apply(variables, planes))
  assert not np.allclose(single, logp, atol=1e-4)


def test_sl_policy_and_eval_policy_commands(tmp_path):
  need(PRO)
  out = tmp_path / "run"
  args = [SL_POLICY, "--quick", "--data", PRO, "--size", "9", "--min-rank",
          "none", "--output", str(out), "--cache", str(tmp_path / "cache")]
  # The commands' `main`s, in one process (helpers.run_mains).
  deep, wide, lad = tmp_path / "deep", tmp_path / "wide", tmp_path / "lad"
  leaky, repeat_dir = tmp_path / "leaky", tmp_path / "repeat"
  # A run the script recorded as a command line (command.json format 1).
  old = tmp_path / "old"
  old.mkdir()
  old_argv = args[1:-4] + ["--cache", str(tmp_path / "cache")]
  (old / "command.json").write_text(json.dumps({
      "format": 1, "script": "sl_policy.py", "argv": old_argv,
      "version": "0", "git_commit": None}))
  (first, again, resumed, evaluated, refused, deepened,
   mismatched, leaked, laddered, lad_evaluated, repeat, resume_shown,
   old_repeat) = run_mains([
      # The stall guard armed (it never fires on a healthy run).
      (args[0], args[1:] + ["--stall-minutes", "30"]),
      # A second start refuses to overwrite; --resume continues (here: done).
      (args[0], args[1:]),
      (args[0], args[1:] + ["--resume"]),
      # eval_policy: the run's own data -> its test split; the RESULT line.
      (EVAL_POLICY, ["--data", PRO, "--checkpoint", out, "--cache",
                     tmp_path / "cache", "--limit", "200", "--output",
                     tmp_path / "results" / "eval.json"]),
      # An AlphaZero checkpoint is refused, by name.
      (EVAL_POLICY, ["--data", PRO, "--checkpoint", GO9]),
      # A deeper network starts from the trained one; a wider cannot.
      (args[0], args[1:-4] + ["--output", deep, "--cache", tmp_path / "cache",
                              "--layers", "5", "--init-from", out]),
      (args[0], args[1:-4] + ["--output", wide, "--cache", tmp_path / "cache",
                              "--filters", "16", "--init-from", out]),
      # A split that puts some of the parent's test games in training.
      (args[0], args[1:-4] + ["--output", leaky, "--cache",
                              tmp_path / "cache", "--fractions", "0.99",
                              "0.005", "0.005", "--init-from", out]),
      # The ladder planes added to the trained network, read into a cache
      # of their own; eval_policy reads that cache too.
      (args[0], args[1:-4] + ["--output", lad, "--cache", tmp_path / "cache",
                              "--ladders", "--init-from", out]),
      (EVAL_POLICY, ["--data", PRO, "--checkpoint", lad, "--cache",
                     tmp_path / "cache", "--limit", "200"]),
      # `alphago-jax train --from-run / --resume` read the script's run
      # (its resolved options), and a format-1 record still repeats.
      (CLI, ["train", "--from-run", out, "--output", repeat_dir,
             "--dry-run"]),
      (CLI, ["train", "--resume", out, "--dry-run"]),
      (CLI, ["train", "--from-run", old, "--output", repeat_dir,
             "--dry-run"])])
  assert first.returncode == 0, first.stderr[-3000:]
  result = first.stdout.strip().splitlines()[-1]
  assert result.startswith("RESULT step=40 samples=1280 validation_top1="), result
  saved = json.loads((out / "config.json").read_text())
  assert saved["config"]["model"]["num_layers"] == 3
  # A new run monitors the validation split and records it; the curve's
  # positions are that split's (the quick run evaluates all of it).
  command = json.loads((out / "command.json").read_text())
  assert command["options"]["monitor_split"] == "validation"
  logged = re.search(r"cache (\S+): (\d+) train, (\d+) validation "
                     r"positions", first.stdout + first.stderr)
  cache = data_lib.open_cache(logged.group(1))
  held = len(cache.split("validation"))
  assert 0 < held < 10_000
  assert int(logged.group(3)) == held
  records = read_metrics(out / "metrics.jsonl")
  assert records[-1]["loss"] < records[0]["loss"]
  assert again.returncode != 0 and "--resume" in again.stderr
  assert resumed.returncode == 0, resumed.stderr[-3000:]
  assert "resumed from step 40" in resumed.stdout
  assert resumed.stdout.strip().splitlines()[-1].startswith("RESULT step=40 ")
  assert_eval_policy_result(evaluated, 200)
  assert refused.returncode == 1
  assert "not a policy-network checkpoint" in refused.stderr
  assert os.path.join(GO9, "checkpoints") in refused.stderr
  # The run records its dataset and held-out games; a child on the same
  # games is checked against them, one on another split refused.
  identity = held_out.DatasetIdentity.from_json(saved["held_out"])
  games = held_out.HeldOutGames.from_json(json.loads(
      (out / "held_out_games.json").read_text()))
  assert identity.test_sha256 == held_out.games_sha256(games.test)
  assert identity.games[2] == len(games.test) == len(cache.games("test"))
  # eval_policy's result file: the printed figures, measured on the games
  # the run held out, by the weights the run saved.
  written = json.loads((tmp_path / "results" / "eval.json").read_text())
  printed = dict(kv.split("=") for kv in
                 evaluated.stdout.strip().splitlines()[-1].split()[1:])
  assert f"{written['top1']:.4f}" == printed["top1"]
  assert f"{written['top5']:.4f}" == printed["top5"]
  assert written["positions"] == 200 and written["split"] == "test"
  assert written["games"] == int(printed["games"])
  lo, hi = written["top1_interval"]
  assert lo < written["top1"] < hi
  # The run's split (a game's split is a hash of the game, its fractions
  # and seed), over all the records: the run read only the first 300 games,
  # so the test split evaluated holds its test games and more.
  for k in ("filters", "fractions", "seed"):
    assert written["dataset"][k] == saved["held_out"][k], k
  assert written["dataset"]["limit"] is None
  assert written["dataset"]["games"][2] > identity.games[2]
  assert written["checkpoint_step"] == 40
  _, variables, _ = sl.load_policy(str(out / "checkpoints"))
  assert written["variables_sha256"] == result_file.variables_sha256(
      variables)
  # No machine's absolute paths: relative to the working directory.
  words = shlex.split(written["command"])
  assert words[:2] == ["python", os.path.relpath(EVAL_POLICY)]
  assert not any(w.startswith("/") for w in words), words
  assert "--limit" in words
  assert deepened.returncode == 0, deepened.stderr[-3000:]
  assert (f"held out: none of the {len(games.test)} test games of {out} is "
          f"in this run's training split") in deepened.stdout
  assert leaked.returncode == 1 and not leaky.exists()
  assert re.search(rf"--init-from: \d+ of the {len(games.test)} test games "
                   rf"of the parent run {out} are in this run's training "
                   rf"split", leaked.stderr), leaked.stderr[-3000:]
  assert (f"starting network: {out} step 40, deepened to 5 layers by "
          f"identity layers") in deepened.stdout
  # It starts where the 3-layer run ended, not at chance.
  start = read_metrics(deep / "metrics.jsonl")[0]["loss"]
  assert start < records[0]["loss"] - 0.2, (start, records[0]["loss"])
  assert json.loads((deep / "config.json").read_text())[
      "init_from_step"] == 40
  assert mismatched.returncode == 1
  assert not wide.exists()  # a refused start leaves no run behind
  assert (f"--init-from: {out} holds a 3x8 plain network" in
          mismatched.stderr and "cannot start a 3x16" in mismatched.stderr)
  assert laddered.returncode == 0, laddered.stderr[-3000:]
  assert (f"starting network: {out} step 40, as it is, with zero weights on "
          f"the new planes ['ladder_capture', 'ladder_escape']"
          in laddered.stdout)
  lad_saved = json.loads((lad / "config.json").read_text())
  assert lad_saved["dataset"]["ladders"] is True
  assert len(lad_saved["config"]["model"]["features"]) == len(
      go_features.ALPHAGO_POLICY_FEATURES)
  start = read_metrics(lad / "metrics.jsonl")[0]["loss"]
  assert start < records[0]["loss"] - 0.2, (start, records[0]["loss"])
  assert lad_evaluated.returncode == 0, lad_evaluated.stderr[-3000:]
  assert "48 planes" in lad_evaluated.stdout
  assert lad_evaluated.stdout.strip().splitlines()[-1].endswith(
      " positions=200")
  # experiments/alphago/sl_policy.py is `train sl-policy`: --from-run and
  # --resume show the options its run recorded, resolved.
  assert repeat.returncode == 0, repeat.stderr[-3000:]
  shown = json.loads(repeat.stdout)
  assert shown["stage"] == "sl-policy" and shown["output"] == str(
      repeat_dir)
  assert shown["options"] == command["options"]
  options = shown["options"]
  assert (options["total_samples"], options["size"], options["quick"],
          options["limit"]) == (1280, 9, True, 300)
  assert resume_shown.returncode == 0, resume_shown.stderr[-3000:]
  assert json.loads(resume_shown.stdout) == dict(shown, output=str(out))
  assert old_repeat.returncode == 0, old_repeat.stderr[-3000:]
  assert old_repeat.stdout.strip() == " ".join(
      ["python experiments/alphago/sl_policy.py"] + old_argv
      + ["--output", str(repeat_dir)])
  assert not repeat_dir.exists()  # a dry run writes nothing


def _counter_state():
  from alphago_jax.training.state import TrainState  # pylint: disable=import-outside-toplevel
  return TrainState(params={"w": jnp.zeros(3)}, batch_stats={},
                    opt_state={"m": jnp.zeros(3)}, buffer=None,
                    key=jax.random.key_data(jax.random.key(0)),
                    iteration=jnp.int32(0))


def _counter_step(kill_at=None):
  def step(state):
    if kill_at is not None and int(state.iteration) + 1 == kill_at:
      os.kill(os.getpid(), signal.SIGTERM)
    return state.replace(params={"w": state.params["w"] + 1},
                         iteration=state.iteration + 1), {
                             "loss": jnp.float32(state.iteration)}
  return step


def test_host_loop_sigterm_stops_cleanly_and_budgets_add_up(tmp_path):
  from alphago_jax.training import host_loop  # pylint: disable=import-outside-toplevel
  arch = {"stage": "counter"}
  kw = dict(architecture=arch, output_dir=str(tmp_path), log_every=2,
            tensorboard=False)
  handler = signal.getsignal(signal.SIGTERM)
  state, history = host_loop.run(
      _counter_state(), lambda s: _counter_step(kill_at=3), num_steps=10,
      handle_signals=True, **kw)
  # SIGTERM at step 3: a last record (of step 3 alone) and a
  # checkpoint there; the handler is restored afterwards.
  assert int(state.iteration) == 3
  assert [r["iteration"] for r in history] == [2, 3]
  assert history[-1]["stop"] == "SIGTERM" and history[0]["loss"] == 0.5
  assert ckpt.latest_step(tmp_path / "checkpoints") == 3
  assert signal.getsignal(signal.SIGTERM) is handler
  # Resuming continues from 3; a training-time budget already spent stops
  # it after one step, saved.
  lines = []
  state, history = host_loop.run(
      _counter_state(), lambda s: _counter_step(), num_steps=10,
      max_train_seconds=history[-1]["train_seconds"], log=lines.append,
      **kw)
  assert lines[0] == "resumed from iteration 3"
  assert int(state.iteration) == 4 and history[-1]["stop"] == (
      "max_train_seconds")
  np.testing.assert_array_equal(state.params["w"], [4, 4, 4])
  state, history = host_loop.run(_counter_state(),
                                 lambda s: _counter_step(), num_steps=10,
                                 **kw)
  assert int(state.iteration) == 10 and history[-1]["stop"] == "num_steps"
  assert [r["iteration"] for r in read_metrics(
      tmp_path / "metrics.jsonl")] == [2, 3, 4, 6, 8, 10]
  with pytest.raises(ckpt.CheckpointMismatchError, match="stage"):
    host_loop.run(_counter_state(), lambda s: _counter_step(),
                  num_steps=12, architecture={"stage": "other"},
                  output_dir=str(tmp_path))


def test_sl_policy_presets():
  import types  # pylint: disable=import-outside-toplevel
  from alphago_jax.cli.stages import sl_policy as module  # pylint: disable=import-outside-toplevel
  args = dict(quick=False, preset="cpu", size=19, layers=None, filters=None,
              trunk=None, batch_size=None, lr=None, optimizer=None,
              total_samples=None, schedule=None, decay_fraction=None,
              ladders=False)
  cpu = module.build_config(types.SimpleNamespace(**args))
  assert cpu.model == PolicyNetConfig.cpu() == PolicyNetConfig()
  assert (cpu.model.num_layers, cpu.model.filters) == (6, 64)
  paper = module.build_config(types.SimpleNamespace(**dict(args,
                                                           preset="paper")))
  assert paper.model == PolicyNetConfig.paper()
  assert paper.model.num_planes == 48 and paper.batch_size == 256
  ladders = module.build_config(types.SimpleNamespace(**dict(args,
                                                             ladders=True)))
  assert ladders.model == dataclasses.replace(
      cpu.model, features=go_features.ALPHAGO_POLICY_FEATURES)
  assert module.reads_ladders(ladders.model) and module.reads_ladders(
      paper.model) and not module.reads_ladders(cpu.model)
  other = module.build_config(types.SimpleNamespace(**dict(
      args, layers=8, filters=32, trunk="residual", optimizer="sgd",
      schedule="wsd", decay_fraction=0.3)))
  assert (other.model.num_layers, other.model.filters, other.model.trunk,
          other.optimizer, other.schedule, other.decay_fraction) == (
              8, 32, "residual", "sgd", "wsd", 0.3)
  # Round trip through config.json.
  assert sl.SupervisedConfig.from_json(json.loads(json.dumps(
      paper.to_json()))) == paper


@pytest.mark.parametrize("num_layers", [4, 5, 7, 12])
def test_deepened_network_plays_the_same_moves(num_layers):
  # Identity layers between the trained ones leave every logit as it was
  # (their input is a ReLU's output), on positions with stones and on an
  # empty board.
  from alphago_jax.models.policy import deepen_policy
  config = PolicyNetConfig(num_layers=4, filters=8, board_size=9)
  variables = init_policy_variables(PolicyNet(config), jax.random.key(0))
  # Non-zero biases too, as a trained network has.
  keys = iter(jax.random.split(jax.random.key(1), 20))
  variables = jax.tree.map(
      lambda x: x + 0.1 * jax.random.normal(next(keys), x.shape), variables)
  planes = jax.random.bernoulli(jax.random.key(2), 0.3,
                                (6, 9, 9, config.num_planes))
  planes = planes.astype(jnp.float32).at[0].set(0.0)
  deeper, deeper_vars = deepen_policy(config, variables,
                                      num_layers=num_layers)
  assert deeper.num_layers == num_layers and num_params(deeper_vars) == (
      num_params(variables) + (num_layers - 4) * (9 * 8 * 8 + 8))
  np.testing.assert_allclose(
      PolicyNet(deeper).apply(deeper_vars, planes),
      PolicyNet(config).apply(variables, planes), rtol=0, atol=1e-6)
  # The trained layers keep their order: the first layer, the last trunk
  # layer and the output are the trained ones.
  params = deeper_vars["params"]
  for old, new in ((0, 0), (2, num_layers - 2), (3, num_layers - 1)):
    np.testing.assert_array_equal(params[f"Conv_{new}"]["kernel"],
                                  variables["params"][f"Conv_{old}"]["kernel"])


def test_widened_network_plays_the_same_moves():
  # Zero weights on the new planes: the logits are the trained network's
  # whatever those planes hold; the old planes keep their weights wherever
  # the new order puts them.
  from alphago_jax.models.policy import widen_inputs
  config = PolicyNetConfig(num_layers=4, filters=8, board_size=9)
  variables = init_policy_variables(PolicyNet(config), jax.random.key(0))
  wide_names = go_features.ALPHAGO_POLICY_FEATURES
  wide, wide_vars = widen_inputs(config, variables, features=wide_names)
  assert wide.features == wide_names and wide.num_planes == 48
  planes = jax.random.bernoulli(jax.random.key(2), 0.4, (6, 9, 9, 48))
  planes = planes.astype(jnp.float32)
  keep = np.concatenate([
      np.arange(go_features.FEATURES[n]) + sum(
          go_features.FEATURES[m] for m in wide_names[:wide_names.index(n)])
      for n in config.features])
  np.testing.assert_allclose(
      PolicyNet(wide).apply(wide_vars, planes),
      PolicyNet(config).apply(variables, planes[..., keep]), rtol=0,
      atol=1e-5)
  with pytest.raises(ValueError, match=r"lack \['ones'\]"):
    widen_inputs(config, variables, features=tuple(
        n for n in wide_names if n != "ones"))


def test_ladder_network_needs_positions_with_ladders(cache):
  config = _tiny(model=dataclasses.replace(
      _tiny().model, features=go_features.ALPHAGO_POLICY_FEATURES))
  positions = cache.split("train")
  with pytest.raises(ValueError, match="carry none: build their cache with "
                     r"DatasetConfig\(ladders=True\)"):
    sl.train_supervised(config, positions, seed=0, max_samples=32)
  variables = init_policy_variables(PolicyNet(config.model),
                                    jax.random.key(0))
  with pytest.raises(ValueError, match="evaluate_policy: the network reads "
                     "the ladder planes"):
    sl.evaluate_policy(variables, config.model, positions)


def test_deepen_and_init_refuse_what_does_not_fit():
  from alphago_jax.models.policy import deepen_policy
  config = PolicyNetConfig(num_layers=4, filters=8, board_size=9)
  variables = init_policy_variables(PolicyNet(config), jax.random.key(0))
  with pytest.raises(ValueError, match="num_layers must be an integer >= 4"):
    deepen_policy(config, variables, num_layers=3)
  residual = dataclasses.replace(config, trunk="residual")
  with pytest.raises(ValueError, match="only a plain trunk"):
    deepen_policy(residual, init_policy_variables(PolicyNet(residual),
                                                  jax.random.key(0)),
                  num_layers=6)
  with pytest.raises(ValueError, match="not a 6x8 plain network on"):
    sl.init_supervised_state(_tiny(model=dataclasses.replace(
        config, num_layers=6)), 0, variables=variables)
  state = sl.init_supervised_state(_tiny(model=config), 0,
                                   variables=variables)
  np.testing.assert_array_equal(state.params["Conv_2"]["kernel"],
                                variables["params"]["Conv_2"]["kernel"])


@pytest.mark.parametrize("name,planes,step", [("sl12-partial", 46, 15186),
                                              ("sl_policy_ladders", 48, 32812)])
def test_committed_partial_runs_load_and_can_resume(name, planes, step):
  # The README's way on from a committed step: copied to runs/NAME, the
  # run's command with --resume. Its config and checkpoint must agree.
  folder = os.path.join(ROOT, "checkpoints", name)
  model, variables, saved_step = sl.load_policy(
      ckpt.steps_directory(folder))
  config = sl.SupervisedConfig.from_json(
      json.loads(open(os.path.join(folder, "config.json")).read())["config"])
  assert config.model == model and model.num_planes == planes
  assert (model.num_layers, model.filters) == (12, 64)
  assert step is None or saved_step == step
  last = read_metrics(os.path.join(folder, "metrics.jsonl"))[-1]
  assert last["iteration"] <= saved_step
  assert variables["params"]["Conv_0"]["kernel"].shape[2] == planes
