"""The `Stage` contract (`training.stage`): a toy stage defined and
registered here, in one place, runs through `run_stage` with everything
the host loop gives every stage (metrics, checkpoints, the architecture
check, exact resume, artifacts), and the registered stages all keep it."""

import dataclasses
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from alphago_jax import training
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import stage as stage_lib
from alphago_jax.training.metrics import read_metrics
from alphago_jax.training.state import TrainState

TRUE_WEIGHTS = np.array([1.5, -2.0, 0.5], np.float32)


@dataclasses.dataclass(frozen=True)
class ToyConfig:
  """Least squares on y = w·x, x standard normal, by SGD."""
  features: int = 3
  batch_size: int = 8
  learning_rate: float = 0.1


def _init(run):
  config = run.config
  params = {"w": jnp.zeros(config.features, jnp.float32)}
  return TrainState(
      params=params, batch_stats={},
      opt_state=optax.sgd(config.learning_rate).init(params), buffer=None,
      key=jax.random.key_data(jax.random.key(run.seed)),
      iteration=jnp.int32(0))


def _make_step(run, start):
  del start  # The batches are drawn from the state's key and step.
  config = run.config
  optimizer = optax.sgd(config.learning_rate)

  @jax.jit
  def step(state):
    key = jax.random.fold_in(jax.random.wrap_key_data(state.key),
                             state.iteration)
    x = jax.random.normal(key, (config.batch_size, config.features))
    y = x @ jnp.asarray(TRUE_WEIGHTS)
    loss_fn = lambda p: jnp.mean((x @ p["w"] - y) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    updates, opt_state = optimizer.update(grads, state.opt_state)
    return state.replace(params=optax.apply_updates(state.params, updates),
                         opt_state=opt_state,
                         iteration=state.iteration + 1), {"loss": loss}
  return step


def _evaluate(run):
  del run
  return lambda state: {"error": float(jnp.sum(
      (state.params["w"] - TRUE_WEIGHTS) ** 2))}


def _export(run, state, output_dir):
  del run
  with open(os.path.join(output_dir, "weights.json"), "w") as f:
    json.dump({"w": np.asarray(state.params["w"]).tolist(),
               "step": int(state.iteration)}, f)


TOY = stage_lib.register(stage_lib.Stage(
    name="toy_regression", config_type=ToyConfig, init=_init,
    make_step=_make_step,
    architecture=lambda run: {"stage": "toy_regression",
                              "features": run.config.features},
    evaluate=_evaluate, artifacts=("weights.json",), export=_export))


def _run(output_dir, num_steps, config=ToyConfig(), **options):
  return stage_lib.run_stage(TOY, config, seed=3, num_steps=num_steps,
                             output_dir=str(output_dir),
                             checkpoint_every=2, evaluate_every=3,
                             tensorboard=False, **options)


def test_a_toy_stage_needs_only_its_own_definition_and_registration(
    tmp_path):
  assert training.STAGES.get("toy_regression") is TOY
  straight, history = _run(tmp_path / "straight", 6)
  assert int(straight.iteration) == 6 and len(history) == 6
  assert [r["iteration"] for r in history if "error" in r] == [3, 6]
  assert history[-1]["error"] < history[0]["loss"]
  assert history[-1]["stop"] == "num_steps"
  # Stopped after 3 steps (saved), then resumed from its checkpoint: the
  # run ends where the straight one did, each step's record written once.
  _run(tmp_path / "resumed", 3)
  ckpt_dir = tmp_path / "resumed" / "checkpoints"
  assert ckpt.latest_step(str(ckpt_dir)) == 3
  again, _ = _run(tmp_path / "resumed", 6)
  np.testing.assert_array_equal(np.asarray(again.params["w"]),
                                np.asarray(straight.params["w"]))
  records = read_metrics(str(tmp_path / "resumed" / "metrics.jsonl"))
  assert [r["iteration"] for r in records] == list(range(1, 7))
  for name in TOY.artifacts:
    assert os.path.exists(tmp_path / "resumed" / name)
  with open(tmp_path / "resumed" / "weights.json") as f:
    assert json.load(f)["step"] == 6


def test_a_checkpoint_of_another_architecture_is_refused(tmp_path):
  _run(tmp_path, 2)
  with pytest.raises(ckpt.CheckpointMismatchError):
    _run(tmp_path, 4, config=ToyConfig(features=4))


def test_a_config_of_another_type_is_refused(tmp_path):
  with pytest.raises(TypeError, match="toy_regression"):
    stage_lib.run_stage(TOY, {"features": 3}, seed=0, num_steps=1,
                        output_dir=str(tmp_path))


def test_every_learner_registers_a_stage_of_its_config():
  expected = {"alphazero": training.TrainConfig,
              "sl_policy": training.SupervisedConfig,
              "rollout_policy": training.RolloutTrainConfig,
              "rl_policy": training.ReinforceConfig,
              "value_net": training.ValueTrainConfig}
  for name, config_type in expected.items():
    stage = training.STAGES.get(name)
    assert stage.name == name and stage.config_type is config_type
