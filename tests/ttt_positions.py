"""Tic-tac-toe positions for the search tests."""

import jax
import jax.numpy as jnp

from alphago_jax import games

GAME = games.make("tictactoe")


def position(moves):
  """The state after playing `moves` (cell indices) from the empty board."""
  s = GAME.init(jax.random.key(0))
  for a in moves:
    s = GAME.step(s, a)
  return s


def batch(state, n):
  """`n` copies of one state, stacked on a leading axis."""
  return jax.tree.map(lambda x: jnp.repeat(x[None], n, 0), state)
