"""Replay augmentation: each Go example gets one random board symmetry,
applied alike to its planes, its search policy and its legal mask."""

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.training.replay import Sample
from alphago_jax.training import augment
from alphago_jax.games import symmetry

N, ROWS = 5, 64


def marked_samples():
  """Every point carries its own index in plane 0, in the policy and (as
  index mod 2) in the legal mask, so where each point went can be read off
  every field independently."""
  idx = np.arange(N * N, dtype=np.float32)
  obs = np.zeros((ROWS, N, N, 3), np.float32)
  obs[..., 0] = idx.reshape(N, N)
  obs[..., 1] = np.arange(ROWS)[:, None, None]  # per-row constant plane
  policy = np.concatenate([idx, [1000.0]])
  legal = np.concatenate([idx % 2 == 0, [True]])
  return Sample(
      observation=jnp.asarray(obs),
      legal_action_mask=jnp.asarray(np.tile(legal, (ROWS, 1))),
      policy=jnp.asarray(np.tile(policy, (ROWS, 1))),
      value=jnp.asarray(np.linspace(-1, 1, ROWS), jnp.float32))


def test_each_row_gets_one_symmetry_for_all_its_fields():
  samples = marked_samples()
  out = jax.jit(augment.dihedral_augment(N))(jax.random.key(3), samples)
  seen = set()
  for r in range(ROWS):
    plane = np.asarray(out.observation[r, ..., 0])
    matches = [i for i in range(symmetry.NUM_SYMMETRIES) if np.array_equal(
        np.asarray(symmetry.transform_observation(
            samples.observation[r], i))[..., 0], plane)]
    assert len(matches) == 1, r
    seen.add(matches[0])
    # The policy and the mask moved with the planes; pass stays put.
    np.testing.assert_array_equal(
        np.asarray(out.policy[r, :-1]).reshape(N, N), plane)
    np.testing.assert_array_equal(
        np.asarray(out.legal_action_mask[r, :-1]).reshape(N, N),
        plane % 2 == 0)
    assert float(out.policy[r, -1]) == 1000.0 and bool(
        out.legal_action_mask[r, -1])
  # Rows keep their own data and outcome.
  np.testing.assert_array_equal(out.observation[..., 1],
                                samples.observation[..., 1])
  np.testing.assert_array_equal(out.value, samples.value)
  # 64 rows drawn from 8 symmetries with this fixed key: all 8 appear.
  assert seen == set(range(symmetry.NUM_SYMMETRIES))
