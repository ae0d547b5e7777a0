"""Distillation of p_σ and v_θ into the loop's ResNet (`training.distill`),
and an AlphaZero run started from its network (`training.warm_start`,
`alphago-jax train GAME --init-from`).

The default tests use tiny random teachers on 5x5 (one compiled step,
shared through `make_step`'s cache); the targets' exactness uses the
committed 9x9 networks through the zoo's loaders; the slow test distils
them for real and checks agreement well above chance.
"""

import dataclasses
import json
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games
from alphago_jax.games import symmetry
from alphago_jax.models.plane_net import init_plane_variables
from alphago_jax.models.policy import PolicyNet, PolicyNetConfig
from alphago_jax.models.resnet import ResNetConfig
from alphago_jax.models.value import ValueNet, ValueNetConfig
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import distill, loop, warm_start
from alphago_jax.training.augment import dihedral_augment
from alphago_jax.training.config import TrainConfig
from alphago_jax.search.alphazero import AlphaZeroSearchConfig
from alphago_jax.zoo import alphago_networks, loaders
from helpers import ROOT, run_cli

SIZE = 5
STUDENT = ResNetConfig(num_blocks=1, channels=16, value_hidden=16)
CONFIG = distill.DistillConfig(
    model=STUDENT, num_games=6, gradient_steps=4, batch_size=64,
    max_moves=24, learning_rate=1e-2, warmup_steps=0, schedule="constant",
    total_samples=12 * 4 * 64)
STEPS = 12
HELD_GAMES = 6


def _teacher():
  """Tiny random p_σ and v_θ on 5x5; p_σ's last layer scaled up, so that
  its distribution has a clear mode to agree with."""
  teacher = distill.Teacher(policy=PolicyNetConfig.tiny(board_size=SIZE),
                            value=ValueNetConfig.tiny(board_size=SIZE))
  pkey, vkey = jax.random.split(jax.random.key(11))
  policy = init_plane_variables(PolicyNet(teacher.policy), pkey)
  policy = jax.tree.map(lambda x: 4.0 * x, policy)
  value = init_plane_variables(ValueNet(teacher.value), vkey)
  return teacher, {"policy": policy, "value": value}


@pytest.fixture(scope="module")
def tiny():
  game = games.make("go", size=SIZE)
  teacher, variables = _teacher()
  return game, teacher, variables


def _inputs(tiny, eval_games=0):
  game, teacher, variables = tiny
  return distill.DistillInputs(game=game, teacher=teacher,
                               teacher_variables=variables,
                               eval_games=eval_games)


@pytest.fixture(scope="module")
def trained(tiny, tmp_path_factory):
  """A run of `STEPS` steps in one call, saved half way and at the end:
  (run directory, state, records)."""
  out = tmp_path_factory.mktemp("distill") / "run"
  state, history = distill.train_distill(
      CONFIG, _inputs(tiny), seed=3, num_steps=STEPS, output_dir=str(out),
      tensorboard=False, handle_signals=False, log_every=4,
      checkpoint_every=STEPS // 2)
  return out, state, history


@pytest.fixture(scope="module")
def held(tiny):
  """Every position of the run's held-out validation games."""
  game, teacher, variables = tiny
  return distill.held_out_positions(
      game, teacher, variables, seed=3, split="validation",
      num_games=HELD_GAMES, max_moves=CONFIG.max_moves)


def test_distillation_lowers_the_loss_and_agrees_beyond_chance(tiny, trained,
                                                               held):
  game, _, _ = tiny
  _, state, history = trained
  before = distill.evaluate(
      loop.variables_of(distill.init_state(game, CONFIG, 3)), game, STUDENT,
      held)
  after = distill.evaluate(loop.variables_of(state), game, STUDENT, held)
  assert history[-1]["loss"] < history[0]["loss"]
  assert after["kl"] < before["kl"] and after["value_mse"] < before[
      "value_mse"]
  # Chance: a uniform pick among the legal moves agrees 1/legal of the time.
  chance = float(np.mean(1.0 / held.legal_action_mask.sum(-1)))
  assert after["agreement"] > chance + 0.15, (after, chance)
  assert after["positions"] == len(held.value)


def test_held_out_games_are_not_training_games(tiny):
  game, teacher, variables = tiny
  # The program `held_out_positions` plays them with.
  play = distill._games_fn(game, teacher, HELD_GAMES, 1.0,
                           CONFIG.max_moves)
  train = play(variables, jax.random.fold_in(distill.train_key(3), 0))
  for split in ("validation", "test"):
    held = play(variables, jax.random.fold_in(
        distill.held_out_key(3, split), 0))
    assert not np.array_equal(train[0].observation, held[0].observation)
  assert not np.array_equal(distill.held_out_key(3, "validation"),
                            distill.held_out_key(3, "test"))


def test_resume_continues_exactly(tiny, trained, tmp_path):
  # The run as it stood half way: its checkpoint of step STEPS // 2 the
  # newest; resumed from there, it reaches the uninterrupted result.
  source, uninterrupted, _ = trained
  out = tmp_path / "run"
  shutil.copytree(source, out)
  steps = out / "checkpoints"
  assert ckpt.all_steps(steps) == [STEPS // 2, STEPS]
  shutil.rmtree(steps / str(STEPS))
  assert ckpt.latest_step(steps) == STEPS // 2
  resumed, history = distill.train_distill(
      CONFIG, _inputs(tiny), num_steps=STEPS, seed=3, output_dir=str(out),
      tensorboard=False, handle_signals=False, log_every=4)
  assert history[0]["iteration"] > STEPS // 2
  assert int(resumed.iteration) == STEPS
  for a, b in zip(jax.tree.leaves(loop.variables_of(uninterrupted)),
                  jax.tree.leaves(loop.variables_of(resumed))):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_board_symmetry_permutes_the_policy_target(held):
  # A held-out position that no symmetry maps onto itself, so each
  # transformed row tells which symmetry it went through.
  def asymmetric(obs):
    views = [np.asarray(symmetry.transform_observation(obs, k))
             for k in range(symmetry.NUM_SYMMETRIES)]
    return all(not np.array_equal(views[0], v) for v in views[1:])
  index = next(i for i in range(len(held.value))
               if asymmetric(held.observation[i]))
  sample = jax.tree.map(lambda x: x[index:index + 1], held)
  rows = jax.tree.map(lambda x: jnp.repeat(x, 32, axis=0), sample)
  out = jax.device_get(jax.jit(dihedral_augment(SIZE))(jax.random.key(5),
                                                       rows))
  views = np.stack([symmetry.transform_observation(sample.observation[0], k)
                    for k in range(symmetry.NUM_SYMMETRIES)])
  moved = np.stack([symmetry.transform_action(
      jnp.arange(SIZE * SIZE + 1), k, SIZE)
                    for k in range(symmetry.NUM_SYMMETRIES)])
  seen = set()
  for r in range(32):
    matches = [k for k in range(symmetry.NUM_SYMMETRIES)
               if np.array_equal(out.observation[r], views[k])]
    assert len(matches) == 1
    k = matches[0]
    seen.add(k)
    # Move a's probability is now at its image; pass stays last.
    np.testing.assert_array_equal(out.policy[r][moved[k]], sample.policy[0])
    np.testing.assert_array_equal(out.legal_action_mask[r][moved[k]],
                                  sample.legal_action_mask[0])
    assert moved[k][-1] == SIZE * SIZE
    assert out.value[r] == sample.value[0]
  assert len(seen) > 1


def test_targets_are_the_loaded_teachers_outputs_for_either_colour():
  # The committed 9x9 p_σ and v_θ, read by the zoo's loaders; the targets
  # recomputed through the search's own wrappers (`alphago_networks`: its
  # game's planes, each network's channels).
  policy = loaders.load(f"{ROOT}/checkpoints/sl9")
  value = loaders.load(f"{ROOT}/checkpoints/value9s2")
  nets = alphago_networks.alphago_networks(
      policy.model, policy.variables, value.model, value.variables)
  teacher = distill.Teacher(policy=policy.model, value=value.model)
  variables = {"policy": policy.variables, "value": value.variables}
  game = games.make("go", size=9)
  moves = [40, 30, 50, 31, 22]  # Black to move after 4, White after 5
  ours, theirs = [], []
  s_ours, s_theirs = game.init(None), nets.game.init(None)
  for m in moves:
    s_ours, s_theirs = game.step(s_ours, m), nets.game.step(s_theirs, m)
    ours.append(s_ours)
    theirs.append(s_theirs)
  stack = lambda states: jax.tree.map(lambda *x: jnp.stack(x), *states)

  @jax.jit
  def both(variables, net_variables, ours, theirs):
    sample, _ = distill.targets(game, teacher, variables, ours)
    obs = jax.vmap(nets.game.observe)(theirs)
    want_v = nets.value_fn(net_variables, obs)
    want_p = jax.nn.softmax(nets.policy_fn(net_variables, obs,
                                           theirs.legal_action_mask))
    return sample, want_v, want_p

  sample, want_v, want_p = both(variables, nets.variables, stack(ours),
                                stack(theirs))
  np.testing.assert_allclose(sample.value, want_v, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(sample.policy, want_p, rtol=1e-5, atol=1e-7)
  players = np.asarray(stack(ours).current_player)
  assert set(players[3:5]) == {0, 1}
  # Each colour's value is v_θ's for the player to move, not Black's.
  assert np.all(np.abs(np.asarray(sample.value)) > 1e-3)
  # The student's observation is the loop's: from the mover's view.
  np.testing.assert_array_equal(sample.observation,
                                jax.vmap(game.observe)(stack(ours)))


def _az_config(model):
  return TrainConfig(model=model, search=AlphaZeroSearchConfig(
      num_simulations=2, max_num_considered_actions=2), max_moves=4,
      num_games=2, buffer_capacity=8, batch_size=2, gradient_steps=1)


def test_init_from_takes_the_distilled_network(tiny, trained):
  game, _, _ = tiny
  out, state, _ = trained
  variables = warm_start.network_from_run(str(out), game,
                                          _az_config(STUDENT))
  started, history = loop.train(game, _az_config(STUDENT), seed=0,
                                num_iterations=0, init_variables=variables)
  assert history == [] and int(started.iteration) == 0
  for a, b in zip(jax.tree.leaves(loop.variables_of(state)),
                  jax.tree.leaves(loop.variables_of(started))):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  # The zoo's loader reads the same network.
  loaded = loaders.load(str(out))
  assert loaded.kind == "alphazero" and loaded.model == STUDENT
  for a, b in zip(jax.tree.leaves(loaded.variables),
                  jax.tree.leaves(loop.variables_of(state))):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_init_from_refuses_another_network_naming_the_field(tiny, trained):
  game, _, _ = tiny
  out, _, _ = trained
  other = dataclasses.replace(STUDENT, channels=8)
  with pytest.raises(ckpt.CheckpointMismatchError, match="model:"):
    warm_start.network_from_run(str(out), game, _az_config(other))
  with pytest.raises(ckpt.CheckpointMismatchError,
                     match="observation_shape:"):
    warm_start.network_from_run(str(out), games.make("go", size=7),
                                _az_config(STUDENT))


def test_init_from_on_the_command_line(capsys, trained, tmp_path):
  out, _, _ = trained
  target = tmp_path / "az"
  status, text, _ = run_cli(capsys, "train", "go9", "--output", target,
                            "--init-from", out, "--dry-run")
  assert status == 0
  assert json.loads(text)["config"]["init_from"] == str(out)
  # The distilled net is 5x5: go9 refuses it, naming the field, before
  # anything is written.
  status, _, err = run_cli(capsys, "train", "go9", "--output", target,
                           "--init-from", out, "--iterations", "1")
  assert status == 2
  assert "--init-from" in err and "observation_shape" in err, err
  assert not target.exists()


@pytest.mark.slow
def test_distilling_the_committed_9x9_networks_agrees_well_beyond_chance(
    tmp_path):
  policy = loaders.load(f"{ROOT}/checkpoints/sl9")
  value = loaders.load(f"{ROOT}/checkpoints/value9s2")
  inputs = distill.DistillInputs(
      game=games.make("go", size=9),
      teacher=distill.Teacher(policy=policy.model, value=value.model),
      teacher_variables={"policy": policy.variables,
                         "value": value.variables}, eval_games=16)
  config = distill.DistillConfig(
      model=ResNetConfig(num_blocks=2, channels=32, value_hidden=32),
      num_games=16, gradient_steps=8, batch_size=128, warmup_steps=10,
      total_samples=60 * 8 * 128)
  _, history = distill.train_distill(
      config, inputs, seed=0, output_dir=str(tmp_path / "run"),
      tensorboard=False, handle_signals=False, evaluate_every=60)
  last = history[-1]
  assert last["validation_agreement"] > 0.3, last
  assert last["validation_value_mse"] < 0.15, last
