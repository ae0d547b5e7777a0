"""The 8 board symmetries: group laws, inverses, pass fixed, and agreement
with playing the transformed move on the transformed board."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from alphago_jax.games import go, symmetry

import profiles
from go_positions import jitted_step, random_state

GAME = go.Go(7, superko=False)
SYM = st.integers(0, 7)


def _arrays(seed, shape):
  return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def test_symmetry_zero_is_identity_and_one_is_a_quarter_turn():
  obs = _arrays(0, (5, 5, 3))
  np.testing.assert_array_equal(symmetry.transform_observation(obs, 0), obs)
  np.testing.assert_array_equal(symmetry.transform_observation(obs, 1),
                                np.rot90(obs, 1, axes=(0, 1)))
  np.testing.assert_array_equal(symmetry.transform_observation(obs, 4),
                                obs[:, ::-1])
  # The 8 images of an asymmetric board are all different.
  images = {np.asarray(symmetry.transform_observation(obs, i)).tobytes()
            for i in range(8)}
  assert len(images) == 8
  # Top-left corner -> bottom-left under a counter-clockwise quarter turn.
  assert int(symmetry.transform_action(0, 1, 5)) == 20


def test_compose_is_a_group_table():
  table = np.array([[symmetry.compose(i, j) for j in range(8)]
                    for i in range(8)])
  for row in table:
    assert sorted(row) == list(range(8))  # a Latin square
  for i in range(8):
    assert table[i, symmetry.inverse(i)] == 0 == table[symmetry.inverse(i), i]
    assert table[0, i] == i == table[i, 0]


# Few shapes: each new one compiles the eager ops again.
SIZES = st.sampled_from([4, 5])


@settings(max_examples=profiles.examples(30), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), size=SIZES,
       batch=st.sampled_from([(), (2, 3)]), i=SYM, j=SYM)
def test_observations_compose_and_invert(seed, size, batch, i, j):
  obs = _arrays(seed, batch + (size, size, 2))
  once = symmetry.transform_observation(obs, i)
  np.testing.assert_array_equal(
      symmetry.transform_observation(once, symmetry.inverse(i)), obs)
  np.testing.assert_array_equal(symmetry.transform_observation(once, j),
                                symmetry.transform_observation(
                                    obs, symmetry.compose(i, j)))
  # Batched = each example on its own.
  flat = obs.reshape((-1, size, size, 2))
  for k, o in enumerate(np.asarray(once).reshape(flat.shape)):
    np.testing.assert_array_equal(o, symmetry.transform_observation(flat[k], i))


@settings(max_examples=profiles.examples(30), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), size=SIZES,
       batch=st.sampled_from([(), (3,)]), i=SYM, j=SYM)
def test_policies_compose_invert_and_keep_pass(seed, size, batch, i, j):
  n2 = size * size
  policy = _arrays(seed, batch + (n2 + 1,))
  once = np.asarray(symmetry.transform_policy(policy, i, size))
  np.testing.assert_array_equal(once[..., n2], policy[..., n2])
  np.testing.assert_array_equal(
      symmetry.transform_policy(once, symmetry.inverse(i), size), policy)
  np.testing.assert_array_equal(
      symmetry.transform_policy(once, j, size),
      symmetry.transform_policy(policy, symmetry.compose(i, j), size))
  # A policy transforms as a board plane, and the mass of each move follows
  # transform_action.
  plane = policy[..., :n2].reshape(batch + (size, size, 1))
  np.testing.assert_array_equal(
      np.asarray(symmetry.transform_observation(plane, i)).reshape(
          batch + (n2,)), once[..., :n2])
  moved = np.asarray(symmetry.transform_action(np.arange(n2 + 1), i, size))
  np.testing.assert_array_equal(once[..., moved], policy)
  assert moved[n2] == n2 and sorted(moved) == list(range(n2 + 1))


def test_traced_and_vmapped_indices():
  obs = _arrays(1, (4, 5, 5, 2))
  idx = jnp.array([0, 3, 5, 7])
  out = jax.jit(jax.vmap(symmetry.transform_observation))(obs, idx)
  for k in range(4):
    np.testing.assert_array_equal(
        out[k], symmetry.transform_observation(obs[k], int(idx[k])))
  inv = symmetry.inverse(idx)
  np.testing.assert_array_equal(inv, [symmetry.inverse(int(i)) for i in idx])
  back = jax.jit(jax.vmap(symmetry.transform_observation))(out, inv)
  np.testing.assert_array_equal(back, obs)


def test_errors():
  with pytest.raises(ValueError, match="index must be in 0..7, got 8"):
    symmetry.transform_observation(np.zeros((5, 5, 1)), 8)
  with pytest.raises(ValueError, match=r"\[..., N, N, C\]"):
    symmetry.transform_observation(np.zeros((5, 4, 1)), 1)
  with pytest.raises(ValueError, match=r"\[..., 26\]"):
    symmetry.transform_policy(np.zeros(25), 1, 5)
  with pytest.raises(ValueError, match="index must be in 0..7"):
    symmetry.inverse(-1)


@settings(max_examples=profiles.examples(10), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), plies=st.integers(0, 50), i=SYM,
       pick=st.integers(0, 10**6))
def test_transformed_move_lands_where_the_board_says(seed, plies, i, pick):
  s = random_state(GAME, seed, plies)
  stones = np.asarray(GAME.stones(s))
  player, ko = int(s.current_player), int(s.ko)
  s = GAME.from_board(stones, to_play=player, ko=ko)
  moved = np.asarray(symmetry.transform_observation(
      stones.reshape(7, 7, 1), i)).reshape(-1)
  t = GAME.from_board(moved, to_play=player,
                      ko=int(symmetry.transform_action(ko, i, 7))
                      if ko >= 0 else -1)
  # Legal moves map to legal moves, pass included.
  np.testing.assert_array_equal(
      symmetry.transform_policy(s.legal_action_mask, i, 7),
      t.legal_action_mask)
  legal = np.flatnonzero(s.legal_action_mask)
  a = int(legal[pick % len(legal)])
  after_s = jitted_step(GAME)(s, a)
  after_t = jitted_step(GAME)(t, symmetry.transform_action(a, i, 7))
  np.testing.assert_array_equal(
      np.asarray(symmetry.transform_observation(
          np.asarray(GAME.stones(after_s)).reshape(7, 7, 1), i)).reshape(-1),
      GAME.stones(after_t))
  if a < 49:
    row, col = divmod(int(symmetry.transform_action(a, i, 7)), 7)
    assert moved.reshape(7, 7)[row, col] == 0
    assert np.asarray(GAME.stones(after_t)).reshape(7, 7)[row, col] == (
        1 if player == go.BLACK else -1)
