"""The ResNet policy-value network: shapes, masking, batch norm modes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games, models
from alphago_jax.models.resnet import (MASKED_LOGIT, make_stacked_evaluate_fn,
                                       stack_variables)

GAME = games.make("tictactoe")


@pytest.fixture(scope="module")
def tiny():
  net = models.make_network(GAME, models.ResNetConfig.tiny())
  return net, models.init_variables(GAME, net, jax.random.key(0))


def test_shapes_and_value_range(tiny):
  net, variables = tiny
  assert set(variables) == {"params", "batch_stats"}
  obs = jax.random.normal(jax.random.key(1), (5, 3, 3, 2))
  logits, value = net.apply(variables, obs)
  assert logits.shape == (5, 9) and logits.dtype == jnp.float32
  assert value.shape == (5,)
  assert np.all(np.abs(value) <= 1)


def test_illegal_actions_are_masked(tiny):
  net, variables = tiny
  obs = jax.random.normal(jax.random.key(1), (2, 3, 3, 2))
  legal = jnp.array([[True] * 9, [False, True] + [False] * 6 + [True]])
  logits, _ = models.make_evaluate_fn(net)(variables, obs, legal)
  p = jax.nn.softmax(logits)
  np.testing.assert_array_equal(np.asarray(p[1] > 0),
                                np.asarray(legal[1]))
  assert np.all(np.isfinite(jax.nn.log_softmax(logits)))
  assert np.all(logits[1][~legal[1]] == MASKED_LOGIT)


def test_train_mode_updates_batch_stats(tiny):
  net, variables = tiny
  obs = jax.random.normal(jax.random.key(1), (8, 3, 3, 2)) + 3.0
  _, updates = net.apply(variables, obs, train=True, mutable=["batch_stats"])
  before = jax.tree.leaves(variables["batch_stats"])
  after = jax.tree.leaves(updates["batch_stats"])
  assert any(not np.allclose(a, b) for a, b in zip(before, after))


def test_blocks_and_channels_are_configurable():
  cfg = models.ResNetConfig(num_blocks=3, channels=8, value_hidden=4)
  net = models.make_network(GAME, cfg)
  # Shapes only: no need to run the initialisers.
  params = jax.eval_shape(
      lambda: models.init_variables(GAME, net, jax.random.key(0)))["params"]
  blocks = [k for k in params if k.startswith("ResidualBlock")]
  assert len(blocks) == 3
  assert params["Conv_0"]["kernel"].shape == (3, 3, 2, 8)


@pytest.mark.parametrize("field,value", [
    ("num_blocks", -1), ("channels", 0), ("value_hidden", 1.5),
    ("policy_channels", True)])
def test_bad_config(field, value):
  with pytest.raises(ValueError, match=field):
    models.ResNetConfig(**{field: value})


def test_rejects_flat_observations(tiny):
  net, _ = tiny
  with pytest.raises(ValueError, match="H, W, C"):
    net.init(jax.random.key(0), jnp.zeros((1, 18)))


def test_stacked_evaluate_runs_each_group_on_its_network():
  net = models.make_network(GAME, models.ResNetConfig.tiny())
  vs = [models.init_variables(GAME, net, jax.random.key(i)) for i in (0, 1)]
  obs = jax.random.normal(jax.random.key(2), (6, 3, 3, 2))
  legal = jnp.ones((6, 9), bool)
  evaluate = models.make_evaluate_fn(net)
  stacked = make_stacked_evaluate_fn(net, 2)
  logits, values = stacked(stack_variables(vs), obs, legal)
  for k in (0, 1):
    want_l, want_v = evaluate(vs[k], obs[3 * k:3 * k + 3], legal[:3])
    np.testing.assert_allclose(logits[3 * k:3 * k + 3], want_l, atol=1e-5)
    np.testing.assert_allclose(values[3 * k:3 * k + 3], want_v, atol=1e-5)
  with pytest.raises(ValueError, match="multiple"):
    stacked(stack_variables(vs), obs[:5], legal[:5])
