"""The whole state of a training run, as one pytree."""

from __future__ import annotations

from typing import Any, Dict

import chex
from flax import struct

from alphago_jax.training.replay import ReplayBuffer


@struct.dataclass
class TrainState:
  """Everything the compiled iteration reads and writes.

  Attributes:
    params: network parameters.
    batch_stats: batch-norm running statistics.
    opt_state: optax state.
    buffer: the replay buffer.
    key: uint32 PRNG key data (raw, so it checkpoints and shards like any
      array; wrapped with `jax.random.wrap_key_data` where used).
    iteration: int32 `[]`, iterations done.
  """
  params: chex.ArrayTree
  batch_stats: chex.ArrayTree
  opt_state: chex.ArrayTree
  buffer: ReplayBuffer
  key: chex.Array
  iteration: chex.Array


def variables_of(state: TrainState) -> Dict[str, Any]:
  """The network variables (for agents and evaluation) of a train state."""
  return {"params": state.params, "batch_stats": state.batch_stats}
