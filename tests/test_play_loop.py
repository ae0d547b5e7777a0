"""`play.play_loop`, the batched game loop under every compiled match and
generator: rounds, the caller's carry, start states, the key stream and
the round cap, each against a count or key sequence worked out here."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.games import base as game_base
from alphago_jax.games.tictactoe import TicTacToe
from alphago_jax.play import play_loop

GAME = TicTacToe()


def _random_round(t, states, keys, carry):
  """Every running game plays a uniformly random legal move; the carry
  counts each game's moves and records the round numbers seen."""
  moves, rounds_seen = carry
  logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
  actions = jax.random.categorical(keys[0], logits)
  running = ~states.terminated
  stepped = jax.vmap(GAME.step)(states, actions)
  states = game_base.select(running, stepped, states)
  return states, (moves + running, rounds_seen.at[t].set(t))


def _run(key, *, num_games=16, max_rounds=None, states=None):
  carry = (jnp.zeros(num_games, jnp.int32), jnp.full(10, -1, jnp.int32))
  return jax.jit(lambda k: play_loop(
      GAME, _random_round, k, num_games=num_games, carry=carry,
      max_rounds=max_rounds, states=states))(key)


def test_the_carry_counts_every_move_and_rounds_is_the_longest_game():
  states, (moves, rounds_seen), rounds = _run(jax.random.key(0))
  lengths = np.asarray(states.step_count)
  assert np.asarray(states.terminated).all()
  np.testing.assert_array_equal(np.asarray(moves), lengths)
  assert int(rounds) == lengths.max()
  # Tic-tac-toe ends between move 5 and move 9.
  assert 5 <= lengths.min() and lengths.max() <= 9
  seen = np.asarray(rounds_seen)
  np.testing.assert_array_equal(seen[:int(rounds)], np.arange(int(rounds)))
  assert (seen[int(rounds):] == -1).all()


def test_max_rounds_stops_every_game_after_that_many_moves():
  states, (moves, _), rounds = _run(jax.random.key(1), max_rounds=3)
  assert int(rounds) == 3
  np.testing.assert_array_equal(np.asarray(states.step_count), 3)
  assert not np.asarray(states.terminated).any()


def test_start_states_are_continued_not_replaced():
  start = jax.vmap(GAME.init)(jax.random.split(jax.random.key(2), 4))
  start = jax.vmap(GAME.step)(start, jnp.array([0, 4, 8, 2]))
  states, (moves, _), _ = _run(jax.random.key(3), num_games=4, states=start)
  # The first move stays on the board, and the loop counted the rest.
  board = np.asarray(states.board).reshape(4, -1)
  for game, first in enumerate([0, 4, 8, 2]):
    assert board[game, first] == 0  # X, who moved first
  np.testing.assert_array_equal(np.asarray(moves) + 1,
                                np.asarray(states.step_count))


@pytest.mark.parametrize("keys_per_round", [1, 2, 4])
def test_each_round_gets_the_next_keys_of_the_loop_stream(keys_per_round):
  key = jax.random.key(4)

  def record_keys(t, states, keys, seen):
    assert len(keys) == keys_per_round
    data = jnp.stack([jax.random.key_data(k) for k in keys])
    # One move per round in every game, so all games end after 9 rounds.
    states = jax.vmap(GAME.step)(
        states, jnp.argmax(states.legal_action_mask, axis=1))
    return states, seen.at[t].set(data)

  shape = (9, keys_per_round) + jax.random.key_data(key).shape
  start = jax.vmap(GAME.init)(jax.random.split(jax.random.key(5), 2))
  _, seen, rounds = play_loop(GAME, record_keys, key, num_games=2,
                              carry=jnp.zeros(shape, jnp.uint32),
                              states=start, keys_per_round=keys_per_round)
  expected, loop_key = [], key
  for _ in range(int(rounds)):
    loop_key, *round_keys = jax.random.split(loop_key, keys_per_round + 1)
    expected.append([jax.random.key_data(k) for k in round_keys])
  np.testing.assert_array_equal(np.asarray(seen)[:int(rounds)],
                                np.asarray(expected))
