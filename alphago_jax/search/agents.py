"""Simple agents with the shared `Agent` shape: (states `[B]`, key) -> `[B]`."""

from __future__ import annotations

import jax

from alphago_jax.search import base
from alphago_jax.search.rollout import random_legal_action


def random_agent(states, key):
  """Plays a uniformly random legal move in every game of the batch."""
  batch = base.check_batch(states)
  keys = jax.random.split(key, batch)
  return jax.vmap(random_legal_action)(keys, states.legal_action_mask)
