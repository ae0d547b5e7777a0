"""Where a game against GNU Go was decided (`evaluation.match_review`):
GNU Go's own count at its first pass against the final result."""

import os
import shutil
import subprocess
import sys

import jax
import numpy as np
import pytest

from alphago_jax.evaluation import match_review
from alphago_jax.games import sgf
from alphago_jax.games.go import Go
from alphago_jax import engines

ROOT = os.path.join(os.path.dirname(__file__), "..")
BLOCKS = os.path.join(ROOT, "docs", "results")
needs_gnugo = pytest.mark.skipif(engines.find_gnugo() is None,
                                 reason="GNU Go not installed")


def _record(block, name):
  path = os.path.join(BLOCKS, f"sl-policy-19-vs-gnugo10-{block}", name)
  with open(path, "rb") as f:
    return sgf.parse_sgf(f.read(), source=path)


@needs_gnugo
def test_a_game_thrown_away_after_gnugo_passed():
  # Seed 5, game 47: the network (White) led by 39.5 by GNU Go's count at
  # GNU Go's first pass (ply 312), then played the board out and lost by
  # 1.5 under Tromp-Taylor scoring.
  review = match_review.review_game(
      _record("seed5", "level10-047-white.sgf"), opening_plies=2)
  assert (review.gnugo_colour, review.plies, review.first_pass) == (0, 406,
                                                                    312)
  assert review.count_at_pass == -39.5 and review.result == 1.5
  assert review.decided_after_pass and not review.count_is_result


@needs_gnugo
def test_a_game_decided_before_gnugo_passed():
  # Seed 2, game 35: its ply 0, a random opening pass made for GNU Go, is
  # not GNU Go's; its own first pass comes at ply 320, where its count is
  # already the final B+9.5.
  review = match_review.review_game(
      _record("seed2", "level10-035-white.sgf"), opening_plies=2)
  assert review.first_pass == 320
  assert review.count_at_pass == review.result == 9.5
  assert review.count_is_result and not review.decided_after_pass
  # Without the opening plies excluded, the random pass would count.
  record = _record("seed2", "level10-035-white.sgf")
  assert match_review.first_pass(record, opening_plies=0) == 0
  assert match_review.first_pass(record, opening_plies=1) == 320


def test_a_resigned_game_has_no_score_and_gnugo_never_passed():
  review = match_review.review_game(_record("seed2", "level10-001-black.sgf"),
                                    opening_plies=2)
  assert review.result is None and review.winner == 0
  assert review.first_pass is None and review.count_at_pass is None


def _with(record, **fields):
  import dataclasses  # pylint: disable=import-outside-toplevel
  return dataclasses.replace(record, **fields)


def test_bad_records_are_refused_naming_the_file():
  record = _record("seed2", "level10-000-black.sgf")
  with pytest.raises(ValueError, match="level10-000-black.sgf: expected GNU"):
    match_review.review_game(_with(record, white_name="someone"))
  with pytest.raises(ValueError, match="exactly one side"):
    match_review.review_game(_with(record, black_name="GNU Go level 1"))
  with pytest.raises(ValueError, match="no result"):
    match_review.review_game(_with(record, result=None))
  with pytest.raises(ValueError, match="do not alternate"):
    match_review.review_game(_with(record, moves=record.moves[1:]))
  with pytest.raises(ValueError, match="setup stones"):
    match_review.review_game(_with(record, setup_black=(0,)))


# A ladder on 13x13, worked by hand. Black walls the White stone at (6, 6)
# in (White answers far away), White runs it out towards the top right
# corner, each White move giving the chain exactly two liberties and each
# Black move taking one, until White's (0, 10) leaves one and Black takes
# the chain at (0, 9). (row, col), row 0 the top row.
_OPENING = [(5, 6), (12, 0), (6, 5), (12, 1), (7, 7), (6, 6)]
_LADDER = [(7, 6), (6, 7), (6, 8), (5, 7), (4, 7), (5, 8), (5, 9), (4, 8),
           (3, 8), (4, 9), (4, 10), (3, 9), (2, 9), (3, 10), (3, 11),
           (2, 10), (1, 10), (2, 11), (2, 12), (1, 11), (1, 12), (0, 11),
           (0, 12), (0, 10), (0, 9)]
# The board at the end: the 13 White stones of the ladder are gone.
_AFTER_LADDER = """
.........X..X
..........X.X
.........X..X
........X..X.
.......X..X..
......X..X...
.....X..X....
......XX.....
.............
.............
.............
.............
OO...........
"""


def _game(points, size=13):
  return sgf.GameRecord(size=size, komi=7.5, moves=tuple(
      (i % 2, r * size + c) for i, (r, c) in enumerate(points)))


def test_a_ladder_run_out_and_captured_is_a_lost_atari_run():
  record = _game(_OPENING + _LADDER)
  # The engine agrees with the drawn board: the ladder was captured.
  game = Go(size=13)
  state = game.init(jax.random.PRNGKey(0))
  for _, a in record.moves:
    state = game.step(state, a)
  rows = ["".join({0: ".", 1: "X", -1: "O"}[int(v)] for v in row) for row in
          np.sign(np.asarray(state.board)).reshape(13, 13)]
  assert rows == _AFTER_LADDER.split()
  # White's 11 moves from (6, 7) to (0, 11) each left two liberties;
  # (0, 10) left one and is not an extension. Black never ran.
  assert match_review.lost_atari_run(record, 1) == 11
  assert match_review.lost_atari_run(record, 0) == 0
  # Each of those 11 ran into a ladder that works, by the ladder reading.
  assert match_review.into_ladders(record, 1) == (11, 11)
  assert match_review.into_ladders(record, 0) == (0, 0)


def test_a_ladder_that_escapes_is_not_a_lost_run():
  # A White stone at (3, 10) instead of (12, 1): White's (3, 9) joins it
  # with four liberties, the run of five ends there and the chain lives.
  opening = _OPENING[:3] + [(3, 10)] + _OPENING[4:]
  record = _game(opening + _LADDER[:12])
  assert match_review.lost_atari_run(record, 1) == 0
  # Its five extensions were escapes: the ladder reading sees the breaker.
  assert match_review.into_ladders(record, 1) == (5, 0)


def test_a_record_the_atari_runs_cannot_replay_is_refused_by_name():
  record = _with(_game([(3, 3), (3, 3)]), source="bad.sgf")
  with pytest.raises(ValueError, match="bad.sgf: move 42 of colour 1 is on "
                                       "an occupied point"):
    match_review.lost_atari_run(record, 0)
  with pytest.raises(ValueError, match="bad.sgf: setup stones"):
    match_review.lost_atari_run(_with(record, setup_black=(0,)), 0)
  with pytest.raises(ValueError, match="bad.sgf.*the point is occupied"):
    match_review.into_ladders(record, 0)
  with pytest.raises(ValueError, match="bad.sgf: setup stones"):
    match_review.into_ladders(_with(record, setup_black=(0,)), 0)


def test_summary_counts_from_the_side_of_gnugos_opponent():
  def review(gnugo, winner, result, count, run=0, gnugo_run=0,
             ladders=(0, 0, 0, 0)):
    return match_review.Review(
        source="x", gnugo_colour=gnugo, plies=10, winner=winner,
        result=result, first_pass=None if count is None else 5,
        count_at_pass=count, lost_atari_run=run,
        gnugo_lost_atari_run=gnugo_run, atari_extensions=ladders[0],
        into_ladders=ladders[1], gnugo_atari_extensions=ladders[2],
        gnugo_into_ladders=ladders[3])
  reviews = [
      review(1, 0, 3.5, 3.5, run=9, ladders=(4, 2, 1, 0)),  # won in play
      review(1, 1, -2.5, 10.5, run=5, ladders=(3, 0, 2, 1)),  # led, lost
      review(0, 1, -4.5, 6.5, gnugo_run=6),  # behind by its count, won
      review(0, 0, None, None, run=4, ladders=(1, 1, 0, 0)),  # resigned
      review(1, None, 0.0, 0.0),          # a draw: no winner, no flip
  ]
  assert match_review.summarize(reviews) == {
      "games": 5, "won": 2, "gnugo_passed": 4, "count_is_result": 2,
      "lost_when_ahead": 1, "won_when_behind": 1,
      "lost_with_ladder_run": 1, "gnugo_ladder_runs": 1,
      "atari_extensions": 8, "into_ladders": 3, "games_into_ladders": 2,
      "gnugo_atari_extensions": 3, "gnugo_into_ladders": 1,
      "gnugo_games_into_ladders": 1}


@needs_gnugo
def test_command_writes_the_table_and_result(tmp_path):
  folder = tmp_path / "match"
  folder.mkdir()
  for name in ("level10-047-white.sgf", "level10-001-black.sgf"):
    shutil.copy(os.path.join(BLOCKS, "sl-policy-19-vs-gnugo10-seed5"
                             if "047" in name else
                             "sl-policy-19-vs-gnugo10-seed2", name),
                folder / name)
  out = subprocess.run(
      [sys.executable, os.path.join(ROOT, "experiments", "alphago",
                                    "match_review.py"), str(folder),
       "--opening-plies", "2", "--workers", "2",
       "--csv", str(tmp_path / "r.csv")],
      capture_output=True, text=True, check=True).stdout
  assert out.strip().splitlines()[-1] == (
      "RESULT games=2 gnugo_passed=1 count_is_result=0 lost_when_ahead=1 "
      "won_when_behind=0 lost_with_ladder_run=0 gnugo_ladder_runs=0 "
      "atari_extensions=1 into_ladders=1 games_into_ladders=1 "
      "gnugo_atari_extensions=7 gnugo_into_ladders=0 "
      "gnugo_games_into_ladders=0")
  assert "| ply 312 | W+39.5 | B+1.5 |" in out
  rows = (tmp_path / "r.csv").read_text().splitlines()
  assert rows[0] == ("source,gnugo_colour,plies,result,first_pass,"
                     "count_at_pass,lost_atari_run,gnugo_lost_atari_run,"
                     "atari_extensions,into_ladders,gnugo_atari_extensions,"
                     "gnugo_into_ladders")
  plies = len(_record("seed2", "level10-001-black.sgf").moves)
  assert rows[1].endswith(f"level10-001-black.sgf,W,{plies},B+R,,,0,0,0,0,"
                          f"5,0")
  # The network's one atari extension in seed 5's game 47 was captured,
  # and it ran into a working ladder.
  assert rows[2].endswith(",B,406,B+1.5,312,W+39.5,1,0,1,1,2,0")


def test_command_refuses_a_folder_without_games(tmp_path):
  out = subprocess.run(
      [sys.executable, os.path.join(ROOT, "experiments", "alphago",
                                    "match_review.py"), str(tmp_path)],
      capture_output=True, text=True)
  assert out.returncode == 1 and "no .sgf file" in out.stderr
