"""AlphaGo's fast rollout policy p_π: a linear softmax over pattern features.

The logit of a move at a point is the sum of the weights of its feature ids
(`games.go_patterns.point_features`); the policy is the softmax of the
logits over the candidate points, divided by a temperature. As a rollout
policy on the lean playout path (`games.go_playout`, name `"pattern"`) the
playout samples from it among legal points that fill no own eye; there it
keeps its features incrementally (`games.go_pattern_state`), which gives the
same logits as recomputing them, bit for bit.

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
from alphago_jax.games import go_pattern_state, go_patterns

KIND = "pattern_rollout_policy"
WEIGHTS_FILE = "weights.npz"
CONFIG_FILE = "config.json"


class RolloutWeightsError(ValueError):
  """Rollout-policy weights that do not fit this feature set (or are not
  rollout-policy weights at all); the message names the folder."""


def pattern_logits(weights: chex.Array, ids: chex.Array) -> chex.Array:
  """float32 `[..., N²]`: the sum of the weights `[F]` of the feature ids
  `[..., N², K]` (id F, the sentinel, adds 0), added slot by slot in
  `go_patterns.LOGIT_ORDER` (the order the incremental state keeps, so that
  both give the same float32 logits)."""
  chex.assert_axis_dimension(ids, -1, go_patterns.NUM_SLOTS)
  padded = jnp.concatenate([weights.astype(jnp.float32),
                            jnp.zeros(1, jnp.float32)])
  terms = padded[ids]
  total = None
  for name in go_patterns.LOGIT_ORDER:
    term = terms[..., go_patterns.SLOTS.index(name)]
    total = term if total is None else total + term
  return total


@dataclasses.dataclass(frozen=True, eq=False)
class PatternRolloutPolicy:
  """p_π as a `types.RolloutPolicy`: `(playout, state) -> logits [N²]`.

  With `incremental` (the default) it carries its features in the
  playout's `policy_state` (`games.go_pattern_state`) and refreshes only
  the points each move changes; without, it recomputes every point's
  features each move (`go_patterns.point_features`, the reference). Both
  give the same logits bit for bit, so the same moves under the same keys.

  Attributes:
    weights: float32 `[config.num_features]`.
    config: the feature set.
    temperature: logits are divided by it (1 samples from p_π itself; it
      may be a traced value when the policy is built inside `jit`).
    incremental: carry the features from move to move.
    chunk: dirty points refreshed per round of an incremental update
      (None: `default_chunk` of the board size).
  """
  weights: Any
  config: go_patterns.PatternConfig = go_patterns.PatternConfig()
  temperature: Union[float, chex.Array] = 1.0
  incremental: bool = True
  chunk: Optional[int] = None

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

  @property
  def carries_state(self) -> bool:
    """`GoPlayout.carries`: the incremental policy keeps its features."""
    return self.incremental

  def features(self, size: int) -> go_pattern_state.IncrementalPatterns:
    """The incremental feature state's shape on `size`×`size` boards."""
    chunk = default_chunk(size) if self.chunk is None else self.chunk
    return go_pattern_state.IncrementalPatterns(self.config, size, chunk)

  def init_carry(self, playout, board, extremes):
    """The carried features of a playout's first board."""
    return self.features(playout.size).init(
        go_pattern_state.padded_weights(self.weights), board, extremes)

  def update_carry(self, playout, carry, board, extremes):
    """The carried features after a step that left `board`."""
    return self.features(playout.size).update(
        go_pattern_state.padded_weights(self.weights), carry, board,
        extremes)

  def __call__(self, playout, state) -> chex.Array:
    if self.incremental:
      logits = self.features(playout.size).logits(
          go_pattern_state.padded_weights(self.weights), state.policy_state,
          state.board, state.to_play, state.last_move)
    else:
      ids = go_patterns.point_features(self.config, playout, state.board,
                                       state.to_play, state.last_move)
      logits = pattern_logits(self.weights, ids)
    return logits / self.temperature


def default_chunk(size: int) -> int:
  """Dirty points per round of an incremental update on `size`×`size`:
  enough for most moves in one round."""
  return 16 if size <= 9 else 32


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
