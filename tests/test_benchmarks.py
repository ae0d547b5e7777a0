"""The benchmark scripts still run end to end and print their RESULT line
(tiny settings: this checks the wiring, not the speed), and each RESULT
figure is the arithmetic of the table's own measurements (a ratio the
quotient of its two rates, a time the table's time)."""

import os
import re

import pytest

import helpers


def run_benchmark(script, *args):
  # XLA's default optimisation, not the suite's -O0 (tests/conftest.py):
  # a benchmark's programs run for longer than they take to compile.
  env = helpers.cpu_env()
  env.pop("XLA_FLAGS", None)
  out = helpers.run_python([os.path.join("benchmarks", script), *args],
                           timeout=900, env=env)
  last = out.stdout.strip().splitlines()[-1]
  assert last.startswith("RESULT "), out.stdout[-2000:]
  return out.stdout, dict(re.findall(r"(\w+)=(\S+)", last))


def test_uct_benchmark_splits_over_the_devices_it_is_given():
  table, result = run_benchmark("uct_tictactoe.py", "--simulations", "8",
                                "--repeats", "1", "--batches", "2",
                                "--devices", "2")
  assert "| JAX + mctx | 2 | 2 |" in table
  rows = {int(d): (float(rate.replace(",", "")), float(speedup),
                   float(step_ms), float(core_us))
          for d, rate, speedup, step_ms, core_us in re.findall(
              r"^\| JAX \+ mctx \| (\d) \| 2 \| ([\d,]+) \| ([\d.]+)x \| "
              r"([\d.]+) \| ([\d.]+) \|$", table, re.M)}
  assert sorted(rows) == [1, 2], table
  # Each speedup is its row's (the table rounds to 0.1).
  assert float(result["speedup_vs_python"]) == pytest.approx(
      rows[2][1], abs=0.051)
  assert float(result["speedup_vs_python_one_device"]) == pytest.approx(
      rows[1][1], abs=0.051)
  cores = os.cpu_count() or 1
  for rate, _, step_ms, core_us in rows.values():
    assert rate > 0
    # A batched step is 2 simulations; all cores' time over those.
    assert step_ms == pytest.approx(1e3 * 2 / rate, rel=0.02, abs=6e-4)
    assert core_us == pytest.approx(1e6 * cores / rate, rel=0.02)


def test_uct_benchmark_rejects_zero_devices():
  out = helpers.run_python(["benchmarks/uct_tictactoe.py", "--devices", "0"],
                           timeout=300, check=False)
  assert out.returncode == 2 and "--devices" in out.stderr


def test_go_env_benchmark_measures_the_pgx_peer():
  # Needs the bench extra (pgx); under ALPHAGO_JAX_STRICT=1 (CI) a missing
  # peer fails here instead of skipping.
  pytest.importorskip("pgx")
  table, result = run_benchmark("go_env.py", "--sizes", "9", "--batches",
                                "16", "--repeats", "1")
  row = re.search(r"\| 9x9 \| 16 \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) \|",
                  table)
  assert row, table[-2000:]
  ours, theirs = (float(row.group(i).replace(",", "")) for i in (1, 2))
  assert ours > 0 and theirs > 0
  # The ratio column is ours over pgx's (rounded to 0.01).
  assert float(row.group(3)) == pytest.approx(ours / theirs, rel=0.01,
                                              abs=0.006)
  # pgx's 9x9 state is 5,718 bytes, ours 2,228 (README).
  assert "| 9x9 | 2,228 | 5,718 |" in table
  assert result["state_bytes_9x9"] == "2228"


@pytest.mark.slow
def test_selfplay_benchmark_runs_both_sides():
  pytest.importorskip("pgx")
  _, result = run_benchmark(
      "selfplay.py", "--batch", "2", "--moves", "1", "--simulations", "2",
      "--blocks", "1", "--channels", "8", "--train-batch", "8",
      "--repeats", "1", "--devices", "2")
  assert result["ours_devices"] == "2"
  assert float(result["selfplay_ratio_vs_pgx"]) > 0


def test_go_features_benchmark_times_the_five_ways():
  table, result = run_benchmark("go_features.py", "--size", "9", "--batch",
                                "2", "--plies", "10", "--repeats", "1")
  for row in ("default (46 planes, bit sets)", "every move played",
              "48 planes with ladders", "read on the host (numba)",
              "48 planes in play"):
    assert row in table
  rows = re.findall(r"^\| [^|]+ \| ([\d.]+) \| ([\d,]+) \| [\d.]+ \|$",
                    table, re.M)
  assert len(rows) == 5, table
  names = ("ms_default", "ms_by_play", "ms_with_ladders", "ms_ladders_host",
           "ms_play_48")
  for name, (ms, rate) in zip(names, rows):
    got = float(result[name])  # to 0.01 ms; the table's to 0.1
    assert got > 0 and got == pytest.approx(float(ms), abs=0.051)
    # positions/s: the batch of 2 over the row's time.
    assert float(rate.replace(",", "")) == pytest.approx(
        2e3 / got, rel=0.0051 / got + 1e-3, abs=1)
  a, c = float(result["ms_default"]), float(result["ms_with_ladders"])
  # (c - a) / a of the unrounded times: a and c are printed to 0.005.
  assert float(result["ladder_cost_ratio"]) == pytest.approx(
      (c - a) / a, abs=0.051 + (c / a) * (0.0051 / a + 0.0051 / c))


# Two networks' games at batch 4: about half a minute on 2 cores, so in the
# slow suite; the committed full run (docs/results/value-data-benchmark.txt)
# is checked in the default suite (tests/test_readme_figures.py).
@pytest.mark.slow
def test_value_data_benchmark_ratio_is_its_two_throughputs():
  table, result = run_benchmark("value_data.py", "--batches", "4",
                                "--repeats", "1")
  games, evals, fwd, ratio = (float(result[k]) for k in (
      "games_per_s", "evals_per_s", "forward_evals_per_s", "ratio"))
  assert ratio == pytest.approx(evals / fwd, rel=2e-3)
  # Every game's plies evaluate both networks: at least 2 x 4 games x 9
  # plies of evaluations a generation (a 9x9 game is longer than 9 plies).
  assert evals >= 2 * 9 * games
  row = re.search(r"^\| 4 \| ([\d.]+) \| (\d+) \| (\d+) \| ([\d.]+) \|$",
                  table, re.M)
  assert row and float(row.group(1)) == pytest.approx(games, abs=0.06)
  assert int(row.group(2)) == round(evals) and int(row.group(3)) == round(fwd)


@pytest.mark.slow
def test_rollouts_pattern_mode_reports_incremental_full_and_random():
  table, result = run_benchmark("rollouts.py", "--pattern", "--sizes", "9",
                                "--batches", "2", "--repeats", "1",
                                "--devices", "2")
  for policy in ("pattern", "pattern-full", "random"):
    assert f"| 9x9 | 2 | {policy} |" in table
  assert float(result["pattern_us_per_move_core_9x9"]) > 0
  assert float(result["pattern_full_us_per_move_core_9x9"]) > 0
  assert float(result["pattern_vs_random_9x9"]) > 0
  assert result["pattern_us_per_move_core_19x19"] == "nan"
