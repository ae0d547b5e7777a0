"""How match results are counted and scored, against hand-worked answers:
the win/draw/loss tally of returns, a colour-alternated match's sums,
score and Elo, the referee's result strings, its Canadian byo-yomi clock,
and the final Tromp-Taylor score and winner of refereed 5x5 games. The
mutation run (tools/mutation) runs this file once per mutant of
play/arena.py's tally, evaluation/match.py and evaluation/referee.py."""

import math

import numpy as np
import pytest
from scipy import optimize, stats as scipy_stats

from alphago_jax import play
from alphago_jax.play import arena
from alphago_jax.evaluation import referee as referee_lib
from alphago_jax.evaluation.match import MatchResult
from alphago_jax.evaluation.referee import RefereeResult, referee_game


def _wilson(k, n):
  ci = scipy_stats.binomtest(k, n).proportion_ci(method="wilson")
  return ci.low, ci.high


# -- Tallies -------------------------------------------------------------------

def test_tally_counts_signs_of_returns():
  # Two wins (any positive return), two draws (exactly 0), two losses.
  rec = arena.tally(np.array([1.0, 0.0, -1.0, 0.5, -0.25, 0.0]))
  assert (rec.wins, rec.draws, rec.losses, rec.games) == (2, 2, 2, 6)


def test_record_reads_the_players_column():
  results = play.GameResults(
      returns=np.array([[1.0, -1.0], [0.0, 0.0], [-1.0, 1.0], [1.0, -1.0]]),
      lengths=np.array([5, 9, 7, 6]), terminated=np.array([True] * 4))
  assert (play.record(results).wins, play.record(results).losses) == (2, 1)
  second = play.record(results, 1)
  assert (second.wins, second.draws, second.losses) == (1, 1, 2)


def test_rates_and_intervals_of_each_outcome():
  rec = play.Record(wins=3, draws=2, losses=5)
  assert [rec.rate(o) for o in arena.OUTCOMES] == [0.3, 0.2, 0.5]
  for outcome, k in zip(arena.OUTCOMES, (3, 2, 5)):
    assert rec.interval(outcome) == pytest.approx(_wilson(k, 10), abs=1e-12)
  with pytest.raises(ValueError, match="outcome must be one of"):
    rec.rate("ties")


def test_match_result_sums_colours_and_scores_draws_half():
  # As first 4-1-5, as second 3-2-5: 7 wins, 3 draws, 10 losses; 8.5 of
  # 20 points = 0.425, Elo 400 log10(0.425 / 0.575) = -52.51.
  res = MatchResult(as_first=play.Record(wins=4, draws=1, losses=5),
                    as_second=play.Record(wins=3, draws=2, losses=5))
  assert (res.wins, res.draws, res.losses, res.games) == (7, 3, 10, 20)
  assert res.score == 0.425
  assert res.elo == pytest.approx(400 * math.log10(0.425 / 0.575))
  assert res.elo == pytest.approx(-52.51, abs=0.01)
  # The Elo interval maps the Wilson interval of the 8.5 points.
  lo, hi = (400 * math.log10(p / (1 - p)) for p in _score_interval(8.5, 20))
  assert res.elo_interval == pytest.approx((lo, hi))
  assert (lo, hi) == pytest.approx((-201.9, 96.9), abs=0.05)
  assert res.summary() == (
      "20 games: wins 35.0% [18.1, 56.7], draws 15.0% [5.2, 36.0], "
      "losses 50.0% [29.9, 70.1]; Elo -53 [-202, +97]")
  assert [round(100 * x, 1) for k in (7, 3, 10) for x in _wilson(k, 20)] == [
      18.1, 56.7, 5.2, 36.0, 29.9, 70.1]


def _score_interval(points, n):
  """Wilson's interval by its definition, for a count with half points:
  the p0 whose score test |p - p0| / √(p0 (1 - p0) / n) = z, solved
  numerically on each side of p."""
  z = scipy_stats.norm.ppf(0.975)
  p = points / n
  f = lambda p0: abs(p - p0) - z * math.sqrt(p0 * (1 - p0) / n)
  return (optimize.brentq(f, 1e-12, p, xtol=1e-14),
          optimize.brentq(f, p, 1 - 1e-12, xtol=1e-14))


# -- The referee -----------------------------------------------------------------

@pytest.mark.parametrize("reason,winner,score,text", [
    ("score", 0, 3.5, "B+3.5"), ("move cap", 1, -0.5, "W+0.5"),
    ("score", None, 0.0, "0"), ("resign", 1, 12.0, "W+R"),
    ("time", 0, -4.0, "B+T"), ("forfeit", 1, 9.0, "W+F")])
def test_result_strings(reason, winner, score, text):
  r = RefereeResult(size=5, komi=0.5, moves=((0, 12),), winner=winner,
                    reason=reason, score=score)
  assert r.result == text
  rec = r.record("b", "w")
  assert (rec.result, rec.black_name, rec.white_name, rec.komi, rec.size,
          rec.moves, rec.rules) == (text, "b", "w", 0.5, 5, ((0, 12),),
                                    "Tromp-Taylor")


def test_canadian_clock_by_hand():
  """Main 10 s, then periods of 2 stones in 5 s."""
  c = referee_lib._Clock(left=10.0, stones=0, byo_time=5.0, byo_stones=2)
  assert c.spend(8.0) and (c.left, c.stones) == (2.0, 0)
  # 1 s over the main time: spent from the first period, whose first
  # stone this is.
  assert c.spend(3.0) and (c.left, c.stones) == (4.0, 1)
  # The period's second stone within its time: a fresh period.
  assert c.spend(4.0) and (c.left, c.stones) == (5.0, 2)
  assert c.spend(5.0) and (c.left, c.stones) == (0.0, 1)  # exactly in time
  # Over the period: lost; the clock starts a new period.
  assert not c.spend(5.5) and (c.left, c.stones) == (5.0, 2)
  # Main time only (no byo-yomi): using it all is fine, a hair more loses.
  c = referee_lib._Clock(left=10.0, stones=0, byo_time=0.0, byo_stones=0)
  assert c.spend(10.0) and (c.left, c.stones) == (0.0, 0)
  assert not c.spend(0.5) and c.left == 0.0


class _Engine:
  """A scripted GTP engine: plays `moves`, then passes; takes any move."""

  def __init__(self, moves, thinking=0.0):
    self.moves, self.thinking, self.sent = list(moves), thinking, []

  def send(self, command):
    self.sent.append(command)
    return ""

  def genmove(self, colour):
    _CLOCK[0] += self.thinking
    return self.moves.pop(0) if self.moves else "pass"

  def play(self, colour, vertex):
    pass


_CLOCK = [0.0]


@pytest.fixture
def fake_time(monkeypatch):
  """The referee's wall clock, advanced only by the engines' `thinking`."""
  _CLOCK[0] = 0.0
  monkeypatch.setattr(referee_lib.time, "perf_counter", lambda: _CLOCK[0])


@pytest.mark.parametrize("komi,winner,text", [
    (24.5, 0, "B+0.5"), (25.0, None, "0"), (25.5, 1, "W+0.5")])
def test_refereed_game_is_scored_by_area_and_komi(komi, winner, text,
                                                  fake_time):
  # Black's one stone owns the empty 5x5 board: 25 points, minus komi.
  r = referee_game(_Engine(["C3"]), _Engine([]), size=5, komi=komi)
  assert (r.reason, r.winner, r.score, r.result) == ("score", winner,
                                                     25 - komi, text)
  assert r.moves == ((0, 12), (1, 25), (0, 25))


def test_refereed_game_at_the_move_cap_is_scored_on_the_board(fake_time):
  # B C3, W C2, B B2, W D2: the cap; Black 2 stones, White 2, the rest
  # (21 points) touches both, so 2 - 2 - 0.5.
  r = referee_game(_Engine(["C3", "B2"]), _Engine(["C2", "D2"]), size=5,
                   komi=0.5, max_moves=4)
  assert (r.reason, r.winner, r.score, r.result) == ("move cap", 1, -0.5,
                                                     "W+0.5")
  assert len(r.moves) == 4


def test_refereed_clock_and_seconds(fake_time):
  # 1 s a move in periods of 1 stone: White thinking 1.5 s loses on time
  # at move 2; Black thought 0.25 s.
  black, white = _Engine(["C3"], thinking=0.25), _Engine(["C2"],
                                                          thinking=1.5)
  r = referee_game(black, white, size=5, komi=0.5, time_settings=(0, 1, 1))
  assert (r.reason, r.winner, r.result) == ("time", 0, "B+T")
  assert r.seconds == (0.25, 1.5) and "at move 2" in r.detail
  assert black.sent[-1] == "time_left black 1 1"
  # Not enforced for White: the game goes on to two passes and is scored.
  black, white = _Engine(["C3"], thinking=0.25), _Engine([], thinking=1.5)
  r = referee_game(black, white, size=5, komi=0.5, time_settings=(0, 1, 1),
                   enforce=(True, False))
  assert (r.reason, r.result) == ("score", "B+24.5")


def test_a_match_result_is_its_tallies_whatever_games_it_recorded():
  """The recorded games (for SGF files) ride along: two results of the
  same tallies are equal with or without them, the repr stays the
  tallies', and a result cannot be changed after the match."""
  import dataclasses  # pylint: disable=import-outside-toplevel
  first, second = (play.Record(wins=3, draws=0, losses=1),
                   play.Record(wins=2, draws=1, losses=1))
  plain = MatchResult(as_first=first, as_second=second)
  recorded = MatchResult(as_first=first, as_second=second,
                         game_results=("games as first", "games as second"))
  assert recorded == plain and recorded.wins == plain.wins == 5
  assert "games as" not in repr(recorded)
  with pytest.raises(dataclasses.FrozenInstanceError):
    plain.as_first = second  # type: ignore[misc]
