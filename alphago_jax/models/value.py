"""AlphaGo's value network v_θ (Silver et al. 2016, Methods).

Input is a batch of AlphaGo feature planes `[B, N, N, C]`
(`games.go_features`, from the point of view of the player to move), the
policy network's planes plus `player_colour` (the paper's 49th plane: komi
makes the colours unequal, so the value must know which one moves). The
paper's network: the policy trunk (a 5x5 convolution of k filters, then
3x3 convolutions of k filters, each with a ReLU), then a 1x1 convolution of
one filter, a fully connected layer of 256 ReLU units and a fully
connected tanh unit: the expected outcome in [-1, 1] for the player to
move. In the paper layer 1 is the 5x5 convolution, layers 2 to 11 the
policy's 3x3 convolutions, layer 12 one more 3x3, layer 13 the 1x1, 14 the
256 ReLU units and 15 the tanh: `num_layers = 13` counts the convolutions
as `PolicyNetConfig.num_layers` does, the two dense layers on top.
"""

from __future__ import annotations

import dataclasses
from typing import Tuple

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

from alphago_jax.core.checks import check_int
from alphago_jax.games import go_features
from alphago_jax.games import symmetry
from alphago_jax.models.plane_net import (PlaneNetConfig, first_layer,
                                          init_plane_variables)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ValueNetConfig(PlaneNetConfig):
  """Depth, width, input planes and board of the value network: the fields
  of `plane_net.PlaneNetConfig` (`num_layers` counts the convolutions, then
  come the two dense layers) and these.

  Attributes:
    features: default: the policy's 46 default planes plus
      `player_colour`; the paper's 49 are
      `go_features.ALPHAGO_VALUE_FEATURES`.
    hidden: units of the fully connected ReLU layer (paper: 256).
  """
  features: Tuple[str, ...] = go_features.DEFAULT_VALUE_FEATURES
  hidden: int = 256

  def __post_init__(self):
    super().__post_init__()
    check_int("hidden", self.hidden, 1)

  @classmethod
  def cpu(cls) -> "ValueNetConfig":
    """The default, 6 convolutions of 64 filters on 47 planes, the size of
    the CPU policy preset (`PolicyNetConfig.cpu`)."""
    return cls()

  @classmethod
  def paper(cls) -> "ValueNetConfig":
    """The paper's 13 convolutions of 192 filters, 256 hidden units, on
    all 49 planes (an accelerator's network)."""
    return cls(num_layers=13, filters=192,
               features=go_features.ALPHAGO_VALUE_FEATURES)

  @classmethod
  def tiny(cls, board_size: int = 9) -> "ValueNetConfig":
    """Small enough for unit tests."""
    return cls(num_layers=3, filters=8, hidden=16, board_size=board_size)


class ValueNet(nn.Module):
  """The value network; `__call__` returns values `[B]` in [-1, 1]."""
  config: ValueNetConfig

  @nn.compact
  def __call__(self, planes: chex.Array) -> chex.Array:
    """Values of a batch of positions, for the player to move.

    Args:
      planes: float `[B, N, N, C]`.

    Returns:
      float32 `[B]` in [-1, 1].
    """
    cfg = self.config
    n = cfg.board_size
    x = first_layer(cfg, planes)
    batch = planes.shape[0]
    for _ in range(cfg.num_layers - 2):
      x = nn.relu(nn.Conv(cfg.filters, (3, 3))(x))
    x = nn.relu(nn.Conv(1, (1, 1))(x)).reshape(batch, n * n)
    x = nn.relu(nn.Dense(cfg.hidden)(x))
    return jnp.tanh(nn.Dense(1)(x))[:, 0]


def init_value_variables(network: ValueNet, key: chex.PRNGKey
                         ) -> chex.ArrayTree:
  """Fresh `{"params", "batch_stats"}` (batch_stats empty: no batch norm;
  kept so the variables have the policy network's layout)."""
  return init_plane_variables(network, key)


def make_value_fn(network: ValueNet):
  """A `types.ValueFn`: `(variables, planes [B, N, N, C]) -> values [B]`
  in [-1, 1] for the player to move."""
  def value(variables, planes):
    return network.apply({"params": variables["params"]}, planes)
  return value


def symmetric_mean(value_fn, variables, planes: chex.Array) -> chex.Array:
  """The mean of `value_fn(variables, ·)` over the 8 board symmetries of
  `planes` `[B, N, N, C]` -> `[B]`: an orientation-free value (8× the cost;
  a search instead draws one orientation per evaluation)."""
  views = [symmetry.transform_observation(planes, i)
           for i in range(symmetry.NUM_SYMMETRIES)]
  return jnp.mean(jnp.stack([value_fn(variables, v) for v in views]), 0)


def num_params(variables: chex.ArrayTree) -> int:
  """Parameter count of `variables["params"]`."""
  return int(sum(x.size for x in jax.tree.leaves(variables["params"])))
