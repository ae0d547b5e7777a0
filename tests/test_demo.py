"""`alphago-jax demo` at a small budget: its table is labelled with the
reduced game count and adds up, and every board it prints is the board our
rules engine reaches by replaying the moves it printed (legal each one),
with the value estimates in range, the final count our engine's, the
winner the count's, and the final picture the last board."""

import functools
import re

import jax
import numpy as np
import pytest

from alphago_jax import games
from alphago_jax.cli import main as cli_main
from alphago_jax.games.sgf import result_string
from alphago_jax import engines

SMALL = ["demo", "--games", "16", "--table-simulations", "0", "--moves",
         "6", "--simulations", "8", "--svg", "None"]
MOVE = re.compile(r"^move (\d+): (Black|White) \((.*?)\) plays (\S+) \[")


def run_demo(capsys, *argv):
  status = cli_main(list(argv))
  out = capsys.readouterr()
  return status, out.out, out.err


def parse_board(lines):
  """The stones (+1 X, -1 O) and the marked point of a printed 9x9 board:
  a header line, 9 rows like `9 . X(O). ... 9`, a header line."""
  assert lines[0].split() == list("ABCDEFGHJ"), lines[0]
  stones, marked = [], None
  for r, line in enumerate(lines[1:10]):
    body = line[1:-1]  # Between the row labels.
    assert line.startswith(str(9 - r)) and line.endswith(str(9 - r)), line
    cells = body[1::2]
    stones += [{".": 0, "X": 1, "O": -1}[c] for c in cells]
    if "(" in body:
      marked = r * 9 + body.index("(") // 2
  return np.array(stones), marked


@functools.lru_cache(maxsize=None)
def rules():
  game = games.make("go", size=9, komi=7.5)
  return game, jax.jit(game.step), jax.jit(game.area_score)


def check_game(out, *, against_gnugo, moves=6):
  """Replays the printed game; returns the final state."""
  game, step, area_score = rules()
  state = game.init(jax.random.key(0))
  lines = out.splitlines()
  starts = [i for i, l in enumerate(lines) if MOVE.match(l)]
  assert moves is None or len(starts) == moves, out
  for k, i in enumerate(starts):
    number, side, who, vertex = MOVE.match(lines[i]).groups()
    assert int(number) == k + 1
    assert side == ("Black" if k % 2 == 0 else "White")
    network = who.startswith("network")
    assert network == (k % 2 == 0 or not against_gnugo), lines[i]
    j = i + 1
    if network and vertex != "resign":
      m = re.match(r"  value for \w+: network ([-+]\d\.\d\d), search "
                   r"([-+]\d\.\d\d); most visited of (\d+): ", lines[j])
      assert m, lines[j]
      assert all(-1 <= float(v) <= 1 for v in m.groups()[:2])
      assert int(m.group(3)) == simulations(out)
      j += 1
    action = game.vertex_to_action(vertex)
    assert bool(state.legal_action_mask[action]), f"move {k + 1} illegal"
    state = step(state, action)
    stones, marked = parse_board(lines[j:j + 11])
    np.testing.assert_array_equal(stones, np.asarray(game.stones(state)))
    assert marked == (action if action < game.num_points else None)
  count = result_string(float(area_score(state)))
  status = "the game is over" if moves is None else "the game goes on"
  assert (f"After {len(starts)} moves ({status}): the board counts {count} "
          f"by Tromp-Taylor") in out
  assert ("GNU Go counts " in out) == against_gnugo
  return state


def simulations(out):
  """The search budget the demo's player line states."""
  return int(re.search(r"(\d+) simulations a move", out).group(1))


def test_demo_plays_a_whole_game_then_a_small_budget_against_gnugo(
    capsys, monkeypatch, tmp_path):
  # One test, so both runs share the player and its compiled search (the
  # demo keeps them for the process, keyed by preset and simulations).
  has_gnugo = engines.find_gnugo() is not None
  # Without GNU Go the network plays itself, to the end, and says how to
  # install GNU Go: the winner is the side the final count favours, and
  # the picture is the last board with the heat map of the last search
  # that played on the board.
  svg = tmp_path / "final.svg"
  with monkeypatch.context() as m:
    m.setattr(engines, "find_gnugo", lambda: None)
    status, out, err = run_demo(capsys, "demo", "--games", "0",
                                "--simulations", "8", "--svg", str(svg))
  assert status == 0, err
  assert "== 1." not in out and "apt-get install gnugo" in out
  state = check_game(out, against_gnugo=False, moves=None)
  _, _, area_score = rules()
  assert bool(state.terminated)
  winner = "Black" if float(area_score(state)) > 0 else "White"
  assert f"\n{winner} (network " in out and " wins.\n" in out
  picture = svg.read_text()
  assert picture.startswith("<svg") and "by Tromp-Taylor" in picture
  searched = [int(n) for n in re.findall(
      r"^move (\d+): \w+ \(network [^)]*\) plays [A-HJ]\d", out, re.M)]
  assert f"shading: visits of the search at move {searched[-1]}" in picture
  # With GNU Go: the table at a small budget, then six moves against it.
  if not has_gnugo:
    pytest.skip("GNU Go is not installed (apt-get install gnugo)")
  status, out, err = run_demo(capsys, *SMALL)
  assert status == 0, err
  # The table says it is smaller than the published one, and its row adds up.
  assert "== 1. The published table, at 16 games a row instead of its 200 ==" \
      in out
  row = re.search(r"^\| 0 \(pure random\) \| ([\d.]+)% .*?\| ([\d.]+)% .*?"
                  r"\| ([\d.]+)% .*?\| (yes|NO) \|", out, re.M)
  assert row, out
  assert sum(float(x) for x in row.groups()[:3]) == pytest.approx(100, abs=.2)
  assert "every row consistent with the published one: yes" in out
  check_game(out, against_gnugo=True)


def test_demo_rejects_bad_budgets(capsys):
  for flag, value in (("--games", "-1"), ("--simulations", "0"),
                      ("--gnugo-level", "11"), ("--preset", "sl-policy-9x9"),
                      ("--preset", "no-such-preset")):
    status, out, err = run_demo(capsys, "demo", flag, value)
    assert status == 2 and err.startswith("error: --"), (flag, err)
    assert flag in err
