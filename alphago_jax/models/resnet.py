"""The AlphaGo Zero policy-value network: a ResNet tower with two heads.

Input is a batch of observations `[B, H, W, C]` (channels last, from the
point of view of the player to move, as every game's `observe` returns).
A conv stem feeds `num_blocks` residual blocks (conv, batch norm, ReLU,
conv, batch norm, skip, ReLU); the policy head (1x1 conv, batch norm, ReLU,
dense) gives logits over the game's actions and the value head (1x1 conv,
batch norm, ReLU, dense, ReLU, dense, tanh) a scalar in [-1, 1] for the
player to move.

Illegal actions get the logit `MASKED_LOGIT` when a legal mask is passed, so
the softmax gives them probability 0 and `log_softmax` stays finite (a
`-inf` logit would turn a zero target probability into `0 * -inf = nan` in
the cross-entropy).
"""

from __future__ import annotations

import dataclasses
from typing import Tuple

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

from alphago_jax.core.checks import check_int
from alphago_jax.games import base as game_base
from alphago_jax.core.types import MASKED_LOGIT, EvaluateFn



@dataclasses.dataclass(frozen=True, kw_only=True)
class ResNetConfig:
  """Size of the tower and heads.

  Attributes:
    num_blocks: residual blocks (AlphaGo Zero: 19 or 39; 0 allowed).
    channels: filters in the stem and every block (AlphaGo Zero: 256).
    policy_channels: filters of the policy head's 1x1 conv (AlphaGo Zero: 2).
    value_channels: filters of the value head's 1x1 conv (AlphaGo Zero: 1).
    value_hidden: width of the value head's hidden dense layer (256).
  """
  num_blocks: int = 6
  channels: int = 64
  policy_channels: int = 2
  value_channels: int = 1
  value_hidden: int = 64

  def __post_init__(self):
    check_int("num_blocks", self.num_blocks, 0)
    for name in ("channels", "policy_channels", "value_channels",
                 "value_hidden"):
      check_int(name, getattr(self, name), 1)

  @classmethod
  def tiny(cls) -> "ResNetConfig":
    """A network small enough for unit tests and tic-tac-toe on a CPU."""
    return cls(num_blocks=1, channels=16, policy_channels=2, value_channels=1,
               value_hidden=16)


class ResidualBlock(nn.Module):
  """conv-BN-ReLU-conv-BN, plus the input, then ReLU."""
  channels: int

  @nn.compact
  def __call__(self, x, train: bool):
    y = nn.Conv(self.channels, (3, 3), use_bias=False)(x)
    y = nn.relu(nn.BatchNorm(use_running_average=not train)(y))
    y = nn.Conv(self.channels, (3, 3), use_bias=False)(y)
    y = nn.BatchNorm(use_running_average=not train)(y)
    return nn.relu(x + y)


class PolicyValueNet(nn.Module):
  """ResNet policy-value network for one game.

  Attributes:
    num_actions: size of the game's action space.
    config: tower and head sizes.
  """
  num_actions: int
  config: ResNetConfig

  @nn.compact
  def __call__(self, observations: chex.Array,
               legal_action_mask: chex.Array | None = None, *,
               train: bool = False) -> Tuple[chex.Array, chex.Array]:
    """Evaluates a batch of positions.

    Args:
      observations: float `[B, H, W, C]`.
      legal_action_mask: optional bool `[B, num_actions]`; illegal actions
        get `MASKED_LOGIT`.
      train: batch statistics (and their running averages updated, pass
        `mutable=["batch_stats"]`) if True, running averages if False.

    Returns:
      logits float32 `[B, num_actions]`, values float32 `[B]` in [-1, 1].
    """
    if observations.ndim != 4:
      raise ValueError(
          "PolicyValueNet takes observations [B, H, W, C]; got shape "
          f"{observations.shape}")
    cfg = self.config
    x = observations.astype(jnp.float32)
    x = nn.Conv(cfg.channels, (3, 3), use_bias=False)(x)
    x = nn.relu(nn.BatchNorm(use_running_average=not train)(x))
    for _ in range(cfg.num_blocks):
      x = ResidualBlock(cfg.channels)(x, train)
    batch = x.shape[0]

    p = nn.Conv(cfg.policy_channels, (1, 1), use_bias=False)(x)
    p = nn.relu(nn.BatchNorm(use_running_average=not train)(p))
    logits = nn.Dense(self.num_actions)(p.reshape(batch, -1))
    if legal_action_mask is not None:
      logits = jnp.where(legal_action_mask, logits, MASKED_LOGIT)

    v = nn.Conv(cfg.value_channels, (1, 1), use_bias=False)(x)
    v = nn.relu(nn.BatchNorm(use_running_average=not train)(v))
    v = nn.relu(nn.Dense(cfg.value_hidden)(v.reshape(batch, -1)))
    value = jnp.tanh(nn.Dense(1)(v))[:, 0]
    return logits, value


def make_network(game: game_base.Game, config: ResNetConfig
                 ) -> PolicyValueNet:
  """The network for `game`; its observations must be `[H, W, C]`."""
  if len(game.observation_shape) != 3:
    raise ValueError(
        f"{game.name}: the ResNet needs [H, W, C] observations, the game's "
        f"observation_shape is {game.observation_shape}")
  return PolicyValueNet(num_actions=game.num_actions, config=config)


def init_variables(game: game_base.Game, network: PolicyValueNet,
                   key: chex.PRNGKey) -> chex.ArrayTree:
  """Fresh `{"params", "batch_stats"}` for `network` on `game`."""
  obs = jnp.zeros((1,) + tuple(game.observation_shape), jnp.float32)
  return network.init(key, obs, train=False)


def make_evaluate_fn(network: PolicyValueNet) -> EvaluateFn:
  """Inference-mode `(variables, observations, legal) -> (logits, values)`."""
  def evaluate(variables, observations, legal_action_mask):
    return network.apply(variables, observations, legal_action_mask,
                         train=False)
  return evaluate


def stack_variables(variables_list) -> chex.ArrayTree:
  """Variables of K networks of one architecture, stacked on a new axis 0."""
  if not variables_list:
    raise ValueError("stack_variables: need at least one network")
  return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]),
                      *variables_list)


def make_stacked_evaluate_fn(network: PolicyValueNet,
                             num_networks: int) -> EvaluateFn:
  """An `EvaluateFn` over K stacked networks (`stack_variables`): a batch of
  K * G positions is K groups of G, group k evaluated by network k. One
  search then runs K networks in one batch, compiled once (learning
  curves)."""
  check_int("num_networks", num_networks, 1)
  evaluate = make_evaluate_fn(network)

  def stacked(variables, observations, legal_action_mask):
    batch = observations.shape[0]
    if batch % num_networks:
      raise ValueError(f"batch {batch} is not a multiple of the "
                       f"{num_networks} stacked networks")
    split = lambda x: x.reshape((num_networks, batch // num_networks) +
                                x.shape[1:])
    logits, values = jax.vmap(evaluate)(variables, split(observations),
                                        split(legal_action_mask))
    return logits.reshape(batch, -1), values.reshape(batch)
  return stacked
