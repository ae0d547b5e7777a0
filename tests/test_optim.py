"""`training.optim.optimizer`: the one optimiser factory of every stage."""

import jax.numpy as jnp
import optax
import pytest

from alphago_jax.training import optim


def _step(tx, grad=2.0, steps=3):
  params = jnp.array([1.0])
  state = tx.init(params)
  for _ in range(steps):
    updates, state = tx.update(jnp.array([grad]), state, params)
    params = optax.apply_updates(params, updates)
  return float(params[0])


def test_sgd_by_hand():
  # Plain SGD: 1 - 3 * 0.1 * 2 = 0.4. With momentum 0.5 the steps are
  # 0.2, 0.3, 0.35 (velocity v <- 0.5 v + g): 1 - 0.85 = 0.15.
  assert _step(optim.optimizer("sgd", 0.1)) == pytest.approx(0.4)
  assert _step(optim.optimizer("sgd", 0.1, momentum=0.5)) == pytest.approx(
      0.15)


def test_adam_by_hand():
  # Adam's bias-corrected first steps on a constant gradient move by the
  # rate each (m_hat / sqrt(v_hat) = 1, up to eps): 1 - 3 * 0.1.
  assert _step(optim.optimizer("adam", 0.1)) == pytest.approx(0.7, abs=1e-5)


def test_a_schedule_is_a_rate():
  schedule = optax.piecewise_constant_schedule(0.1, {1: 0.5})
  # Rates 0.1, 0.05, 0.05 on gradient 2: 1 - 0.2 - 0.1 - 0.1.
  assert _step(optim.optimizer("sgd", schedule)) == pytest.approx(0.6)


def test_an_unknown_optimizer_is_named():
  with pytest.raises(ValueError, match="optimizer must be one of .*'rmsprop'"):
    optim.optimizer("rmsprop", 0.1)
