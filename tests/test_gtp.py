"""The GTP client (`gtp.GTPClient`): against GNU Go, and against a scripted fake engine for the
failure modes a real engine rarely shows (garbage, death, silence)."""

from __future__ import annotations

import functools
import sys
import textwrap
import time

import jax
import numpy as np
import pytest

from alphago_jax.engines import gnugo_player
from alphago_jax.games.go import Go
from alphago_jax.games import vertex as vertex_codec
from alphago_jax import engines

GAME = Go(size=9, komi=6.5)


@functools.lru_cache(maxsize=None)
def _step(game):
  return jax.jit(game.step)  # Compiled once, shared by the tests.


needs_gnugo = pytest.mark.skipif(
    engines.find_gnugo() is None,
    reason="GNU Go is not installed (apt-get install gnugo)")

# A fake engine: answers every command with an empty success, except the
# scripted misbehaviours below.
FAKE = textwrap.dedent("""
    import sys, time
    for line in sys.stdin:
        cid, _, cmd = line.strip().partition(" ")
        if cmd == "garbage":
            print("hello there\\n", flush=True)
        elif cmd == "die":
            print("fake engine: dying", file=sys.stderr, flush=True)
            sys.exit(3)
        elif cmd == "sleep":
            time.sleep(30)
        elif cmd == "noid":
            print("= fine\\n", flush=True)
        elif cmd == "wrongid":
            print("=999 x\\n", flush=True)
        elif cmd == "multi":
            print(f"={cid} first\\r\\nsecond\\tline\\n", flush=True)
        elif cmd.startswith("genmove"):
            print(f"={cid} resign\\n", flush=True)
        elif cmd == "fail":
            print(f"?{cid} nope\\n", flush=True)
        elif cmd == "quit" and "--deaf" not in sys.argv:
            print(f"={cid}\\n", flush=True)
            break
        elif cmd != "quit":
            print(f"={cid}\\n", flush=True)
""")


@pytest.fixture
def fake(tmp_path):
  script = tmp_path / "fake_engine.py"
  script.write_text(FAKE)

  # A generous answer timeout: a loaded 2-core machine can take seconds to
  # start a Python process; only the timeout test wants it short.
  def make(*args, timeout=120.0):
    return engines.GTPClient([sys.executable, str(script), *args], timeout=timeout)
  return make


# -- Protocol, against the fake engine ----------------------------------------

def test_success_and_multiline_answers(fake):
  with fake() as e:
    assert e.send("boardsize 9") == ""
    assert e.send("multi") == "first\nsecond line"  # CR dropped, tab -> space
    assert e.send_many(["a", "multi", "b"]) == ["", "first\nsecond line", ""]


def test_failure_raises_gtp_error_and_engine_stays_usable(fake):
  with fake() as e:
    with pytest.raises(engines.GTPError, match="'fail' failed: nope") as info:
      e.send("fail")
    assert (info.value.command, info.value.message) == ("fail", "nope")
    # A failure in a batch is raised after all answers are read: in step.
    with pytest.raises(engines.GTPError, match="fail"):
      e.send_many(["x", "fail", "multi"])
    assert e.send("multi") == "first\nsecond line"


def test_malformed_answer(fake):
  with fake() as e:
    with pytest.raises(engines.GTPConnectionError, match="malformed answer"):
      e.send("garbage")
    with pytest.raises(engines.GTPConnectionError, match="unusable"):
      e.send("name")


def test_answer_ids(fake):
  with fake() as e:
    assert e.send("noid") == "fine"  # Tolerated: nothing is ambiguous.
    with pytest.raises(engines.GTPConnectionError, match="out of step"):
      e.send("wrongid")


def test_dead_engine(fake):
  with fake() as e:
    with pytest.raises(engines.GTPConnectionError,
                       match=r"exited \(status 3\)(.|\n)*fake engine: dying"):
      e.send("die")
    assert not e.alive
    with pytest.raises(engines.GTPConnectionError):
      e.send("name")


def test_missing_binary():
  with pytest.raises(engines.GTPConnectionError, match="cannot start"):
    engines.GTPClient(["/nonexistent/engine"])


def test_timeout_and_close_never_hang(fake):
  e = fake("--deaf", timeout=0.5)
  start = time.monotonic()
  with pytest.raises(engines.GTPTimeout, match="'sleep' in time"):
    e.send("sleep")
  e.close(timeout=0.5)  # The engine ignores quit; it gets killed.
  e.close(timeout=0.5)  # Twice is fine.
  assert not e.alive
  # A hang would be minutes; this bound leaves a loaded machine room.
  assert time.monotonic() - start < 60


def test_bad_commands_and_arguments(fake):
  with fake() as e:
    for bad in ("", "   ", "play b D4\nquit", 3):
      with pytest.raises(ValueError, match="one non-empty line"):
        e.send(bad)
    for v in ("I5", "D0", "Z99", "D", "44", "", "pass1", None):
      with pytest.raises(ValueError, match="vertex"):
        e.play("b", v)
    for c in ("red", "", 2, True):
      with pytest.raises(ValueError, match="colour"):
        e.play(c, "D4")
    assert e.send("name") == ""  # Nothing reached the engine.


def test_gnugo_factory_errors(monkeypatch):
  with pytest.raises(ValueError, match="level"):
    engines.gnugo(level=11)
  monkeypatch.setattr(gnugo_player, "find_gnugo", lambda: None)
  with pytest.raises(engines.GnuGoNotFoundError, match="apt-get install gnugo"):
    engines.gnugo()


def test_player_maps_resign(fake, monkeypatch):
  monkeypatch.setattr(gnugo_player, "gnugo", lambda *a, **k: fake())
  game = Go(size=9)
  with engines.GnuGoPlayer(game, level=0) as player:
    player.play(game.vertex_to_action("E5"))
    assert player.genmove() == engines.RESIGN
    assert player.to_play == 1  # A resignation is not a move.


# -- Against GNU Go -----------------------------------------------------------

@needs_gnugo
def test_gnugo_errors():
  with engines.gnugo(level=0) as e:
    assert e.name() == "GNU Go"
    with pytest.raises(engines.GTPError, match="'frobnicate' failed: unknown "
                                           "command"):
      e.send("frobnicate")
    e.boardsize(9)
    e.clear_board()
    # Well-formed for GTP, but off the 9x9 board.
    with pytest.raises(engines.GTPError, match="invalid color or coordinate"):
      e.play("black", "T19")
    e.play("black", "E5")
    with pytest.raises(engines.GTPError, match="illegal move"):
      e.play("white", "e5")
    assert not e.is_legal("white", "E5")
    assert e.is_legal("white", "D5")
    assert e.list_stones("b") == {"E5"}
    assert e.list_stones("w") == set()
    assert e.all_legal("w") == {Go(size=9).action_to_vertex(a)
                                for a in range(81)} - {"E5"}
    with pytest.raises(engines.GTPError, match="unacceptable size"):
      e.boardsize(99)


@needs_gnugo
def test_gnugo_genmove_is_legal():
  game = Go(size=9)
  with engines.gnugo(level=0, seed=1) as e:
    e.boardsize(9)
    e.clear_board()
    for i in range(6):
      colour = ("black", "white")[i % 2]
      legal = e.all_legal(colour) | {"PASS"}
      move = e.genmove(colour)
      assert move in legal
      assert move == "PASS" or move in e.list_stones(colour)
      game.vertex_to_action(move)  # Parses as one of our actions.


@needs_gnugo
def test_gnugo_player_replays_our_game():
  game = GAME
  step = _step(game)
  state = game.init(jax.random.PRNGKey(0))
  rng = np.random.default_rng(0)
  actions = []
  with engines.GnuGoPlayer(game, level=0, seed=0) as player:
    for i in range(30):
      if i % 3 == 2:  # Every third move is GNU Go's own.
        action = player.genmove()
        assert action != engines.RESIGN
        assert state.legal_action_mask[action]
      else:
        action = int(rng.choice(np.flatnonzero(state.legal_action_mask[:-1])))
        player.play(action)
      state = step(state, action)
      actions.append(action)
      assert player.to_play == int(state.current_player)
      np.testing.assert_array_equal(player.stones(), game.stones(state))
      np.testing.assert_array_equal(player.legal_mask(),
                                    state.legal_action_mask)
    player.reset()
    assert player.to_play == 0
    assert not player.stones().any()
    player.play(game.pass_action)  # Pass is a move too.
    assert player.to_play == 1
    # A whole game at once lands in the same position.
    player.replay(actions)
    assert player.to_play == int(state.current_player)
    np.testing.assert_array_equal(player.stones(), game.stones(state))


@needs_gnugo
def test_gnugo_player_rejects_illegal_moves():
  game = Go(size=9)
  with engines.GnuGoPlayer(game, level=0) as player:
    player.play(game.vertex_to_action("E5"))
    with pytest.raises(engines.GTPError, match="illegal move"):
      player.play(game.vertex_to_action("E5"))
    with pytest.raises(ValueError, match="out of range"):
      player.play(game.num_actions)
    assert player.to_play == 1
    with pytest.raises(engines.GTPError, match="illegal move"):
      player.replay([40, 41, 40])
    assert player.to_play == 0 and not player.stones().any()


@needs_gnugo
def test_vertex_orientation_matches_gnugo():
  """Our action numbering (row 0 at the top) is GNU Go's board picture, not
  its mirror image; the rules oracle alone could not tell them apart."""
  game = GAME
  state = game.init(jax.random.PRNGKey(0))
  with engines.gnugo(level=0) as e:
    e.boardsize(9)
    e.clear_board()
    for i, action in enumerate((1, 9 * 8, 9 * 3 + 7)):  # B9, A1, H6
      e.play(("black", "white")[i % 2], game.action_to_vertex(action))
      state = _step(game)(state, action)
    picture = e.send("showboard").splitlines()
  # showboard rows: "9 . X . ...  9", top row first, "+" marks star points.
  rows = [line.split()[1:10] for line in picture
          if line.strip()[:1].isdigit()]
  assert len(rows) == 9
  theirs = "\n".join("".join(".XO"["XO".find(ch) + 1] for ch in row)
                     for row in rows)
  assert theirs == game.to_ascii(state)
  assert theirs.splitlines()[0] == ".X......."
  assert theirs.splitlines()[-1] == "O........"


# -- The vertex codec -----------------------------------------------------------

@pytest.mark.parametrize("size,vertex,action", [
    (9, "A9", 0), (9, "J1", 80), (9, "a1", 72), (9, "E5", 40),
    (9, "pass", 81), (9, "PASS", 81), (19, "T19", 18), (19, "A1", 342),
    (19, "Q16", 3 * 19 + 15), (25, "Z25", 24), (25, "Z1", 624),
    (25, "pass", 625), (5, "E5", 4)])
def test_vertex_codec_by_hand(size, vertex, action):
  assert vertex_codec.vertex_to_action(vertex, size) == action
  back = vertex_codec.action_to_vertex(action, size)
  assert back == ("pass" if vertex.lower() == "pass" else vertex.upper())


def test_vertex_codec_round_trip_and_go_delegates():
  for size in range(1, 26):
    vertices = [vertex_codec.action_to_vertex(a, size) for a in range(size**2 + 1)]
    assert len(set(vertices)) == size**2 + 1
    assert not any("I" in v for v in vertices)
    assert [vertex_codec.vertex_to_action(v, size) for v in vertices] == list(
        range(size**2 + 1))
  g = Go(size=13)
  for a in range(g.num_actions):
    assert g.action_to_vertex(a) == vertex_codec.action_to_vertex(a, 13)
    assert g.vertex_to_action(g.action_to_vertex(a).lower()) == a


def test_vertex_codec_rejects_bad_input():
  for bad in ("I5", "Z26", "A0", "A01", "D", "44", "", "A 1", "resign",
              None, 5):
    with pytest.raises(ValueError, match="vertex"):
      vertex_codec.vertex_to_action(bad, 25)
    with pytest.raises(ValueError, match="vertex"):
      vertex_codec.normalize_vertex(bad)
  assert vertex_codec.normalize_vertex(" d4 ") == "D4"
  with pytest.raises(ValueError, match="off the 9x9 board"):
    vertex_codec.vertex_to_action("K5", 9)
  with pytest.raises(ValueError, match="off the 9x9 board"):
    vertex_codec.vertex_to_action("A10", 9)
  for action in (-1, 82, True):
    with pytest.raises(ValueError, match="action"):
      vertex_codec.action_to_vertex(action, 9)
  for size in (0, 26, 9.0):
    with pytest.raises(ValueError, match="board size"):
      vertex_codec.vertex_to_action("A1", size)
