"""What AlphaGo's policy network p_σ (`models.policy`) and value network v_θ
(`models.value`) share: both read a batch of AlphaGo feature planes
`[B, N, N, C]` (`games.go_features`) through a first convolution of
`first_kernel`² and k filters, then 3x3 convolutions of k filters.

`PlaneNetConfig` holds the fields that size that trunk and their checks
(its JSON form, in a checkpoint's metadata and a stage's config file, is
`config_codec`'s); each network's config extends it with its own head (and
its default planes).
"""

from __future__ import annotations

import dataclasses
from typing import Tuple

import chex
import flax.linen as nn
import jax.numpy as jnp

from alphago_jax.core.checks import check_int
from alphago_jax.games import go_features


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlaneNetConfig:
  """Depth, width, input planes and board of a network on AlphaGo planes.

  Attributes:
    num_layers: convolution layers, the first and the 1x1 output included
      (paper: 13).
    filters: k, filters of every hidden convolution (paper: 192).
    features: the input planes, `go_features` names (each network sets
      its default).
    board_size: N.
    first_kernel: the first layer's kernel size (paper: 5).
  """
  num_layers: int = 6
  filters: int = 64
  features: Tuple[str, ...]
  board_size: int = 19
  first_kernel: int = 5

  def __post_init__(self):
    check_int("num_layers", self.num_layers, 2)
    check_int("filters", self.filters, 1)
    check_int("board_size", self.board_size, 2)
    check_int("first_kernel", self.first_kernel, 1)
    if not isinstance(self.features, tuple):
      raise ValueError(f"features must be a tuple of go_features names, got "
                       f"{self.features!r}")
    go_features.num_planes(self.features)  # checks the names

  @property
  def num_planes(self) -> int:
    """C, the input planes."""
    return go_features.num_planes(self.features)


def first_layer(config: PlaneNetConfig, planes: chex.Array) -> chex.Array:
  """The first convolution and its ReLU, float32 `[B, N, N, k]`, of planes
  `[B, N, N, C]` (checked against `config`). Called inside a network's
  `nn.compact` method, whose first submodule it makes."""
  n = config.board_size
  chex.assert_rank(planes, 4)
  chex.assert_shape(planes, (planes.shape[0], n, n, config.num_planes))
  x = planes.astype(jnp.float32)
  return nn.relu(nn.Conv(config.filters, (config.first_kernel,) * 2)(x))


def init_plane_variables(network: nn.Module, key: chex.PRNGKey,
                         **kwargs) -> chex.ArrayTree:
  """Fresh `{"params", "batch_stats"}` of a network whose `config` is a
  `PlaneNetConfig`, initialised on one empty position (`kwargs` go to its
  `__call__`); batch_stats is empty for a network without batch norm, so
  every such network's variables have the same layout."""
  cfg = network.config
  planes = jnp.zeros((1, cfg.board_size, cfg.board_size, cfg.num_planes),
                     jnp.float32)
  variables = dict(network.init(key, planes, **kwargs))
  variables.setdefault("batch_stats", {})
  return variables
