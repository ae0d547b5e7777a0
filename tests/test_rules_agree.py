"""Go's rules, implementation by implementation, against the JAX engine.

`games.go.Go` is the reference. Four other places apply the rules, each for
its own reason (docs/design/go-rules.md):

* `playout`: `games.go_playout.GoPlayout`, the lean rollout step (simple
  ko only, and it never fills the mover's own eye);
* `features`: `games.go_features._play`, the move of the XLA ladder reading
  (simple ko only); the per-move planes take the engine's legal mask;
* `ladders`: `data.ladders._play`, the same move compiled by numba for the
  position cache's ladder planes;
* `replay`: `data.positions.replay_positions`, the plain-Python replay that
  builds the position cache (simple ko only, as records are replayed by
  `sgf.record_to_states`).

Each rule is a hand-worked position and a line of moves played through every
implementation and compared with the engine: the legal points after the
line, the board after each move (so the stones captured) and the simple-ko
point. Where an implementation deliberately differs (no superko; the
playout's eye rule and its pass), the test states the difference and checks
it. Last, a few KGS records are played through all of them, move by move.
"""

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import data
from alphago_jax.data import ladders, positions
from alphago_jax.games import go_features, sgf
from alphago_jax.games.go import BLACK, WHITE, Go
from alphago_jax.games.go_playout import GoPlayout

from record_files import KGS, need as _need
from test_go_rules import SUPERKO_GAME

IMPLEMENTATIONS = ("playout", "features", "ladders", "replay")


class Illegal(Exception):
  """An implementation refused move `index` of a line."""

  def __init__(self, index):
    super().__init__(index)
    self.index = index


def _stones(text):
  """int8 `[N²]` of +1 Black, -1 White, 0 from rows of X, O and `.`."""
  rows = [r.strip() for r in text.strip().splitlines()]
  return np.array([{"X": 1, "O": -1, ".": 0}[ch] for r in rows for ch in r],
                  np.int8)


def _size(stones):
  return int(round(len(stones) ** 0.5))


# -- The reference -------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _game(size, superko=False, max_moves=None):
  return Go(size=size, superko=superko, max_moves=max_moves)


@functools.lru_cache(maxsize=None)
def _engine_step(game):
  return jax.jit(game.step)


def engine_line(stones, to_play, line, game=None):
  """The engine's states along `line` from the setup `stones`: `[start,
  after move 1, ...]`. Raises `Illegal` at a move its mask forbids."""
  game = game or _game(_size(stones))
  s = game.from_board(stones, to_play=to_play)
  out = [s]
  for i, a in enumerate(line):
    if not bool(s.legal_action_mask[a]):
      raise Illegal(i)
    s = _engine_step(game)(s, jnp.int32(a))
    out.append(s)
  return out


def _view(state):
  """(stones int8 `[N²]`, ko) of an engine state."""
  return np.sign(np.asarray(state.board)).astype(np.int8), int(state.ko)


# -- The playout ---------------------------------------------------------------

def _forced(playout, state):
  """A rollout policy that plays the point stored in `state.last_move`: the
  test writes its move there before each step. The playout samples among
  its candidates (legal, no own eye), so it plays that point iff it is one."""
  hit = jnp.arange(playout.num_points) == state.last_move
  return jnp.where(hit, 1e4, 0.0).astype(jnp.float32)


@functools.lru_cache(maxsize=None)
def _playout(game):
  pl = GoPlayout(game, _forced)
  return pl, jax.jit(pl.step), jax.jit(pl.legal_points), jax.jit(pl.own_eyes)


def playout_line(stones, to_play, line, game=None):
  """`(stones, ko)` after each move of `line`, played by the playout's own
  step. Raises `Illegal` where it plays anything else (a pass included)."""
  game = game or _game(_size(stones))
  pl, step = _playout(game)[:2]
  s = pl.init(jax.random.key(0), game.from_board(stones, to_play=to_play))
  out = []
  for i, a in enumerate(line):
    s = step(s.replace(last_move=jnp.int32(a)))
    if int(s.last_move) != a:
      raise Illegal(i)
    # The atari flags the playout carries stay those of its board.
    np.testing.assert_array_equal(s.atari, pl.in_atari(s.board))
    out.append((np.sign(np.asarray(s.board)).astype(np.int8), int(s.ko)))
  return out, s


def playout_mask(state, game):
  """The points `legal_points` allows in an engine state."""
  legal = _playout(game)[2]
  return np.asarray(legal(state.board, state.current_player, state.ko))


# -- The XLA ladder reading's move (go_features._play) ------------------------

@functools.lru_cache(maxsize=None)
def _features_fns(size):
  play = jax.jit(lambda b, p, sign, ko: go_features._play(b, p, sign, size,
                                                          ko))
  mask = jax.jit(lambda b, sign, ko: jax.vmap(
      lambda p: go_features._play(b, p, sign, size, ko)[1])(
          jnp.arange(size * size)))
  return play, mask


def features_line(stones, to_play, line):
  """`(stones, ko)` after each move, and the chain-id board and ko after the
  line, by `go_features._play` from the engine's setup board."""
  size = _size(stones)
  play, _ = _features_fns(size)
  board = _game(size).from_board(stones, to_play=to_play).board
  sign, ko, out = 1 if to_play == BLACK else -1, -1, []
  for i, a in enumerate(line):
    if a == len(stones):  # a pass, which the reading never plays
      sign, ko = -sign, -1
      out.append((np.sign(np.asarray(board)).astype(np.int8), ko))
      continue
    board, legal, _, ko = play(board, jnp.int32(a), jnp.int16(sign),
                               jnp.int32(ko))
    if not bool(legal):
      raise Illegal(i)
    ko = int(ko)
    out.append((np.sign(np.asarray(board)).astype(np.int8), ko))
    sign = -sign
  return out, (board, sign, ko)


def features_mask(board, sign, ko):
  _, mask = _features_fns(_size(board))
  return np.asarray(mask(board, jnp.int16(sign), jnp.int32(ko)))


# -- The numba ladder reader's move (data.ladders._play) ----------------------

def _workspace(size):
  n2 = size * size
  return dict(nbr=ladders._neighbour_table(size), mark=np.zeros(n2, np.int64),
              stamp=np.zeros(1, np.int64), chain=np.zeros(n2, np.int32),
              libs=np.zeros(n2, np.int32))


def _ladders_play(board, p, sign, ko, w):
  out = np.zeros_like(board)
  legal, _, new_ko = ladders._play(board, p, sign, ko, out, w["nbr"],
                                   w["mark"], w["stamp"], w["chain"],
                                   w["libs"])
  return (out if legal else None), int(new_ko)


def ladders_line(stones, to_play, line):
  """`(stones, ko)` after each move, and `(board, sign, ko)` after the line."""
  w = _workspace(_size(stones))
  board = np.array(stones, np.int8)
  sign, ko, out = 1 if to_play == BLACK else -1, -1, []
  for i, a in enumerate(line):
    if a == len(stones):  # a pass, which the reading never plays
      sign, ko = -sign, -1
      out.append((board.copy(), ko))
      continue
    after, ko = _ladders_play(board, a, sign, ko, w)
    if after is None:
      raise Illegal(i)
    board = after
    out.append((board.copy(), ko))
    sign = -sign
  return out, (board, sign, ko)


def ladders_mask(board, sign, ko):
  w = _workspace(_size(board))
  return np.array([_ladders_play(board, p, sign, ko, w)[0] is not None
                   for p in range(len(board))])


# -- The cache's host replay (data.positions.replay_positions) ----------------

def _record(stones, to_play, line):
  size = _size(stones)
  colours = [(to_play + i) % 2 for i in range(len(line))]
  return sgf.GameRecord(
      size=size, setup_black=tuple(np.flatnonzero(stones == 1).tolist()),
      setup_white=tuple(np.flatnonzero(stones == -1).tolist()),
      moves=tuple(zip(colours, line)), source="rules-agree")


def replay_line(stones, to_play, line):
  """`(stones, ko)` after each move of `line`, by `replay_positions`. It
  gives the position before each move, so a pass is appended for the last
  one, unless the line ends the game by two passes: then the last position
  is the one before the final pass, with no ko."""
  n2 = len(stones)
  ended = list(line[-2:]) == [n2, n2]
  try:
    arrays = positions.replay_positions(
        _record(stones, to_play, list(line) + ([] if ended else [n2])))
  except sgf.SGFError as e:
    if e.reason != "illegal move":
      raise
    raise Illegal(e.move_number - 1) from None
  out = [(arrays["stones"][i], int(arrays["ko"][i]))
         for i in range(1, len(arrays["ko"]))]
  return out + [(arrays["stones"][-1], -1)] if ended else out


def replay_mask(stones, to_play, line):
  """The points the replay accepts after `line`: one replay per point."""
  out = []
  for p in range(len(stones)):
    try:
      replay_line(stones, to_play, list(line) + [p])
      out.append(True)
    except Illegal:
      out.append(False)
  return np.array(out)


# -- Every implementation at once ----------------------------------------------

def line_of(impl, stones, to_play, line):
  """`(stones, ko)` after each move of `line` by `impl`."""
  if impl == "playout":
    return playout_line(stones, to_play, line)[0]
  if impl == "features":
    return features_line(stones, to_play, line)[0]
  if impl == "ladders":
    return ladders_line(stones, to_play, line)[0]
  return replay_line(stones, to_play, line)


def mask_of(impl, stones, to_play, line):
  """bool `[N²]`: the points `impl` allows the player to move after `line`
  (for the playout: `legal_points`, its eye rule left out)."""
  if impl == "playout":
    game = _game(_size(stones))
    return playout_mask(engine_line(stones, to_play, line)[-1], game)
  if impl == "features":
    return features_mask(*features_line(stones, to_play, line)[1])
  if impl == "ladders":
    return ladders_mask(*ladders_line(stones, to_play, line)[1])
  return replay_mask(stones, to_play, line)


def assert_agrees(impl, stones, to_play, line):
  """`impl` plays `line` as the engine (without superko) does: the same
  board and simple-ko point after each move, the same legal points after
  it. Returns the engine's states."""
  states = engine_line(stones, to_play, line)
  got = line_of(impl, stones, to_play, line)
  for i, (s, (b, ko)) in enumerate(zip(states[1:], got)):
    want_b, want_ko = _view(s)
    np.testing.assert_array_equal(b, want_b, err_msg=f"{impl}: move {i}")
    assert ko == want_ko, (impl, i, ko, want_ko)
  n2 = len(stones)
  np.testing.assert_array_equal(
      mask_of(impl, stones, to_play, line),
      np.asarray(states[-1].legal_action_mask[:n2]), err_msg=impl)
  return states


def captured(before, after, mover_sign):
  """The points whose opponent stones a move removed."""
  return set(np.flatnonzero((before == -mover_sign) & (after == 0)).tolist())


# -- Captures ------------------------------------------------------------------

LARGE_GROUP = _stones("""
    OOOX.
    OOOX.
    XX.X.
    ..X..
    .....""")
TWO_CHAINS = _stones("""
    O.OX.
    X.X..
    .....
    .....
    .....""")
C3, B5, A5 = 12, 1, 0


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_captures(impl):
  # C3 takes a chain of six; B5 takes two chains of one at once.
  for stones, move, taken in ((LARGE_GROUP, C3, {0, 1, 2, 5, 6, 7}),
                              (TWO_CHAINS, B5, {0, 2})):
    states = assert_agrees(impl, stones, BLACK, [move])
    after = _view(states[1])[0]
    assert captured(stones, after, 1) == taken
  # White plays inside the captured area: its points are liberties again.
  assert_agrees(impl, LARGE_GROUP, BLACK, [C3, A5])


def test_features_capture_counts_are_the_engines():
  # The capture_size plane counts with chain bit sets (`move_outcomes`),
  # not by playing: at every legal point it equals the engine's count.
  for stones in (LARGE_GROUP, TWO_CHAINS):
    game = _game(5)
    s = game.from_board(stones)
    count = np.asarray(jax.jit(go_features.move_outcomes,
                               static_argnums=0)(game, s)[0])
    for a in np.flatnonzero(np.asarray(s.legal_action_mask[:25])):
      after = _view(_engine_step(game)(s, jnp.int32(a)))[0]
      assert count[a] == len(captured(stones, after, 1)), a


# -- Suicide -------------------------------------------------------------------

CHAIN_SUICIDE = _stones("""
    .XO..
    OO...
    .....
    .....
    .....""")
STONE_SUICIDE = _stones("""
    .O...
    O....
    .....
    .....
    .....""")
# A5 has no liberty of its own but captures B5: legal.
TAKES_TO_LIVE = _stones("""
    .OX..
    OX...
    .....
    .....
    .....""")


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_suicide(impl):
  for stones in (CHAIN_SUICIDE, STONE_SUICIDE):
    # Black's A5 joins no chain with a liberty and captures nothing.
    assert not assert_agrees(impl, stones, BLACK, [])[0].legal_action_mask[A5]
    with pytest.raises(Illegal):
      line_of(impl, stones, BLACK, [A5])
  states = assert_agrees(impl, TAKES_TO_LIVE, BLACK, [A5])
  assert captured(TAKES_TO_LIVE, _view(states[1])[0], 1) == {B5}


# -- Simple ko -----------------------------------------------------------------

E1, D1 = 24, 23


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_simple_ko(impl):
  # Black's A5 takes B5 and lights a ko there: White may not retake at
  # once, but may after a threat and its answer.
  states = assert_agrees(impl, TAKES_TO_LIVE, BLACK, [A5])
  assert int(states[1].ko) == B5
  with pytest.raises(Illegal) as e:
    line_of(impl, TAKES_TO_LIVE, BLACK, [A5, B5])
  assert e.value.index == 1
  states = assert_agrees(impl, TAKES_TO_LIVE, BLACK, [A5, E1, D1, B5])
  assert int(states[-1].ko) == A5  # the retake lights the ko the other way


SNAPBACK = _stones("""
    ..X..
    OOX..
    XX...
    .....
    .....""")


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_snapback_is_no_ko(impl):
  # White takes the thrown-in stone; Black retakes three at once.
  states = assert_agrees(impl, SNAPBACK, BLACK, [A5, B5, A5])
  assert int(states[2].ko) == -1
  assert captured(_view(states[2])[0], _view(states[3])[0], 1) == {1, 5, 6}


# -- Positional superko --------------------------------------------------------

C1 = 22


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_positional_superko_is_the_engines_alone(impl):
  # After SUPERKO_GAME on 5x5, C1 is legal by simple ko but recreates an
  # earlier whole-board position: the engine with superko bans it. None of
  # the four implements superko: each plays C1 as the engine without
  # superko does, and so recreates that position.
  empty = np.zeros(25, np.int8)
  states = engine_line(empty, BLACK, SUPERKO_GAME, _game(5, superko=True))
  assert not bool(states[-1].legal_action_mask[C1])
  simple = assert_agrees(impl, empty, BLACK, SUPERKO_GAME + [C1])
  repeat = _view(simple[-1])[0]
  assert any(np.array_equal(_view(s)[0], repeat) for s in simple[:-2])
  assert np.array_equal(line_of(impl, empty, BLACK, SUPERKO_GAME + [C1])[-1][0],
                        repeat)


def test_features_per_move_planes_take_the_engines_superko_mask():
  # The per-move planes and sensibleness are masked by the engine's own
  # `legal_action_mask`: under superko, C1 gets none of them.
  game = _game(5, superko=True)
  s = engine_line(np.zeros(25, np.int8), BLACK, SUPERKO_GAME, game)[-1]
  names = ("capture_size", "liberties_after_move", "sensibleness")
  planes = np.asarray(go_features.alphago_features(game, s, names)).reshape(
      25, -1)
  legal = np.asarray(s.legal_action_mask[:25])
  assert not planes[C1].any()
  np.testing.assert_array_equal(planes[:, -1] > 0,
                                legal & ~np.asarray(go_features.own_eyes(
                                    game, s)))
  # (The ladder planes are masked the same way: tests/test_ladders.py,
  # test_a_move_banned_by_superko_starts_no_ladder.)


# -- Eyes ----------------------------------------------------------------------

# Black's own eyes: A5 (corner) and B4 (middle, no White diagonal). C5 is a
# false eye (on the edge with White's D4 diagonal to it): it may be filled.
EYES = _stones("""
    .X.X.
    X.XO.
    XX...
    .....
    .....""")
B4, C5, E5 = 6, 2, 4


def test_eyes_are_legal_for_the_engine_and_never_filled_by_the_playout():
  game = _game(5)
  s = game.from_board(EYES)
  legal = np.asarray(s.legal_action_mask[:25])
  assert legal[A5] and legal[B4] and legal[C5]
  # The playout's legality is the engine's; its candidates leave out the
  # mover's own eyes, and the features' eye rule is the same rule.
  np.testing.assert_array_equal(playout_mask(s, game), legal)
  own_eyes = _playout(game)[3]
  for player in (BLACK, WHITE):
    t = s.replace(current_player=jnp.int32(player))
    np.testing.assert_array_equal(
        np.asarray(own_eyes(s.board, jnp.int32(player))),
        np.asarray(go_features.own_eyes(game, t)))
  eyes = np.asarray(own_eyes(s.board, jnp.int32(BLACK)))
  assert set(np.flatnonzero(eyes).tolist()) == {A5, B4}
  assert not np.asarray(own_eyes(s.board, jnp.int32(WHITE))).any()
  # The engine fills an own eye; the playout plays anything else instead.
  for eye in (A5, B4):
    engine_line(EYES, BLACK, [eye])
    with pytest.raises(Illegal):
      playout_line(EYES, BLACK, [eye])
  # A false eye is filled as the engine fills it.
  (b, ko), = playout_line(EYES, BLACK, [C5])[0]
  np.testing.assert_array_equal(b, _view(engine_line(EYES, BLACK, [C5])[1])[0])
  # Sensibleness is the engine's mask without the eyes.
  sensible = np.asarray(go_features.alphago_features(
      game, s, ("sensibleness",))).reshape(25)
  np.testing.assert_array_equal(sensible > 0, legal & ~eyes)


@pytest.mark.parametrize("impl", ("features", "ladders", "replay"))
def test_eye_fills_follow_the_engine(impl):
  # Only the playout has an eye rule: the others fill an eye, or refuse a
  # suicide in it, as the engine does.
  assert_agrees(impl, EYES, BLACK, [A5])
  assert_agrees(impl, EYES, WHITE, [E5])


# -- Pass and the end ----------------------------------------------------------

# Black's one chain with two eyes, A5's neighbour B5 and D1.
TWO_EYES = _stones("""
    X.XXX
    XXXXX
    XXXXX
    XXXXX
    XXX.X""")


def test_playout_passes_only_without_a_candidate_and_ends_as_the_engine():
  # Black may fill an eye under the rules but the playout passes instead;
  # White has no legal point (both are suicide) and passes too: the game is
  # over after two passes, with the engine's score.
  game = _game(5)
  s = game.from_board(TWO_EYES)
  assert np.asarray(s.legal_action_mask[:25]).sum() == 2
  pl, step = _playout(game)[:2]
  p = pl.init(jax.random.key(0), s)
  for _ in range(2):
    p = step(p.replace(last_move=jnp.int32(B5)))
    assert int(p.last_move) == 25  # a pass
  assert bool(p.done) and int(p.moves) == 2
  t = _engine_step(game)(_engine_step(game)(s, 25), 25)
  assert bool(t.terminated)
  assert float(pl.score(p.board)) == float(t.score) == 25 - game.komi
  # The replay, like the engine, takes no move after two passes.
  assert_agrees("replay", TWO_EYES, BLACK, [25, 25])
  with pytest.raises(Illegal):
    replay_line(TWO_EYES, BLACK, [25, 25, B5])


def test_playout_ends_at_the_engines_move_cap():
  # The cap counts moves from the start of the game, as the engine's does.
  game = _game(5, max_moves=3)
  line = [C3, 0, 4]
  states = engine_line(LARGE_GROUP, BLACK, line, game)
  pl, step = _playout(game)[:2]
  p = pl.init(jax.random.key(0), states[0])
  for a, s in zip(line, states[1:]):
    p = step(p.replace(last_move=jnp.int32(a)))
    assert int(p.last_move) == a and bool(p.done) == bool(s.terminated)
    np.testing.assert_array_equal(np.sign(p.board), _view(s)[0])
  assert bool(p.done)


# -- Real records ----------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _kgs_games(n):
  _need(KGS)
  path = os.path.join(KGS, "KGS-2017_02-19-525-.tar.gz")
  _need(path)
  games, _ = data.select_games(path, fractions=(1, 0, 0), limit=n)
  return [g for g in games["train"] if not g.setup_black
          and not g.setup_white][:n]


def kgs_playout_line(game, states, line):
  """`(stones, ko)` after each move of `line` by the playout's own step,
  from the engine's `states` (`[T + 1]`). The playout never fills its own
  eye and passes only without a candidate: at such a move it is checked to
  refuse it, and carries on from the engine's position after it."""
  pl, step, legal, own_eyes = _playout(game)
  at = lambda t: jax.tree.map(lambda x: x[t], states)
  p, out = pl.init(jax.random.key(0), at(0)), []
  for t, a in enumerate(line):
    eyes = np.asarray(own_eyes(p.board, p.to_play))
    q = step(p.replace(last_move=jnp.int32(a)))
    if a == game.pass_action or eyes[a % game.num_points]:
      # Refused: another point was played, or a pass only without any
      # candidate left.
      cands = np.asarray(legal(p.board, p.to_play, p.ko)) & ~eyes
      assert int(q.last_move) != a or not cands.any(), (t, a)
      q = pl.init(jax.random.key(0), at(t + 1))
    else:
      assert int(q.last_move) == a, (t, a)
      np.testing.assert_array_equal(q.atari, pl.in_atari(q.board))
    out.append((np.sign(np.asarray(q.board)).astype(np.int8), int(q.ko)))
    p = q
  return out


def test_kgs_records_agree_move_by_move():
  # Every move of a few 19x19 records, through every implementation, as
  # the engine replays records (`sgf.record_to_states`, simple ko); the
  # legal points every 40 plies.
  games = _kgs_games(2)
  assert len(games) == 2
  game = _game(19)
  for record in games:
    first, line, index = sgf.engine_actions(record)
    line = line.tolist()
    _, states = sgf.record_to_states(record)
    n2 = record.size ** 2
    # want[t]: the position before move t, want[t + 1] after it.
    want = [_view(jax.tree.map(lambda x: x[t], states))
            for t in range(len(line) + 1)]
    arrays = positions.replay_positions(record)
    for k, t in enumerate(np.flatnonzero(index >= 0)):
      np.testing.assert_array_equal(arrays["stones"][k], want[t][0])
      assert int(arrays["ko"][k]) == want[t][1], t
    stones = np.zeros(n2, np.int8)
    for impl, got in (
        ("features", features_line(stones, first, line)[0]),
        ("ladders", ladders_line(stones, first, line)[0]),
        ("playout", kgs_playout_line(game, states, line))):
      assert len(got) == len(line), impl
      for t, (b, ko) in enumerate(got):
        np.testing.assert_array_equal(b, want[t + 1][0],
                                      err_msg=f"{impl} {t}")
        assert ko == want[t + 1][1], (impl, t)
    for t in range(0, len(line), 40):
      s = jax.tree.map(lambda x: x[t], states)
      legal = np.asarray(s.legal_action_mask[:n2])
      b, ko = want[t]
      sign = 1 if int(s.current_player) == BLACK else -1
      np.testing.assert_array_equal(playout_mask(s, game), legal)
      np.testing.assert_array_equal(features_mask(s.board, sign, ko), legal)
      np.testing.assert_array_equal(ladders_mask(b, sign, ko), legal)
