"""Our GTP engine: every command against hand-worked positions (with a fake
player, so the protocol is tested apart from any network), a fuzz test of
thousands of random and mutated command lines, the time policy, the real
process (`python -m alphago_jax.gtp`), and refereed games against GNU Go
with every move checked by our rules engine."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alphago_jax import gtp
from alphago_jax.games.go import Go
from alphago_jax.gtp import engine as engine_lib
from alphago_jax.zoo import presets
from alphago_jax.zoo.players import (Candidate, Decision, SearchPlayer,
                                     simulation_ladder)
from alphago_jax.evaluation.referee import referee_game
from helpers import ROOT, cpu_env
from profiles import examples
from alphago_jax import zoo
from alphago_jax import engines
from alphago_jax.games import vertex as vertex_codec
from alphago_jax.zoo import checkpoints as zoo_checkpoints

GAME9 = Go(size=9)
GAME5 = Go(size=5)
STEP9 = jax.jit(GAME9.step)

needs_gnugo = pytest.mark.skipif(
    engines.find_gnugo() is None,
    reason="GNU Go is not installed (apt-get install gnugo)")
needs_go9 = pytest.mark.skipif(
    presets.get_preset("az-9x9").directory() is None,
    reason="the committed 9x9 network (checkpoints/go9) is missing")


class FakePlayer:
  """Plays the first legal point (row by row from A9), passing when none is
  left; records the time budgets it is given."""

  name = "fake"

  def __init__(self, game=GAME9, *, action=None, resign=False, fail=False):
    self.game = game
    self.budgets = []
    self.action = action  # Forced action (e.g. an illegal one).
    self.resign = resign
    self.fail = fail

  def prepare(self, game, *, timed=False):
    pass

  def _decision(self, state, visits):
    legal = np.flatnonzero(np.asarray(state.legal_action_mask)[:-1])
    action = self.action if self.action is not None else (
        int(legal[0]) if len(legal) else self.game.pass_action)
    second = int(legal[1]) if len(legal) > 1 else action
    return Decision(
        action=action, resign=self.resign, winrate=0.6, simulations=visits,
        candidates=(Candidate(action, visits, 0.6, 0.5, (action, second)),
                    Candidate(second, 1, None, 0.25, (second,))))

  def genmove(self, game, state, key, *, seconds=None):
    if self.fail:
      raise RuntimeError("the fake player broke")
    self.budgets.append(seconds)
    return self._decision(state, 3)

  def analyses(self, game, state, key):
    yield self._decision(state, 1)
    yield self._decision(state, 7)


def make(player=None, **kw):
  logs = []
  e = gtp.GTPEngine(player or FakePlayer(), log=logs.append, **kw)
  e.logs = logs
  return e


ANSWER = re.compile(r"([=?])([0-9]*)(?: (.*))?")


def check_answer(text, cid=""):
  """A GTP answer: `=id ...` or `?id ...`, lines without blank ones, one
  empty line at the end. Returns (ok, text)."""
  assert text.endswith("\n\n"), repr(text)
  body = text[:-2]
  assert "\n\n" not in body, repr(text)
  first, *rest = body.split("\n")
  m = ANSWER.fullmatch(first)
  assert m, repr(text)
  assert m.group(2) == cid, repr(text)
  return m.group(1) == "=", "\n".join([m.group(3) or ""] + rest).strip()


def ok(e, line, cid=""):
  good, text = check_answer(e.handle(line), cid)
  assert good, f"{line!r} failed: {text}"
  return text


def fails(e, line, cid=""):
  good, text = check_answer(e.handle(line), cid)
  assert not good, f"{line!r} succeeded: {text}"
  return text


def board(e):
  """showboard's rows, top first, as strings of . X O."""
  rows = [l.split()[1:-1] for l in ok(e, "showboard").splitlines()
          if re.match(r"\s*\d+ ", l)]
  return ["".join(r) for r in rows]


# -- The protocol -------------------------------------------------------------

def test_identity_and_command_list():
  e = make()
  assert ok(e, "protocol_version") == "2"
  assert ok(e, "name") == "alphago-jax"
  assert "fake" in ok(e, "version")
  listed = ok(e, "list_commands").split("\n")
  required = {"protocol_version", "name", "version", "known_command",
              "list_commands", "boardsize", "clear_board", "komi", "play",
              "genmove", "undo", "showboard", "final_score", "time_settings",
              "time_left", "quit", "lz-analyze", "lz-genmove_analyze",
              "final_status_list", "fixed_handicap", "place_free_handicap",
              "set_free_handicap", "loadsgf", "printsgf", "kata-analyze",
              "kata-genmove_analyze"}
  assert required <= set(listed)
  for c in listed:
    assert ok(e, f"known_command {c}") == "true"
  assert ok(e, "known_command frobnicate") == "false"
  assert fails(e, "frobnicate") == "unknown command"
  assert fails(e, "name extra") .startswith("syntax error")


def lizzie_accepts(version_line):
  """Lizzie 0.7's check of a `version` answer (Leelaz.parseLine): the word
  after `=id`, split on '.', must have an integer >= 15 second. Otherwise
  its engine reader shows a modal dialog while holding the lock its board
  painter waits for, and the whole GUI hangs (seen under Xvfb with
  Lizzie 0.7.4; docs/gui.md); a word without a '.' kills the reader."""
  words = version_line.strip().split(" ")
  parts = words[1].split(".") if len(words) > 1 else []
  return len(parts) > 1 and parts[1].isdigit() and int(parts[1]) >= 15


def test_version_answer_can_satisfy_lizzie():
  default = make().handle("2 version").split("\n")[0]
  assert default.startswith("=2 ") and default.endswith("(fake)")
  assert not lizzie_accepts(default)  # Our own version: 0.1.x.
  e = make(version="0.17")
  line = e.handle("2 version").split("\n")[0]
  assert line == "=2 0.17" and lizzie_accepts(line)
  assert ok(e, "name") == "alphago-jax"  # Only the version changes.
  for bad in ["", " ", "0.17 # comment", "0.17\nx", "0.\x0017"]:
    with pytest.raises(ValueError, match="version"):
      make(version=bad)
  assert gtp.main(["--gtp-version", "0.17 #"]) == 2


def test_ids_comments_and_control_characters():
  e = make()
  assert check_answer(e.handle("7 protocol_version"), "7") == (True, "2")
  assert check_answer(e.handle("12 frobnicate"), "12") == (
      False, "unknown command")
  assert check_answer(e.handle("3 play red D4"), "3")[0] is False
  # GTP 2 preprocessing: comments cut, tabs are spaces, CR and other
  # control characters dropped, empty lines get no answer.
  for silent in ("", "   ", "# a comment", "\t# tab then comment", "\r\n"):
    assert e.handle(silent) is None
  assert check_answer(e.handle("5\tname # who?\r"), "5") == (True,
                                                              "alphago-jax")
  assert check_answer(e.handle("na\x01me\x7f"), "") == (True, "alphago-jax")
  # GTP's white space is spaces and tabs alone: other Unicode spaces make a
  # command (which a controller waits an answer for), not an empty line.
  assert fails(e, "\u3000") == "unknown command"
  assert check_answer(e.handle("\x85 4 name"), "") == (False,
                                                       "unknown command")
  assert check_answer(e.handle("9"), "9") == (False,
                                              "syntax error (no command)")
  # Not an id: a command name that does not exist.
  assert fails(e, "-1 name") == "unknown command"
  assert fails(e, "\u00b2 name") == "unknown command"  # Not ASCII digits.


def test_capture_showboard_suicide_and_undo():
  e = make()
  empty = ["........."] * 9
  assert board(e) == empty
  for line in ("play b D5", "play w e5", "play black F5", "play white A1",
               "play B E4", "play W A2"):
    ok(e, line)
  before = board(e)
  assert before == ["........."] * 3 + [
      ".........", "...XOX...", "....X....", ".........", "O........",
      "O........"]
  ok(e, "play b E6")  # Takes the white stone at E5.
  after = board(e)
  assert after == ["........."] * 3 + [
      "....X....", "...X.X...", "....X....", ".........", "O........",
      "O........"]
  assert "move 7, White to play" in ok(e, "showboard")
  assert fails(e, "play w E5") == "illegal move"  # Suicide.
  assert fails(e, "play w E6") == "illegal move"  # Occupied.
  assert board(e) == after  # A refused move changes nothing.
  ok(e, "undo")
  assert board(e) == before
  assert "move 6, Black to play" in ok(e, "showboard")
  for _ in range(6):
    ok(e, "undo")
  assert board(e) == empty
  assert fails(e, "undo") == "cannot undo"


def test_simple_ko():
  e = make()
  for line in ("play b D5", "play w F4", "play b E4", "play w F6",
               "play b E6", "play w G5", "play b A9", "play w E5"):
    ok(e, line)
  ok(e, "play b F5")  # Takes E5: a ko.
  assert fails(e, "play w E5") == "illegal move"  # The immediate retake.
  ok(e, "play w A1")
  ok(e, "play b A2")
  ok(e, "play w E5")  # After an exchange elsewhere it is legal.
  assert board(e)[4] == "...XO.O.."  # Row 5: F5 taken back.


def test_malformed_and_off_board_input():
  e = make()
  for line, answer in (
      ("play b Z99", "syntax error (invalid vertex 'Z99')"),
      ("play b I5", "syntax error (invalid vertex 'I5')"),
      ("play b D0", "syntax error (invalid vertex 'D0')"),
      ("play b", "syntax error (expected 2 arguments, got 1)"),
      ("play purple D4", "syntax error (invalid color 'purple')"),
      ("genmove", "syntax error (expected 1 argument, got 0)"),
      ("genmove x", "syntax error (invalid color 'x')"),
      ("boardsize nine", "syntax error (board size 'nine' is not an "
                         "integer)"),
      ("komi lots", "syntax error (komi 'lots' is not a number)"),
      ("komi nan", "syntax error (komi 'nan' out of range)"),
      ("komi inf", "syntax error (komi 'inf' out of range)"),
      ("time_settings 10 0", "syntax error (expected 3 arguments, got 2)"),
      ("time_settings -1 0 0", "syntax error (main time '-1' out of "
                               "range)"),
      ("time_left b 10 -2", "syntax error (stones '-2' out of range)"),
      ("lz-analyze b 10 extra", "syntax error (unexpected 'extra')"),
      ("lz-genmove_analyze", "syntax error (lz-genmove_analyze needs a "
                             "color)")):
    assert fails(e, line) == answer, line
  # Well-formed for GTP (boards go up to 25x25) but off this board.
  assert fails(e, "play b T19") == "illegal move"
  assert fails(e, "play b K5") == "illegal move"
  assert board(e) == ["........."] * 9


def test_boardsize_and_clear_board():
  e = make()
  ok(e, "play b E5")
  assert fails(e, "boardsize 19") == "unacceptable size"
  assert board(e)[4] == "....X...."  # Refused: the game goes on.
  ok(e, "boardsize 9")
  assert board(e) == ["........."] * 9
  ok(e, "play b E5")
  ok(e, "clear_board")
  assert board(e) == ["........."] * 9
  assert fails(e, "undo") == "cannot undo"



def test_boardsize_switches_to_the_player_of_that_size():
  # As `alphago-jax gtp` without --preset: each size has its own player;
  # a size none plays is refused and the game goes on.
  players = {9: FakePlayer(GAME9),
             5: FakePlayer(dataclasses.replace(GAME9, size=5))}

  def player_for_size(size):
    if size not in players:
      raise ValueError(f"no player for {size}x{size}")
    return players[size]

  e = make(players[9], player_for_size=player_for_size)
  ok(e, "play b E5")
  assert fails(e, "boardsize 13") == "unacceptable size"
  assert "no player for 13x13" in e.logs[-1]
  assert board(e)[4] == "....X...."
  ok(e, "boardsize 5")
  assert e.player is players[5] and board(e) == ["....."] * 5
  assert ok(e, "genmove b") == "A5"  # The 5x5 player's first point.
  ok(e, "boardsize 9")
  assert e.player is players[9] and board(e) == ["........."] * 9


def test_default_presets_one_a_size_each_searching_where_one_can():
  defaults = [p for p in presets.registered_presets() if p.default]
  sizes = [p.board_size for p in defaults]
  assert sorted(sizes) == sorted(set(sizes)) and {9, 19} <= set(sizes)
  for preset in defaults:
    assert preset.evidence and os.path.exists(os.path.join(ROOT,
                                                           preset.evidence))
    searching = [p for p in presets.registered_presets()
                 if p.board_size == preset.board_size and p.searches]
    assert preset.searches or not searching, preset.name
  if all(p.directory() for p in defaults):
    assert presets.default_preset(9) in defaults
  with pytest.raises(ValueError, match="no default preset for 13x13"):
    presets.default_preset(13)
  record = lambda name: (
      f'[[preset]]\nname = "{name}"\nboard_size = 9\nplayer = "policy"\n'
      f'networks = {{ policy = "sl9" }}\ndefault = true\n'
      f'description = "{name}"\n')
  twice = record("a") + record("b")
  with pytest.raises(ValueError, match="at most one may be"):
    presets.parse_table(twice, "t.toml")

def test_final_score_tromp_taylor_by_hand():
  # Black walls off columns A-D (36 points), White F-J (36); column E
  # touches both colours and counts for neither.
  e = make()
  assert ok(e, "final_score") == "W+7.5"  # Empty board: komi.
  for row in range(1, 10):
    ok(e, f"play b D{row}")
    ok(e, f"play w F{row}")
  assert ok(e, "final_score") == "W+7.5"  # 36 - 36 - 7.5
  ok(e, "komi 0")
  assert ok(e, "final_score") == "0"
  ok(e, "play b E5")  # Black 37, White 36.
  assert ok(e, "final_score") == "B+1"
  ok(e, "komi 6.5")
  assert ok(e, "final_score") == "W+5.5"
  ok(e, "play w pass")
  ok(e, "play b pass")  # Two passes: the game is over.
  assert ok(e, "final_score") == "W+5.5"
  assert "game over" in ok(e, "showboard")
  assert fails(e, "play w A9") == "illegal move"
  assert ok(e, "genmove w") == "pass"  # Nothing left to play.
  ok(e, "undo")
  ok(e, "play b A9")  # Undo reopened the game.


def test_genmove_plays_and_answers_the_vertex():
  player = FakePlayer()
  e = make(player)
  assert check_answer(e.handle("4 genmove b"), "4") == (True, "A9")
  assert board(e)[0] == "X........"
  assert ok(e, "genmove white") == "B9"
  assert board(e)[0] == "XO......."
  ok(e, "undo")
  assert board(e)[0] == "X........"


def test_a_colour_out_of_turn_is_preceded_by_a_pass():
  e = make()
  ok(e, "play b C3")
  ok(e, "play b G7")  # Handicap-style: White passes in between.
  assert "move 3, White to play" in ok(e, "showboard")
  assert ok(e, "genmove b") == "A9"  # Again out of turn.
  assert "move 5, White to play" in ok(e, "showboard")
  ok(e, "undo")  # Undoes the move and the pass inserted for it.
  assert "move 3, White to play" in ok(e, "showboard")
  # After White's pass, a second Black move would need a second pass,
  # which ends the game: refused.
  ok(e, "play w pass")
  assert fails(e, "play w D4") == "illegal move"


def test_player_failures_never_kill_the_engine():
  e = make(FakePlayer(fail=True))
  text = fails(e, "genmove b")
  assert text.startswith("internal error: RuntimeError: the fake player")
  assert any("Traceback" in l for l in e.logs)
  assert ok(e, "name") == "alphago-jax"
  # A player that answers an occupied point: the engine passes instead.
  e = make(FakePlayer(action=40))
  ok(e, "play b E5")
  assert ok(e, "genmove w") == "pass"
  assert any("illegal action 40" in l for l in e.logs)
  e = make(FakePlayer(resign=True))
  assert ok(e, "genmove b") == "resign"
  assert board(e) == ["........."] * 9  # Resigning is not a move.


def test_quit():
  e = make()
  assert not e.quit
  assert check_answer(e.handle("8 quit"), "8") == (True, "")
  assert e.quit


def _answers(text):
  """(ok, id) of each GTP answer in a session's output."""
  out = []
  for block in filter(None, text.split("\n\n")):
    cid = ANSWER.match(block).group(2)
    out.append((check_answer(block + "\n\n", cid)[0], cid))
  return out


@needs_gnugo
def test_quit_now_quits_as_gnugo_does():
  # `quit now`: GTP 2 gives quit no arguments, but GNU Go (the engine
  # controllers are written against) answers it with success and exits,
  # answering nothing after it. Ours must do the same, not refuse it and
  # keep running.
  session = "1 quit now\n2 name\n"
  gnugo = subprocess.run([engines.find_gnugo(), "--mode", "gtp"], input=session,
                         capture_output=True, text=True, timeout=60,
                         check=False)
  assert gnugo.returncode == 0, gnugo.stderr
  assert _answers(gnugo.stdout) == [(True, "1")], gnugo.stdout
  import io  # pylint: disable=import-outside-toplevel
  e, out = make(), io.StringIO()
  assert gtp.serve(e, io.StringIO(session), out) == 0
  assert _answers(out.getvalue()) == _answers(gnugo.stdout), out.getvalue()
  assert e.quit


# -- Time -------------------------------------------------------------------

def test_time_budgets_follow_the_clock():
  player = FakePlayer()
  e = make(player, time_safety=0.8, lag_buffer=0.1)
  ok(e, "genmove b")
  assert player.budgets[-1] is None  # No time settings: no limit.
  ok(e, "time_settings 0 10 5")  # 10 s for 5 stones from the start.
  ok(e, "genmove w")
  assert player.budgets[-1] == pytest.approx(0.8 * 10 / 5 - 0.1)
  ok(e, "time_left b 3 1")  # Last stone of the period, 3 s left.
  ok(e, "genmove b")
  assert player.budgets[-1] == pytest.approx(0.8 * 3 - 0.1)
  ok(e, "clear_board")
  ok(e, "time_settings 60 0 0")  # Absolute: 60 s for the game.
  ok(e, "genmove b")
  # 81 empty points: about 27 moves of Black's left.
  assert player.budgets[-1] == pytest.approx(0.8 * 60 / 27 - 0.1, abs=1e-6)
  ok(e, "time_settings 30 10 5")  # Main time, then byo-yomi.
  ok(e, "genmove w")  # 80 empty points.
  assert player.budgets[-1] == pytest.approx(
      0.8 * (30 / (80 / 3) + 10 / 5) - 0.1, abs=0.01)
  ok(e, "time_left b 0 0")
  ok(e, "time_settings 0 0 0")
  ok(e, "genmove b")
  assert player.budgets[-1] == 0.0  # Out of time: the fastest move.
  ok(e, "time_settings 0 1 0")  # GTP: byo-yomi without stones = no limit.
  ok(e, "genmove w")
  assert player.budgets[-1] is None


def test_clock_charges_its_own_moves():
  c = engine_lib.Clock()
  c.settings(10, 6, 3)
  c.charge(0, 4.0)
  assert (c.left[0], c.stones[0]) == (6.0, 0)
  c.charge(0, 7.0)  # Main time runs out: into byo-yomi, first stone used.
  assert (c.left[0], c.stones[0]) == (5.0, 2)
  c.charge(0, 1.0)
  c.charge(0, 1.0)  # The period's last stone: a fresh period.
  assert (c.left[0], c.stones[0]) == (6.0, 3)
  assert (c.left[1], c.stones[1]) == (10.0, 0)  # White untouched.


def test_search_budget_from_measured_times():
  """The search player's choice of simulations from its timings (no
  compile: the timings are given by hand)."""
  p = SearchPlayer.__new__(SearchPlayer)
  p.max_simulations = 256
  p._timings = {}
  g = GAME9
  assert p.choose_simulations(g, None) == 256
  assert p.choose_simulations(g, 100.0) is None  # Nothing measured yet.
  # 10 ms + 1 ms a simulation.
  for n in (1, 256, 16, 64):
    p.record_timing(g, n, 0.01 + 0.001 * n)
  assert p.predicted_seconds(g, 100) == pytest.approx(0.11)
  assert p.predicted_seconds(g, 512) == pytest.approx(2 * 0.266)
  assert p.choose_simulations(g, 0.1105) == 100
  assert p.choose_simulations(g, 0.0105) is None  # Not even one fits.
  assert p.choose_simulations(g, 5.0) == 256  # Capped at the tree size.
  # A slow search (a loaded machine) counts at once: 64 now takes 0.148 s.
  p.record_timing(g, 64, 2 * (0.01 + 0.064))
  assert p.predicted_seconds(g, 64) == pytest.approx(0.148)
  assert p.choose_simulations(g, 0.1105) == 49
  # ... until three faster ones have replaced it.
  for _ in range(3):
    p.record_timing(g, 64, 0.074)
  assert p.choose_simulations(g, 0.1105) == 100


def tiny_alphago_player(simulations, **kw):
  """AlphaGo's search on 5x5 with a uniform prior and a value of 0: the
  search and its compiles are as cheap as they get."""
  from alphago_jax.search.alphago import AlphaGoSearchConfig, uniform_policy
  return zoo.AlphaGoPlayer(
      name="tiny", game=GAME5, policy_fn=uniform_policy,
      value_fn=lambda variables, obs: jnp.zeros(obs.shape[0]),
      variables=({}, {}), config=AlphaGoSearchConfig(
          num_simulations=simulations, mixing=0.0, reuse_tree=True), **kw)


def test_simulation_ladder():
  assert simulation_ladder(512) == (64, 128, 256, 512)
  assert simulation_ladder(100, rungs=3) == (25, 50, 100)
  assert simulation_ladder(3) == (1, 3)
  assert simulation_ladder(48, step=8) == (8, 24, 48)
  with pytest.raises(ValueError, match="multiple"):
    simulation_ladder(50, step=8)


def test_alphago_player_searches_within_its_clock():
  """Under a clock AlphaGo's search plays the largest of its compiled
  sizes that its timings predict to fit, continues a tree of another
  size, and plays the greedy policy when none fits. (Timings set by hand
  after the real ones: the choice is then independent of the machine.)"""
  player = tiny_alphago_player(32, ladder_rungs=3)
  assert player.ladder == (8, 16, 32)
  e = make(player, time_safety=1.0, lag_buffer=0.0)
  g = e.game
  assert sorted(player._compiled[g]) == [32]  # No clock: the full search.
  assert player.choose_simulations(g, None) == 32
  assert player.choose_simulations(g, 1e9) == 32
  ok(e, "time_settings 0 10 1")  # A clock: the ladder is compiled.
  assert sorted(player._compiled[g]) == [8, 16, 32]

  def timed(seconds_8, seconds_32):
    player._timings.clear()
    player.record_timing(g, 8, seconds_8)
    player.record_timing(g, 32, seconds_32)

  timed(0.1, 0.4)  # 16 interpolated: 0.2 s.
  assert [player.choose_simulations(g, s) for s in (
      0.05, 0.1, 0.19, 0.2, 0.39, 0.4, 7.0)] == [None, 8, 8, 16, 16, 32, 32]
  # Through the engine: the budget is the byo-yomi time left for a stone.
  ok(e, "time_left b 0.25 1")
  first = ok(e, "genmove b")
  assert re.search(rf"gtp: B {first} \(16 simulations", e.logs[-1])
  # The full search, then the smallest of the same position: it continues
  # the full one's tree though its size differs.
  timed(0.1, 0.4)
  state = e.state
  full = player.genmove(g, state, jax.random.key(1))
  assert full.simulations == 32
  timed(0.1, 0.4)
  small = player.genmove(g, state, jax.random.key(2), seconds=0.15)
  assert small.simulations == 8 and player.reused_nodes > 8
  assert sum(c.visits for c in small.candidates) >= 32 + 8
  # Nothing fits: the policy's greedy move, no search.
  timed(0.1, 0.4)
  greedy = player.genmove(g, state, jax.random.key(3), seconds=0.01)
  assert greedy.simulations == 0 and state.legal_action_mask[greedy.action]


def test_a_variant_without_tree_reuse_plays_its_own_move():
  """A search variant that does not continue trees (Gumbel) plays what
  `alphago_search` plays for the same position and key, searches afresh
  every move, and works under the GTP engine and its clock."""
  from alphago_jax.search.alphago import (AlphaGoSearchConfig, alphago_search,
                                          uniform_policy)
  value_fn = lambda variables, obs: jnp.tanh(obs[..., 0].sum((1, 2)) - 2.0)
  config = AlphaGoSearchConfig(num_simulations=16, mixing=0.0,
                               variant="gumbel")
  player = zoo.AlphaGoPlayer(name="gumbel", game=GAME5,
                             policy_fn=uniform_policy, value_fn=value_fn,
                             variables=({}, {}), config=config,
                             ladder_rungs=2)
  assert not player.keeps_trees and "(gumbel)" in player.description
  assert "c_puct" not in player.description  # Gumbel does not read it.
  e = make(player)
  g = e.game
  ok(e, "play b C3")
  state, key = e.state, jax.random.key(11)
  decision = player.genmove(g, state, key)
  # Jitted: one compilation, where op-by-op dispatch takes several times
  # as long.
  expected = jax.jit(lambda k, s: alphago_search(
      GAME5, uniform_policy, value_fn, ({}, {}), k, s, config=config))(
          key, jax.tree.map(lambda x: x[None], state))
  assert decision.action == int(expected.action[0])
  assert decision.simulations == 16 and player.reused_nodes == 0
  assert sum(c.visits for c in decision.candidates) == 16
  again = player.genmove(g, state, key)  # Fresh: the same search.
  assert again.action == decision.action
  assert sum(c.visits for c in again.candidates) == 16
  ok(e, "time_settings 0 10 1")
  assert sorted(player._compiled[g]) == list(player.ladder)
  ok(e, "genmove w")
  with pytest.raises(ValueError, match="does not reuse trees"):
    zoo.AlphaGoPlayer(name="x", game=GAME5, policy_fn=uniform_policy,
                      value_fn=value_fn, variables=({}, {}),
                      config=dataclasses.replace(config, reuse_tree=True))


# -- Leela Zero analysis --------------------------------------------------------

INFO = re.compile(r"info move (\S+) visits (\d+) winrate (\d+) prior (\d+) "
                  r"order (\d+) pv((?: \S+)+?)(?= info |$)")


def test_lz_analyze_format_and_streaming():
  e = make()
  ok(e, "play b A9")
  # Interrupted at once (as `handle` does): one report.
  text = e.handle("lz-analyze 50")
  lines = text.split("\n")
  assert lines[0] == "=" and text.endswith("\n\n")
  assert INFO.findall(lines[1]) == [
      ("B9", "1", "6000", "5000", "0", " B9 C9"),
      ("C9", "1", "6000", "2500", "1", " C9")]  # No winrate: the root's.
  # Streaming until input arrives: every analysis, then repeats.
  out, waits = [], iter([False, False, True])
  e.execute("3 lz-analyze w interval 0", out.append,
            interrupted=lambda: False, wait=lambda s: next(waits))
  assert out[0] == "=3" and out[-1] == ""
  visits = [INFO.findall(l)[0][1] for l in out[1:-1]]
  assert visits == ["1", "7", "7", "7"]
  assert board(e)[0] == "X........"  # Analysis plays nothing.
  # For the side not to move: analysed after a pass, nothing played.
  assert INFO.findall(e.handle("lz-analyze b").split("\n")[1])[0][0] == "B9"
  assert "move 1, White to play" in ok(e, "showboard")


def test_lz_genmove_analyze_plays_the_move():
  e = make()
  text = e.handle("5 lz-genmove_analyze b 10")
  lines = text.split("\n")
  assert lines[0] == "=5"
  assert INFO.findall(lines[1])[0][:2] == ("A9", "3")
  assert lines[2] == "play A9" and lines[3:] == ["", ""]
  assert board(e)[0] == "X........"


# -- Fuzz -----------------------------------------------------------------------

COMMANDS = ["protocol_version", "name", "version", "known_command",
            "list_commands", "boardsize", "clear_board", "komi", "play",
            "genmove", "undo", "showboard", "final_score", "time_settings",
            "time_left", "lz-analyze", "lz-genmove_analyze", "quit",
            "frobnicate", "PLAY", "loadsgf", "printsgf", "final_status_list",
            "fixed_handicap", "place_free_handicap", "set_free_handicap",
            "kata-analyze", "kata-genmove_analyze"]
TOKENS = st.one_of(
    st.sampled_from(["b", "w", "black", "WHITE", "x", "B"]),
    st.sampled_from(["A1", "e3", "C5", "pass", "PASS", "resign", "I3",
                     "Z25", "A0", "E", "T19", "a26", "C"]),
    st.sampled_from(["5", "9", "19", "0", "-1", "6.5", "7.5", "nan",
                     "1e400", "2147483648", "0x10", "interval", "10"]),
    st.sampled_from(["alive", "dead", "seki", "minmoves", "maxmoves",
                     "avoid", "allow", "ownership", "true", "A1,B2",
                     "no-such-file.sgf", "/"]),
    st.text(max_size=6))


COLOURS = st.sampled_from(["b", "w", "black", "white"])
POINTS5 = st.sampled_from([f"{c}{r}" for c in "ABCDE" for r in range(1, 6)]
                          + ["pass"])
VALID_LINES = st.one_of(
    st.builds("play {} {}".format, COLOURS, POINTS5),
    st.builds("genmove {}".format, COLOURS),
    st.sampled_from(["undo", "showboard", "final_score", "clear_board",
                     "boardsize 5", "komi 6.5", "komi 0", "list_commands",
                     "lz-analyze 10", "lz-genmove_analyze b",
                     "lz-genmove_analyze w 5", "time_settings 30 5 2",
                     "time_left b 3 1", "known_command play",
                     "final_status_list alive", "final_status_list dead",
                     "final_status_list seki", "printsgf",
                     "set_free_handicap A1 C3 E5", "kata-analyze 10",
                     "kata-analyze b minmoves 5 maxmoves 3",
                     "kata-analyze w avoid w A1,B1 1 ownership true",
                     "kata-genmove_analyze b", "loadsgf no-such-file.sgf"]))


@st.composite
def random_lines(draw):
  words = [draw(st.sampled_from(COMMANDS))] + draw(
      st.lists(TOKENS, max_size=4))
  return " ".join(words)


@st.composite
def command_lines(draw):
  """A well-formed line (half of them) or random words, with an id or not,
  then up to 3 mutations: characters inserted, deleted or replaced, any
  code point."""
  line = draw(st.one_of(VALID_LINES, random_lines()))
  if draw(st.booleans()):
    line = f"{draw(st.integers(0, 10**6))} {line}"
  for _ in range(draw(st.sampled_from([0, 0, 1, 2, 3]))):
    i = draw(st.integers(0, len(line)))
    kind = draw(st.sampled_from(["insert", "delete", "replace"]))
    ch = draw(st.characters(codec="utf-8"))
    if kind == "insert":
      line = line[:i] + ch + line[i:]
    elif kind == "delete":
      line = line[:i] + line[i + 1:]
    else:
      line = line[:i] + ch + line[i + 1:]
  return line


def test_fuzz_every_line_gets_a_well_formed_answer(capsys, tmp_path,
                                                   monkeypatch):
  """Thousands of random and mutated lines: each gets a well-formed answer
  (or none, for what GTP says to ignore), with the id echoed; the engine
  answers `name` at the end. (In a scratch folder: `printsgf NAME` writes
  files.)"""
  monkeypatch.chdir(tmp_path)
  counts = {"lines": 0, "answers": 0, "failures": 0}

  @settings(max_examples=examples(100), deadline=None,
            suppress_health_check=[HealthCheck.too_slow,
                                   HealthCheck.data_too_large])
  @given(st.lists(command_lines(), min_size=20, max_size=40))
  def run(lines):
    e = make(FakePlayer(GAME5))
    for line in lines:
      if e.quit:  # A `quit` ends the session: start another one.
        e = make(FakePlayer(GAME5))
      counts["lines"] += 1
      text = e.handle(line)
      cleaned = engine_lib.preprocess(line)
      if text is None:
        assert cleaned == ""
        continue
      counts["answers"] += 1
      words = engine_lib.words_of(cleaned)
      cid = words[0] if words and re.fullmatch("[0-9]+", words[0]) else ""
      good, _ = check_answer(text, cid)
      counts["failures"] += not good
    assert e.quit or e.handle("name") == "= alphago-jax\n\n"
    assert not any("internal error" in l for l in e.logs), e.logs

  run()
  with capsys.disabled():
    print(f"\nGTP fuzz: {counts['lines']} command lines tried, "
          f"{counts['answers']} answers, {counts['failures']} of them "
          f"failures")
  assert counts["lines"] >= 2000 * examples(1)
  assert 0 < counts["failures"] < counts["answers"]


# -- A fuzz of the real process -----------------------------------------------

LIVE_PRESET = "rollout-policy-9x9"  # No search and a linear policy: cheap.
LIVE_LINES = 600
# Pieces of garbage: control characters, '#', non-ASCII letters and
# whitespace GTP does not count as such, and bytes that are not UTF-8.
GARBAGE = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\r", "\t", " ", "#", "=",
           "?", "7", "e", "\u00e9", "\u00b2", "\u56f2\u7881", "\u200b",
           "\ufeff", "\u3000", "\x85", "\u2028", "\u00a0", "\U0001f600"]
BAD_BYTES = [b"\xff", b"\xc3", b"\x80\x80", b"\xed\xa0\x80", b"\xf0\x9f"]
POINTS9 = [f"{c}{r}" for c in "ABCDEFGHJ" for r in range(1, 10)]
# Lines with a known answer ("=" or "?") whatever the position.
LIVE_OK = ["protocol_version", "name", "version", "list_commands",
           "known_command play", "known_command frobnicate", "showboard",
           "final_score", "boardsize 9", "clear_board", "komi 6.5",
           "komi 7.5", "time_settings 600 0 0", "time_settings 0 5 0",
           "time_left b 30 0", "time_left white 10 3", "lz-analyze 50",
           "lz-analyze w interval 10", "kata-analyze 50",
           "kata-analyze b 20 maxmoves 3 avoid b E5,D4 1",
           "final_status_list alive", "final_status_list dead",
           "final_status_list seki", "printsgf"]
LIVE_ERRORS = [
    # Malformed and off-board vertices.
    "play b Z99", "play w I5", "play b A0", "play b A26", "play w E",
    "play b 5E", "play b E-1", "play w E5.0", "play b T19", "play w K5",
    "play b J10", "play red E5",
    # Wrong argument counts and malformed numbers.
    "play", "play b", "play b E5 E6", "genmove", "genmove b w", "komi",
    "komi 1 2", "komi lots", "komi nan", "komi inf", "boardsize",
    "boardsize 9 9", "boardsize nine", "time_settings 1 2",
    "time_settings -1 0 0", "time_left b 1", "time_left b 10 -2",
    "known_command", "name x", "protocol_version 2", "undo 1",
    "lz-analyze b 10 extra", "lz-genmove_analyze", "kata-analyze minmoves",
    "kata-genmove_analyze", "final_status_list", "final_status_list ko",
    "fixed_handicap", "fixed_handicap 10", "place_free_handicap 1",
    "set_free_handicap A1", "set_free_handicap A1 A1",
    "loadsgf no-such-file.sgf", "loadsgf game.sgf x", "printsgf a b",
    # Board sizes it has no network for.
    "boardsize 19", "boardsize 13", "boardsize 0", "boardsize -1",
    "boardsize 26", "boardsize 99999999999999999999",
    # Unknown commands.
    "frobnicate", "PLAY b E5", "9x9"]
LIVE_IGNORED = ["", "   ", "\t", "\r", "\x00\x01", "# a comment",
                "  # play b E5", "\t#\tname"]
# Moves refused whatever came before (each scenario starts afresh):
# an occupied point, a suicide.
LIVE_ILLEGAL = [
    [("clear_board", "="), ("play b E5", "="), ("play w E5", "?")],
    [("clear_board", "="), ("play b A2", "="), ("play w E5", "="),
     ("play b B1", "="), ("play w A1", "?")],
]


def gtp_words(raw):
  """The words of a command line by GTP 2's preprocessing (section 3.1,
  written out here apart from the engine's): control characters other
  than HT and LF dropped, text from '#' on cut, HT as a space, words
  separated by spaces (GTP's only whitespace besides HT); bytes that are
  not UTF-8 are characters like any other."""
  text = raw.decode("utf-8", "replace")
  text = "".join(c for c in text if c == "\t" or 32 <= ord(c) != 127)
  text = text.split("#", 1)[0].replace("\t", " ")
  return [w for w in text.split(" ") if w]


def _garbage(rng, length):
  parts = [rng.choice(GARBAGE).encode() if rng.random() < 0.85
           else rng.choice(BAD_BYTES) for _ in range(length)]
  return b"".join(parts)


def _mutated(rng, line):
  """`line` with 1-3 pieces of garbage inserted, or characters deleted or
  replaced."""
  raw = line.encode()
  for _ in range(rng.randint(1, 3)):
    i = rng.randint(0, len(raw))
    kind = rng.choice(["insert", "delete", "replace"])
    piece = _garbage(rng, 1)
    raw = raw[:i] + (b"" if kind == "delete" else piece) + (
        raw[i:] if kind == "insert" else raw[i + 1:])
  return raw


def live_fuzz_lines(rng, count, *, genmoves=8):
  """`count` command lines (bytes, no newline) and the answer each must
  get ("=", "?", or None for either): known answers, moves, garbage,
  mutations, ignorable lines, very long lines, refused moves; at most
  `genmoves` genmove commands (cheap as they are)."""
  out = []
  while len(out) < count:
    kind = rng.choices(["ok", "error", "move", "garbage", "mutated",
                        "ignored", "long", "illegal", "genmove"],
                       [14, 14, 20, 10, 14, 6, 3, 3, 2])[0]
    if kind == "genmove":
      if genmoves == 0:
        continue
      genmoves -= 1
      colour = rng.choice(["b", "w", "black", "white"])
      line = rng.choice([f"genmove {colour}",
                         f"lz-genmove_analyze {colour} 50"])
      out.append((line.encode(), None))  # `?` once the game is over.
    elif kind == "ok":
      out.append((rng.choice(LIVE_OK).encode(), "="))
    elif kind == "error":
      out.append((rng.choice(LIVE_ERRORS).encode(), "?"))
    elif kind == "move":
      line = rng.choice([f"play {rng.choice('bw')} {rng.choice(POINTS9)}",
                         f"play {rng.choice('bw')} pass", "undo"])
      out.append((line.encode(), None))
    elif kind == "garbage":
      out.append((_garbage(rng, rng.randint(1, 40)), None))
    elif kind == "mutated":
      # Not komi: every new komi compiles the player's move again. Not
      # printsgf: a mutation can turn it into `printsgf NAME`, which
      # writes a file.
      line = rng.choice([l for l in LIVE_OK + LIVE_ERRORS
                         if not l.startswith(("komi", "printsgf"))]
                        + ["play b E5"])
      out.append((_mutated(rng, line), None))
    elif kind == "ignored":
      out.append((rng.choice(LIVE_IGNORED).encode(), None))
    elif kind == "long":
      n = rng.randint(1000, 20000)
      out.append(rng.choice([
          (b"name " + b"x" * n, "?"), (b"x" * (3 * n), "?"),
          (b"play b " + b"E5" * n, "?"), (b"boardsize " + b"9" * n, "?"),
          (b" " * n, None), (b"# " + b"y" * n, None)]))
    else:
      out.extend((l.encode(), want) for l, want in rng.choice(LIVE_ILLEGAL))
  out = out[:count]
  # An id on some lines: the answer must echo it.
  return [(f"{rng.randint(0, 10**6)} ".encode() + raw
           if raw.strip() and rng.random() < 0.3 else raw, want)
          for raw, want in out]


def split_answers(text):
  """The answers in a GTP stream, each as (status, id, first line); fails
  on anything that is not a sequence of well-formed answers."""
  assert text.endswith("\n\n"), repr(text[-300:])
  answers = []
  for body in text[:-2].split("\n\n"):
    m = ANSWER.fullmatch(body.split("\n")[0])
    assert m, f"malformed answer {body[:300]!r}"
    answers.append((m.group(1), m.group(2), m.group(3) or ""))
  return answers


def test_fuzz_the_live_process(capsys):
  """Hundreds of generated and mutated lines piped into the real engine
  process at once: exactly one well-formed answer (with its id) per line
  GTP does not ignore, `=` or `?` where the line decides it, the process
  alive at the end (it answers `name`) and a clean exit after `quit`."""
  if presets.get_preset(LIVE_PRESET).directory() is None:
    pytest.skip("the committed 9x9 rollout policy (checkpoints/rollout9) is "
                "missing")
  rng = random.Random(13)
  lines = live_fuzz_lines(rng, LIVE_LINES)
  lines += [(b"7001 name", "="), (b"7002 quit", "=")]
  expected = []
  for raw, want in lines:
    words = gtp_words(raw)
    if words:
      cid = words[0] if re.fullmatch("[0-9]+", words[0]) else ""
      expected.append((raw, want, cid))
  assert all(b"\n" not in raw for raw, _ in lines)
  start = time.monotonic()
  proc = subprocess.run(
      [sys.executable, "-m", "alphago_jax.gtp", "--preset", LIVE_PRESET],
      input=b"".join(raw + b"\n" for raw, _ in lines), capture_output=True,
      # ASCII, the strictest stdout a locale gives: an answer quoting the
      # controller's non-ASCII text must not kill the engine.
      env=cpu_env(PYTHONIOENCODING="ascii"), cwd=ROOT, timeout=300,
      check=False)
  seconds = time.monotonic() - start
  err = proc.stderr.decode("utf-8", "replace")
  assert proc.returncode == 0, err[-3000:]
  assert "internal error" not in err and "Traceback" not in err, err[-3000:]
  answers = split_answers(proc.stdout.decode("utf-8"))
  assert len(answers) == len(expected), (len(answers), len(expected))
  for (status, cid, text), (raw, want, want_id) in zip(answers, expected):
    assert cid == want_id, (raw[:200], status, cid, text)
    assert want is None or status == want, (raw[:200], status, text)
  assert answers[-2:] == [("=", "7001", "alphago-jax"), ("=", "7002", "")]
  failures = sum(status == "?" for status, _, _ in answers)
  with capsys.disabled():
    print(f"\nlive GTP fuzz: {len(lines)} command lines tried, "
          f"{len(answers)} answered ({failures} with `?`), "
          f"{len(lines) - len(answers)} ignored as GTP says, "
          f"{seconds:.1f} s")
  assert 0 < failures < len(answers) and len(answers) < len(lines)


# -- The real process -----------------------------------------------------------

@pytest.fixture(scope="module")
def served():
  """`python -m alphago_jax.gtp` with the cheap greedy 9x9 preset."""
  if presets.get_preset("az-9x9-policy").directory() is None:
    pytest.skip("the committed 9x9 network (checkpoints/go9) is missing")
  client = engines.GTPClient([sys.executable, "-m", "alphago_jax.gtp",
                          "--preset", "az-9x9-policy"], timeout=300)
  yield client
  # `quit` with the pipe left open, as controllers do: a clean exit (a
  # reader thread inside the buffered stdin once made CPython abort here).
  client.send("quit")
  deadline = time.monotonic() + 60
  while client.returncode is None and time.monotonic() < deadline:
    time.sleep(0.05)
  status = client.returncode
  client.close()
  assert status == 0, client.stderr_tail


def test_the_process_speaks_gtp(served):
  e = served
  assert e.send("protocol_version") == "2"
  assert e.name() == "alphago-jax"
  assert "go9@48" in e.version()
  with pytest.raises(engines.GTPError, match="unacceptable size"):
    e.boardsize(19)
  e.boardsize(9)
  e.clear_board()
  e.komi(7.5)
  e.play("black", "E5")
  with pytest.raises(engines.GTPError, match="illegal move"):
    e.play("white", "E5")
  move = e.genmove("white")
  assert move not in ("E5", "RESIGN")
  picture = e.send("showboard")
  assert " X " in picture and " O " in picture
  assert re.fullmatch(r"[BW]\+\d+(\.5)?|0", e.final_score())
  answer = e.send("lz-genmove_analyze b 100").splitlines()
  assert INFO.match(answer[0]) and answer[-1].startswith("play ")
  with pytest.raises(engines.GTPError, match="unknown command"):
    e.send("frobnicate")
  assert e.send("undo") == ""


def test_list_presets_and_bad_options(capsys):
  assert gtp.main(["--list-presets"]) == 0
  names = [l.split("\t")[0] for l in capsys.readouterr().out.splitlines()]
  assert names == [p.name for p in presets.available_presets()]
  assert "az-9x9" in names or presets.get_preset("az-9x9").directory() is None
  assert gtp.main(["--preset", "no-such-player"]) == 1
  assert "unknown preset" in capsys.readouterr().err
  assert gtp.main(["--preset", "az-9x9-policy", "--simulations", "8"]) == 1
  assert "without search" in capsys.readouterr().err
  assert gtp.main(["--time-safety", "0"]) == 2
  assert gtp.main(["--max-moves", "0"]) == 2
  with pytest.raises(ValueError, match="time_safety"):
    make(time_safety=1.5)


def test_presets_not_present_are_not_listed(tmp_path, monkeypatch):
  monkeypatch.setenv(zoo_checkpoints.CHECKPOINTS_ENV, str(tmp_path))
  assert presets.available_presets() == []
  (tmp_path / "sl_policy").mkdir()
  (tmp_path / "sl_policy" / "x").write_text("")
  assert [p.name for p in presets.available_presets()] == [
      "sl-policy-19x19"]
  with pytest.raises(ValueError, match="no network"):
    presets.load_player("az-9x9")


@needs_go9
def test_main_serves_in_process():
  # The entry point the `alphago-jax gtp` command calls, on given streams.
  import io
  stdin = io.StringIO("1 name\n2 boardsize 9\n3 genmove b\n4 version\n"
                      "5 quit\n9 name\n")
  stdout = io.StringIO()
  assert gtp.main(["--preset", "az-9x9-policy", "--gtp-version", "0.17"],
                  stdin=stdin, stdout=stdout) == 0
  out = stdout.getvalue()
  assert out.startswith("=1 alphago-jax\n\n=2\n\n=3 ")
  assert "\n=4 0.17\n\n" in out
  assert out.endswith("=5\n\n")  # Nothing after quit.


# -- Refereed games -----------------------------------------------------------

class ScriptedEngine:
  """An in-process stand-in for a GTP client that plays a fixed list of
  vertices and accepts everything (or refuses what it is told to)."""

  def __init__(self, moves, refuse=(), sleep=0.0):
    self.moves = list(moves)
    self.refuse = set(refuse)
    self.sleep = sleep
    self.sent = []

  def send(self, command):
    self.sent.append(command)
    return ""

  def genmove(self, colour):
    time.sleep(self.sleep)
    return self.moves.pop(0) if self.moves else "PASS"

  def play(self, colour, vertex):
    if vertex in self.refuse:
      raise engines.GTPError(f"play {colour} {vertex}", "illegal move")

  def close(self):
    pass


def test_referee_judges_by_our_rules():
  # A legal game: Black takes a stone, both pass; scored by Tromp-Taylor.
  r = referee_game(ScriptedEngine(["D5", "F5", "E4", "E6", "PASS"]),
                   ScriptedEngine(["E5", "A1", "A2", "PASS"]), komi=0.5)
  assert (r.reason, len(r.moves)) == ("score", 9)
  # Black: 4 stones and E5; White: 2 stones; the rest touches both.
  assert (r.score, r.result, r.winner) == (2.5, "B+2.5", 0)
  # An occupied point, a ko retake, a vertex off the board, a refusal.
  for black, white, detail in (
      (["E5", "D5"], ["E5"], "white played E5, illegal"),
      (["D5", "E4", "E6", "A9", "F5", "A8"], ["F4", "F6", "G5", "E5", "E5"],
       "white played E5, illegal"),
      (["K5"], [], "black answered 'K5'"),
  ):
    r = referee_game(ScriptedEngine(black), ScriptedEngine(white))
    assert r.reason == "forfeit" and detail in r.detail, r.detail
  r = referee_game(ScriptedEngine(["C3"]), ScriptedEngine([], refuse={"C3"}))
  assert (r.reason, r.winner, r.result) == ("forfeit", 0, "B+F")
  assert "refused black's legal move C3" in r.detail
  # A clock: 1 s a move; a side thinking 1.5 s loses on time.
  black = ScriptedEngine(["C3", "D4"])
  r = referee_game(black, ScriptedEngine(["F6"], sleep=1.5),
                   time_settings=(0, 1, 1))
  assert (r.reason, r.result) == ("time", "B+T")
  assert "time_settings 0 1 1" in black.sent
  assert "time_left black 1 1" in black.sent
  with pytest.raises(ValueError, match="three integers"):
    referee_game(black, black, time_settings=(0, 0.5, 1))
  # Not enforced for White: the game goes on, White's clock renewed.
  white = ScriptedEngine(["F6"], sleep=1.5)
  r = referee_game(ScriptedEngine(["C3"]), white, time_settings=(0, 1, 1),
                   enforce=(True, False))
  assert r.reason == "score" and "time_left white 1 1" in white.sent[-1:]
  r = referee_game(ScriptedEngine([], ), ScriptedEngine(["RESIGN"]))
  assert (r.reason, r.result) == ("resign", "B+R")
  assert r.record("a", "b").result == "B+R"


@needs_gnugo
def test_match_against_gnugo_through_the_referee(served):
  """Our process against GNU Go level 1 on 9x9, one game with each colour:
  every move is checked by our rules engine, nobody forfeits, and GNU Go's
  final board is the one our engine gets by replaying the game."""
  results = []
  for ours_black in (True, False):
    with engines.gnugo(level=1, seed=1, extra_args=(
        "--chinese-rules", "--positional-superko",
        "--capture-all-dead")) as gnu:
      black, white = (served, gnu) if ours_black else (gnu, served)
      r = referee_game(black, white, size=9, komi=7.5)
      results.append(r)
      assert r.reason in ("score", "move cap", "resign"), r.detail
      assert len(r.moves) >= 20
      state = GAME9.init(None)
      for colour, action in r.moves:
        assert int(state.current_player) == colour
        state = STEP9(state, action)
      ours = np.asarray(GAME9.stones(state))
      gnu_board = np.zeros(81, np.int8)
      for v in gnu.list_stones("black"):
        gnu_board[GAME9.vertex_to_action(v)] = 1
      for v in gnu.list_stones("white"):
        gnu_board[GAME9.vertex_to_action(v)] = -1
      np.testing.assert_array_equal(gnu_board, ours)
  print("vs GNU Go level 1:", [(r.result, len(r.moves)) for r in results])


@pytest.mark.slow
@needs_gnugo
@needs_go9
def test_search_player_keeps_to_its_clock_against_gnugo():
  """The 9x9 player with up to 2048 simulations (about 4 s) and 2 s a move
  (byo-yomi) against GNU Go: the referee enforces the clock; the player
  must shrink its search to fit, and never lose on time."""
  with engines.GTPClient([sys.executable, "-m", "alphago_jax.gtp", "--preset",
                      "az-9x9", "--simulations", "2048"],
                     timeout=600) as ours, engines.gnugo(
                         level=1, seed=2, extra_args=(
                             "--chinese-rules", "--positional-superko",
                             "--capture-all-dead")) as gnu:
    ours.send("name")
    # Only our clock is enforced: GNU Go does not manage time at level 1.
    r = referee_game(ours, gnu, size=9, komi=7.5,
                     time_settings=(0, 2, 1), enforce=(True, False))
    log = ours.stderr_tail
  assert r.reason in ("score", "move cap", "resign"), r.detail
  # The engine's log: "gtp: B E5 (431 simulations, ...) in 0.52 s ...".
  sims = [int(m.group(1)) for m in map(
      re.compile(r"gtp: B \S+ \((\d+) simulations").search, log) if m]
  assert sims and max(sims) < 2048 and sum(s > 0 for s in sims) > len(sims) / 2
  print("simulations chosen:", sims)
  print("az-9x9 at 2 s a move vs GNU Go level 1:", r.result,
        len(r.moves), "moves, thinking", r.seconds)


def test_checkpoint_of_the_wrong_kind_is_refused(tmp_path):
  with pytest.raises(FileNotFoundError, match="no config.json"):
    presets.load_player("az-9x9", checkpoint=str(tmp_path))
  with pytest.raises(ValueError, match="simulations must be"):
    presets.load_player("az-9x9", simulations=0)


@pytest.mark.slow  # Restoring the SL checkpoint alone takes 10-25 s.
@pytest.mark.skipif(
    presets.get_preset("sl-policy-19x19").directory() is None,
    reason="no supervised 19x19 policy checkpoint")
def test_sl_policy_preset_plays_19x19_openings():
  """The supervised policy through the engine: it refuses 9x9, and its
  first moves on the empty board are on the third or fourth line, as in
  the expert games it learned from (a random network's would not be)."""
  e = gtp.GTPEngine(presets.load_player("sl-policy-19x19"),
                    log=lambda m: None)
  assert check_answer(e.handle("boardsize 9"))[1] == "unacceptable size"
  for colour in "bwbw":
    vertex = ok(e, f"genmove {colour}")
    row = int(vertex[1:])
    col = vertex_codec.COLUMNS.index(vertex[0]) + 1
    assert min(row, 20 - row, col, 20 - col) in (3, 4), vertex
  info = e.handle("lz-analyze").split("\n")[1]
  assert len(INFO.findall(info)) == 10  # Its 10 likeliest moves.


@needs_go9
@pytest.mark.slow
def test_alphago_player_reuses_its_tree_between_moves():
  player = presets.load_player("ag-9x9", simulations=32)
  assert isinstance(player, zoo.AlphaGoPlayer) and player.reuse
  e = make(player)

  def analysed_move(colour):
    lines = e.handle(f"lz-genmove_analyze {colour}").split("\n")
    info = lines[1]
    visits = sum(int(v) for v in re.findall(r"visits (\d+)", info))
    pv = info.split(" info ")[0].split(" pv ")[1].split()
    return lines[2].split()[1], visits, pv

  move, visits, pv = analysed_move("b")
  assert player.reused_nodes == 0 and visits == 32 and pv[0] == move
  # The reply the search expected is in its tree: the next search starts
  # from that subtree and adds 32 simulations to its visits.
  assert ok(e, f"play w {pv[1]}") == ""
  _, visits, _ = analysed_move("b")
  assert player.reused_nodes > 0 and visits > 32
  # A position the tree does not hold: a fresh search.
  ok(e, "clear_board")
  ok(e, "play b C3")
  ok(e, "play w G7")
  _, visits, _ = analysed_move("b")
  assert player.reused_nodes == 0 and visits == 32


def _priors(engine, moves):
  """{vertex: prior} of the engine's 10 likeliest moves after `moves`."""
  ok(engine, "clear_board")
  for colour, vertex in zip("bwbw", moves):
    ok(engine, f"play {colour} {vertex}")
  info = engine.handle("lz-analyze").split("\n")[1]
  return {m.group(1): int(m.group(4)) for m in INFO.finditer(info)}


def _transposed(vertex):
  col = vertex_codec.COLUMNS.index(vertex[0]) + 1
  return f"{vertex_codec.COLUMNS[int(vertex[1:]) - 1]}{col}"


# The same ensembling code in both; the ladder network also reads its
# ladder planes in play (their symmetry: tests/test_ladders.py), at about
# three times the cost, so it is in the slow suite.
@pytest.mark.parametrize("name", [
    "sl-policy-19x19-long-ensemble",
    pytest.param("sl-policy-19x19-ladders-ensemble", marks=pytest.mark.slow)])
def test_ensemble_preset_is_symmetric(name):
  """The ensemble player's policy is the mean over the 8 symmetries, so it
  commutes with them: the position reflected in the main diagonal gets
  the reflected priors (a single network's would not, exactly)."""
  if presets.get_preset(name).directory() is None:
    pytest.skip(f"no checkpoint for {name}")
  e = gtp.GTPEngine(presets.load_player(name), log=lambda m: None)
  moves = ["C4", "R16", "Q3"]
  assert [_transposed(v) for v in moves] == ["D3", "Q17", "C16"]
  priors = _priors(e, moves)
  reflected = _priors(e, [_transposed(v) for v in moves])
  assert len(priors) == 10
  top = sorted(priors, key=priors.get, reverse=True)[:5]
  for vertex in top:
    assert abs(reflected[_transposed(vertex)] - priors[vertex]) <= 1, (
        vertex, priors, reflected)
