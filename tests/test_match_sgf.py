"""One SGF per played game (`games.match_sgf`): what the writer puts in
(read back by our parser and by sgfmill), its refusals of bad input, and the
converter of a committed ablation's jobs (`alphago-jax sweep-sgf`), whose
games replay under our rules to the recorded scores."""

import json
import re
import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sgfmill import sgf as sgfmill_sgf

from alphago_jax import search
from alphago_jax.core.types import AnalysedAgent
from alphago_jax.games import match_sgf, sgf
from alphago_jax.games.go import BLACK, WHITE, Go
from alphago_jax.games.tictactoe import TicTacToe
from alphago_jax.play import arena

import go_reference
from helpers import run_cli

GO9 = Go(size=9, komi=7.5)
ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
# A committed 9x9 strength match against GNU Go level 10: 2 jobs, 100 games.
COMMITTED = os.path.join(ROOT, "docs", "ablations", "gumbel-l10-64-seed5")


def _game(**overrides):
  fields = dict(
      game=GO9,
      # E5, F5, pass, pass, then the batch's padding after the game's end.
      actions=np.array([40, 41, 81, 81, -1, -1], np.int32),
      black=match_sgf.Player("uct:16", {"num_simulations": 16,
                                        "c_puct": 1.5}),
      white=match_sgf.Player("gnugo-1", {"level": 1}),
      result=match_sgf.result_text("score", score=-7.5),
      seed=3, match="arena", index=2,
      settings={"games_per_colour": 4, "max_moves": None},
      winrates=np.array([0.54, 0.25, np.nan, 0.875, 0.0, 0.0]),
      visits=np.array([64, 16, np.nan, 64, 0, 0]))
  fields.update(overrides)
  return match_sgf.PlayedGame(**fields)


def test_written_game_reads_back_in_our_parser_and_sgfmill():
  data = _game().sgf()
  record = sgf.parse_sgf(data)
  assert record.moves == ((BLACK, 40), (WHITE, 41), (BLACK, 81),
                          (WHITE, 81))
  assert (record.size, record.komi, record.result) == (9, 7.5, "W+7.5")
  assert (record.black_name, record.white_name) == ("uct:16", "gnugo-1")
  assert record.rules == "Tromp-Taylor"

  game = sgfmill_sgf.Sgf_game.from_bytes(data)
  root = game.get_root()
  assert root.get("GM") == 1 and root.get("FF") == 4
  assert game.get_size() == 9 and game.get_komi() == 7.5
  assert root.get("RE") == "W+7.5" and root.get("GN") == "arena, game 2"
  comment = root.get("C")
  assert "Black: uct:16 (num_simulations=16, c_puct=1.5)" in comment
  assert "White: gnugo-1 (level=1)" in comment
  assert "Seed: 3" in comment and "games_per_colour=4" in comment
  nodes = game.get_main_sequence()[1:]
  assert [n.get_move() for n in nodes] == [
      ("b", (4, 4)), ("w", (4, 5)), ("b", None), ("w", None)]
  comments = [n.get("C") if n.has_property("C") else None for n in nodes]
  assert comments == ["winrate 0.54 visits 64", "winrate 0.25 visits 16",
                      None, "winrate 0.88 visits 64"]
  # Sabaki's SBKV is Black's winrate in percent: White's 0.25 is 75 %.
  sbkv = [n.get_raw("SBKV") if n.has_property("SBKV") else None
          for n in nodes]
  assert sbkv == [b"54.00", b"75.00", None, b"12.50"]


def test_game_without_search_statistics_has_no_move_comments():
  game = _game(winrates=None, visits=None,
               result=match_sgf.result_text("resign", winner=BLACK))
  parsed = sgfmill_sgf.Sgf_game.from_bytes(game.sgf())
  assert parsed.get_root().get("RE") == "B+R"
  assert not any(n.has_property("C") or n.has_property("SBKV")
                 for n in parsed.get_main_sequence()[1:])


@pytest.mark.parametrize("reason, kwargs, expected", [
    ("score", {"score": 3.5}, "B+3.5"),
    ("move cap", {"score": -0.5}, "W+0.5"),
    ("score", {"score": 0.0}, "0"),
    ("resign", {"winner": WHITE}, "W+R"),
    ("forfeit", {"winner": BLACK}, "B+F"),
    ("time", {"winner": WHITE}, "W+T"),
    ("unplayed", {}, "Void"),
])
def test_result_text_follows_sgf(reason, kwargs, expected):
  assert match_sgf.result_text(reason, **kwargs) == expected
  winner, margin = sgf.parse_result(expected)
  if reason in ("score", "move cap"):
    assert sgf.result_score(expected) == kwargs["score"]
  elif reason != "unplayed":
    assert (winner, margin) == (kwargs["winner"], None)


@pytest.mark.parametrize("make, words", [
    (lambda: match_sgf.result_text("abandoned"), "reason must be one of"),
    (lambda: match_sgf.result_text("forfeit"), "needs the winner"),
    (lambda: match_sgf.result_text("score", score=float("nan")),
     "needs a finite score"),
    (lambda: _game(game=TicTacToe()), "Go games only"),
    (lambda: _game(actions=np.array([40, -1, 41])), "before the last move"),
    (lambda: _game(actions=[40, 82]), "must be in [0, 81]"),
    (lambda: _game(winrates=[0.5, 1.5, 0.5, 0.5]), "winrates[1] = 1.5"),
    (lambda: _game(visits=[1, 2, 3]), "visits has 3 entries for 4 moves"),
    (lambda: _game(visits=[1, -2, 3, 4]), "visits[1] = -2"),
    (lambda: match_sgf.Player(""), "non-empty string"),
    (lambda: _game(result=""), "SGF RE string"),
])
def test_bad_input_is_refused_naming_the_problem(make, words):
  with pytest.raises((ValueError, TypeError)) as e:
    make()
  assert words in str(e.value)


def test_write_games_one_file_per_game_and_distinct_names(tmp_path):
  games = [_game(index=i) for i in range(3)]
  paths = match_sgf.write_games(str(tmp_path / "games"), games)
  assert [os.path.basename(p) for p in paths] == [
      "arena-0000.sgf", "arena-0001.sgf", "arena-0002.sgf"]
  # Nothing else is left behind (no temporary files).
  assert sorted(os.listdir(tmp_path / "games")) == sorted(
      os.path.basename(p) for p in paths)
  for p, g in zip(paths, games):
    with open(p, "rb") as f:
      assert f.read() == g.sgf()
  with pytest.raises(ValueError, match="arena-0001.sgf"):
    match_sgf.write_games(str(tmp_path / "twice"), [_game(index=1)] * 2)


def test_committed_sweep_converts_to_games_that_replay_to_its_outcomes(
    tmp_path, capsys):
  """The converter on a committed run: one SGF per recorded game, whose
  moves, players and result are the job's, and which an independent
  referee replays to the recorded Tromp-Taylor score."""
  status, out, err = run_cli(capsys, "sweep-sgf", COMMITTED, "--output",
                             tmp_path)
  assert status == 0, err
  folder = tmp_path / os.path.basename(COMMITTED)
  assert "100 games of 2 jobs" in out
  recorded = {}
  for job in ("gnugo10-000", "gnugo10-001"):
    with open(os.path.join(COMMITTED, "jobs", f"{job}.json")) as f:
      for i, g in enumerate(json.load(f)["games"]):
        recorded[f"{job}-{i:04d}.sgf"] = g
  assert sorted(os.listdir(folder)) == sorted(recorded)
  for name, g in recorded.items():
    with open(folder / name, "rb") as f:
      data = f.read()
    record = sgf.parse_sgf(data, source=name)
    assert (record.black_name, record.white_name) == (g["black"],
                                                      g["white"])
    # Its jobs keep no per-move statistics: no move comments.
    assert "winrates" not in g and b"winrate" not in data
    assert [GO9.action_to_vertex(a) for _, a in record.moves] == (
        g["moves"].split())
    # The converter replayed each game in our engine (`games.go`); here an
    # independent referee replays it too (positional superko): every move
    # legal and the final board's Tromp-Taylor score the recorded one.
    board, colour, seen = [0] * 81, 1, {(0,) * 81}
    for _, action in record.moves:
      if action != 81:
        played = go_reference.play(board, action, colour, 9)
        assert played is not None, (name, action)  # not occupied, suicide
        board = played[0]
        assert tuple(board) not in seen, (name, action)  # superko
      seen.add(tuple(board))
      colour = -colour
    score = go_reference.area_score(board, 9, 7.5)
    assert score == g["score"] == sgf.result_score(record.result)
    assert np.sign(score) == g["black_result"]

  # A record that disagrees with its replay is refused, the game named (in
  # the same test: the replay compiled above is reused).
  run = tmp_path / "run"
  shutil.copytree(COMMITTED, run)
  path = run / "jobs" / "gnugo10-000.json"
  with open(path) as f:
    job = json.load(f)
  game = job["games"][3]
  game["score"] += 2.0 * np.sign(game["score"])  # the winner's, by more
  with open(path, "w") as f:
    json.dump(job, f)
  status, _, err = run_cli(capsys, "sweep-sgf", run)
  assert status == 2
  assert "gnugo10-000, game 3" in err and "replayed board scores" in err
  status, out, _ = run_cli(capsys, "sweep-sgf", run, "--no-check")
  assert status == 0 and "100 games" in out
  assert len(os.listdir(run / "games")) == 100


def test_arena_writes_one_sgf_per_game_replaying_to_its_result(
    tmp_path, capsys):
  status, out, err = run_cli(capsys, "arena", "uct:2", "random", "--game",
                             "go9", "--games-per-colour", "1", "--seed", "4",
                             "--output", tmp_path, "--json")
  assert status == 0, err
  line = json.loads(out.strip().splitlines()[-1])
  folder = tmp_path / "games"
  assert sorted(os.listdir(folder)) == ["arena-0000.sgf", "arena-0001.sgf"]
  a_wins = 0
  for i, name in enumerate(sorted(os.listdir(folder))):
    with open(folder / name, "rb") as f:
      data = f.read()
    record = sgf.parse_sgf(data, source=name)
    a_colour = BLACK if i == 0 else WHITE  # A is Black in the first game
    assert (record.black_name, record.white_name) == (
        ("uct:2", "random") if i == 0 else ("random", "uct:2"))
    # Replayed under our rules: legal, over, and scored as recorded.
    _, states = sgf.record_to_states(record, GO9)
    assert bool(states.terminated[-1])
    assert float(states.score[-1]) == sgf.result_score(record.result)
    a_wins += record.winner == a_colour
    # uct:2's moves carry its search's winrate and visits, random's none.
    nodes = sgfmill_sgf.Sgf_game.from_bytes(data).get_main_sequence()[1:]
    for k, node in enumerate(nodes):
      if k % 2 == a_colour:
        assert re.fullmatch(r"winrate [01]\.\d\d visits 2", node.get("C"))
      else:
        assert not node.has_property("C")
    assert "Seed: 4" in sgfmill_sgf.Sgf_game.from_bytes(
        data).get_root().get("C")
  assert a_wins == line["wins"]


def test_recording_a_match_plays_the_games_it_plays_without():
  # An `AnalysedAgent` (random moves, a made-up winrate) against random
  # moves on 5x5: the same key gives the same games whether or not the
  # moves and statistics are recorded, and the record holds those games.
  go5 = Go(size=5)

  def analyse(states, key):
    actions = search.random_agent(states, key)
    return actions, actions.astype(jnp.float32) / 25.0, actions + 1
  agents = (AnalysedAgent(analyse), search.random_agent)
  key = jax.random.key(7)
  plain = arena.play(go5, agents, key, num_games=3)
  recorded = arena.play(go5, agents, key, num_games=3, record=True)
  for field in ("returns", "lengths", "terminated"):
    np.testing.assert_array_equal(getattr(plain, field),
                                  getattr(recorded, field))
  assert plain.moves is None
  for i in range(3):
    n = int(recorded.lengths[i])
    moves = np.asarray(recorded.moves[i])
    assert (moves[:n] >= 0).all() and (moves[n:] == -1).all()
    # Black (seat 0) analysed its moves, White did not.
    np.testing.assert_allclose(recorded.winrates[i, :n:2], moves[:n:2] / 25)
    np.testing.assert_array_equal(recorded.visits[i, :n:2], moves[:n:2] + 1)
    assert np.isnan(recorded.winrates[i, 1:n:2]).all()
    record = sgf.record_from_actions(go5, moves[:n])
    _, states = sgf.record_to_states(record, go5)
    assert float(states.score[-1]) == float(recorded.scores[i])
