"""Replay augmentation by the 8 board symmetries (AlphaGo Zero, Go only).

Go's rules are invariant under rotations and reflections of the board, so a
training example may be shown to the network in any of the 8 orientations,
with its search policy transformed alike and its outcome unchanged.
"""

from __future__ import annotations

import chex
import jax

from alphago_jax.games import symmetry
from alphago_jax.training.replay import AugmentFn, Sample


def dihedral_augment(size: int) -> AugmentFn:
  """An `AugmentFn` that gives each sampled row its own random symmetry.

  Args:
    size: board size N; observations `[N, N, C]`, policies `[N² + 1]`.
  """
  def augment(key: chex.PRNGKey, samples: Sample) -> Sample:
    n = samples.value.shape[0]
    which = jax.random.randint(key, (n,), 0, symmetry.NUM_SYMMETRIES)
    obs = jax.vmap(symmetry.transform_observation)(samples.observation,
                                                   which)
    policy = jax.vmap(lambda p, i: symmetry.transform_policy(p, i, size))(
        samples.policy, which)
    legal = jax.vmap(lambda m, i: symmetry.transform_policy(m, i, size))(
        samples.legal_action_mask, which)
    return samples.replace(observation=obs, policy=policy,
                           legal_action_mask=legal)

  return augment
