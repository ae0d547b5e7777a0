"""AlphaGo's own networks as the prior and leaf value of its search.

`search.alphago_search` takes a `PolicyFn` and a `ValueFn` on the game's
observations. For p_σ / p_ρ (`models.policy`) and v_θ (`models.value`)
those are AlphaGo feature planes, so the game searched is a
`FeaturePlanesGo` observing the union of the planes both networks read,
and each function takes its own channels. The weights travel as one
pytree `{"policy": ..., "value": ...}`, so the search's `(variables,
variables)` pair and an `Agent` over them stay arguments of one compiled
program.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import jax.numpy as jnp

from alphago_jax.core.types import PolicyFn, ValueFn
from alphago_jax.games.go_feature_game import (FeaturePlanesGo,
                                               feature_planes_game)
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       make_policy_fn)
from alphago_jax.models.value import ValueNet, ValueNetConfig, make_value_fn
from alphago_jax.zoo import loaders


@dataclasses.dataclass(frozen=True)
class AlphaGoNetworks:
  """A policy network (and optionally a value network) over one game.

  Attributes:
    name: `prior@step+value@step`, for tables.
    game: the `FeaturePlanesGo` both read.
    policy_fn: `(variables, obs [B, N, N, C], legal [B, A]) -> logits [B, A]`.
    value_fn: `(variables, obs [B, N, N, C]) -> [B]`, for the player to
      move; None without a value network.
    variables: `{"policy": ..., "value": ...}` (`"value"` None without one).
  """
  name: str
  game: FeaturePlanesGo
  policy_fn: PolicyFn
  value_fn: Optional[ValueFn]
  variables: Any


def alphago_networks(policy_model: PolicyNetConfig, policy_variables,
                     value_model: Optional[ValueNetConfig] = None,
                     value_variables=None, *, komi: float = 7.5,
                     name: str = "alphago") -> AlphaGoNetworks:
  """Builds the functions and the game for loaded networks.

  Raises:
    ValueError: a value network without weights (or the reverse), or
      networks for different boards.
  """
  if (value_model is None) != (value_variables is None):
    raise ValueError("alphago_networks: give the value network's config and "
                     "its variables together")
  size = policy_model.board_size
  if value_model is not None and value_model.board_size != size:
    raise ValueError(f"alphago_networks: the policy network is for "
                     f"{size}x{size}, the value network for "
                     f"{value_model.board_size}x{value_model.board_size}")
  names = [policy_model.features]
  if value_model is not None:
    names.append(value_model.features)
  game = feature_planes_game(size, names, komi=float(komi))

  policy = make_policy_fn(PolicyNet(policy_model))
  policy_channels = jnp.asarray(game.plane_indices(policy_model.features))

  def policy_fn(variables, obs, legal):
    planes = jnp.take(obs, policy_channels, axis=-1)
    return policy(variables["policy"], planes, legal)

  value_fn = None
  if value_model is not None:
    value = make_value_fn(ValueNet(value_model))
    value_channels = jnp.asarray(game.plane_indices(value_model.features))

    def value_fn(variables, obs):
      planes = jnp.take(obs, value_channels, axis=-1)
      return value(variables["value"], planes)

  return AlphaGoNetworks(
      name=name, game=game, policy_fn=policy_fn, value_fn=value_fn,
      variables={"policy": policy_variables, "value": value_variables})


def load_alphago_networks(policy_dir: str, value_dir: Optional[str] = None,
                          *, komi: float = 7.5) -> AlphaGoNetworks:
  """p_σ or p_ρ from `policy_dir` and v_θ from `value_dir` (run
  directories or their `checkpoints/` folders), through `loaders.load`.

  Raises:
    FileNotFoundError: no checkpoint in a directory.
    CheckpointMismatchError: a directory holds another kind of network.
  """
  policy = loaders.load(policy_dir, expect=loaders.POLICY_KINDS)
  value = None if value_dir is None else loaders.load(
      value_dir, expect=("value_net",))
  name = policy.name + ("" if value is None else f"+{value.name}")
  return alphago_networks(
      policy.model, policy.variables,
      None if value is None else value.model,
      None if value is None else value.variables, komi=komi, name=name)
