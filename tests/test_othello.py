"""Othello: move-for-move agreement with pgx on random games, hand-worked
positions (openings, multi-direction flips, forced passes, the end by
passes, wipe-out and full board, draws), a disc-count property checked
against a plain-Python referee, dihedral augmentation, and the command line
(`arena` and `train` on othello)."""

import functools
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import profiles
from alphago_jax import games, training
from alphago_jax.training.checkpoint import latest_step
from alphago_jax.games import othello, symmetry
from alphago_jax.training.augment import dihedral_augment
from alphago_jax.training.replay import Sample

from helpers import run_cli

GAME = games.make("othello")
MAX_MOVES = 130  # 60 placements, at most one pass between them, two at the end
DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
              if (dr, dc) != (0, 0)]


# -- A plain-Python referee ---------------------------------------------------

def py_flips(board, square, colour):
  """Squares a disc of `colour` on empty `square` flips (numpy board of 64:
  -1 empty, 0 Black, 1 White), walking the 8 directions one step at a time."""
  r, c = divmod(square, 8)
  out = []
  for dr, dc in DIRECTIONS:
    run, rr, cc = [], r + dr, c + dc
    while 0 <= rr < 8 and 0 <= cc < 8 and board[rr * 8 + cc] == 1 - colour:
      run.append(rr * 8 + cc)
      rr, cc = rr + dr, cc + dc
    if run and 0 <= rr < 8 and 0 <= cc < 8 and board[rr * 8 + cc] == colour:
      out += run
  return sorted(out)


def py_legal(board, colour):
  """The referee's legal squares of `colour` (pass not included)."""
  return [s for s in range(64) if board[s] == -1 and py_flips(board, s, colour)]


def count(board, colour):
  return int(np.sum(board == colour))


def squares(state):
  return [int(a) for a in np.flatnonzero(np.asarray(state.legal_action_mask))]


# -- Agreement with pgx -------------------------------------------------------

DIFFERENCES = ("board", "terminated", "legal mask", "colour to move",
               "rewards", "observation")


def _pgx_colours(p):
  """pgx's batched board (+1 the mover's discs) as ours (0 Black, 1 White,
  -1 empty): pgx's `turn` is 0 when Black is to move."""
  board = jnp.where(p._x.turn[:, None] == 0, p._x.board, -p._x.board)
  return jnp.where(board > 0, 0, jnp.where(board < 0, 1, -1)).astype(jnp.int8)


@functools.partial(jax.jit, static_argnums=(0, 2))
def _play_both(env, key, num_games):
  """Plays `num_games` random games in both engines at once, until all are
  over (at most `MAX_MOVES` steps): each step picks uniformly among our
  legal actions, and ours and pgx's `env` play it. (`env` is made outside
  `jit`: pgx makes arrays when its modules load, which must not be traced.)

  Returns:
    The final states (ours, pgx's); the rewards summed along each game by
    colour, float32 `[2 (ours, pgx), num_games, 2 (Black, White)]`; the
    number of running games whose next states disagreed, int32 `[6]`:
    board, terminated, legal mask, colour to move, rewards by colour,
    observation; the steps compared (running games summed over steps), the
    passes played, and the loop's steps.
  """
  k_ours, k_pgx, k_moves = jax.random.split(key, 3)
  ours = jax.vmap(GAME.init)(jax.random.split(k_ours, num_games))
  theirs = jax.vmap(env.init)(jax.random.split(k_pgx, num_games))
  # pgx draws which player id plays Black; map everything by colour.
  black = theirs.current_player
  rows = jnp.arange(num_games)

  def body(carry):
    s, p, total, differ, compared, passes, t = carry
    live = ~s.terminated
    logits = jnp.where(s.legal_action_mask, 0.0, -jnp.inf)
    a = jax.random.categorical(jax.random.fold_in(k_moves, t),
                               jnp.where(live[:, None], logits, 0.0))
    a = jnp.where(live, a, 0).astype(jnp.int32)
    s, p = jax.vmap(GAME.step)(s, a), jax.vmap(env.step)(p, a)
    to_move = jnp.where(p.current_player == black, 0, 1)
    their_rewards = jnp.stack([p.rewards[rows, black],
                               p.rewards[rows, 1 - black]], axis=-1)
    bad = jnp.stack([
        jnp.any(s.board != _pgx_colours(p), axis=-1),
        s.terminated != p.terminated,
        # pgx sets every action legal at the end; ours are all illegal.
        ~s.terminated & jnp.any(s.legal_action_mask != p.legal_action_mask,
                                axis=-1),
        s.current_player != to_move,
        jnp.any(s.rewards != their_rewards, axis=-1),
        ~s.terminated & jnp.any(jax.vmap(GAME.observe)(s)
                                != p.observation, axis=(1, 2, 3)),
    ], axis=-1) & live[:, None]
    return (s, p, total + jnp.stack([s.rewards, their_rewards]),
            differ + jnp.sum(bad, axis=0), compared + jnp.sum(live),
            passes + jnp.sum(live & (a == othello.PASS)), t + 1)

  def going(carry):
    s, t = carry[0], carry[-1]
    return ~jnp.all(s.terminated) & (t < MAX_MOVES)

  zero = jnp.int32(0)
  return jax.lax.while_loop(going, body, (
      ours, theirs, jnp.zeros((2, num_games, 2), jnp.float32),
      jnp.zeros(6, jnp.int32), zero, zero, zero))


def test_agrees_with_pgx_move_for_move_on_2000_random_games():
  pgx = pytest.importorskip("pgx")
  n = 2000
  s, p, total, differ, compared, passes, steps = jax.device_get(
      _play_both(pgx.make("othello"), jax.random.key(0), n))
  assert differ.sum() == 0, (
      f"running games that disagreed: {dict(zip(DIFFERENCES, differ))}")
  assert s.terminated.all() and p.terminated.all() and steps < MAX_MOVES
  # Outcomes by colour (rewards summed along each game) agree, and are the
  # disc count's verdict.
  ours, theirs = total
  np.testing.assert_array_equal(ours, theirs)
  margin = np.sum(s.board == othello.BLACK, -1) - np.sum(
      s.board == othello.WHITE, -1)
  np.testing.assert_array_equal(ours[:, 0], np.sign(margin))
  # The games exercised every rule: passes, every outcome, early ends.
  outcome = ours[:, 0]
  assert passes > 0 and {-1.0, 0.0, 1.0} <= set(outcome.tolist())
  assert np.any(np.sum(s.board != othello.EMPTY, axis=-1) < 64)
  print(f"\npgx agreement: {n} games, {compared} game steps compared over "
        f"{steps} loop steps, {passes} passes, {int(np.sum(outcome == 0))} "
        "draws")


# -- Hand-worked positions ----------------------------------------------------

def test_the_start_and_blacks_four_opening_moves():
  s = GAME.init(jax.random.key(0))
  assert GAME.to_ascii(s).splitlines()[3:5] == ["...OX...", "...XO..."]
  assert int(s.current_player) == othello.BLACK
  # d3, c4, f5, e6: row-major squares 19, 26, 37, 44. No pass.
  assert squares(s) == [19, 26, 37, 44]
  with pytest.raises(ValueError, match="illegal"):
    GAME.step(s, jnp.int32(othello.PASS))
  obs = np.asarray(GAME.observe(s))
  assert obs.shape == (8, 8, 2) and obs.dtype == np.float32
  assert obs[3, 4, 0] == obs[4, 3, 0] == 1 and obs[3, 3, 1] == obs[4, 4, 1] == 1
  assert obs.sum() == 4
  # Each opening move flips one disc: 4 Black discs, 1 White.
  for a in (19, 26, 37, 44):
    t = GAME.step(s, jnp.int32(a))
    assert [int(x) for x in GAME.discs(t)] == [4, 1]
    assert int(t.current_player) == othello.WHITE


MULTI = """
. . . . . . . .
. X . O . . . .
. . O O X . . .
. . O . O O X .
. . O O O . . .
. X . X . O . .
. . . . . . X .
. . . . . . . .
"""


def test_a_move_that_flips_in_several_directions():
  s = GAME.from_ascii(MULTI, to_play=othello.BLACK)
  a = 3 * 8 + 3  # d4, the empty centre square.
  # By hand, from (3, 3):
  #   east: O (3,4), O (3,5), X (3,6)          -> 2 flips
  #   south: O (4,3), X (5,3)                   -> 1
  #   south-east: O (4,4), O (5,5), X (6,6)     -> 2
  #   north-west: O (2,2), X (1,1)              -> 1
  #   south-west: O (4,2), X (5,1)              -> 1
  #   west: O (3,2), then empty (3,1)           -> 0 (not closed)
  #   north: O (2,3), O (1,3), then empty (0,3) -> 0 (not closed)
  #   north-east: X (2,4) at once               -> 0 (no run)
  # 7 flips: Black goes 6 -> 14 discs, White 10 -> 3.
  assert [int(x) for x in GAME.discs(s)] == [6, 10]
  assert bool(s.legal_action_mask[a])
  t = GAME.step(s, jnp.int32(a))
  assert [int(x) for x in GAME.discs(t)] == [14, 3]
  want = sorted([3 * 8 + 4, 3 * 8 + 5, 4 * 8 + 3, 4 * 8 + 4, 5 * 8 + 5,
                 2 * 8 + 2, 4 * 8 + 2])
  board = np.asarray(s.board)
  assert py_flips(board, a, othello.BLACK) == want
  changed = np.flatnonzero(np.asarray(t.board) != board)
  assert sorted(changed.tolist()) == sorted(want + [a])
  assert all(int(t.board[q]) == othello.BLACK for q in changed)
  assert squares(s) == py_legal(board, othello.BLACK)


def test_a_forced_pass_is_the_only_legal_action():
  # Black's one disc under White's row cannot flank anything: every line
  # through a White disc ends at the edge. White can flank b2 (from b3
  # up to b1's O, or from a3 diagonally to c1's O).
  s = GAME.from_ascii("""
      X O O O O O O O
      . X . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .""", to_play=othello.BLACK)
  assert squares(s) == [othello.PASS]
  with pytest.raises(ValueError, match="illegal"):
    GAME.step(s, jnp.int32(2 * 8 + 2))
  t = GAME.step(s, jnp.int32(othello.PASS))
  assert not bool(t.terminated) and bool(t.passed)
  assert int(t.current_player) == othello.WHITE
  np.testing.assert_array_equal(t.board, s.board)
  np.testing.assert_array_equal(t.rewards, [0, 0])
  assert squares(t) == [16, 17]  # a3, b3
  u = GAME.step(t, jnp.int32(17))
  assert not bool(u.passed) and [int(x) for x in GAME.discs(u)] == [1, 9]


def test_the_game_ends_when_neither_can_move_and_more_discs_win():
  # Neither colour can flank anything: Black passes, White passes, and
  # White wins 7 to 1 on the board.
  s = GAME.from_ascii("""
      X O O O O O O O
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .""", to_play=othello.BLACK)
  assert squares(s) == [othello.PASS]
  t = GAME.step(s, jnp.int32(othello.PASS))
  assert not bool(t.terminated) and squares(t) == [othello.PASS]
  u = GAME.step(t, jnp.int32(othello.PASS))
  assert bool(u.terminated) and squares(u) == []
  np.testing.assert_array_equal(u.rewards, [-1.0, 1.0])
  # Absorbed afterwards, the outcome paid once.
  v = GAME.step(u, jnp.int32(0))
  np.testing.assert_array_equal(v.rewards, [0.0, 0.0])
  np.testing.assert_array_equal(v.board, u.board)


def test_taking_the_last_opponent_disc_ends_the_game():
  s = GAME.from_ascii("""
      X O . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .
      . . . . . . . .""", to_play=othello.BLACK)
  assert squares(s) == [2]
  t = GAME.step(s, jnp.int32(2))
  assert bool(t.terminated) and [int(x) for x in GAME.discs(t)] == [3, 0]
  np.testing.assert_array_equal(t.rewards, [1.0, -1.0])


def test_filling_the_board_ends_the_game_and_equal_counts_draw():
  # One empty square, a1; Black fills it and flips b1 (closed by c1): a
  # full board of 32 Black (rows 1 to 4) and 32 White discs.
  rows = [". O X X X X X X"] + ["X X X X X X X X"] * 3 + [
      "O O O O O O O O"] * 4
  s = GAME.from_ascii("\n".join(rows), to_play=othello.BLACK)
  assert squares(s) == [0]
  t = GAME.step(s, jnp.int32(0))
  assert bool(t.terminated) and [int(x) for x in GAME.discs(t)] == [32, 32]
  np.testing.assert_array_equal(t.rewards, [0.0, 0.0])
  # The same fill with one more White row wins for White, 24 to 40.
  rows[3] = "O O O O O O O O"
  t = GAME.step(GAME.from_ascii("\n".join(rows)), jnp.int32(0))
  assert bool(t.terminated) and [int(x) for x in GAME.discs(t)] == [24, 40]
  np.testing.assert_array_equal(t.rewards, [-1.0, 1.0])


def test_illegal_actions_lose_under_jit_and_raise_outside():
  """The base contract on Othello's own illegal moves (the conformance
  suite's check plays action 0, which Othello's start does not allow)."""
  s = GAME.init(jax.random.key(0))
  for a in (0, 27, 20):  # a1 (far away), d4 (occupied), e3 (flips nothing)
    with pytest.raises(ValueError, match="illegal"):
      GAME.step(s, jnp.int32(a))
    t = jax.jit(GAME.step)(s, jnp.int32(a))
    assert bool(t.terminated) and squares(t) == []
    np.testing.assert_array_equal(t.rewards, [-1.0, 1.0])


def test_from_ascii_rejects_bad_boards():
  with pytest.raises(ValueError, match="8 lines"):
    GAME.from_ascii("X O\n. .")


# -- Properties along random games -------------------------------------------

@jax.jit
def _random_game(key):
  """One uniformly random game: boards `[131, 64]` (before each move and
  the last), actions, movers and whether each step was played."""
  def body(s, k):
    logits = jnp.where(s.legal_action_mask, 0.0, -jnp.inf)
    a = jax.random.categorical(k, jnp.where(s.terminated, 0.0, logits))
    a = jnp.where(s.terminated, 0, a).astype(jnp.int32)
    return GAME.step(s, a), (s.board, a, s.current_player, ~s.terminated,
                             s.legal_action_mask)
  s, (boards, actions, movers, live, masks) = jax.lax.scan(
      body, GAME.init(key), jax.random.split(key, MAX_MOVES))
  return (jnp.concatenate([boards, s.board[None]]), actions, movers, live,
          masks, s)


@settings(max_examples=profiles.examples(20), deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_disc_counts_change_by_the_flips_along_random_games(seed):
  boards, actions, movers, live, masks, final = jax.device_get(
      _random_game(jax.random.key(seed)))
  assert bool(final.terminated)
  for t in np.flatnonzero(live):
    before, after, a, me = boards[t], boards[t + 1], actions[t], movers[t]
    assert count(after, 0) + count(after, 1) <= 64
    legal = py_legal(before, me)
    assert np.flatnonzero(masks[t]).tolist() == (legal or [othello.PASS])
    if a == othello.PASS:
      np.testing.assert_array_equal(after, before)
      continue
    flips = py_flips(before, a, me)
    assert flips, (t, a)
    assert count(after, me) - count(before, me) == 1 + len(flips)
    assert count(after, 1 - me) - count(before, 1 - me) == -len(flips)
    expect = before.copy()
    expect[flips + [a]] = me
    np.testing.assert_array_equal(after, expect)


# -- Symmetries ---------------------------------------------------------------

def test_the_rules_commute_with_the_board_symmetries():
  """Transforming a position transforms its legal mask and every move's
  result alike, which is what `dihedral_augment(8)` relies on."""
  boards, actions, movers, live, _, _ = jax.device_get(
      _random_game(jax.random.key(7)))
  t = 20  # a middle-game placement of this game
  assert live[t] and actions[t] != othello.PASS
  s = GAME.from_board(boards[t], to_play=int(movers[t]))
  grid = boards[t].reshape(8, 8, 1)
  for i in range(symmetry.NUM_SYMMETRIES):
    b = np.asarray(symmetry.transform_observation(grid, i)).reshape(64)
    u = GAME.from_board(b, to_play=int(movers[t]))
    np.testing.assert_array_equal(
        u.legal_action_mask,
        symmetry.transform_policy(s.legal_action_mask, i, 8))
    a = int(actions[t])
    ua = GAME.step(u, jnp.int32(symmetry.transform_action(a, i, 8)))
    sa = GAME.step(s, jnp.int32(a))
    np.testing.assert_array_equal(
        np.asarray(ua.board).reshape(8, 8, 1),
        symmetry.transform_observation(
            np.asarray(sa.board).reshape(8, 8, 1), i))
  # The augmentation keeps observations, policies and masks aligned.
  obs = jnp.stack([GAME.observe(s)] * 16)
  legal = jnp.stack([s.legal_action_mask] * 16)
  policy = legal / jnp.sum(legal, axis=-1, keepdims=True)
  samples = Sample(observation=obs, policy=policy, value=jnp.zeros(16),
                   legal_action_mask=legal)
  out = dihedral_augment(GAME.size)(jax.random.key(1), samples)
  for k in range(16):
    b = np.asarray(out.observation[k, :, :, 0] - out.observation[k, :, :, 1])
    board = np.where(b > 0, int(movers[t]), np.where(b < 0, 1 - int(movers[t]),
                                                     -1))
    u = GAME.from_board(board.reshape(64), to_play=int(movers[t]))
    np.testing.assert_array_equal(u.legal_action_mask,
                                  out.legal_action_mask[k])
    np.testing.assert_array_equal(out.policy[k] > 0, out.legal_action_mask[k])


# -- The command line -------------------------------------------------------

def test_arena_plays_othello(capsys):
  status, out, err = run_cli(capsys, "arena", "--game", "othello", "random",
                             "uct:4", "--games-per-colour", "2", "--json")
  assert status == 0, err
  result = json.loads(out.strip().splitlines()[-1])
  assert result["game"] == "othello"
  assert result["wins"] + result["draws"] + result["losses"] == 4


def test_train_othello_leaves_a_checkpoint_and_metrics(capsys, tmp_path):
  out = str(tmp_path / "run")
  status, _, err = run_cli(
      capsys, "train", "othello", "--output", out, "--iterations", "1",
      "--eval-every", "0", "--checkpoint-every", "1",
      "--train.num-games", "4", "--train.batch-size", "16",
      "--train.gradient-steps", "1", "--train.buffer-capacity", "520",
      "--train.model.num-blocks", "1", "--train.model.channels", "8",
      "--train.model.value-hidden", "8", "--train.search.num-simulations",
      "2", "--train.search.max-num-considered-actions", "2",
      "--cpu-devices", "1")
  assert status == 0, err
  assert latest_step(os.path.join(out, "checkpoints")) == 1
  records = training.read_metrics(os.path.join(out, "metrics.jsonl"))
  assert [r["iteration"] for r in records] == [1]
