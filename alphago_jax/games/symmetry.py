"""The 8 dihedral symmetries of a square board, for data augmentation and
symmetric evaluation (AlphaGo, AlphaGo Zero).

Symmetry `i` in 0..7 rotates the board `i % 4` quarter turns counter-clockwise
(`np.rot90`), then, for `i >= 4`, mirrors it left to right. Boards are
channels-last observations `[..., N, N, C]` (any leading batch dims) and
policies are `[..., N² + 1]` over actions `row * N + col` with pass last,
which every symmetry leaves in place. `i` may be a Python int or a traced
int32 scalar (a random symmetry under `jit`); vmap for one symmetry per
example. A traced `i` outside 0..7 is clamped, as JAX gathers are.

`transform_policy(p, i, size)[transform_action(a, i, size)] == p[a]`: the
probability of a move follows the stone to where the transformed board puts
it, and `inverse(i)` undoes `i` for all three.
"""

from __future__ import annotations

import functools

import chex
import jax.numpy as jnp
import numpy as np

NUM_SYMMETRIES = 8


def _apply_np(x: np.ndarray, i: int) -> np.ndarray:
  """Symmetry `i` of an `[N, N, ...]` numpy array."""
  x = np.rot90(x, i % 4, axes=(0, 1))
  return np.flip(x, axis=1) if i >= 4 else x


@functools.lru_cache(maxsize=None)
def _tables(size: int):
  """`gather[i, q]`: the point whose content lands on point q under i;
  `actions[i, a]`: where action a goes under i (pass fixed). int32."""
  n2 = size * size
  idx = np.arange(n2).reshape(size, size)
  gather = np.stack([_apply_np(idx, i).reshape(-1)
                     for i in range(NUM_SYMMETRIES)])
  actions = np.empty((NUM_SYMMETRIES, n2 + 1), np.int32)
  actions[:, n2] = n2
  for i in range(NUM_SYMMETRIES):
    actions[i, gather[i]] = np.arange(n2)
  return gather.astype(np.int32), actions


def _check_index(i) -> None:
  if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
    if not 0 <= i < NUM_SYMMETRIES:
      raise ValueError(f"symmetry: index must be in 0..7, got {i}")


def inverse(i):
  """The symmetry that undoes `i`: rotations turn back, mirrors are their
  own inverse. Works on Python ints and int arrays."""
  _check_index(i)
  if isinstance(i, (int, np.integer)):
    return (4 - i) % 4 if i < 4 else int(i)
  i = jnp.asarray(i)
  return jnp.where(i < 4, (4 - i) % 4, i)


def compose(i, j):
  """The single symmetry equal to applying `i`, then `j` (Python ints)."""
  _check_index(i)
  _check_index(j)
  probe = np.arange(4).reshape(2, 2)
  target = _apply_np(_apply_np(probe, i), j)
  for k in range(NUM_SYMMETRIES):
    if np.array_equal(_apply_np(probe, k), target):
      return k
  raise AssertionError("unreachable: the dihedral group is closed")


def transform_observation(obs: chex.Array, i) -> chex.Array:
  """Symmetry `i` of `obs` `[..., N, N, C]` (same shape)."""
  _check_index(i)
  obs = jnp.asarray(obs)
  if obs.ndim < 3 or obs.shape[-3] != obs.shape[-2]:
    raise ValueError(f"symmetry: an observation must be [..., N, N, C], got "
                     f"shape {obs.shape}")
  size = obs.shape[-3]
  gather = jnp.asarray(_tables(size)[0])[i]              # [N²]
  flat = obs.reshape(obs.shape[:-3] + (size * size, obs.shape[-1]))
  return jnp.take(flat, gather, axis=-2).reshape(obs.shape)


def transform_policy(policy: chex.Array, i, size: int, *,
                     with_pass: bool = True) -> chex.Array:
  """Symmetry `i` of `policy` `[..., N² + 1]` (pass stays last), or of
  `[..., N²]` with `with_pass=False` (games without a pass move)."""
  _check_index(i)
  policy = jnp.asarray(policy)
  n2 = size * size
  width = n2 + 1 if with_pass else n2
  if policy.ndim < 1 or policy.shape[-1] != width:
    raise ValueError(f"symmetry: a policy for a {size}x{size} board must be "
                     f"[..., {width}], got shape {policy.shape}")
  gather = jnp.asarray(_tables(size)[0])[i]
  return jnp.concatenate(
      [jnp.take(policy[..., :n2], gather, axis=-1), policy[..., n2:]],
      axis=-1)


def board_actions(observation_shape, num_actions: int):
  """Whether a game's observations and actions follow the board's
  symmetries: True for `[N, N, C]` observations with actions `row * N +
  col` and pass last, False for the same without pass, None otherwise (no
  symmetric evaluation)."""
  shape = tuple(observation_shape)
  if len(shape) != 3 or shape[0] != shape[1]:
    return None
  n2 = shape[0] * shape[0]
  return {n2 + 1: True, n2: False}.get(num_actions)


def transform_action(action: chex.Array, i, size: int) -> chex.Array:
  """Where `action` (int `[...]`, pass = N²) moves under symmetry `i`."""
  _check_index(i)
  return jnp.asarray(_tables(size)[1])[i][jnp.asarray(action)]
