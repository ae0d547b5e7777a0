"""Host-stepped batched matches: our agent against GNU Go (real, on 5x5,
and scripted stand-ins that pass or resign) and against another agent."""

import dataclasses
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games
from alphago_jax.evaluation.gnugo_match import agent_match, gnugo_match
from alphago_jax.search.agents import random_agent
from alphago_jax.search.base import AnalysedAgent, CarryingAgent
from alphago_jax import engines

GO5 = games.make("go", size=5)


def pass_agent(states, key):
  del key
  return jnp.full(states.current_player.shape, GO5.pass_action, jnp.int32)


class Scripted:
  """A stand-in for GnuGoPlayer that always answers `move`."""

  def __init__(self, move):
    self.move = move
    self.played = []

  def play(self, action):
    self.played.append(action)

  def genmove(self):
    return self.move

  def close(self):
    pass


def test_passing_game_is_scored_tromp_taylor_by_colour():
  # Both pass at once: an empty board, White wins by komi 7.5. Our agent
  # loses its Black games and wins its White ones.
  out = gnugo_match(GO5, pass_agent, jax.random.key(0), level=1,
                    games_per_colour=3, check_boards=False,
                    make_player=lambda i: Scripted(GO5.pass_action))
  r = out.result()
  assert (r.as_first.losses, r.as_first.games) == (3, 3)
  assert (r.as_second.wins, r.as_second.games) == (3, 3)
  assert list(out.lengths) == [2] * 6
  assert not out.resigned.any() and not out.capped.any()


def test_resignation_is_the_opponents_loss():
  players = []

  def make(i):
    players.append(Scripted(engines.RESIGN))
    return players[-1]
  out = gnugo_match(GO5, random_agent, jax.random.key(1), level=1,
                    games_per_colour=2, check_boards=False, make_player=make)
  assert out.result().wins == 4 and out.resigned.all()
  # As White it never moved; as Black its one move reached GNU Go first.
  assert sorted(len(p.played) for p in players) == [0, 0, 1, 1]
  assert list(out.lengths) == [1, 1, 0, 0]
  assert (out.moves[:2, 1] == -1).all() and (out.moves[2:] == -1).all()


def test_max_moves_scores_the_board():
  out = gnugo_match(GO5, random_agent, jax.random.key(2), level=1,
                    games_per_colour=1, max_moves=3, check_boards=False,
                    make_player=lambda i: Scripted(GO5.pass_action))
  assert out.capped.all() and list(out.lengths) == [3, 3]


def test_bad_arguments():
  with pytest.raises(ValueError, match="games_per_colour"):
    gnugo_match(GO5, random_agent, jax.random.key(0), level=1,
                games_per_colour=0)
  with pytest.raises(ValueError, match="Go game"):
    gnugo_match(games.make("tictactoe"), random_agent, jax.random.key(0),
                level=1, games_per_colour=1)
  with pytest.raises(ValueError, match="random_opening_moves"):
    agent_match(GO5, random_agent, random_agent, jax.random.key(0),
                games_per_colour=1, random_opening_moves=-1)


@pytest.mark.skipif(engines.find_gnugo() is None, reason="GNU Go not installed")
def test_random_agent_loses_to_gnugo_level1_on_5x5():
  out = gnugo_match(GO5, random_agent, jax.random.key(3), level=1,
                    games_per_colour=2, random_opening_moves=2)
  r = out.result()  # check_boards: GNU Go's boards matched ours at the end.
  assert (r.as_first.games, r.as_second.games) == (2, 2)
  assert r.losses >= 3
  assert np.all(out.lengths >= 2)


def test_agent_match_counts_each_colour():
  ttt = games.make("tictactoe")
  out = agent_match(ttt, random_agent, random_agent, jax.random.key(4),
                    games_per_colour=8)
  r = out.result()
  assert (r.as_first.games, r.as_second.games) == (8, 8)
  assert np.all((out.lengths >= 5) & (out.lengths <= 9))


def test_partial_agents_share_one_program_with_their_own_arrays():
  # Two agents that differ only in a bound array: one trace serves both,
  # and each plays by its own array. Lowest-free-cell against highest:
  # first player wins on the top row (0 1 2) or on the bottom one (8 7 6).
  ttt = games.make("tictactoe")
  traces = []

  def prefer(order, states, key):
    del key
    traces.append(1)
    score = jnp.where(states.legal_action_mask, order[None, :], -100.0)
    return jnp.argmax(score, axis=-1).astype(jnp.int32)
  low = jax.tree_util.Partial(prefer, -jnp.arange(9, dtype=jnp.float32))
  high = jax.tree_util.Partial(prefer, jnp.arange(9, dtype=jnp.float32))
  out = agent_match(ttt, low, high, jax.random.key(0), games_per_colour=2)
  assert list(out.returns) == [1, 1, -1, -1]
  assert list(out.lengths) == [5] * 4
  np.testing.assert_array_equal(out.moves[0], [0, 8, 1, 7, 2])
  np.testing.assert_array_equal(out.moves[3], [8, 0, 7, 1, 6])
  assert len(traces) == 1


def test_live_rows_by_hand():
  # The package re-exports the function `gnugo_match` under the module's name.
  module = importlib.import_module("alphago_jax.evaluation.gnugo_match")
  rows = module._live_rows  # pylint: disable=protected-access
  t, f = True, False
  # Every game live, or more than half of a group's: the half as it is.
  assert rows(np.array([t] * 8), 1) is None
  assert rows(np.array([t, t, t, f]), 1) is None
  # 3 live of 8: padded to 4 with a copy of a live row.
  np.testing.assert_array_equal(rows(np.array([t, t, t] + [f] * 5), 1),
                                [0, 1, 2, 0])
  # Two groups of 4: each keeps its share; an empty one a copy of its own.
  np.testing.assert_array_equal(rows(np.array([t, f, f, t] + [f] * 4), 2),
                                [0, 3, 4, 4])
  np.testing.assert_array_equal(rows(np.array([f, f, t, f, f, t, f, f]), 2),
                                [2, 5])


def test_finished_games_are_not_searched_and_groups_keep_their_rule():
  # Our agent plays two rules side by side, the lowest free cell in the
  # first group of its batch and the highest in the second, as
  # `ablation.group_moves` plays two parameter values. Against a random
  # opponent games end at different plies, so the batch shrinks; every move
  # must still be its own game's group's rule, replayed here.
  # It is an `AnalysedAgent` whose made-up statistics name the move and
  # its group: each ply's must reach that move's game, through the padding.
  ttt = games.make("tictactoe")
  shapes = []

  def analyse(states, key):
    del key
    n = states.current_player.shape[0]
    shapes.append(n)  # At trace time: one entry per compiled shape.
    first = (jnp.arange(n) < n // 2)[:, None]
    order = jnp.where(first, -jnp.arange(9.0), jnp.arange(9.0))
    score = jnp.where(states.legal_action_mask, order, -100.0)
    actions = jnp.argmax(score, axis=-1).astype(jnp.int32)
    return actions, actions / 10.0, actions + 100 * first[:, 0]
  two_rules = AnalysedAgent(analyse)
  g = 16
  out = agent_match(ttt, two_rules, random_agent, jax.random.key(7),
                    games_per_colour=g, agent_groups=2)
  assert sorted(set(shapes), reverse=True)[0] == g and min(shapes) < g
  assert all(n % 2 == 0 and (n // 2) & (n // 2 - 1) == 0 for n in shapes)
  checked = 0
  for i in range(2 * g):
    lowest = (i % g) < g // 2
    ours = 0 if i < g else 1  # Black moves at even plies.
    free = set(range(9))
    for ply, move in enumerate(out.moves[i]):
      if move < 0:
        assert np.isnan(out.winrates[i, ply]) and out.visits[i, ply] == -1
        continue
      if ply % 2 == ours:
        assert move == (min(free) if lowest else max(free)), (i, ply)
        assert out.winrates[i, ply] == np.float32(move / 10.0), (i, ply)
        assert out.visits[i, ply] == move + 100 * lowest, (i, ply)
        checked += 1
      else:  # random_agent reports nothing.
        assert np.isnan(out.winrates[i, ply]) and out.visits[i, ply] == -1
      free.remove(int(move))
  assert checked == sum((n + 1) // 2 if i < g else n // 2
                        for i, n in enumerate(out.lengths))
  with pytest.raises(ValueError, match="agent_groups"):
    agent_match(ttt, two_rules, random_agent, jax.random.key(7),
                games_per_colour=3, agent_groups=2)


def _alternating(first_lowest, analysed=False):
  """A `CarryingAgent` whose carry counts its own moves in each game: it
  plays the lowest free cell on its even-numbered moves and the highest on
  its odd ones (the reverse with `first_lowest=False`); `analysed`: it
  reports as visits its count of moves in the game, and as winrate 0.25."""
  def fn(states, key, carry):
    del key
    n = states.current_player.shape[0]
    count = jnp.zeros(n, jnp.int32) if carry is None else carry
    lowest = (count % 2 == 0) == first_lowest
    order = jnp.where(lowest[:, None], -jnp.arange(9.0), jnp.arange(9.0))
    score = jnp.where(states.legal_action_mask, order, -100.0)
    actions = jnp.argmax(score, axis=-1).astype(jnp.int32)
    if analysed:
      actions = (actions, jnp.full(n, 0.25), count)
    return actions, count + 1
  return CarryingAgent(fn, analysed=analysed)


def _replay_alternating(out, g, first_lowest):
  """Checks that our j-th move in every game followed `_alternating`'s rule
  for j, i.e. that each game got back its own carry, once per move; returns
  the moves checked."""
  checked = 0
  for i in range(2 * g):
    ours = 0 if i < g else 1  # Black moves at even plies.
    free, j = set(range(9)), 0
    for ply, move in enumerate(out.moves[i]):
      if move < 0:
        break
      if ply % 2 == ours:
        lowest = (j % 2 == 0) == first_lowest
        assert move == (min(free) if lowest else max(free)), (i, ply, j)
        j += 1
        checked += 1
      free.remove(int(move))
  return checked


def test_each_game_gets_back_its_own_carry_once_per_move():
  # Against a random opponent games end at different plies, so the live
  # games are gathered, padded with copies (5 games a colour: 4 or fewer
  # live are padded to a power of two) and scattered back; a carry given to
  # the wrong game, or counted twice through a copy, breaks the rule.
  ttt = games.make("tictactoe")
  g = 5
  for groups in (1, 5):
    out = agent_match(ttt, _alternating(True), random_agent,
                      jax.random.key(3), games_per_colour=g,
                      agent_groups=groups)
    assert len(set(map(tuple, out.moves))) > 3  # The games differ.
    assert _replay_alternating(out, g, True) == sum(
        (n + 1) // 2 if i < g else n // 2 for i, n in enumerate(out.lengths))
  # Both sides carrying: each keeps its own, the opponent's rule is checked
  # from its side (our agent's colour swapped).
  # The opponent reports statistics as well, each move its game's own.
  out = agent_match(ttt, _alternating(True), _alternating(False, True),
                    jax.random.key(4), games_per_colour=g)
  assert _replay_alternating(out, g, True) > 0
  for i in range(2 * g):
    n, theirs = int(out.lengths[i]), 1 if i < g else 0
    np.testing.assert_array_equal(out.visits[i, theirs:n:2],
                                  np.arange(len(range(theirs, n, 2))))
    np.testing.assert_array_equal(out.winrates[i, theirs:n:2], 0.25)
    assert np.isnan(out.winrates[i, 1 - theirs:n:2]).all()
    assert (out.visits[i, 1 - theirs:n:2] == -1).all()
  swapped = dataclasses.replace(out, moves=np.concatenate(
      [out.moves[g:], out.moves[:g]]))
  assert _replay_alternating(swapped, g, False) > 0


@pytest.mark.skipif(engines.find_gnugo() is None, reason="GNU Go not installed")
def test_final_scores_agree_with_gnugo_when_one_side_only_passes():
  # Our agent only passes, so GNU Go takes the whole 5x5 board and passes:
  # by Tromp-Taylor and by GNU Go, its 25 points against none, komi 7.5 to
  # White.
  out = gnugo_match(GO5, pass_agent, jax.random.key(5), level=1,
                    games_per_colour=1, final_scores=True)
  assert not out.capped.any() and not out.resigned.any()
  np.testing.assert_allclose(out.score, [-32.5, 17.5])
  np.testing.assert_allclose(out.gnugo_score, out.score)
  assert list(out.returns) == [-1, -1]


def illegal_agent(states, key):
  """Plays on the first occupied point: illegal wherever a stone stands."""
  del key
  occupied = ~states.legal_action_mask[:, :-1]
  return jnp.where(occupied.any(-1), jnp.argmax(occupied, -1),
                   0).astype(jnp.int32)


def test_an_illegal_move_forfeits_the_game_for_either_side():
  # GNU Go's stand-in answers the centre, which our agent's first move (as
  # Black) takes: its reply is illegal, so it forfeits those games. As
  # White our agent plays on GNU Go's centre stone and forfeits its own.
  centre = GO5.vertex_to_action("C3")

  def centre_agent(states, key):
    del key
    return jnp.full(states.current_player.shape, centre, jnp.int32)
  out = gnugo_match(GO5, centre_agent, jax.random.key(3), level=1,
                    games_per_colour=2, make_player=lambda i: Scripted(centre))
  assert out.forfeited.all() and not out.unplayed.any()
  # Black games: GNU Go's illegal reply at ply 1 loses; White games: ours.
  np.testing.assert_array_equal(out.returns, [1, 1, -1, -1])
  np.testing.assert_array_equal(out.lengths, [1, 1, 1, 1])
  assert (out.moves[:, 1:] == -1).all()
  assert out.result().wins == 2 and out.result().losses == 2


class DiesAt(Scripted):
  """Passes, until its `genmove` number `n` finds the process dead."""

  def __init__(self, n):
    super().__init__(GO5.pass_action)
    self.n, self.calls = n, 0

  def genmove(self):
    self.calls += 1
    if self.calls >= self.n:
      raise engines.GTPConnectionError("gtp: engine 'gnugo' died")
    return self.move


def test_a_dead_gnugo_leaves_its_game_unplayed_and_the_match_goes_on():
  # Game 1's GNU Go dies on its first genmove; the other three games play
  # to the end (random agent against passes) and are counted.
  with pytest.warns(UserWarning, match="game 1 not played: .*died"):
    out = gnugo_match(GO5, random_agent, jax.random.key(4), level=1,
                      games_per_colour=2, check_boards=False,
                      make_player=lambda i: DiesAt(1 if i == 1 else 10**9))
  np.testing.assert_array_equal(out.unplayed, [False, True, False, False])
  assert out.returns[1] == 0
  assert (out.moves[1, 1:] == -1).all()
  r = out.result()
  assert r.as_first.games + r.as_second.games == 3
  assert all(out.lengths[i] > 2 for i in (0, 2, 3))


@pytest.mark.skipif(engines.find_gnugo() is None, reason="GNU Go not installed")
@pytest.mark.parametrize("block, name, plies, seed", [
    ("sl-policy-19-vs-gnugo10-seed3", "level10-024-black.sgf", 75, 24),
    ("sl-policy-19-vs-gnugo10-seed5", "level10-026-white.sgf", 46, 26),
    ("sl-policy-19-long-ensemble-vs-gnugo10-seed7", "level10-041-white.sgf",
     74, 41),
    ("sl-policy-19-long-ensemble-vs-gnugo10-seed8", "level10-025-white.sgf",
     62, 25),
    ("sl-policy-19-long-ensemble-vs-gnugo10-seed9", "level10-048-white.sgf",
     66, 48)])
# Level 1 crashes in about a second; the match's level 10 reads for up to a
# minute first, so it is in the slow suite.
@pytest.mark.parametrize("level", [1, pytest.param(10, marks=pytest.mark.slow)])
def test_gnugo_segfaults_on_the_committed_unplayed_games(block, name, plies,
                                                         seed, level):
  # The match games left unplayed (docs/results/...-seedS/unplayed/) are GNU
  # Go's own failures, not ours: replaying their moves into a fresh GNU Go
  # 3.8 with the match's seed, at the match's level 10 or at level 1, kills
  # the process on its next `genmove`, and the player reports the exit
  # status as the match logs did.
  import os  # pylint: disable=import-outside-toplevel
  from alphago_jax.games import sgf  # pylint: disable=import-outside-toplevel
  path = os.path.join(os.path.dirname(__file__), "..", "docs", "results",
                      block, "unplayed", name)
  with open(path, "rb") as f:
    record = sgf.parse_sgf(f.read())
  assert record.result is None and len(record.moves) == plies
  game = games.make("go", size=19, komi=7.5)
  _, actions, _ = sgf.record_to_actions(record, game)
  player = engines.GnuGoPlayer(game, level, seed=seed)
  # GNU Go 10 reads for up to a minute on a quiet core before it crashes; the
  # crash is deterministic, its time on a loaded machine is not.
  player.engine.timeout = 900.0
  try:
    player.replay(actions)
    assert player.to_play == plies % 2
    with pytest.raises(engines.GTPConnectionError, match=r"status -11"):
      player.genmove()
  finally:
    player.engine.close()
