"""Go positions for tests: random legal games from a fixed seed, stepped by
the engine under test."""

import functools

import jax
import numpy as np


@functools.lru_cache(None)
def jitted_step(game):
  """`game.step`, compiled once per game."""
  return jax.jit(game.step)


def random_state(game, seed, plies):
  """A position after `plies` random legal moves (passes only when forced)."""
  rng = np.random.default_rng(seed)
  s = game.init(jax.random.key(0))
  for _ in range(plies):
    legal = np.flatnonzero(np.asarray(s.legal_action_mask)[:-1])
    if len(legal) == 0 or bool(s.terminated):
      break
    s = jitted_step(game)(s, int(rng.choice(legal)))
  return s
