"""AlphaGo's supervised policy network p_σ (Silver et al. 2016, Methods).

Input is a batch of AlphaGo feature planes `[B, N, N, C]`
(`games.go_features`, from the point of view of the player to move). The
paper's network: a 5x5 convolution of k filters, then `num_layers - 2`
3x3 convolutions of k filters, each followed by a ReLU, then a 1x1
convolution of one filter with a separate bias for every point, and a
softmax (13 layers, k = 192 in the paper). Records also hold passes, which
the paper's 361 outputs cannot play: here a pass logit is read from the
trunk's mean over the board, so the action space is the engine's N² + 1.

`trunk="residual"` swaps the plain 3x3 stack for residual blocks with batch
norm (two 3x3 convolutions each, `num_layers - 2` convolutions in all), for
deep nets that train faster with it; the plain stack is the default, being
the paper's and the cheaper per layer on a CPU (no normalisation pass).
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

from alphago_jax.core.checks import check_int
from alphago_jax.games import go_features, symmetry
from alphago_jax.core.types import MASKED_LOGIT
from alphago_jax.models.plane_net import (PlaneNetConfig, first_layer,
                                          init_plane_variables)

TRUNKS = ("plain", "residual")


@dataclasses.dataclass(frozen=True, kw_only=True)
class PolicyNetConfig(PlaneNetConfig):
  """Depth, width, input planes and board of the policy network: the
  fields of `plane_net.PlaneNetConfig` and these.

  Attributes:
    features: default: the 46 planes without the two costly ladder planes;
      the paper's 48 are `go_features.ALPHAGO_POLICY_FEATURES`.
    trunk: "plain" (the paper's) or "residual" (see module docstring).
  """
  features: Tuple[str, ...] = go_features.DEFAULT_POLICY_FEATURES
  trunk: str = "plain"

  def __post_init__(self):
    super().__post_init__()
    if self.trunk not in TRUNKS:
      raise ValueError(f"trunk must be one of {TRUNKS}, got {self.trunk!r}")
    if self.trunk == "residual" and self.num_layers % 2:
      raise ValueError(f"a residual trunk needs an even num_layers (two "
                       f"convolutions a block between the first and the "
                       f"output layer), got {self.num_layers}")

  @property
  def num_actions(self) -> int:
    """N² + 1 (pass last)."""
    return self.board_size ** 2 + 1

  @classmethod
  def cpu(cls) -> "PolicyNetConfig":
    """The default, 6 layers of 64 filters, plain: sized for hours on a
    2-core CPU. Training cost grows with layers x filters², so in the same
    time it sees ~4.5x the positions of a 12x96 net. Plain, as the paper's:
    on a CPU batch norm is extra passes over every layer's activations."""
    return cls()

  @classmethod
  def paper(cls) -> "PolicyNetConfig":
    """The paper's 13 layers of 192 filters on all 48 planes (an
    accelerator's network)."""
    return cls(num_layers=13, filters=192,
               features=go_features.ALPHAGO_POLICY_FEATURES)

  @classmethod
  def tiny(cls, board_size: int = 9) -> "PolicyNetConfig":
    """Small enough for unit tests."""
    return cls(num_layers=3, filters=8, board_size=board_size)


class PolicyNet(nn.Module):
  """The SL policy network; `__call__` returns logits `[B, N² + 1]`."""
  config: PolicyNetConfig

  @nn.compact
  def __call__(self, planes: chex.Array,
               legal_action_mask: Optional[chex.Array] = None, *,
               train: bool = False) -> chex.Array:
    """Logits of a batch of positions.

    Args:
      planes: float `[B, N, N, C]`.
      legal_action_mask: optional bool `[B, N² + 1]`; False gets
        `MASKED_LOGIT`.
      train: batch statistics (residual trunk; pass
        `mutable=["batch_stats"]`) if True, running averages if False.

    Returns:
      float32 `[B, N² + 1]`.
    """
    cfg = self.config
    n = cfg.board_size
    x = first_layer(cfg, planes)
    batch = planes.shape[0]
    if cfg.trunk == "plain":
      for _ in range(cfg.num_layers - 2):
        x = nn.relu(nn.Conv(cfg.filters, (3, 3))(x))
    else:
      norm = lambda: nn.BatchNorm(use_running_average=not train)
      for _ in range((cfg.num_layers - 2) // 2):
        y = nn.relu(norm()(nn.Conv(cfg.filters, (3, 3), use_bias=False)(x)))
        y = norm()(nn.Conv(cfg.filters, (3, 3), use_bias=False)(y))
        x = nn.relu(x + y)
    points = nn.Conv(1, (1, 1), use_bias=False)(x).reshape(batch, n * n)
    # The paper's position-dependent bias: one per point.
    points = points + self.param("point_bias", nn.initializers.zeros,
                                 (n * n,))
    pass_logit = nn.Dense(1)(jnp.mean(x, axis=(1, 2)))
    logits = jnp.concatenate([points, pass_logit], axis=-1)
    if legal_action_mask is not None:
      chex.assert_shape(legal_action_mask, (batch, cfg.num_actions))
      logits = jnp.where(legal_action_mask, logits, MASKED_LOGIT)
    return logits


def init_policy_variables(network: PolicyNet, key: chex.PRNGKey
                          ) -> chex.ArrayTree:
  """Fresh `{"params", "batch_stats"}` (batch_stats empty for a plain
  trunk)."""
  return init_plane_variables(network, key, train=False)


def deepen_policy(config: PolicyNetConfig, variables: chex.ArrayTree, *,
                  num_layers: int) -> Tuple[PolicyNetConfig, chex.ArrayTree]:
  """The same function as a deeper plain network (Net2DeeperNet, Chen et
  al. 2016): 3x3 layers whose kernel is the identity at its centre are
  spread between the trained ones. Every trunk layer's input is a ReLU's
  output, which such a layer followed by a ReLU returns unchanged, so the
  deeper network's logits are the shallower's and training goes on from
  its accuracy instead of from chance.

  Args:
    config: the trained network's (plain trunk).
    variables: its `{"params", "batch_stats"}`.
    num_layers: the deeper network's convolutions, >= `config.num_layers`.

  Returns:
    the deeper network's config and variables.
  """
  if config.trunk != "plain":
    raise ValueError(f"deepen_policy: only a plain trunk deepens by "
                     f"identity layers, this network's is {config.trunk!r}")
  check_int("num_layers", num_layers, config.num_layers)
  old, new = config.num_layers - 2, num_layers - 2  # 3x3 trunk layers
  params = variables["params"]
  k = config.filters
  # A new pair of arrays for each layer: a training step donates its
  # parameters, and XLA refuses to donate one buffer twice.
  identity = lambda: {
      "kernel": jnp.zeros((3, 3, k, k), jnp.float32).at[1, 1].set(
          jnp.eye(k)), "bias": jnp.zeros((k,), jnp.float32)}
  # Old trunk layer j goes to slot (j + 1) * new // old - 1, so the trained
  # layers stay in order with identities spread between them.
  slots = {(j + 1) * new // old - 1: j for j in range(old)}
  deeper = {name: value for name, value in params.items()
            if not name.startswith("Conv_")}
  deeper["Conv_0"] = params["Conv_0"]
  for slot in range(new):
    deeper[f"Conv_{slot + 1}"] = (params[f"Conv_{slots[slot] + 1}"]
                                  if slot in slots else identity())
  deeper[f"Conv_{new + 1}"] = params[f"Conv_{old + 1}"]
  return (dataclasses.replace(config, num_layers=num_layers),
          {"params": deeper, "batch_stats": variables["batch_stats"]})


def widen_inputs(config: PolicyNetConfig, variables: chex.ArrayTree, *,
                 features: Tuple[str, ...]
                 ) -> Tuple[PolicyNetConfig, chex.ArrayTree]:
  """The same function on more input planes: the first layer's kernel
  gets zero weights for every plane `config.features` lacks, so the logits
  are the trained network's until training finds a use for the new planes
  (e.g. the ladder planes added to a network trained without them).

  Args:
    config: the trained network's.
    variables: its `{"params", "batch_stats"}`.
    features: the new input planes, every one of `config.features` among
      them, in any order.

  Returns:
    the wider network's config and variables.
  """
  features = tuple(features)
  go_features.num_planes(features)  # checks the names
  lost = [n for n in config.features if n not in features]
  if lost:
    raise ValueError(f"widen_inputs: the new planes lack {lost}, which the "
                     f"network reads")
  starts, at = {}, 0
  for name in config.features:
    starts[name] = at
    at += go_features.FEATURES[name]
  kernel = variables["params"]["Conv_0"]["kernel"]  # [k, k, C, F]
  parts = []
  for name in features:
    width = go_features.FEATURES[name]
    if name in starts:
      parts.append(kernel[:, :, starts[name]:starts[name] + width])
    else:
      parts.append(jnp.zeros(kernel.shape[:2] + (width, kernel.shape[3]),
                             kernel.dtype))
  params = dict(variables["params"])
  params["Conv_0"] = dict(params["Conv_0"],
                          kernel=jnp.concatenate(parts, axis=2))
  return (dataclasses.replace(config, features=features),
          {"params": params, "batch_stats": variables["batch_stats"]})


def make_policy_fn(network: PolicyNet):
  """Inference-mode `(variables, planes [B, N, N, C], legal [B, A] or None)
  -> logits [B, A]`."""
  def policy(variables, planes, legal_action_mask=None):
    return network.apply(variables, planes, legal_action_mask, train=False)
  return policy


def symmetric_log_policy(logits_fn, variables, planes: chex.Array
                         ) -> chex.Array:
  """Log of the mean softmax of `logits_fn(variables, ·)` over the 8 board
  symmetries of `planes` `[B, N, N, C]`, each mapped back to the board:
  log-probabilities `[B, N² + 1]` (pass last), the paper's 8-symmetry
  ensemble (8× the cost)."""
  size = planes.shape[-3]
  probs = [symmetry.transform_policy(
      jax.nn.softmax(logits_fn(variables,
                               symmetry.transform_observation(planes, i))),
      symmetry.inverse(i), size) for i in range(symmetry.NUM_SYMMETRIES)]
  # Floor: a point every orientation rules out keeps a finite log.
  return jnp.log(jnp.maximum(jnp.mean(jnp.stack(probs), axis=0), 1e-30))


def num_params(variables: chex.ArrayTree) -> int:
  """Parameter count of `variables["params"]`."""
  return int(sum(x.size for x in jax.tree.leaves(variables["params"])))
