"""Go observed through AlphaGo's feature planes.

`Go.observe` gives AlphaZero's stone-history planes. AlphaGo's networks
(p_σ, p_ρ, v_θ) read `go_features` planes instead, which need the whole
state (liberties, move outcomes, stone ages), not the history alone. A
search hands `recurrent_fn`'s observations straight to its `PolicyFn` and
`ValueFn`, so the game it searches is this one: the same rules and state,
observed as the planes `plane_names` names. A network that reads a subset
of them takes its channels with `plane_indices`.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence, Tuple

import chex
import numpy as np

from alphago_jax.games import go as go_lib
from alphago_jax.games import go_features


@dataclasses.dataclass(frozen=True)
class FeaturePlanesGo(go_lib.Go):
  """`Go` whose `observe` is `go_features.alphago_features`.

  Attributes:
    plane_names: the `go_features` names of the observation's planes, in
      order (default: the value network's default planes, which include the
      policy network's).
  """
  plane_names: Tuple[str, ...] = go_features.DEFAULT_VALUE_FEATURES

  def __post_init__(self):
    super().__post_init__()
    names = tuple(self.plane_names)
    if not names:
      raise ValueError("FeaturePlanesGo: plane_names is empty")
    if len(set(names)) != len(names):
      raise ValueError(f"FeaturePlanesGo: plane_names repeats a name: "
                       f"{names!r}")
    unknown = [n for n in names if n not in go_features.FEATURES]
    if unknown:
      raise ValueError(f"FeaturePlanesGo: unknown feature names {unknown}; "
                       f"known: {sorted(go_features.FEATURES)}")
    if "turns_since" in names and self.history_length < 8:
      raise ValueError(f"FeaturePlanesGo: turns_since needs history_length "
                       f">= 8, got {self.history_length}")
    object.__setattr__(self, "plane_names", names)

  @property
  def observation_shape(self) -> Tuple[int, ...]:
    return (self.size, self.size, go_features.num_planes(self.plane_names))

  def observe(self, state: go_lib.GoState) -> chex.Array:
    """float32 `[N, N, C]`: the planes of `plane_names`, for the player to
    move."""
    return go_features.alphago_features(self, state, self.plane_names)

  def plane_indices(self, names: Sequence[str]) -> np.ndarray:
    """int32 `[C']`: the observation channels of the planes of `names`, in
    the order of `names`.

    Raises:
      ValueError: a name the observation does not hold.
    """
    missing = [n for n in names if n not in self.plane_names]
    if missing:
      raise ValueError(f"FeaturePlanesGo: the observation has no planes "
                       f"{missing} (it holds {list(self.plane_names)})")
    starts, offset = {}, 0
    for name in self.plane_names:
      width = go_features.num_planes((name,))
      starts[name] = np.arange(offset, offset + width)
      offset += width
    return np.concatenate([starts[n] for n in names]).astype(np.int32)


def feature_planes_game(size: int, names_per_network: Sequence[Sequence[str]],
                        **kwargs) -> FeaturePlanesGo:
  """The game whose observation holds every plane the networks read (the
  union of `names_per_network`, first-seen order); `kwargs` go to `Go`."""
  union = []
  for names in names_per_network:
    for name in names:
      if name not in union:
        union.append(name)
  return FeaturePlanesGo(size=size, plane_names=tuple(union), **kwargs)
