"""Our Go engine against GNU Go, move for move.

Random games are played with our engine (`superko=False`: simple ko, no
suicide, GNU Go's default rules) and replayed in GNU Go over GTP. After every
move the two boards must be identical and our legal mask must equal GNU Go's
`all_legal` for the side to move. The games are biased to be long (pass is
rare until few points are left) and to fight kos, and each test asserts that
its games did cover large captures, ko and ko retakes, captures of several
chains at once and single- and multi-stone suicide points, so a pass proves
those rules were exercised.

`superko=True` games are checked the same way against GNU Go's
`--positional-superko`; a constructed triple ko shows the one difference
from GNU Go's default simple ko.

A failure names the board size, seed and the game so far as GTP moves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time

import jax
import numpy as np
import pytest

from alphago_jax.games.go import Go
from alphago_jax.games import vertex as vertex_codec
from alphago_jax import engines

pytestmark = pytest.mark.skipif(
    engines.find_gnugo() is None,
    reason="GNU Go is not installed (apt-get install gnugo); these tests use "
           "it as the rules oracle")

COLOURS = ("black", "white")


@functools.lru_cache(maxsize=None)
def _step(game: Go):
  return jax.jit(game.step)  # One compile per game, reused by every move.


@dataclasses.dataclass
class Coverage:
  """What the checked games exercised."""
  games: int = 0
  moves: int = 0
  passes: int = 0
  captures: int = 0
  largest_capture: int = 0
  multi_chain_captures: int = 0
  ko_positions: int = 0
  ko_retakes: int = 0
  suicide_positions: int = 0
  multi_stone_suicide_positions: int = 0
  superko_positions: int = 0
  suicide_attempts: int = 0
  two_pass_ends: int = 0


def _chains(points: np.ndarray, size: int) -> int:
  """Number of orthogonally connected groups among boolean `points [N²]`."""
  grid = points.reshape(size, size).copy()
  count = 0
  for start in zip(*np.nonzero(grid)):
    if not grid[start]:
      continue
    count += 1
    stack = [start]
    grid[start] = False
    while stack:
      r, c = stack.pop()
      for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= rr < size and 0 <= cc < size and grid[rr, cc]:
          grid[rr, cc] = False
          stack.append((rr, cc))
  return count


def _pick(mask: np.ndarray, rng: np.random.Generator, game: Go,
          retake: int = -1) -> int:
  """A random legal action. Pass is rare until almost no point is legal, so
  boards fill up, eyes get filled and big groups die (and refill, with kos
  and suicide points on the way). A ko the player lost last turn (`retake`)
  is mostly taken back when the rules allow it again, so kos are fought."""
  if retake >= 0 and mask[retake] and rng.random() < 0.7:
    return retake
  points = np.flatnonzero(mask[:game.num_points])
  p_pass = 0.002 if len(points) > max(2, game.num_points // 30) else 0.5
  if len(points) == 0 or rng.random() < p_pass:
    return game.pass_action
  return int(rng.choice(points))


def _vertices_to_board(game: Go, black: str, white: str) -> np.ndarray:
  board = np.zeros(game.num_points, dtype=np.int8)
  for text, sign in ((black, 1), (white, -1)):
    for v in text.split():
      board[game.vertex_to_action(v)] = sign
  return board


def _ascii(game: Go, stones: np.ndarray) -> str:
  rows = stones.reshape(game.size, game.size)
  return "\n".join("".join(".XO"[v] for v in row) for row in rows)


def _has_neighbour(points: np.ndarray, size: int) -> np.ndarray:
  """bool `[N²]`: whether a point is orthogonally next to one of `points`."""
  g = np.pad(points.reshape(size, size), 1)
  return (g[:-2, 1:-1] | g[2:, 1:-1] | g[1:-1, :-2] | g[1:-1, 2:]).reshape(-1)


def play_checked_game(game: Go, engine: engines.GTPClient, seed: int,
                      max_plies: int, cov: Coverage,
                      simple_ko_engine: engines.GTPClient | None = None) -> None:
  """Plays one random game with our engine, replays it in GNU Go (`engine`,
  same rules), and asserts after every move that boards and legal moves
  agree. With `simple_ko_engine` (GNU Go without superko, for a superko
  `game`), also counts the moves only superko forbids."""
  n2 = game.num_points
  rng = np.random.default_rng(seed)
  step = _step(game)
  clients = [engine] + ([simple_ko_engine] if simple_ko_engine else [])
  for e in clients:
    e.send_many([f"boardsize {game.size}", "clear_board"])
  state = game.init(jax.random.PRNGKey(0))
  mask, board, player = jax.device_get(
      (state.legal_action_mask, state.board, state.current_player))
  stones = np.sign(board).astype(np.int8)
  ko = -1
  pending_ko = (-1, -1)  # (ko point, the ply its loser may retake it)
  record = []
  attempted_suicide = False

  def where():
    return (f"{game.size}x{game.size} seed {seed}, after {len(record)} moves: "
            f"{' '.join(record)}")

  for ply in range(max_plies):
    colour, other = COLOURS[player], COLOURS[1 - player]
    # Suicide points (illegal empty points other than the ko point): once a
    # game, try one in both engines; each must refuse it.
    suicide = np.flatnonzero((stones == 0) & ~mask[:n2]
                             & (np.arange(n2) != ko))
    if len(suicide) and not attempted_suicide:
      attempted_suicide = True
      point = game.action_to_vertex(int(suicide[0]))
      with pytest.raises(ValueError, match="illegal"):
        game.step(state, int(suicide[0]))
      with pytest.raises(engines.GTPError, match="illegal"):
        engine.send(f"play {colour} {point}")
      cov.suicide_attempts += 1

    # The ko point this player could not retake last turn.
    retake = pending_ko[0] if pending_ko[1] == ply else -1
    action = _pick(mask, rng, game, retake)
    vertex = game.action_to_vertex(action)
    record.append(f"{colour[0].upper()} {vertex}")
    state = step(state, action)
    mask, board, player, ko, done = jax.device_get(
        (state.legal_action_mask, state.board, state.current_player,
         state.ko, state.terminated))
    try:
      _, black, white, legal = engine.send_many(
          [f"play {colour} {vertex}", "list_stones black",
           "list_stones white", f"all_legal {other}"])
      if simple_ko_engine:
        _, simple_legal = simple_ko_engine.send_many(
            [f"play {colour} {vertex}", f"all_legal {other}"])
    except engines.GTPError as e:
      pytest.fail(f"GNU Go refused our legal move: {e}; {where()}")

    before, stones = stones, np.sign(board).astype(np.int8)
    theirs = _vertices_to_board(game, black, white)
    assert np.array_equal(stones, theirs), (
        f"boards differ; {where()}\nours:\n{_ascii(game, stones)}\n"
        f"GNU Go:\n{_ascii(game, theirs)}")
    if not done:
      ours = {game.action_to_vertex(a) for a in np.flatnonzero(mask[:n2])}
      gnu = {vertex_codec.normalize_vertex(v) for v in legal.split()}
      assert ours == gnu, (
          f"legal moves differ for {other}; {where()}\n"
          f"only ours: {sorted(ours - gnu)}, only GNU Go: {sorted(gnu - ours)}"
          f"\nko point: {ko}\n{_ascii(game, stones)}")
      assert mask[game.pass_action]
      if simple_ko_engine:
        only_simple = set(simple_legal.split()) - gnu
        assert not gnu - set(simple_legal.split()), where()
        cov.superko_positions += bool(only_simple)

    # Coverage bookkeeping.
    cov.moves += 1
    if action == game.pass_action:
      cov.passes += 1
    sign = 1 if COLOURS.index(colour) == 0 else -1
    taken = (before == -sign) & (stones == 0)
    if taken.any():
      cov.captures += 1
      cov.largest_capture = max(cov.largest_capture, int(taken.sum()))
      if _chains(taken, game.size) > 1:
        cov.multi_chain_captures += 1
    if action == retake and taken.any():
      cov.ko_retakes += 1
    if ko >= 0:
      cov.ko_positions += 1
      # The loser of the ko is barred at ply+1, may retake at ply+3.
      pending_ko = (int(ko), ply + 3)
    illegal = (stones == 0) & ~mask[:n2] & (np.arange(n2) != ko)
    if not done and illegal.any():
      cov.suicide_positions += 1
      # A suicide that would kill a chain, not just the stone played.
      own = stones == (1 if player == 0 else -1)
      cov.multi_stone_suicide_positions += bool(
          (illegal & _has_neighbour(own, game.size)).any())
    if done:
      cov.two_pass_ends += int(state.passes >= 2)
      break
  cov.games += 1


def run_oracle(size: int, num_games: int, max_plies: int, seed: int = 0,
               superko: bool = False) -> Coverage:
  """Checks `num_games` random games; with `superko`, against GNU Go's
  `--positional-superko` (a second, simple-ko GNU Go counts the moves only
  superko forbids)."""
  if superko and max_plies > 450:
    # GNU Go folds its move history (500 moves) into the initial position,
    # forgetting older positions for superko.
    raise ValueError(f"superko games are checkable for 450 plies at most, "
                     f"got {max_plies}")
  # Our move cap is set past max_plies: only two passes or max_plies end a
  # game, and GNU Go has no cap.
  game = Go(size=size, komi=7.5, superko=superko, max_moves=max_plies + 1)
  cov = Coverage()
  start = time.time()
  args = ("--positional-superko",) if superko else ()
  with engines.gnugo(level=0, extra_args=args) as engine, \
       (engines.gnugo(level=0) if superko else contextlib.nullcontext()) as simple:
    for g in range(num_games):
      play_checked_game(game, engine, seed=seed * 10_000 + size * 100 + g,
                        max_plies=max_plies, cov=cov, simple_ko_engine=simple)
  print(f"\n{size}x{size}{' superko' * superko}: {cov} in "
        f"{time.time() - start:.1f} s")
  return cov


def assert_covered(cov: Coverage, *, two_pass_ends: bool) -> None:
  assert cov.largest_capture >= 5, cov
  assert cov.ko_positions > 0, cov
  assert cov.ko_retakes > 0, cov
  assert cov.multi_chain_captures > 0, cov
  assert cov.suicide_positions > 0, cov
  assert cov.suicide_attempts > 0, cov
  assert cov.multi_stone_suicide_positions > 0, cov
  if two_pass_ends:
    assert cov.two_pass_ends == cov.games, cov


# (size, games, plies per game at most). 5x5 games run to two passes.
DEFAULT = [(5, 60, 2000), (9, 16, 600), (19, 3, 1200)]
SLOW = [(5, 400, 2000), (7, 60, 1000), (9, 100, 1000), (13, 12, 1500),
        (19, 12, 2000)]


@pytest.mark.parametrize("size,num_games,max_plies", DEFAULT)
def test_random_games_agree_with_gnugo(size, num_games, max_plies):
  cov = run_oracle(size, num_games, max_plies)
  assert_covered(cov, two_pass_ends=size == 5)


@pytest.mark.slow
@pytest.mark.parametrize("size,num_games,max_plies", SLOW)
def test_many_random_games_agree_with_gnugo(size, num_games, max_plies):
  cov = run_oracle(size, num_games, max_plies, seed=1)
  assert_covered(cov, two_pass_ends=size == 5)


def test_random_superko_games_agree_with_gnugo_superko():
  """superko=True against GNU Go --positional-superko, on 5x5 where random
  games repeat positions now and then."""
  cov = run_oracle(5, 60, 450, superko=True)
  assert_covered(cov, two_pass_ends=True)
  assert cov.superko_positions > 0, cov


@pytest.mark.slow
def test_many_random_superko_games_agree_with_gnugo_superko():
  cov = run_oracle(5, 500, 450, seed=1, superko=True)
  assert_covered(cov, two_pass_ends=True)
  assert cov.superko_positions > 0, cov


# -- Superko: the one rule where we differ from GNU Go's default ------------

# A triple ko on 9x9. Black can take the kos at D8 (by E8) and D2 (by E2),
# White the one at E5 (by D5). Taking in turn, B E8, W D5, B E2, W D8, B E5,
# and W's D2 would bring back this very position: simple ko allows it (the
# last capture was at D5, not D2), positional superko does not.
TRIPLE_KO = """
..XXOO...
..XO.O...
..XXOO...
..XXOO...
..X.XO...
..XXOO...
..XXOO...
..XO.O...
..XXOO...
"""
CYCLE = ["E8", "D5", "E2", "D8", "E5"]


def _triple_ko_setup(game: Go):
  """The TRIPLE_KO stones `[N²]` and a move list that sets them up from the
  empty board, Black and White in turn (a colour with no stones left passes;
  never two passes in a row), ending with Black to move. Setting up by
  moves reuses the compiled step and gives GNU Go the same history."""
  rows = TRIPLE_KO.split()
  stones = np.array([{"X": 1, "O": -1, ".": 0}[ch] for r in rows for ch in r],
                    dtype=np.int8)
  black, white = ([game.action_to_vertex(a) for a in np.flatnonzero(
      stones == s)] for s in (1, -1))
  moves = []
  while black or white:
    moves += [black.pop(0) if black else "pass",
              white.pop(0) if white else "pass"]
  return stones, moves


def _play(game: Go, state, vertices):
  """Plays GTP `vertices` in turn with the compiled step, each one legal."""
  for v in vertices:
    a = game.vertex_to_action(v)
    assert state.legal_action_mask[a], f"{v} should be legal"
    state = _step(game)(state, a)
  return state


@pytest.mark.parametrize("superko", [False, True])
def test_triple_ko_superko_differs_from_simple_ko(superko):
  game = Go(size=9, superko=superko)
  start, setup = _triple_ko_setup(game)
  state = _play(game, game.init(jax.random.PRNGKey(0)), setup)
  assert np.array_equal(np.asarray(game.stones(state)), start)
  assert int(state.current_player) == 0
  state = _play(game, state, CYCLE)
  d2 = game.vertex_to_action("D2")
  mask = np.asarray(state.legal_action_mask)
  assert int(state.ko) != d2  # Simple ko does not forbid D2...
  assert bool(mask[d2]) == (not superko)  # ...only positional superko does.

  # GNU Go agrees on both rule sets: D2 legal under its default simple ko,
  # illegal with --positional-superko; all other moves as ours.
  args = ("--positional-superko",) if superko else ()
  with engines.gnugo(level=0, extra_args=args) as engine:
    engine.send_many([f"boardsize {game.size}", "clear_board"])
    engine.send_many(f"play {COLOURS[i % 2]} {v}"
                     for i, v in enumerate(setup + CYCLE))
    assert engine.is_legal("white", "D2") == (not superko)
    legal = {game.vertex_to_action(v) for v in engine.all_legal("white")}
    assert legal == set(np.flatnonzero(mask[:game.num_points]))
    if not superko:
      # Playing it in both engines brings back the starting position.
      engine.play("white", "D2")
      black, white = engine.send_many(["list_stones black",
                                       "list_stones white"])
      assert np.array_equal(_vertices_to_board(game, black, white), start)
      state = _play(game, state, ["D2"])
      assert np.array_equal(np.asarray(game.stones(state)), start)


def test_superko_only_removes_the_repeating_move():
  """With superko on, the legal mask is simple ko's minus exactly D2."""
  masks = []
  for superko in (False, True):
    game = Go(size=9, superko=superko)
    _, setup = _triple_ko_setup(game)
    state = _play(game, game.init(jax.random.PRNGKey(0)), setup + CYCLE)
    masks.append(np.asarray(state.legal_action_mask))
  diff = np.flatnonzero(masks[0] != masks[1])
  assert [game.action_to_vertex(a) for a in diff] == ["D2"]
  assert masks[0][diff].all()
