"""AlphaGo's fast rollout policy p_π: a linear softmax over pattern features.

The logit of a move at a point is the sum of the weights of its feature ids
(`games.go_patterns.point_features`); the policy is the softmax of the
logits over the candidate points, divided by a temperature. As a rollout
policy on the lean playout path (`games.go_playout`, name `"pattern"`) the
playout samples from it among legal points that fill no own eye.

Weights live in a folder as `weights.npz` (float32 `[F]`) beside
`config.json` (the feature set's shape as `config_codec` writes a
`PatternConfig`, and `F`);
`load_weights` checks that they agree with each other and with this
version's feature set, so weights of another shape are refused by name.
The trained weights are committed in `checkpoints/rollout_policy/` (KGS,
19x19) and `checkpoints/rollout9/` (GNU Go games, 9x9).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Dict, Optional, Tuple, Union

import chex
import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.core import config_codec
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.games import go_patterns

KIND = "pattern_rollout_policy"
WEIGHTS_FILE = "weights.npz"
CONFIG_FILE = "config.json"


class RolloutWeightsError(ValueError):
  """Rollout-policy weights that do not fit this feature set (or are not
  rollout-policy weights at all); the message names the folder."""


def pattern_logits(weights: chex.Array, ids: chex.Array) -> chex.Array:
  """float32 `[..., N²]`: the sum of the weights `[F]` of the feature ids
  `[..., N², K]` (id F, the sentinel, adds 0)."""
  padded = jnp.concatenate([weights.astype(jnp.float32),
                            jnp.zeros(1, jnp.float32)])
  return jnp.sum(padded[ids], axis=-1)


@dataclasses.dataclass(frozen=True, eq=False)
class PatternRolloutPolicy:
  """p_π as a `types.RolloutPolicy`: `(playout, state) -> logits [N²]`.

  Attributes:
    weights: float32 `[config.num_features]`.
    config: the feature set.
    temperature: logits are divided by it (1 samples from p_π itself; it
      may be a traced value when the policy is built inside `jit`).
  """
  weights: Any
  config: go_patterns.PatternConfig = go_patterns.PatternConfig()
  temperature: Union[float, chex.Array] = 1.0

  def __post_init__(self):
    shape = tuple(np.shape(self.weights))
    if shape != (self.config.num_features,):
      raise RolloutWeightsError(
          f"PatternRolloutPolicy: weights of shape {shape}, the feature set "
          f"{config_codec.to_json(self.config)} needs "
          f"({self.config.num_features},)")
    if isinstance(self.temperature, (int, float)) and not (
        self.temperature > 0):
      raise ValueError(f"PatternRolloutPolicy: temperature must be > 0, got "
                       f"{self.temperature!r}")
    # Concrete weights are kept on the host: a policy may be built once and
    # first used inside a trace (the "pattern" registry entry), where a
    # device array made then would be that trace's value.
    if not isinstance(self.weights, jax.core.Tracer):
      object.__setattr__(self, "weights", np.asarray(self.weights,
                                                     np.float32))

  def __call__(self, playout, state) -> chex.Array:
    ids = go_patterns.point_features(self.config, playout, state.board,
                                     state.to_play, state.last_move)
    return pattern_logits(self.weights, ids) / self.temperature


def save_weights(directory, weights: np.ndarray,
                 config: go_patterns.PatternConfig,
                 extra: Optional[Dict[str, Any]] = None) -> None:
  """Writes `weights.npz` and `config.json` into `directory` (each written
  to a temporary name and renamed, so a reader never sees half a file)."""
  weights = np.asarray(weights, np.float32)
  if weights.shape != (config.num_features,):
    raise RolloutWeightsError(
        f"save_weights: weights of shape {weights.shape}, the feature set "
        f"needs ({config.num_features},)")
  os.makedirs(directory, exist_ok=True)
  path = os.path.join(directory, WEIGHTS_FILE)
  write_atomic(path, lambda f: np.savez_compressed(f, weights=weights))
  meta = dict(extra or {}, kind=KIND, features=config_codec.to_json(config),
              num_features=config.num_features)
  path = os.path.join(directory, CONFIG_FILE)
  write_atomic(path, json.dumps(meta, indent=1, sort_keys=True))


def load_weights(directory: str
                 ) -> Tuple[np.ndarray, go_patterns.PatternConfig,
                            Dict[str, Any]]:
  """(weights `[F]`, feature set, the whole config.json) of a folder.

  Raises:
    FileNotFoundError: no weights there.
    RolloutWeightsError: not rollout-policy weights, or weights whose
      shape does not match the feature set.
  """
  directory = os.path.abspath(os.fspath(directory))
  wpath = os.path.join(directory, WEIGHTS_FILE)
  cpath = os.path.join(directory, CONFIG_FILE)
  for path in (wpath, cpath):
    if not os.path.exists(path):
      raise FileNotFoundError(f"no rollout-policy weights in {directory} "
                              f"({os.path.basename(path)} missing)")
  with open(cpath) as f:
    meta = json.load(f)
  if meta.get("kind") != KIND:
    raise RolloutWeightsError(
        f"{directory}: not rollout-policy weights (config.json kind "
        f"{meta.get('kind')!r}, expected {KIND!r})")
  try:
    config = config_codec.from_json(go_patterns.PatternConfig,
                                    meta.get("features"), "features")
  except ValueError as e:
    raise RolloutWeightsError(f"{directory}: bad feature set in "
                              f"config.json: {e}") from None
  with np.load(wpath) as z:
    weights = np.asarray(z["weights"], np.float32)
  if weights.shape != (config.num_features,) or meta.get(
      "num_features") != config.num_features:
    raise RolloutWeightsError(
        f"{directory}: weights of shape {weights.shape} (config.json says "
        f"{meta.get('num_features')}), the feature set "
        f"{config_codec.to_json(config)} needs ({config.num_features},)")
  return weights, config, meta


def load_policy(directory: str, *, temperature=1.0
                ) -> PatternRolloutPolicy:
  """The p_π of a weights folder."""
  weights, config, _ = load_weights(directory)
  return PatternRolloutPolicy(weights, config, temperature)
