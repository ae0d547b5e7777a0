"""SGF records: parsing, writing, replay into the engine; loading and
splitting collections (`alphago_jax.data.records`)."""

import gzip

import jax
import numpy as np
import pytest
from sgfmill import sgf as sgfmill_sgf

from alphago_jax.data import records as game_records
from alphago_jax.games import sgf
from alphago_jax.games.go import BLACK, WHITE, Go
from alphago_jax.games.sgf import GameRecord, SGFError

from record_files import write_tar

B, W = BLACK, WHITE
# Records without KM replay in this game: sharing it saves compilations.
GO9 = Go(size=9, komi=0.0, superko=False)

FULL = (
    b"(;GM[1]FF[4]SZ[9]KM[6.5]PB[Black \\] Player]PW[White\\\\Player]"
    b"BR[3d]WR[2d]RE[B+3.5]DT[2024-01-01]RU[Japanese]"
    b"C[a comment with \\] and ;B[aa\\] inside]"
    b";B[ee]C[nice (;W[aa\\]) move];W[];B[aa];W[tt]"
    b"(;B[ba])(;B[ca]))")


def test_parse_full_record():
  r = sgf.parse_sgf(FULL)
  assert r.size == 9 and r.komi == 6.5
  assert r.black_name == "Black ] Player" and r.white_name == "White\\Player"
  assert (r.black_rank, r.white_rank) == ("3d", "2d")
  assert (r.result, r.winner, r.margin) == ("B+3.5", B, 3.5)
  assert (r.rules, r.date, r.handicap) == ("Japanese", "2024-01-01", 0)
  # Comments are text, not moves; "tt" and "" are passes; main line only.
  assert r.moves == ((B, 40), (W, 81), (B, 0), (W, 81), (B, 1))


def test_sgf_aa_is_top_left_and_sgfmill_agrees():
  r = sgf.parse_sgf(b"(;SZ[9];B[aa];W[ib];B[ai])")
  game = Go(size=9)
  assert [game.action_to_vertex(a) for _, a in r.moves] == ["A9", "J8", "A1"]
  _, states = sgf.record_to_states(r)
  final = jax.tree.map(lambda x: x[-1], states)
  assert game.to_ascii(final).splitlines()[0] == "X........"
  assert game.to_ascii(final).splitlines()[1] == "........O"
  assert game.to_ascii(final).splitlines()[8] == "X........"


def test_missing_size_means_19_and_missing_komi_is_zero():
  r = sgf.parse_sgf("(;;B[pd];W[dp])")
  assert r.size == 19 and r.komi == 0.0 and r.result is None
  assert r.moves == ((B, 3 * 19 + 15), (W, 15 * 19 + 3))


def test_handicap_setup_white_moves_first():
  r = sgf.parse_sgf(b"(;SZ[9]HA[2]AB[cc][gg];W[gc];B[cg])")
  assert r.handicap == 2 and r.setup_black == (20, 60) and r.setup_white == ()
  assert r.moves == ((W, 24), (B, 56))
  actions, states = sgf.record_to_states(r)
  np.testing.assert_array_equal(actions, [24, 56])
  assert int(states.current_player[0]) == W
  assert sgf.default_game(r) == GO9
  game = Go(size=9)
  first = jax.tree.map(lambda x: x[0], states)
  assert game.to_ascii(first) == "\n".join(
      [".........", ".........", "..X......", ".........", ".........",
       ".........", "......X..", ".........", "........."])


def test_setup_point_lists_and_white_stones():
  r = sgf.parse_sgf(b"(;SZ[5]AB[aa:bb]AW[dd][ee];B[cc])")
  assert r.setup_black == (0, 1, 5, 6) and r.setup_white == (18, 24)
  _, states = sgf.record_to_states(r)
  assert Go(size=5).to_ascii(jax.tree.map(lambda x: x[-1], states)) == (
      "XX...\nXX...\n..X..\n...O.\n....O")


def test_same_colour_twice_inserts_a_pass():
  r = sgf.parse_sgf(b"(;SZ[9]HA[2];B[cc];B[gg];W[ee])")
  initial, actions, index = sgf.record_to_actions(r)
  np.testing.assert_array_equal(actions, [20, 81, 60, 40])
  np.testing.assert_array_equal(index, [0, -1, 1, 2])
  assert int(initial.current_player) == B
  acts, states = sgf.record_to_states(r)
  assert len(acts) == 4 and states.board.shape[0] == 5
  assert int(states.passes[2]) == 1 and not bool(states.terminated[-1])


def test_round_trip_hand_written_records():
  records = [FULL, b"(;SZ[9]HA[2]KM[0.5]AB[cc][gg];W[gc];B[cg])",
             b"(;SZ[5]AB[aa:bb]AW[dd][ee];B[cc];W[];B[])",
             b"(;SZ[13]KM[-3]RE[W+Resign]PB[\xc3\xa9l\xc3\xa8ve]CA[UTF-8])",
             b"(;GM[1]SZ[19]RE[0];B[pd];W[dp];B[pq];W[dd])"]
  for data in records:
    r = sgf.parse_sgf(data)
    written = sgf.to_sgf(r)
    assert sgf.parse_sgf(written) == r, written
    # sgfmill reads what we write, and passes are FF[4] empty values.
    sgfmill_sgf.Sgf_game.from_bytes(written)
    assert b"[tt]" not in written
  assert sgf.parse_sgf(records[3]).black_name == "\u00e9l\u00e8ve"


def test_round_trip_record_constructed_in_code():
  r = GameRecord(size=7, komi=3.5, result="W+2.5", black_name="a[b]c\\",
                 handicap=2, setup_black=[8, 12], setup_white=[24],
                 moves=[(W, 0), (B, 49), (W, 48), (B, 1)])
  assert r.moves == ((W, 0), (B, 49), (W, 48), (B, 1))  # lists -> tuples
  assert sgf.parse_sgf(sgf.to_sgf(r)) == r
  assert (r.winner, r.margin) == (W, 2.5)


@pytest.mark.parametrize("text,winner,margin", [
    ("B+R", B, None), ("W+Resign", W, None), ("B+Time", B, None),
    ("W+F", W, None), ("B+", B, None), ("W+12.5", W, 12.5), ("b+0.5", B, 0.5),
    ("0", None, 0.0), ("Draw", None, 0.0), ("Void", None, None),
    ("?", None, None), (None, None, None)])
def test_parse_result(text, winner, margin):
  assert sgf.parse_result(text) == (winner, margin)


def test_result_string():
  assert [sgf.result_string(s) for s in (3.5, -0.5, 0.0, 12.0)] == [
      "B+3.5", "W+0.5", "0", "B+12"]


def test_result_score_is_the_inverse_of_result_string():
  assert [sgf.result_score(t) for t in ("B+3.5", "W+0.5", "0", "Jigo",
                                        "W+R", "B+Time", "Void", None)] == [
      3.5, -0.5, 0.0, 0.0, None, None, None, None]
  for score in (3.5, -0.5, 0.0, -12.0):
    assert sgf.result_score(sgf.result_string(score)) == score


@pytest.mark.parametrize("data,reason,words", [
    (b"(;GM[1]SZ[9];B[ee]", "syntax", "malformed SGF"),
    (b"no sgf here", "syntax", "no SGF data"),
    (b"(;SZ[4];B[aa])", "board size", "SZ[4] is outside 5..19"),
    (b"(;SZ[21];B[aa])", "board size", "SZ[21] is outside 5..19"),
    (b"(;SZ[nine])", "board size", "bad SZ[nine]"),
    (b"(;SZ[19:13])", "board size", "square"),
    (b"(;SZ[9];B[ee];W[zz])", "move off board", "move 2: W[zz] is off the 9x9"),
    (b"(;SZ[9];B[jj])", "move off board", "move 1: B[jj]"),
    (b"(;SZ[9]KM[lots])", "komi", "malformed komi KM[lots]"),
    (b"(;SZ[9]HA[two])", "handicap", "malformed handicap HA[two]"),
    (b"(;SZ[9]AB[zz])", "setup stones", "off the board"),
    (b"(;SZ[9]AB[aa]AW[aa])", "setup stones", "both AB and AW"),
    (b"(;GM[2]SZ[9])", "not go", "not a Go record"),
    (b"(;SZ[9];B[aa];AB[bb])", "setup after root", "node 2: setup stones"),
    (b"(;SZ[9];B[aa]W[bb])", "move", "both a B and a W"),
])
def test_malformed_records_name_the_problem(data, reason, words):
  with pytest.raises(SGFError, match=words.replace("[", r"\[").replace(
      "]", r"\]").replace("(", r"\(").replace(")", r"\)")) as e:
    sgf.parse_sgf(data, source="game.sgf")
  assert e.value.reason == reason
  assert "game.sgf" in str(e.value)
  assert isinstance(e.value, ValueError)


def test_sz_columns_rows_of_a_square_board_is_read_not_a_crash():
  # Found by tests/test_sgf_fuzz.py: FF[4]'s square SZ[9:9] passed our
  # check, then sgfmill's int(SZ) raised a bare ValueError (the loader
  # counted it as "unexpected").
  r = sgf.parse_sgf(b"(;SZ[9:9];B[aa])")
  assert r.size == 9 and r.moves == ((B, 0),)
  with pytest.raises(SGFError, match="square") as e:
    sgf.parse_sgf(b"(;SZ[9:13];B[aa])")
  assert e.value.reason == "board size"


def test_ae_on_a_setup_stone_is_rejected_not_guessed():
  # Found by tests/test_sgf_fuzz.py: AE naming an AB/AW point of the same
  # node (which SGF forbids) was ignored, while sgfmill's board empties the
  # point: two readings of one record. Now it is skipped.
  with pytest.raises(SGFError, match="both AE and AB/AW") as e:
    sgf.parse_sgf(b"(;SZ[9]AB[aa][bb]AE[aa];W[ee])", source="x.sgf")
  assert e.value.reason == "setup stones" and "x.sgf" in str(e.value)
  # AE elsewhere on the empty root board stays a no-op.
  assert sgf.parse_sgf(b"(;SZ[9]AB[aa]AE[cc];W[ee])").setup_black == (0,)


def test_bad_charset_and_bad_bytes_fall_back_to_latin1():
  r = sgf.parse_sgf(b"(;CA[UTF-8]SZ[9]PB[caf\xe9];B[aa])")
  assert r.black_name == "caf\u00e9" and r.moves == ((B, 0),)
  r = sgf.parse_sgf(b"(;CA[no-such-charset]SZ[9]PB[x];B[aa])")
  assert r.black_name == "x"


def test_invalid_record_fields():
  with pytest.raises(SGFError, match="board size"):
    GameRecord(size=4)
  with pytest.raises(SGFError, match="both setup_black and setup_white"):
    GameRecord(size=9, setup_black=[3], setup_white=[3])
  with pytest.raises(SGFError, match="move 2"):
    GameRecord(size=9, moves=[(B, 0), (W, 82)])


# -- Replay errors ---------------------------------------------------------

# A ko on 5x5: Black B[cb] takes the white stone at bb; White may not
# retake at once.
KO = b"(;SZ[5]AB[ba][ab][bc]AW[bb][ca][cc][db]"


@pytest.mark.parametrize("data,words", [
    (b"(;SZ[9];B[ee];W[ee])", r"move 2 \(W\[ee\] = E5\).*occupied"),
    (b"(;SZ[5];B[ba];W[ee];B[ab];W[aa])", r"move 4 \(W\[aa\] = A5\).*suicide"),
    (KO + b";B[cb];W[bb])", r"move 2 \(W\[bb\] = B4\).*simple ko"),
    (b"(;SZ[9];B[ee];W[];B[];W[aa])",
     r"move 4 \(W\[aa\] = A9\).*ended after two consecutive passes"),
])
def test_illegal_moves_name_move_and_vertex(data, words):
  r = sgf.parse_sgf(data, source="x.sgf")
  with pytest.raises(SGFError, match=words) as e:
    sgf.record_to_states(r)
  assert e.value.reason == "illegal move" and "x.sgf" in str(e.value)


def test_ko_retake_after_a_threat_is_legal():
  r = sgf.parse_sgf(KO + b";B[cb];W[ee];B[ea];W[bb])")
  _, states = sgf.record_to_states(r)
  assert Go(size=5).to_ascii(jax.tree.map(lambda x: x[-1], states)) == (
      ".XO.X\nXO.O.\n.XO..\n.....\n....O")


def test_replay_game_must_match_size_and_fit_the_cap():
  r = sgf.parse_sgf(b"(;SZ[9];B[ee];W[cc];B[gg])")
  with pytest.raises(SGFError, match="9x9"):
    sgf.record_to_states(r, Go(size=13))
  with pytest.raises(SGFError, match="move cap is 2"):
    sgf.record_to_states(r, Go(size=9, max_moves=2))


def test_default_game_cap_grows_for_long_records():
  r = GameRecord(size=5)
  assert sgf.default_game(r).move_cap == 50
  assert sgf.default_game(r, 60).move_cap >= 61


# -- Engine actions -> records ---------------------------------------------

def _random_game(game, n, seed):
  rng = np.random.default_rng(seed)
  state = game.init(jax.random.PRNGKey(0))
  step = jax.jit(game.step)
  actions = []
  for _ in range(n):
    legal = np.flatnonzero(np.asarray(state.legal_action_mask)[:-1])
    a = int(rng.choice(legal)) if len(legal) and rng.random() > 0.05 else (
        game.pass_action)
    if a == game.pass_action and actions and actions[-1] == a:
      break
    actions.append(a)
    state = step(state, a)
  return actions, state


def test_record_from_actions_round_trips_through_sgf():
  game = GO9
  actions, final = _random_game(game, 60, seed=1)
  r = sgf.record_from_actions(game, actions, result="B+R", black_name="me")
  assert r.komi == 0.0 and r.black_name == "me"
  r2 = sgf.parse_sgf(sgf.to_sgf(r))
  assert r2 == r
  replayed, states = sgf.record_to_states(r2, game)
  np.testing.assert_array_equal(replayed, actions)
  np.testing.assert_array_equal(np.asarray(states.board[-1]),
                                np.asarray(final.board))
  assert sgf.states_to_record(game, states, result="B+R",
                              black_name="me") == r


def test_record_from_actions_keeps_setup_and_player_to_move():
  game = GO9
  stones = np.zeros(81, np.int8)
  stones[[20, 60]] = 1
  start = game.from_board(stones, to_play=W)
  r = sgf.record_from_actions(game, [40, 30, 81], initial_state=start,
                              handicap=2)
  assert r.setup_black == (20, 60) and r.moves == ((W, 40), (B, 30), (W, 81))
  actions, states = sgf.record_to_states(r, game)
  assert sgf.states_to_record(game, states, handicap=2) == r


# -- Loading ---------------------------------------------------------------

GOOD = [b"(;SZ[9];B[ee];W[cc])", b"(;SZ[13]KM[6.5];B[dd])", FULL]
BAD = [b"(;SZ[30];B[aa])", b"(;SZ[9];B[ee]", b"(;SZ[9];W[zz])"]


def test_loader_skips_bad_records_in_a_tar(tmp_path):
  members = [(f"games/good{i}.sgf", d) for i, d in enumerate(GOOD)]
  members += [(f"games/bad{i}.sgf", d) for i, d in enumerate(BAD)]
  members += [("games/README.txt", b"not a record")]
  archive = tmp_path / "games.tar.gz"
  write_tar(archive, members)
  records, report = game_records.load_records(archive)
  assert len(records) == report.n_ok == 3 and report.n_bad == 3
  assert report.reasons == {"board size": 1, "syntax": 1,
                            "move off board": 1}
  assert all(r.source.startswith(str(archive)) for r in records)
  assert any("bad0.sgf" in s for s, _ in report.examples)
  assert game_records.load_records(archive, limit=2)[0] == records[:2]
  assert report.summary() == (
      "3 read, 3 skipped (board size: 1, syntax: 1, move off board: 1)")


def test_loader_reads_folders_and_survives_a_truncated_archive(tmp_path):
  (tmp_path / "sub").mkdir()
  (tmp_path / "a.sgf").write_bytes(GOOD[0])
  (tmp_path / "sub" / "b.sgf").write_bytes(BAD[0])
  write_tar(tmp_path / "sub" / "more.tar.gz",
            [(f"g{i}.sgf", GOOD[1] + b" " * 5000 + bytes([i]))
             for i in range(50)])
  whole = (tmp_path / "sub" / "more.tar.gz").read_bytes()
  (tmp_path / "cut.tgz").write_bytes(whole[:len(whole) // 2])
  records, report = game_records.load_records(tmp_path)
  assert report.reasons["archive"] == 1 and report.reasons["board size"] == 1
  assert report.n_bad == 2
  assert 1 + 50 < len(records) < 1 + 100  # some of the cut archive was read
  assert records[0].source.endswith("a.sgf")
  # The order is deterministic.
  assert [r.source for r in game_records.load_records(tmp_path)[0]] == [
      r.source for r in records]


def test_gzip_file_that_is_not_a_tar_is_reported(tmp_path):
  (tmp_path / "x.tar.gz").write_bytes(gzip.compress(b"plain text"))
  records, report = game_records.load_records(tmp_path)
  assert records == [] and report.reasons == {"archive": 1}


# -- Splitting -------------------------------------------------------------

def _synthetic(n):
  return [GameRecord(size=9, moves=[(B, i % 81), (W, (i // 81) % 81)],
                     source=f"g{i}.sgf") for i in range(n)]


def test_split_is_deterministic_by_game_and_keeps_duplicates_together():
  records = _synthetic(2000)
  train, val = game_records.split_records(records, 0.1)
  assert len(train) + len(val) == 2000 and 130 < len(val) < 270
  assert {r.source for r in train}.isdisjoint({r.source for r in val})
  again = game_records.split_records(list(reversed(records)), 0.1)[1]
  assert {r.source for r in again} == {r.source for r in val}
  # A duplicate under another name goes where its twin went.
  twin = GameRecord(size=9, moves=val[0].moves, source="copy.sgf")
  assert game_records.is_validation(twin, 0.1)
  # Another salt gives another split; splitting by name uses the source.
  assert game_records.split_records(records, 0.1, salt="x")[1] != val
  by_name = game_records.split_records(records, 0.1, by="name")[1]
  assert 130 < len(by_name) < 270
  assert game_records.split_records(records, 0.0)[1] == []
  with pytest.raises(ValueError, match="fraction"):
    game_records.split_records(records, 1.5)


def test_dedupe():
  records = _synthetic(5)
  copy = GameRecord(size=9, moves=records[2].moves, source="dup.sgf")
  unique, n = game_records.dedupe_records(records + [copy])
  assert unique == records and n == 1


# A random 5x5 game whose 76th move (found by search with simple ko only)
# recreates an earlier whole-board position without retaking a ko.
SUPERKO_GAME = [
    21, 15, 11, 5, 7, 0, 2, 1, 6, 22, 17, 23, 13, 16, 24, 18, 12, 10, 9, 20,
    4, 21, 14, 3, 8, 19, 24, 22, 16, 0, 20, 19, 21, 5, 1, 23, 3, 18, 10, 0,
    15, 5, 9, 10, 1, 2, 4, 3, 16, 14, 15, 8, 13, 20, 9, 11, 21, 17, 12, 6,
    24, 19, 23, 17, 22, 14, 20, 4, 18, 1, 9, 19, 17, 14, 9, 19]


def test_superko_only_when_asked():
  r = sgf.record_from_actions(Go(size=5), SUPERKO_GAME)
  actions, states = sgf.record_to_states(r)  # simple ko: plays through
  assert len(actions) == 76 and sgf.default_game(r, 76).move_cap >= 77
  boards = np.sign(states.board)
  assert any((boards[-1] == b).all() for b in boards[:-1])
  with pytest.raises(SGFError, match=r"move 76 .*positional superko"):
    sgf.record_to_states(r, Go(size=5, superko=True, max_moves=128))
