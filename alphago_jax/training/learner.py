"""The AlphaGo Zero loss and its optimiser.

l = (z - v)^2 - pi^T log p + c ||theta||^2, averaged over a batch; the L2
term covers every parameter, as in the paper.
"""

from __future__ import annotations

from typing import Dict, Tuple

import chex
import jax
import jax.numpy as jnp
import optax

from alphago_jax.models.resnet import PolicyValueNet
from alphago_jax.training import optim
from alphago_jax.training.config import TrainConfig
from alphago_jax.training.replay import Sample


def make_optimizer(config: TrainConfig) -> optax.GradientTransformation:
  """SGD with momentum or Adam, on a piecewise-constant rate schedule."""
  schedule = optax.piecewise_constant_schedule(
      config.learning_rate,
      {b: config.lr_decay for b in config.lr_boundaries})
  return optim.optimizer(config.optimizer, schedule,
                         momentum=config.momentum)


def loss_fn(params: chex.ArrayTree, batch_stats: chex.ArrayTree,
            batch: Sample, *, network: PolicyValueNet, weight_decay: float
            ) -> Tuple[chex.Array, Tuple[chex.ArrayTree, Dict]]:
  """Total loss and (new batch stats, metrics) on one batch `[N]`."""
  (logits, value), updates = network.apply(
      {"params": params, "batch_stats": batch_stats}, batch.observation,
      batch.legal_action_mask, train=True, mutable=["batch_stats"])
  log_p = jax.nn.log_softmax(logits)
  value_loss = jnp.mean((batch.value - value) ** 2)
  # Illegal moves have pi = 0 and a finite masked log p, so no 0 * inf.
  policy_loss = jnp.mean(-jnp.sum(batch.policy * log_p, axis=-1))
  l2 = sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params))
  total = value_loss + policy_loss + weight_decay * l2
  p = jnp.exp(log_p)
  entropy = -jnp.sum(jnp.where(batch.legal_action_mask, p * log_p, 0.0), -1)
  target_entropy = -jnp.sum(
      jnp.where(batch.policy > 0, batch.policy * jnp.log(batch.policy), 0.0),
      -1)
  metrics = {
      "loss": total, "value_loss": value_loss, "policy_loss": policy_loss,
      "l2": l2,
      # The policy loss less its floor, the target's own entropy.
      "policy_kl": policy_loss - jnp.mean(target_entropy),
      "policy_entropy": jnp.mean(entropy),
      "target_entropy": jnp.mean(target_entropy),
      # v rounds to the outcome (win/draw/loss) it is trained to predict.
      "value_accuracy": jnp.mean(
          (jnp.abs(batch.value - value) < 0.5).astype(jnp.float32)),
  }
  return total, (updates["batch_stats"], metrics)


def scan_gradient_steps(grad_step, buffer, carry, key: chex.PRNGKey,
                        count: int):
  """`count` gradient steps on batches drawn from `buffer`, in one
  `lax.scan`: `grad_step(buffer, carry, key) -> (carry, metrics)` with
  `carry = (params, batch_stats, opt_state)`. Returns the final carry and
  the steps' metrics averaged, plus the first and last step's loss."""
  carry, steps = jax.lax.scan(lambda c, k: grad_step(buffer, c, k), carry,
                              jax.random.split(key, count))
  metrics = {k: jnp.mean(v) for k, v in steps.items()}
  metrics["loss_first"] = steps["loss"][0]
  metrics["loss_last"] = steps["loss"][-1]
  return carry, metrics
