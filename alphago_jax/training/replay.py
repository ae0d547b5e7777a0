"""A replay buffer on the device: a fixed-size ring of (s, pi, z) samples.

Everything is a fixed-shape array, so insertion and sampling live inside the
compiled training step. Insertion takes a padded batch with a validity mask
and writes only the valid rows, contiguously after the last write (invalid
rows scatter out of bounds and are dropped); sampling is uniform over the
filled part.
"""

from __future__ import annotations

from typing import Callable, Tuple

import chex
import jax
import jax.numpy as jnp
from flax import struct

from alphago_jax.core.checks import check_int


@struct.dataclass
class Sample:
  """Training examples, with a leading batch axis `[N]`.

  Attributes:
    observation: float32 `[N, *observation_shape]`, mover's view.
    legal_action_mask: bool `[N, num_actions]`.
    policy: float32 `[N, num_actions]`, the search policy target pi.
    value: float32 `[N]`, the outcome z for the player to move.
  """
  observation: chex.Array
  legal_action_mask: chex.Array
  policy: chex.Array
  value: chex.Array


@struct.dataclass
class ReplayBuffer:
  """Ring buffer of `Sample`s.

  Attributes:
    data: `Sample` with leading axis `[capacity]`.
    next_index: int32 `[]`, where the next sample goes.
    size: int32 `[]`, filled rows (<= capacity).
  """
  data: Sample
  next_index: chex.Array
  size: chex.Array

  @property
  def capacity(self) -> int:
    return self.data.value.shape[0]


# (key, samples [N]) -> samples [N]; e.g. a random board symmetry per row.
AugmentFn = Callable[[chex.PRNGKey, Sample], Sample]


def identity_augment(key: chex.PRNGKey, samples: Sample) -> Sample:
  """No augmentation (tic-tac-toe's symmetries are left to the search)."""
  del key
  return samples


def replay_init(capacity: int, observation_shape: Tuple[int, ...],
                num_actions: int) -> ReplayBuffer:
  """An empty buffer of `capacity` rows."""
  check_int("capacity", capacity, 1)
  data = Sample(
      observation=jnp.zeros((capacity,) + tuple(observation_shape),
                            jnp.float32),
      legal_action_mask=jnp.zeros((capacity, num_actions), jnp.bool_),
      policy=jnp.zeros((capacity, num_actions), jnp.float32),
      value=jnp.zeros((capacity,), jnp.float32))
  return ReplayBuffer(data=data, next_index=jnp.int32(0), size=jnp.int32(0))


def replay_add(buffer: ReplayBuffer, samples: Sample,
               valid: chex.Array) -> ReplayBuffer:
  """Appends the rows of `samples` where `valid`, overwriting the oldest.

  Args:
    buffer: the buffer.
    samples: `Sample` `[N]`; N must not exceed the capacity (else rows of one
      insertion would collide).
    valid: bool `[N]`.
  """
  n = valid.shape[0]
  cap = buffer.capacity
  if n > cap:
    raise ValueError(f"inserting {n} rows into a buffer of capacity {cap}; "
                     "the capacity must be at least the rows per insertion")
  rank = jnp.cumsum(valid.astype(jnp.int32)) - 1
  index = jnp.where(valid, (buffer.next_index + rank) % cap, cap)
  data = jax.tree.map(lambda d, s: d.at[index].set(s, mode="drop"),
                      buffer.data, samples)
  added = jnp.sum(valid.astype(jnp.int32))
  return ReplayBuffer(data=data, next_index=(buffer.next_index + added) % cap,
                      size=jnp.minimum(buffer.size + added, cap))


def replay_sample(buffer: ReplayBuffer, key: chex.PRNGKey, batch_size: int,
                  augment: AugmentFn = identity_augment) -> Sample:
  """`batch_size` rows drawn uniformly (with replacement) from the filled
  part, then passed through `augment`."""
  index_key, augment_key = jax.random.split(key)
  index = jax.random.randint(index_key, (batch_size,), 0,
                             jnp.maximum(buffer.size, 1))
  rows = jax.tree.map(lambda d: d[index], buffer.data)
  return augment(augment_key, rows)
