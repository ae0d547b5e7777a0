"""The GTP commands GUIs use beyond play: final_status_list, handicap
placement, loadsgf / printsgf and KataGo's kata-analyze, each against
hand-worked positions (and GNU Go where it answers the same question)."""

from __future__ import annotations

import re
import subprocess

import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import engines, gtp, zoo
from alphago_jax.games import vertex as vertex_codec
from alphago_jax.games.go import Go
from alphago_jax.gtp import analysis, handicap, status

from test_gtp_engine import FakePlayer, board, fails, make, ok

GAME5 = Go(size=5)
GAME7 = Go(size=7)

needs_gnugo = pytest.mark.skipif(
    engines.find_gnugo() is None,
    reason="GNU Go is not installed (apt-get install gnugo)")


def stones_of(picture):
  """int `[N²]` of rows of X (Black), O (White), . (empty), top row
  first; and N."""
  rows = [r.split() for r in picture.strip().splitlines()]
  table = {"X": 1, "O": -1, ".": 0}
  return np.array([table[c] for r in rows for c in r]), len(rows)


def set_up(e, picture):
  """Plays the stones of `picture` into engine `e` (Black's first, then
  White's: no capture happens in the positions below)."""
  s, n = stones_of(picture)
  ok(e, f"boardsize {n}")
  ok(e, "clear_board")
  for colour, sign in (("b", 1), ("w", -1)):
    for p in np.flatnonzero(s == sign):
      ok(e, f"play {colour} {vertex_codec.action_to_vertex(int(p), n)}")
  return s, n


def vertices(answer):
  return set(answer.split())


# -- final_status_list ----------------------------------------------------------

# A finished 7x7 game. Black's wall has two one-point eyes (A7, G7) and a
# third region C7-E7 whose every empty point touches it: the wall is
# pass-alive and the White stone D7 inside that region is dead. White's
# big group has four one-point eyes: pass-alive.
DEAD_STONE = """
. X . O . X .
X X X X X X X
O O O O O O O
O . O O O . O
O O O O O O O
O O . O O O O
O O O O O . O
"""

# A seki on 7x7: Black's B7 A6 B6 C6 (an eye at A7) and White's D7 D6 E6
# F6 F7 (an eye at E7) share the liberty C7, where either colour's move
# captures nothing and puts itself in atari; each inner group is
# surrounded by the other's pass-alive wall (eyes B4 B2; E4 E2 G3).
SEKI = """
. X . O . O X
X X X O O O X
O O O X X X X
O . O X . X X
O O O X X X .
O . O X . X X
O O O X X X X
"""


def test_final_status_by_hand():
  s, n = stones_of(DEAD_STONE)
  codes = status.final_status(s, n)
  dead = {vertex_codec.action_to_vertex(int(p), n)
          for p in np.flatnonzero((s != 0) & (codes == status.DEAD))}
  assert dead == {"D7"}
  assert not np.any(codes == status.SEKI)
  s, n = stones_of(SEKI)
  codes = status.final_status(s, n)
  seki = {vertex_codec.action_to_vertex(int(p), n)
          for p in np.flatnonzero((s != 0) & (codes == status.SEKI))}
  assert seki == {"B7", "A6", "B6", "C6", "D7", "D6", "E6", "F6", "F7"}
  assert not np.any(codes == status.DEAD)


def test_final_status_is_conservative():
  """A White stone in Black's open area is not provably dead (Black's
  wall has one eye and a big region with points away from it): listed
  alive, as the Tromp-Taylor count treats it. Captured it would be dead
  nowhere: an empty board has no status at all."""
  s, n = stones_of("""
  . X . . .
  X X . . .
  . . . O .
  . . . . .
  . . . . .
  """)
  codes = status.final_status(s, n)
  assert set(codes[s != 0]) == {status.ALIVE}
  assert set(status.final_status(np.zeros(25, int), 5)) == {status.ALIVE}
  with pytest.raises(ValueError, match="needs 25 values"):
    status.final_status(np.zeros(24, int), 5)


def test_final_status_list_command():
  e = make(FakePlayer(GAME7))
  set_up(e, DEAD_STONE)
  assert ok(e, "final_status_list dead") == "D7"
  alive = ok(e, "final_status_list alive")
  s, n = stones_of(DEAD_STONE)
  assert vertices(alive) == {
      vertex_codec.action_to_vertex(int(p), n)
      for p in np.flatnonzero(s != 0)} - {"D7"}
  # One chain a line: Black's wall, then White's group.
  assert len(alive.splitlines()) == 2
  assert ok(e, "final_status_list seki") == ""
  set_up(e, SEKI)
  assert [vertices(l) for l in ok(e, "final_status_list seki").splitlines()
          ] == [{"B7", "A6", "B6", "C6"}, {"D7", "D6", "E6", "F6", "F7"}]
  assert fails(e, "final_status_list").startswith("syntax error")
  assert "invalid status" in fails(e, "final_status_list undead")


@needs_gnugo
@pytest.mark.parametrize("picture", [DEAD_STONE, SEKI],
                         ids=["dead", "seki"])
def test_final_status_agrees_with_gnugo(picture):
  """GNU Go's final_status_list on the same finished positions."""
  e = make(FakePlayer(GAME7))
  s, n = set_up(e, picture)
  commands = [f"boardsize {n}", "clear_board"]
  for colour, sign in (("b", 1), ("w", -1)):
    commands += [f"play {colour} {vertex_codec.action_to_vertex(int(p), n)}"
                 for p in np.flatnonzero(s == sign)]
  asks = ["alive", "dead", "seki"]
  commands += [f"final_status_list {a}" for a in asks] + ["quit"]
  out = subprocess.run([engines.find_gnugo(), "--mode", "gtp"],
                       input="\n".join(commands) + "\n", capture_output=True,
                       text=True, timeout=60, check=True).stdout
  answers = [a for a in out.split("\n\n") if a.strip()]
  assert all(a.startswith("=") for a in answers), answers
  theirs = answers[-4:-1]
  for ask, answer in zip(asks, theirs):
    assert vertices(answer[1:]) == vertices(
        ok(e, f"final_status_list {ask}")), ask


# -- Handicap -------------------------------------------------------------------

# GTP 2 section 4.1.1 on 19x19, and the same pattern on the third line of
# 9x9 (corners C3 G7 C7 G3, sides C5 G5 E3 E7, centre E5).
SPEC_19 = {
    2: "D4 Q16", 3: "D4 Q16 D16", 4: "D4 Q16 D16 Q4",
    5: "D4 Q16 D16 Q4 K10", 6: "D4 Q16 D16 Q4 D10 Q10",
    7: "D4 Q16 D16 Q4 D10 Q10 K10", 8: "D4 Q16 D16 Q4 D10 Q10 K4 K16",
    9: "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10"}
SPEC_9 = {2: "C3 G7", 3: "C3 G7 C7", 4: "C3 G7 C7 G3", 5: "C3 G7 C7 G3 E5",
          6: "C3 G7 C7 G3 C5 G5", 7: "C3 G7 C7 G3 C5 G5 E5",
          8: "C3 G7 C7 G3 C5 G5 E3 E7", 9: "C3 G7 C7 G3 C5 G5 E3 E7 E5"}


def test_fixed_handicap_table():
  for size, table in ((19, SPEC_19), (9, SPEC_9)):
    for stones, expected in table.items():
      got = handicap.fixed_handicap_points(stones, size)
      assert " ".join(vertex_codec.action_to_vertex(a, size)
                      for a in got) == expected
  # 13x13: the fourth line. Even sizes and 7x7: corners only.
  assert [vertex_codec.action_to_vertex(a, 13) for a in
          handicap.fixed_handicap_points(5, 13)] == [
              "D4", "K10", "D10", "K4", "G7"]
  assert [vertex_codec.action_to_vertex(a, 8) for a in
          handicap.fixed_handicap_points(4, 8)] == ["C3", "F6", "C6", "F3"]
  assert [vertex_codec.action_to_vertex(a, 7) for a in
          handicap.fixed_handicap_points(2, 7)] == ["C3", "E5"]
  for stones, size in ((5, 8), (5, 7), (2, 6), (2, 5), (1, 9), (10, 9),
                       (0, 19), (10, 19)):
    with pytest.raises(ValueError, match="invalid number of stones"):
      handicap.fixed_handicap_points(stones, size)


def test_fixed_handicap_command():
  e = make()  # 9x9.
  assert ok(e, "fixed_handicap 5") == "C3 G7 C7 G3 E5"
  assert board(e) == [".........", ".........", "..X...X..", ".........",
                      "....X....", ".........", "..X...X..", ".........",
                      "........."]
  assert "White to play" in ok(e, "showboard")
  assert fails(e, "fixed_handicap 2") == "board not empty"
  assert fails(e, "undo") == "cannot undo"  # Handicap is not a move.
  ok(e, "play w E6")
  ok(e, "undo")
  assert "move 0, White to play" in ok(e, "showboard")
  ok(e, "clear_board")
  assert fails(e, "fixed_handicap 10").startswith("invalid number of stones")
  assert fails(e, "fixed_handicap 1").startswith("invalid number of stones")
  assert fails(e, "fixed_handicap x").startswith("syntax error")
  ok(e, "play b pass")  # A history, though no stone: not empty.
  assert fails(e, "fixed_handicap 2") == "board not empty"
  e5 = make(FakePlayer(GAME5))
  assert "a 5x5 board takes none" in fails(e5, "fixed_handicap 2")


def test_free_handicap_commands():
  e = make()
  assert ok(e, "place_free_handicap 4") == "C3 G7 C7 G3"
  ok(e, "clear_board")
  # More than the board's pattern: fewer stones, as GTP allows.
  assert ok(e, "place_free_handicap 12") == SPEC_9[9]
  ok(e, "clear_board")
  assert fails(e, "place_free_handicap 1").startswith(
      "invalid number of stones")
  assert fails(e, "place_free_handicap 81").startswith(
      "invalid number of stones")
  assert ok(e, "set_free_handicap A1 J9 e5") == ""
  assert board(e)[0] == "........X" and board(e)[8] == "X........"
  assert "White to play" in ok(e, "showboard")
  assert fails(e, "set_free_handicap A2 B2") == "board not empty"
  ok(e, "clear_board")
  assert "is repeated" in fails(e, "set_free_handicap A1 B1 a1")
  assert "not a point" in fails(e, "set_free_handicap A1 pass")
  assert "not a point" in fails(e, "set_free_handicap A1 K9")
  assert "2 to 80" in fails(e, "set_free_handicap A1")
  assert fails(e, "set_free_handicap").startswith("syntax error")
  assert fails(e, "set_free_handicap A1 Z?").startswith("syntax error")
  assert board(e) == ["........."] * 9  # Failures placed nothing.


# -- loadsgf / printsgf ---------------------------------------------------------

def same_game(a, b):
  """Engines `a` and `b` hold the same position and history."""
  assert a.game == b.game and a.actions == b.actions
  assert len(a.states) == len(b.states) and a.handicap == b.handicap
  for s, t in zip(a.states, b.states):
    for field in ("board", "hash_history", "step_count", "current_player",
                  "ko", "passes", "legal_action_mask", "terminated"):
      assert np.array_equal(np.asarray(getattr(s, field)),
                            np.asarray(getattr(t, field))), field


def test_printsgf_loadsgf_round_trip(tmp_path):
  e = make(komi=6.5)
  ok(e, "fixed_handicap 2")
  for move in ("w E5", "b D5", "w D4", "b E4", "w pass", "b F5", "b F4"):
    ok(e, f"play {move}")  # The second Black move: White passed between.
  text = ok(e, "printsgf")
  assert text.startswith("(;") and "HA[2]" in text and "KM[6.5]" in text
  assert "AB[cg][gc]" in text  # C3 and G7.
  path = tmp_path / "game.sgf"
  assert ok(e, f"printsgf {path}") == ""
  assert path.read_text().strip() == text
  fresh = make(komi=7.5)
  assert ok(fresh, f"loadsgf {path}") == "white"
  same_game(e, fresh)
  # Up to before move 3 (W E5, B D5 played).
  assert ok(fresh, f"loadsgf {path} 3") == "white"
  assert fresh.actions == [vertex_codec.vertex_to_action(v, 9)
                           for v in ("E5", "D5")]
  assert fresh.game.komi == 6.5
  assert ok(fresh, f"loadsgf {path} 1") == "white"  # Handicap only.
  assert fresh.actions == [] and fresh.handicap == 2
  assert ok(fresh, f"loadsgf {path} 999") == "white"  # To the end.
  same_game(e, fresh)
  # A finished game carries its result.
  ok(e, "play w pass")
  ok(e, "play b pass")
  assert re.search(r"RE\[[BW]\+[0-9.]+\]", ok(e, "printsgf"))


def test_loadsgf_answers_errors_and_keeps_the_game(tmp_path):
  e = make()
  ok(e, "play b E5")

  def write(name, text):
    path = tmp_path / name
    path.write_text(text)
    return path

  bad = {
      "nosuch.sgf": (None, "No such file"),
      "broken.sgf": ("(;GM[1]SZ[9];B[ee", "malformed SGF"),
      "size.sgf": ("(;GM[1]SZ[13];B[dd])", "unacceptable size 13x13"),
      "chess.sgf": ("(;GM[3]SZ[9])", "not a Go record"),
      "illegal.sgf": ("(;GM[1]SZ[9];B[ee];W[ee])", "move 2, W E5"),
      "setup.sgf": ("(;GM[1]SZ[9]AB[ab][ba]AW[aa])", "setup stones"),
  }
  for name, (text, message) in bad.items():
    path = tmp_path / name if text is None else write(name, text)
    answer = fails(e, f"loadsgf {path}")
    assert answer.startswith("cannot load file") and message in answer, (
        name, answer)
  good = write("good.sgf", "(;GM[1]SZ[9];B[aa])")
  for number in ("0", "-3", "x", "1.5"):
    assert fails(e, f"loadsgf {good} {number}").startswith("syntax error")
  assert fails(e, "loadsgf").startswith("syntax error")
  assert board(e)[4] == "....X...." and len(e.actions) == 1  # Unchanged.
  assert ok(e, "undo") == ""


# -- kata-analyze -----------------------------------------------------------------

# KataGo's grammar (docs/GTP_Extensions.md): `info` entries of key-value
# pairs ending with a pv, on one line.
KATA_INFO = re.compile(
    r"info move (\S+) visits (\d+) winrate ([01]\.\d{6}) prior "
    r"([01]\.\d{6}) lcb ([01]\.\d{6}) order (\d+) pv((?: \S+)+?)"
    r"(?= info |$)")


def kata(line):
  """The entries of a kata-analyze line, checked against the grammar."""
  entries = KATA_INFO.findall(line)
  assert " ".join(
      f"info move {m} visits {v} winrate {w} prior {p} lcb {l} order {o} "
      f"pv{pv}" for m, v, w, p, l, o, pv in entries) == line
  return [dict(move=m, visits=int(v), winrate=float(w), prior=float(p),
               lcb=float(l), order=int(o), pv=pv.split())
          for m, v, w, p, l, o, pv in entries]


def test_kata_analyze_format_and_options():
  e = make()
  ok(e, "play b A9")
  text = e.handle("kata-analyze 50")
  head, line, *rest = text.split("\n")
  assert head == "=" and rest == ["", ""]
  assert kata(line) == [
      dict(move="B9", visits=1, winrate=0.6, prior=0.5, lcb=0.0, order=0,
           pv=["B9", "C9"]),
      dict(move="C9", visits=1, winrate=0.6, prior=0.25, lcb=0.0, order=1,
           pv=["C9"])]  # No winrate of its own: the root's.
  assert len(kata(e.handle("kata-analyze w maxmoves 1").split("\n")[1])) == 1
  # The fake's first legal move is avoided: it plays the next one.
  entries = kata(e.handle("kata-analyze w 10 avoid w B9,C9 1").split("\n")[1])
  assert [x["move"] for x in entries] == ["D9", "E9"]
  entries = kata(e.handle("kata-analyze w allow w E5,F5 1").split("\n")[1])
  assert [x["move"] for x in entries] == ["E5", "F5"]
  assert "ownership" not in e.handle("kata-analyze ownership true")
  assert "not reported" in e.logs[-1]
  for bad in ("kata-analyze avoid w B9 0", "kata-analyze avoid w Z9 1",
              "kata-analyze avoid w B9", "kata-analyze minmoves x",
              "kata-analyze ownership maybe", "kata-analyze frobnicate 1",
              "kata-analyze allow w A1 1 allow w A2 1",
              "kata-analyze avoid b A1 1 allow b A2 1",
              "lz-analyze ownership true", "kata-analyze -5"):
    assert fails(e, bad).startswith("syntax error"), bad
  # Every point and pass avoided: nothing left to search.
  every = ",".join(vertex_codec.action_to_vertex(a, 9) for a in range(82))
  assert "no move to search" in fails(e, f"kata-analyze avoid w {every} 1")
  answer = e.handle("4 kata-genmove_analyze w 10").split("\n")
  assert answer[0] == "=4" and kata(answer[1])[0]["move"] == "B9"
  assert answer[2] == "play B9" and answer[3:] == ["", ""]
  assert board(e)[0] == "XO......."


@pytest.fixture(scope="module")
def searching():
  """AlphaGo's search on 5x5 (uniform prior, leaves valued 0, 32
  simulations a round, the tree continued between rounds) under komi
  0.5: compiled once for the tests below."""
  from alphago_jax.search.alphago import AlphaGoSearchConfig, uniform_policy
  player = zoo.AlphaGoPlayer(
      name="tiny", game=GAME5, policy_fn=uniform_policy,
      value_fn=lambda variables, obs: jnp.zeros(obs.shape[0]),
      variables=({}, {}), config=AlphaGoSearchConfig(
          num_simulations=32, mixing=0.0, reuse_tree=True))
  return player


def stream(e, line):
  """All reports of an analysis left to run until its rounds are done."""
  out = []
  e.execute(line, out.append, interrupted=lambda: False,
            wait=lambda seconds: True)
  assert out[-1] == "" and out[0].startswith("=")
  return [kata(l) for l in out[1:-1]]


def test_kata_analyze_reports_the_real_search(searching):
  """Black (C3 on an empty 5x5, komi 0.5) is to move after White passed:
  passing ends the game won (25 - 0.5 by Tromp-Taylor), every other move
  leaves it open (its leaves are valued 0). The search finds the pass:
  its winrate is 1, above the root's 0.5. Each round adds 32 visits to
  the tree it continues."""
  e = make(searching, komi=0.5)
  ok(e, "play b C3")
  ok(e, "play w pass")
  reports = stream(e, "kata-analyze interval 0")
  assert len(reports) == searching.analysis_rounds
  for k, report in enumerate(reports, 1):
    assert sum(x["visits"] for x in report) == 32 * k
    assert [x["order"] for x in report] == list(range(len(report)))
    best = report[0]
    assert best["move"] == "pass" and best["winrate"] > 0.5
    assert best["pv"] == ["pass"]  # The game is over after it.
    for x in report:
      assert x["pv"][0] == x["move"]
      assert x["move"] == "pass" or bool(e.state.legal_action_mask[
          vertex_codec.vertex_to_action(x["move"], 5)])
      assert 0 <= x["lcb"] <= x["winrate"]
  # Pass and A5 avoided: they never appear; minmoves lists every other
  # move (the 24 empty points but A5), the unsearched ones with 0 visits.
  reports = stream(e, "kata-analyze b 0 avoid b pass,A5 1 minmoves 30")
  for report in reports:
    moves = [x["move"] for x in report]
    assert "pass" not in moves and "A5" not in moves
    assert len(set(moves)) == len(moves) == 23
  # A fresh search (its root differs from the last tree's by the moves
  # it may search): 32 visits.
  assert sum(x["visits"] for x in reports[0]) == 32
  assert "move 2, Black to play" in ok(e, "showboard")  # Nothing played.


def test_request_parsing():
  r = analysis.parse_request(
      ["w", "25", "minmoves", "3", "maxmoves", "7", "avoid", "b",
       "A1,pass", "2", "avoid", "w", "E5", "1"], 9, kata=True)
  assert (r.colour, r.interval, r.minmoves, r.maxmoves) == (1, 0.25, 3, 7)
  assert r.avoid == ((0, 72, 2), (0, 81, 2), (1, 40, 1))
  legal = np.ones(82, bool)
  assert np.flatnonzero(~analysis.root_legal(r, 0, legal)).tolist() == [
      72, 81]
  assert np.flatnonzero(~analysis.root_legal(r, 1, legal)).tolist() == [40]
  r = analysis.parse_request(["allow", "b", "A1,B1", "1"], 9)
  keep = analysis.root_legal(r, 0, legal)
  assert np.flatnonzero(keep).tolist() == [72, 73, 81]  # Pass stays.
  assert analysis.lower_bound(0.5, 100) == pytest.approx(0.5 - 1.96 * 0.05)
  assert analysis.lower_bound(0.9, 0) == 0.0
