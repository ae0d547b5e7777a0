"""The experiments behind the README's tables, small enough for the suite."""

import importlib.util
import json
import os
import statistics

import pytest

import helpers

EXPERIMENTS = os.path.join(os.path.dirname(__file__), os.pardir,
                           "experiments")


def load(name):
  spec = importlib.util.spec_from_file_location(
      name, os.path.join(EXPERIMENTS, f"{name}.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


@pytest.fixture(scope="module")
def mcts_vs_random():
  return load("mcts_vs_random")


def test_uct_vs_random_agrees_with_the_published_table(mcts_vs_random):
  # The README's seed table at 50 games a row (seed 0) instead of 200.
  m = mcts_vs_random
  # 12 two-sample tests (4 rows x 3 outcomes): Bonferroni, so that a correct
  # implementation fails with probability <= 5% whatever the seed.
  z = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * 12))
  rows = {n: rec for n, rec, _ in m.run(num_games=50, seed=0,
                                         simulations=sorted(m.PUBLISHED))}
  for n, rec in rows.items():
    assert rec.games == 50
    assert m.consistent(n, rec, z), (n, rec)
  # It has power at this size: random play is told apart from every
  # published UCT row, and every UCT record from the published random row.
  for n in (10, 100, 1000):
    assert not m.consistent(n, rows[0], z), (n, rows[0])
    assert not m.consistent(0, rows[n], z), (n, rows[n])


def _result(stdout):
  last = stdout.strip().splitlines()[-1]
  assert last.startswith("RESULT "), stdout[-2000:]
  return dict(item.split("=", 1) for item in last.split()[1:])


def _metrics(run):
  with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
    return [json.loads(line) for line in f]


# The same run through the CLI (train_tictactoe.py is a thin wrapper over
# it) is in the default suite: tests/test_cli.py.
@pytest.mark.slow
def test_train_tictactoe_command_trains_evaluates_and_resumes(tmp_path):
  run = str(tmp_path / "ttt")
  args = ["experiments/train_tictactoe.py", "--output", run,
          "--eval-every", "2", "--eval-games", "2", "--checkpoint-every", "1"]
  out = helpers.run_python([*args, "--iterations", "1"], devices=1)
  assert _result(out.stdout)["iterations"] == "1"
  # The same OUTPUT resumes where it stopped instead of starting over; the
  # last iteration of a call is always judged against the solver.
  out = helpers.run_python([*args, "--iterations", "2"], devices=1)
  assert _result(out.stdout)["iterations"] == "2"
  metrics = _metrics(run)
  assert [m["iteration"] for m in metrics] == [1, 2]
  for m in metrics:  # 2 games a colour: at most 4 losses each way
    assert 0 <= m["solver_policy_losses"] <= 4, m
    assert 0 <= m["solver_search_losses"] <= 4, m


def test_train_go9_start_from_copies_the_committed_run(tmp_path):
  # Continuing the committed run to the iteration it already reached copies
  # its checkpoints, restores them and trains no further.
  run = str(tmp_path / "go9")
  out = helpers.run_python(
      ["experiments/train_go9.py", "--output", run, "--start-from",
       os.path.join("checkpoints", "go9"), "--iterations", "48",
       "--cpu-devices", "1"], devices=1)
  assert _result(out.stdout)["devices"] == "1"
  from alphago_jax import training
  from alphago_jax.training.checkpoint import latest_step
  ckpts = os.path.join(run, "checkpoints")
  assert latest_step(ckpts) == 48
  from alphago_jax import games
  from alphago_jax.cli import read_config
  from alphago_jax.cli.configs import STAGES
  stage, run_config, _ = read_config(run, STAGES)
  assert stage == "alphazero" and run_config.train == training.presets.go9()
  with open(os.path.join(EXPERIMENTS, os.pardir, "checkpoints", "go9",
                         "config.json"), encoding="utf-8") as f:
    assert run_config.train.architecture(games.make("go", size=9)) == (
        json.load(f))


def _results(run_dir, wins, games, opponent="gnugo-10"):
  os.makedirs(run_dir)
  with open(os.path.join(run_dir, "results.csv"), "w") as f:
    f.write("player,opponent,games,wins,draws,losses\n"
            f"mixing=0,{opponent},{games},{wins},0,{games - wins}\n")
  return str(run_dir)


def test_compare_matches_against_hand_computed_figures(tmp_path, capsys):
  compare = load("alphago/compare_matches")
  a = _results(tmp_path / "a", 60, 100)
  b = _results(tmp_path / "b", 45, 100)
  out = str(tmp_path / "cmp.json")
  assert compare.main([a, b, "--output", out]) == 0
  with open(out) as f:
    result = json.load(f)
  # 60/100: Wilson [0.5020, 0.6906]; 0.60 - 0.45 = 0.15 ± 1.96 ×
  # √(0.24/100 + 0.2475/100) = 0.15 ± 0.1368.
  assert result["first"]["interval"] == pytest.approx([0.5020, 0.6906],
                                                      abs=1e-4)
  d = result["first_minus_second"]
  assert d["difference"] == pytest.approx(0.15)
  assert d["interval"] == pytest.approx([0.0132, 0.2868], abs=1e-4)
  assert d["distinguished"]
  assert "difference: +15 points [+1, +29]" in capsys.readouterr().out
  # Closer records are not told apart.
  c = _results(tmp_path / "c", 55, 100)
  assert compare.main([a, c, "--output", out]) == 0
  with open(out) as f:
    assert not json.load(f)["first_minus_second"]["distinguished"]
  # A run without games against the opponent is refused by name.
  assert compare.main([a, b, "--opponent", "gnugo-1", "--output", out]) == 2
  assert "expected one row against 'gnugo-1'" in capsys.readouterr().err
