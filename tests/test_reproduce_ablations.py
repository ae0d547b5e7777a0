"""`alphago-jax reproduce lambda` and `reproduce c-puct` on the committed
ablations (docs/ablations/): every number they print is recomputed here
from results.csv alone, with code of this file's own (Elo by Newton's
method on the Bradley-Terry likelihood, not the library's MM iteration),
and damaged result files are refused, named."""

import csv
import math
import os
import re
import shutil

import numpy as np
import pytest
import tyro

from alphago_jax.cli import sweep
from alphago_jax.evaluation import ablation
from helpers import ROOT, run_cli

RUNS = {"lambda": os.path.join(ROOT, "docs", "ablations", "lambda-ag"),
        "c-puct": os.path.join(ROOT, "docs", "ablations", "cpuct-ag")}
# AlphaGo 2016, Extended Data Table 7: Elo of λ = 0, 0.5 and 1 (19×19).
PAPER_LAMBDA = {"0": "2177", "0.5": "2890", "1": "2416"}
Z95 = 1.959963984540054


def _results(run):
  """{(player, opponent): (wins, draws, losses)} of run/results.csv."""
  with open(os.path.join(run, "results.csv"), newline="") as f:
    return {(r["player"], r["opponent"]): (int(r["wins"]), int(r["draws"]),
                                           int(r["losses"]))
            for r in csv.DictReader(f)}


def _wilson(k, n):
  p = k / n
  centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
  half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (
      1 + Z95 ** 2 / n)
  return centre - half, centre + half


def _elo(results, anchor):
  """{player: (Elo, low, high)}: Bradley-Terry by Newton's method, one
  virtual draw per pair that played (as the sweep fits), `anchor` = 0,
  95% intervals from the inverse observed information."""
  players = sorted({p for pair in results for p in pair} - {anchor})
  names = [anchor] + players
  k, at = len(names), {n: i for i, n in enumerate(names)}
  points, games = np.zeros((k, k)), np.zeros((k, k))
  for (a, b), (w, d, l) in results.items():
    i, j = at[a], at[b]
    points[i, j] += w + d / 2 + 0.5
    points[j, i] += l + d / 2 + 0.5
    games[i, j] += w + d + l + 1
    games[j, i] += w + d + l + 1
  theta = np.zeros(k)
  for _ in range(100):
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
    grad = (points - games * p).sum(axis=1)
    w = games * p * p.T
    info = np.diag(w.sum(axis=1)) - w
    step = np.linalg.solve(info[1:, 1:], grad[1:])
    theta[1:] += step
    if np.abs(step).max() < 1e-12:
      break
  scale = 400 / math.log(10)
  sd = np.sqrt(np.diag(np.linalg.inv(info[1:, 1:])))
  out = {anchor: (0.0, 0.0, 0.0)}
  for n, t, s in zip(players, theta[1:], sd):
    out[n] = (scale * t, scale * (t - Z95 * s), scale * (t + Z95 * s))
  return out


def _close(printed, value):
  """A printed rounding of `value` (integers: within half a unit)."""
  return abs(float(printed) - value) <= 0.5 + 1e-6


def _check_record(cell, wins, draws, losses):
  """`W-D-L, P% [LO, HI]` against the counts."""
  m = re.fullmatch(r"(\d+)-(\d+)-(\d+), (\d+)% \[(\d+), (\d+)\]", cell)
  assert m, cell
  assert tuple(map(int, m.groups()[:3])) == (wins, draws, losses), cell
  n = wins + draws + losses
  lo, hi = _wilson(wins, n)
  for printed, value in zip(m.groups()[3:], (wins / n, lo, hi)):
    assert _close(printed, 100 * value), (cell, value)


@pytest.mark.parametrize("name", ["lambda", "c-puct"])
def test_printed_numbers_equal_a_recomputation_from_results_csv(capsys,
                                                                name):
  status, out, err = run_cli(capsys, "reproduce", name)
  assert status == 0, err
  results = _results(RUNS[name])
  elo = _elo(results, "gnugo-1")
  field = "mixing" if name == "lambda" else "c_puct"
  variants = [p for p in sorted({p for pair in results for p in pair})
              if p.startswith(field + "=")]
  rows = {line.split(" | ")[0][2:]: [c.strip() for c in
                                      line.strip("| ").split(" | ")]
          for line in out.splitlines() if re.match(r"\| [\d.]+ \|", line)}
  assert sorted(rows) == sorted(v.split("=")[1] for v in variants)
  header = next(l for l in out.splitlines() if l.startswith("| " + (
      "λ" if name == "lambda" else "c_puct") + " |"))
  levels = re.findall(r"ours vs GNU Go (\d+)", header)
  for player in variants:
    value = player.split("=")[1]
    cells = rows[value]
    if name == "lambda":
      assert cells[2] == PAPER_LAMBDA.get(value, "–"), cells
      cells = cells[3:]
    else:
      assert cells[1] == ("its value" if value == "5" else "–"), cells
      cells = cells[2:]
    r, lo, hi = elo[player]
    m = re.fullmatch(r"([+-]\d+) \[([+-]\d+), ([+-]\d+)\]", cells[0])
    assert m and all(_close(a, b) for a, b in zip(m.groups(), (r, lo, hi))
                     ), (cells[0], elo[player])
    for level, cell in zip(levels, cells[1:]):
      if (player, f"gnugo-{level}") in results:
        _check_record(cell, *results[(player, f"gnugo-{level}")])
      else:
        assert cell == "–"
    rr = np.zeros(3, int)
    for (a, b), (w, d, l) in results.items():
      if a == player and b in variants:
        rr += (w, d, l)
      elif b == player and a in variants:
        rr += (l, d, w)
    _check_record(cells[-1], *rr)
  result = next(l for l in out.splitlines() if l.startswith("RESULT "))
  fields = dict(f.split("=", 1) for f in result.split()[1:])
  assert int(fields["games"]) == sum(sum(v) for v in results.values())
  printed = dict(pair.split(":") for pair in fields["elo"].split(","))
  assert sorted(printed) == sorted(v.split("=")[1] for v in variants)
  for player in variants:
    assert abs(float(printed[player.split("=")[1]]) - elo[player][0]) < 0.051
  best = max(variants, key=lambda v: elo[v][0]).split("=")[1]
  assert fields[f"{field}_ours_best".replace("mixing", "lambda")] == best
  if name == "lambda":
    assert fields["paper_best_lambda"] == "0.5"
  else:
    # The paper's c_puct, and Q on AlphaGo's scale, said in the table.
    assert fields["paper_c_puct"] == "5" and fields["q_range"] == "-1,1"
    assert "c_puct = 5 (Extended Data Table 5)" in out
    assert "raw mean outcome in [−1, 1]" in out
    assert "600 of 600 games." in out


def test_an_unfinished_run_is_said_to_be_one(capsys):
  # lambda-run stopped after 599 of its 1,400 games (docs/ablations.md).
  status, out, _ = run_cli(capsys, "reproduce", "lambda", "--run",
                           os.path.join(ROOT, "docs", "ablations",
                                        "lambda-run"))
  assert status == 0
  assert "599 of 1400 games (run unfinished)." in out


@pytest.mark.parametrize("name", ["lambda", "c-puct"])
def test_the_replay_command_builds_the_committed_config(capsys, monkeypatch,
                                                        tmp_path, name):
  status, out, _ = run_cli(capsys, "reproduce", name)
  assert status == 0
  command = next(l for l in out.splitlines()
                 if l.startswith("replay its games: alphago-jax sweep "))
  argv = command.split("alphago-jax sweep ")[1].split()
  stage, config = sweep.build_config(tyro.cli(sweep.SweepArgs, args=argv))
  assert (stage, config) == ablation.read_config(RUNS[name])
  # --rerun runs that command (into --output, with the flags after --),
  # then prints the new run's table: here a stand-in sweep that copies the
  # committed run.
  calls = []

  def fake_sweep(args):
    calls.append(args)
    out_dir = args[args.index("--output") + 1]
    os.makedirs(out_dir)
    for f in ("config.json", "results.csv", "elo.csv"):
      shutil.copy(os.path.join(RUNS[name], f), out_dir)
    return 0

  monkeypatch.setattr(sweep, "main", fake_sweep)
  new = tmp_path / "new"
  status, out, err = run_cli(capsys, "reproduce", name, "--rerun",
                             "--output", new, "--", "--max-jobs", "2")
  assert status == 0, err
  assert calls == [argv[:-2] + ["--output", str(new), "--max-jobs", "2"]]
  assert f"- ours: {os.path.relpath(new)}:" in out
  assert run_cli(capsys, "reproduce", name, "--", "--quick")[0] == 2


def _copy(tmp_path, name="lambda"):
  run = tmp_path / "run"
  run.mkdir()
  for f in ("config.json", "results.csv", "elo.csv"):
    shutil.copy(os.path.join(RUNS[name], f), run)
  return run


@pytest.mark.parametrize("damage,message", [
    (lambda run: os.remove(run / "results.csv"),
     "results.csv: no such file"),
    (lambda run: os.remove(run / "elo.csv"), "elo.csv: no such file"),
    (lambda run: os.remove(run / "config.json"),
     "config.json: no such file"),
    # A count edited so that the row no longer adds up.
    (lambda run: _edit(run / "results.csv", "mixing=0,mixing=0.25,20,12,",
                       "mixing=0,mixing=0.25,20,13,"),
     "results.csv: line 2: games=20 but wins + draws + losses = 21"),
    (lambda run: _edit(run / "results.csv", "mixing=0,mixing=0.5,20,8,",
                       "mixing=0,mixing=0.5,20,eight,"),
     "results.csv: line 3: wins must be a count, got 'eight'"),
    # Cut off in the middle of line 4, after its third field.
    (lambda run: (run / "results.csv").write_text(
        _cut((run / "results.csv").read_text(), line=4, fields=3)),
     "results.csv: line 4: 3 fields, the header has 14"),
    (lambda run: _edit(run / "results.csv", "mixing=0,gnugo-1,",
                       "mixing=0.3,gnugo-1,"),
     "results.csv: player 'mixing=0.3' is not in"),
    # Games and ratings that do not belong together.
    (lambda run: _edit(run / "elo.csv", "mixing=0,-62.5,", "mixing=0,-12.5,"),
     "elo.csv: mixing=0 is rated -12.5 there but -62.5"),
    (lambda run: shutil.copy(os.path.join(RUNS["c-puct"], "config.json"),
                             run), "config.json: the c-puct sweep over"),
    (lambda run: (run / "results.csv").write_bytes(b"\xff\xfe"),
     "results.csv: unreadable"),
])
def test_a_missing_or_damaged_file_is_named(capsys, tmp_path, damage,
                                            message):
  run = _copy(tmp_path)
  damage(run)
  status, out, err = run_cli(capsys, "reproduce", "lambda", "--run", run)
  assert status == 2 and out == "", err
  assert err.startswith("error: ") and message in err, err
  assert str(run) in err


def _cut(text, *, line, fields):
  lines = text.splitlines()
  return "\n".join(lines[:line - 1] + [
      ",".join(lines[line - 1].split(",")[:fields])])


def _edit(path, old, new):
  text = path.read_text()
  assert old in text
  path.write_text(text.replace(old, new, 1))
