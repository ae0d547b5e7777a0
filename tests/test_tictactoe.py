"""Tic-tac-toe against a plain-Python reference over every reachable position."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games
from alphago_jax.games import tictactoe

GAME = games.make("tictactoe")
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8),
         (0, 4, 8), (2, 4, 6)]


def py_winner(board):
  for i, j, k in LINES:
    if board[i] != -1 and board[i] == board[j] == board[k]:
      return board[i]
  return -1


def reachable():
  """Every reachable position (by its board) with one move sequence to it."""
  seen, stack = {}, [((-1,) * 9, ())]
  while stack:
    board, moves = stack.pop()
    if board in seen:
      continue
    seen[board] = moves
    if py_winner(board) != -1 or -1 not in board:
      continue
    player = len(moves) % 2
    for a in range(9):
      if board[a] == -1:
        b = list(board)
        b[a] = player
        stack.append((tuple(b), moves + (a,)))
  return seen


def test_reachable_count_is_5478():
  assert len(reachable()) == 5478


def test_all_reachable_positions_match_python_reference():
  positions = reachable()
  boards = list(positions)
  seqs = np.full((len(boards), 9), -1, np.int32)
  for i, b in enumerate(boards):
    seqs[i, :len(positions[b])] = positions[b]

  @jax.jit
  @jax.vmap
  def replay(seq):
    def body(s, a):
      stepped = GAME.step(s, jnp.maximum(a, 0))
      s = jax.tree.map(lambda x, y: jnp.where(a >= 0, x, y), stepped, s)
      return s, jnp.where(a >= 0, stepped.rewards, 0.0)
    s, rewards = jax.lax.scan(body, GAME.init(jax.random.key(0)), seq)
    return s, rewards.sum(0)

  states, outcome = jax.device_get(replay(jnp.asarray(seqs)))
  for i, b in enumerate(boards):
    w = py_winner(b)
    done = w != -1 or -1 not in b
    assert tuple(states.board[i]) == b
    assert bool(states.terminated[i]) == done
    assert int(states.current_player[i]) == len(positions[b]) % 2
    expected = [0, 0] if w == -1 else ([1, -1] if w == 0 else [-1, 1])
    assert list(outcome[i]) == expected, b
    legal = [(not done) and b[a] == -1 for a in range(9)]
    assert list(states.legal_action_mask[i]) == legal


def test_random_games_never_reach_impossible_states():
  @jax.jit
  def run(key):
    keys = jax.random.split(key, 512)
    states = jax.vmap(GAME.init)(keys)
    def body(s, k):
      logits = jnp.where(s.legal_action_mask, 0.0, -jnp.inf)
      a = jax.vmap(jax.random.categorical)(jax.random.split(k, 512), logits)
      s = jax.vmap(GAME.step)(s, jnp.where(s.terminated, 0, a))
      return s, (s.board, s.terminated, s.rewards)
    return jax.lax.scan(body, states, jax.random.split(key, 11))[1]

  boards, terminated, rewards = jax.device_get(run(jax.random.key(3)))
  x = (boards == 0).sum(-1)
  o = (boards == 1).sum(-1)
  assert np.all((x - o >= 0) & (x - o <= 1))  # X moves first, turns alternate.
  assert np.all(rewards.sum(-1) == 0)  # Zero-sum.
  assert terminated[-1].all()  # Every game ends within 9 moves.
  for t in range(1, 11):  # Once over, nothing changes.
    done = terminated[t - 1]
    assert np.array_equal(boards[t][done], boards[t - 1][done])
    assert np.all(rewards[t][done] == 0)


def test_illegal_action_under_jit_loses_for_the_mover():
  s = GAME.step(GAME.init(jax.random.key(0)), 4)
  s = jax.jit(GAME.step)(s, 4)  # O plays on X's mark.
  assert bool(s.terminated)
  assert list(s.rewards) == [1.0, -1.0]


@pytest.mark.parametrize("action", [-1, 9, 100])
def test_out_of_range_action_raises(action):
  with pytest.raises(ValueError, match="out of range"):
    GAME.step(GAME.init(jax.random.key(0)), action)


def test_occupied_cell_raises_outside_jit():
  s = GAME.step(GAME.init(jax.random.key(0)), 4)
  with pytest.raises(ValueError, match="illegal"):
    GAME.step(s, 4)


def test_unknown_game_name_raises():
  with pytest.raises(ValueError, match="unknown game 'chess'.*tictactoe"):
    games.make("chess")


def test_observation_is_from_the_movers_view():
  s = GAME.step(GAME.init(jax.random.key(0)), 0)  # X at 0, O to move.
  obs = GAME.observe(s)
  assert obs.shape == GAME.observation_shape
  assert obs[0, 0, 1] == 1 and obs[0, 0, 0] == 0
  assert tictactoe.to_ascii(s) == "X..\n...\n..."
