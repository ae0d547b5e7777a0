"""Search-parameter ablations (`evaluation.ablation`, `alphago-jax sweep`):
the quick mode end to end against GNU Go, its files checked against each
other and every game replayed by the plain-Python referee, resume after an
interruption, the variants' shared search against each value alone, the
Elo anchoring against its closed form, and bad arguments."""

import csv
import functools
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import search
from alphago_jax.core.types import AnalysedAgent
from alphago_jax.search.alphago import AlphaGoParams, AlphaGoStatic, uniform_policy
from alphago_jax.search import tree_reuse
from alphago_jax.cli.main import main as cli
from alphago_jax.evaluation import ablation
from alphago_jax.evaluation import ablation_report as report
from alphago_jax.evaluation.gnugo_match import _jit_agent

import go_reference
from ttt_positions import GAME as TTT, position
from alphago_jax.games import sgf
from sgfmill import sgf as sgfmill_sgf
from alphago_jax.games import vertex as vertex_codec
from alphago_jax import engines

needs_gnugo = pytest.mark.skipif(engines.find_gnugo() is None,
                                 reason="GNU Go not installed")

# Three variants at λ = 0: the search compiles without rollouts, and with an
# odd number of variants the round robin and GNU Go jobs share one shape.
QUICK = ["custom", "--grid", "c_puct=1,2,5", "--mixing", "0", "--quick"]


def sweep(*args):
  return cli(["sweep", *args])


def read_csv(path):
  with open(path, newline="") as f:
    return list(csv.DictReader(f))


def job_games(run_dir):
  out = {}
  for name in sorted(os.listdir(os.path.join(run_dir, "jobs"))):
    with open(os.path.join(run_dir, "jobs", name)) as f:
      out[name] = json.load(f)["games"]
  return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """The quick mode run whole (A); interrupted after its first job, with a
  half-written job file left behind, then resumed (B); and while another
  live process holds its first job, then after that process died (C)."""
  if engines.find_gnugo() is None:
    pytest.skip("GNU Go not installed")
  root = tmp_path_factory.mktemp("ablation")
  whole, resumed, workers = (str(root / n) for n in ("whole", "resumed",
                                                      "workers"))
  assert sweep(*QUICK, "--output", whole) == 0
  os.makedirs(os.path.join(workers, "jobs"))
  holder = subprocess.Popen(["sleep", "60"])
  lock = os.path.join(workers, "jobs", "rr-000.lock")
  with open(lock, "w") as f:
    f.write(str(holder.pid))
  try:
    assert sweep(*QUICK, "--output", workers) == 0
    assert sorted(os.listdir(os.path.join(workers, "jobs"))) == [
        "gnugo1-000.json", "rr-000.lock"]
  finally:
    holder.kill()
    holder.wait()
  assert sweep(*QUICK, "--output", workers) == 0  # the lock is stale now
  assert sorted(os.listdir(os.path.join(workers, "jobs"))) == [
      "gnugo1-000.json", "rr-000.json"]
  assert sweep(*QUICK, "--output", resumed, "--max-jobs", "1") == 0
  first = os.listdir(os.path.join(resumed, "jobs"))
  assert first == ["rr-000.json"]
  first_path = os.path.join(resumed, "jobs", first[0])
  before = (os.stat(first_path).st_mtime_ns, open(first_path, "rb").read())
  stray = os.path.join(resumed, "jobs", "gnugo1-000.json.tmp-12345")
  with open(stray, "w") as f:
    f.write('{"job": "gnugo1-000", "games": [')  # killed mid-write
  assert sweep(*QUICK, "--output", resumed) == 0
  after = (os.stat(first_path).st_mtime_ns, open(first_path, "rb").read())
  assert not os.path.exists(stray)
  # Once more: nothing left to play, nothing counted twice.
  assert sweep("--resume", resumed) == 0
  return whole, resumed, before, after, workers


@needs_gnugo
def test_quick_run_files_agree_with_each_other(runs):
  run_dir = runs[0]
  for name in ("config.json", "results.csv", "elo.csv", "table.md",
               "plot.png"):
    assert os.path.getsize(os.path.join(run_dir, name)) > 0, name
  stage, config = ablation.read_config(run_dir)
  assert stage == "custom" and config.num_variants == 3
  assert config.gnugo_levels == (1,)
  rows = read_csv(os.path.join(run_dir, "results.csv"))
  names = ["c_puct=1", "c_puct=2", "c_puct=5"]
  # Three round-robin pairings and three against GNU Go: variants first.
  assert [(r["player"], r["opponent"]) for r in rows] == [
      ("c_puct=1", "c_puct=2"), ("c_puct=1", "c_puct=5"),
      ("c_puct=1", "gnugo-1"), ("c_puct=2", "c_puct=5"),
      ("c_puct=2", "gnugo-1"), ("c_puct=5", "gnugo-1")]
  games = job_games(run_dir)
  records = [g for gs in games.values() for g in gs]
  for r in rows:
    n = int(r["games"])
    assert n == config.round_robin_games if r["opponent"] in names else (
        n == config.gnugo_games)
    assert int(r["wins"]) + int(r["draws"]) + int(r["losses"]) == n
    assert int(r["black_games"]) == n // 2  # colours alternated
    mine = [g for g in records if {g["black"], g["white"]} == {
        r["player"], r["opponent"]}]
    wins = sum(g["black_result"] * (1 if g["black"] == r["player"] else -1)
               > 0 for g in mine)
    assert (len(mine), wins) == (n, int(r["wins"]))
    lo, hi = float(r["win_rate_low"]), float(r["win_rate_high"])
    assert lo <= int(r["wins"]) / n <= hi
  elo = {r["player"]: r for r in read_csv(os.path.join(run_dir, "elo.csv"))}
  assert set(elo) == set(names) | {"gnugo-1"}
  assert float(elo["gnugo-1"]["elo"]) == 0.0  # the anchor
  assert float(elo["gnugo-1"]["elo_low"]) == float(elo["gnugo-1"]["elo_high"])
  for name, r in elo.items():
    played = sum(int(x["games"]) for x in rows
                 if name in (x["player"], x["opponent"]))
    assert int(r["games"]) == played
    assert float(r["elo_low"]) <= float(r["elo"]) <= float(r["elo_high"])
  # The files read back as the run's own summary says.
  summary = ablation.load_summary(run_dir)
  assert report.read_results_csv(os.path.join(run_dir, "results.csv")) == (
      summary.pairings)
  assert report.read_elo_csv(os.path.join(run_dir, "elo.csv")) == {
      n: float(f"{r:.1f}") for n, (r, _, _) in summary.ratings.items()}
  table = open(os.path.join(run_dir, "table.md")).read()
  assert "raw Q in [−1, 1]" in table
  assert f"Played: {len(records)} of {len(records)} games." in table
  with open(os.path.join(run_dir, "config.json")) as f:
    record = json.load(f)
  assert record["command"] == "sweep" and record["version"]


@needs_gnugo
def test_every_game_replays_in_the_reference_referee(runs):
  # An independent engine: every move legal under positional superko, and
  # the recorded Tromp-Taylor score equal to the referee's.
  config = ablation.read_config(runs[0])[1]
  size = 9
  for games in job_games(runs[0]).values():
    for g in games:
      ref = go_reference.Referee(size, superko=True)
      moves = g["moves"].split()
      for vertex in moves:
        action = vertex_codec.vertex_to_action(vertex, size)
        ref.play(None if action == size * size else action)
      assert g["plies"] == len(moves) <= config.max_moves
      score = go_reference.area_score(ref.board, size, config.komi)
      assert g["score"] == score
      if not g["resigned"]:
        assert g["black_result"] == int(np.sign(score))


@needs_gnugo
def test_every_game_is_written_as_an_sgf_of_its_job(runs):
  # One SGF per game of each finished job, named by job and game, holding
  # the job's players, moves and result; a resumed run writes the same.
  config = ablation.read_config(runs[0])[1]
  for run_dir in (runs[0], runs[1]):
    folder = os.path.join(run_dir, "games")
    expected = {}
    for name, games in job_games(run_dir).items():
      for g in games:
        expected[f"{name[:-len('.json')]}-{g['game']:04d}.sgf"] = g
    assert sorted(os.listdir(folder)) == sorted(expected)
    for file_name, g in expected.items():
      with open(os.path.join(folder, file_name), "rb") as f:
        data = f.read()
      record = sgf.parse_sgf(data, source=file_name)
      assert (record.black_name, record.white_name) == (g["black"],
                                                        g["white"])
      assert " ".join(vertex_codec.action_to_vertex(a, 9)
                      for _, a in record.moves) == g["moves"]
      assert record.komi == config.komi and record.size == 9
      if g["resigned"] or g["forfeited"]:
        letter = "R" if g["resigned"] else "F"
        assert record.result == "BW"[g["black_result"] < 0] + "+" + letter
      else:
        assert sgf.result_score(record.result) == g["score"]
      assert f"Seed: {config.seed}" in data.decode()
      # Each move a variant searched carries its winrate and visits (all
      # num_simulations: no tree reuse); GNU Go's and the random opening
      # plies carry nothing.
      names = config.variant_names()
      nodes = sgfmill_sgf.Sgf_game.from_bytes(data).get_main_sequence()[1:]
      comments = [n.get("C") if n.has_property("C") else None
                  for n in nodes]
      assert len(g["winrates"]) == len(g["visits"]) == g["plies"] == len(
          comments)
      for ply, (w, v, c) in enumerate(zip(g["winrates"], g["visits"],
                                          comments)):
        mover = (g["black"], g["white"])[ply % 2]
        if mover in names and ply >= config.random_opening_moves:
          assert 0 <= w <= 1 and w == round(w, 3)
          assert v == config.num_simulations
          assert c == f"winrate {w:.2f} visits {v}"
        else:
          assert w is None and v is None and c is None
  whole, resumed = (os.path.join(r, "games") for r in runs[:2])
  for name in os.listdir(whole):
    with open(os.path.join(whole, name), "rb") as a, open(
        os.path.join(resumed, name), "rb") as b:
      assert a.read() == b.read(), name


@needs_gnugo
def test_recorded_statistics_are_the_searchs_on_the_replayed_position(runs):
  # The first move our variants searched in a GNU Go job (ply 2, after the
  # random opening, as Black in the first half of the games), searched again
  # from the recorded moves with the match's key for that ply: the same
  # moves, winrates and visits. The programs compiled for the run serve.
  from alphago_jax.evaluation.gnugo_match import _compiled
  run_dir = runs[0]
  _, config = ablation.read_config(run_dir)
  job = next(j for j in ablation.plan(config) if j.level is not None)
  with open(os.path.join(run_dir, "jobs", f"{job.name}.json")) as f:
    games = json.load(f)["games"]
  network = ablation.load_network(config.network, config.komi)
  game = network.game
  g = len(job.sides) * config.chunk
  ply = config.random_opening_moves
  assert ply % 2 == 0 and len(games) == 2 * g
  assert all(r["plies"] > ply and not r["resigned"] for r in games)
  init, advance, _ = _compiled(game)
  init_key, key = jax.random.split(job.key(config.seed))
  states = init(init_key, 2 * g)
  for t in range(ply + 1):
    key, agent_key, _ = jax.random.split(key, 3)
    if t < ply:
      moves = [game.vertex_to_action(r["moves"].split()[t]) for r in games]
      states, _ = advance(states, jnp.asarray(moves, jnp.int32),
                          jnp.zeros(2 * g, bool),
                          jnp.asarray(np.repeat([0, 1], g), jnp.int32))
  params, _ = config.values()
  agent = ablation.variant_agent(
      game, network.policy_fn, network.value_fn, config.static(),
      network.variables,
      jax.tree.map(lambda x: x[np.asarray([a for a, _ in job.sides])],
                   params))
  actions, winrates, visits = _jit_agent(agent)(
      jax.tree.map(lambda x: x[:g], states), agent_key)
  for i in range(g):
    assert game.action_to_vertex(int(actions[i])) == (
        games[i]["moves"].split()[ply])
    assert games[i]["winrates"][ply] == round(float(winrates[i]), 3)
    assert games[i]["visits"][ply] == int(visits[i]) == (
        config.num_simulations)


@needs_gnugo
def test_resumed_run_equals_the_uninterrupted_one(runs):
  whole, resumed, before, after, workers = runs
  assert before == after  # the finished job was not played again
  for other in (resumed, workers):
    assert job_games(other) == job_games(whole)
    for name in ("results.csv", "elo.csv"):
      assert read_csv(os.path.join(other, name)) == read_csv(
          os.path.join(whole, name))


@needs_gnugo
def test_resume_with_other_settings_is_refused(runs, capsys):
  run_dir = runs[0]
  assert sweep(*QUICK, "--simulations", "8", "--output", run_dir) == 2
  err = capsys.readouterr().err
  assert "num_simulations: 4 there, 8 here" in err


@pytest.mark.parametrize("args,message", [
    (["custom", "--grid", "lambda=0,1"], "no field 'lambda'"),
    (["custom", "--grid", "mixing=0,1.5"], "mixing"),
    (["custom", "--grid", "c_puct=1,1"], "repeated value"),
    (["custom", "--grid", "c_puct"], "FIELD=V1,V2"),
    (["custom"], "--grid"),
    (["lambda", "--gnugo-games", "30"], "gnugo_games=30"),
    (["lambda", "--gnugo-levels", "11"], "gnugo_levels"),
    (["lambda", "--round-robin-games", "3", "--chunk", "5"],
     "round_robin_games=3"),
    (["lambda", "--simulations", "0"], "num_simulations"),
    (["lambda", "--rollout-policy", "nonsense"], "nonsense"),
    (["c-puct", "--mixing", "2"], "mixing"),
    (["lambda"], "--output"),
    (["lambda", "--variant", "nope"], "unknown AlphaGo search variant"),
    (["lambda", "--variant", "gumbel", "--reuse-tree"],
     "does not reuse trees"),
    (["c-puct", "--variant", "gumbel"], "does not read 'c_puct'"),
    (["--resume", "nowhere"], "no such file"),
])
def test_bad_arguments_are_rejected_by_name(args, message, tmp_path, capsys):
  if message != "--output" and args[0] != "--resume":
    args = [*args, "--output", str(tmp_path / "run")]
  assert sweep(*args) == 2
  assert message in capsys.readouterr().err
  assert not os.path.exists(tmp_path / "run" / "jobs")


def test_help_shows_the_presets_and_an_example(capsys):
  assert cli(["sweep", "--help"]) == 0
  out = capsys.readouterr().out
  assert "examples:" in out and "alphago-jax sweep lambda" in out
  assert "c-puct" in out and "--quick" in out


def _value(variables, obs):
  del variables
  flat = obs.reshape(obs.shape[0], -1).astype(jnp.float32)
  return jnp.tanh(flat @ jnp.linspace(-1.0, 1.0, flat.shape[1]))


def _two_values_four_games():
  """Two c_puct values at λ = 0, and four tic-tac-toe positions (two
  games a value)."""
  params = AlphaGoParams(c_puct=np.float32([0.3, 4.0]),
                                mixing=np.float32([0.0, 0.0]),
                                virtual_loss=np.float32([3.0, 3.0]),
                                rollout_temperature=np.float32([1.0, 1.0]),
                                random_symmetry=np.float32([0.0, 0.0]))
  states = jax.tree.map(lambda *x: jnp.stack(x), *[
      position(m) for m in ([], [4], [0, 4, 1], [0, 3])])
  return params, states


def test_group_moves_equal_each_value_alone():
  # Tic-tac-toe, a uniform prior and a fixed value: two groups of two games
  # with different c_puct, in one program, play what each value plays alone
  # with its group's key, and report that search's root value as the
  # winrate and its visits.
  static = AlphaGoStatic(num_simulations=6, use_rollouts=False)
  params, states = _two_values_four_games()
  key = jax.random.key(7)
  make = functools.partial(ablation.variant_agent, TTT, uniform_policy,
                           _value, static, None)
  # As the matches run it: both agents share one compiled program.
  agent = make(params)
  assert isinstance(agent, AnalysedAgent)
  together, winrates, visits = _jit_agent(agent)(states, key)
  swapped = _jit_agent(make(jax.tree.map(lambda x: x[::-1], params)))(
      states, key)[0]
  alone = jax.jit(lambda p, s, k: search.alphago_search(
      TTT, uniform_policy, _value, (None, None), k, s, config=static,
      params=p))
  keys = jax.random.split(key, 2)
  for k in range(2):
    p = jax.tree.map(lambda x: x[k], params)
    s = jax.tree.map(lambda x: x[2 * k:2 * k + 2], states)
    out = alone(p, s, keys[k])
    part = slice(2 * k, 2 * k + 2)
    np.testing.assert_array_equal(together[part], out.action)
    np.testing.assert_allclose(winrates[part], (out.root_value + 1) / 2,
                               rtol=1e-6)
    np.testing.assert_array_equal(visits[part], 6)  # num_simulations
  assert (0 <= np.asarray(winrates)).all() and (
      np.asarray(winrates) <= 1).all()
  # The two values play differently here, so each group used its own.
  assert not np.array_equal(together, swapped)


def test_gumbel_variant_groups_equal_each_value_alone():
  # The same for the Gumbel variant over λ (value network against random
  # rollouts): what the registry names is what the ablation plays.
  static = AlphaGoStatic(num_simulations=6, variant="gumbel")
  params, states = _two_values_four_games()
  params = params.replace(mixing=np.float32([0.0, 1.0]))
  key = jax.random.key(8)
  together, winrates, visits = _jit_agent(ablation.variant_agent(
      TTT, uniform_policy, _value, static, None, params))(states, key)
  # One program for both values (jitted: eagerly the search would compile
  # its loops op by op, twice).
  alone_fn = jax.jit(lambda p, s, k: search.gumbel_alphago_search(
      TTT, uniform_policy, _value, (None, None), k, s, static=static,
      params=p))
  keys = jax.random.split(key, 2)
  for k in range(2):
    p = jax.tree.map(lambda x: x[k], params)
    s = jax.tree.map(lambda x: x[2 * k:2 * k + 2], states)
    alone = alone_fn(p, s, keys[k])
    np.testing.assert_array_equal(together[2 * k:2 * k + 2], alone.action)
    np.testing.assert_allclose(winrates[2 * k:2 * k + 2],
                               (alone.root_value + 1) / 2, rtol=1e-6)
  np.testing.assert_array_equal(visits, 6)


@needs_gnugo
def test_gumbel_variant_sweeps_end_to_end(tmp_path):
  # `alphago-jax sweep --variant gumbel`: a quick λ sweep plays and
  # reports, and its recorded command rebuilds its config.
  from alphago_jax.cli import sweep as sweep_cli
  run = str(tmp_path / "gumbel")
  assert sweep("custom", "--grid", "mixing=0,0.5,1", "--variant", "gumbel",
               "--quick", "--output", run) == 0
  stage, config = ablation.read_config(run)
  assert config.variant == "gumbel" and config.static().variant == "gumbel"
  rows = read_csv(os.path.join(run, "results.csv"))
  assert sum(int(r["games"]) for r in rows) == config.games_planned() > 0
  with open(os.path.join(run, "table.md"), encoding="utf-8") as f:
    settings = f.read().split("## ")[0]
  # The report names the search it ran, and only parameters it reads.
  assert "variant 'gumbel'" in settings and "PUCT" not in settings
  assert "c_puct" not in settings
  import tyro
  again = sweep_cli.command_for(stage, config)
  assert again[again.index("--variant") + 1] == "gumbel"
  assert sweep_cli.build_config(tyro.cli(sweep_cli.SweepArgs,
                                         args=again))[1] == config


def test_reuse_tree_flag_round_trips_through_the_recorded_command():
  from alphago_jax.cli import sweep as sweep_cli
  import tyro
  argv = ["custom", "--grid", "c_puct=1", "--mixing", "0", "--reuse-tree",
          "--simulations", "512", "--gnugo-levels", "10",
          "--round-robin-games", "0"]
  stage, config = sweep_cli.build_config(tyro.cli(sweep_cli.SweepArgs,
                                                  args=argv))
  assert config.reuse_tree and config.static().tree_capacity == 1024
  again = sweep_cli.command_for(stage, config)
  assert "--reuse-tree" in again
  assert sweep_cli.build_config(tyro.cli(sweep_cli.SweepArgs,
                                         args=again))[1] == config
  plain = sweep_cli.build_config(tyro.cli(
      sweep_cli.SweepArgs, args=[a for a in argv if a != "--reuse-tree"]))[1]
  assert not plain.reuse_tree and "--reuse-tree" not in (
      sweep_cli.command_for(stage, plain))
  with pytest.raises(ValueError, match="reuse_tree must be a bool"):
    ablation.custom(grid=(("c_puct", (1.0,)),), round_robin_games=0,
                    reuse_tree=1)


def test_random_symmetry_flag_round_trips_and_reaches_the_variants():
  from alphago_jax.cli import sweep as sweep_cli
  import tyro
  argv = ["custom", "--grid", "c_puct=1,2", "--mixing", "0",
          "--random-symmetry", "--gnugo-levels", "10",
          "--round-robin-games", "0"]
  stage, config = sweep_cli.build_config(tyro.cli(sweep_cli.SweepArgs,
                                                  args=argv))
  assert config.random_symmetry
  np.testing.assert_array_equal(config.values()[0].random_symmetry, [1, 1])
  again = sweep_cli.command_for(stage, config)
  assert "--random-symmetry" in again
  assert sweep_cli.build_config(tyro.cli(sweep_cli.SweepArgs,
                                         args=again))[1] == config
  # Swept as a grid field: one variant each way, named for tables.
  swept = ablation.custom(grid=(("random_symmetry", (0.0, 1.0)),),
                          mixing=0.0, round_robin_games=0)
  np.testing.assert_array_equal(swept.values()[0].random_symmetry, [0, 1])
  assert swept.variant_names() == ["random_symmetry=0", "random_symmetry=1"]
  with pytest.raises(ValueError, match="random_symmetry must be 0 or 1"):
    ablation.custom(grid=(("random_symmetry", (0.0, 0.5)),), mixing=0.0,
                    round_robin_games=0)


def test_reusing_variants_continue_each_games_own_tree():
  # With reuse_tree the variants' agent carries each game's search tree: a
  # zero tree is a fresh search, and after our move and a reply each group
  # continues exactly as its value alone does with the same trees, from
  # subtrees a fresh search could not have grown.
  sims = 24
  static = AlphaGoStatic(num_simulations=sims, use_rollouts=False,
                                reuse_tree=True)
  params, states = _two_values_four_games()
  agent = ablation.variant_agent(TTT, uniform_policy, _value, static,
                                 None, params)
  assert isinstance(agent, search.CarryingAgent) and agent.analysed
  fn = _jit_agent(agent)
  (actions, _, visits), trees = fn(states, jax.random.key(1), None)
  zeros = jax.tree.map(jnp.zeros_like, trees)
  (again, _, _), fresh = fn(states, jax.random.key(1), zeros)
  np.testing.assert_array_equal(again, actions)
  np.testing.assert_array_equal(visits, sims)
  np.testing.assert_array_equal(fresh.children_visits, trees.children_visits)
  # Our move, then the reply the tree expected most.
  rows = np.arange(4)
  node = np.asarray(trees.children_index)[rows, 0, np.asarray(actions)]
  reply = np.argmax(np.asarray(trees.children_visits)[rows, node], -1)
  nxt = jax.vmap(TTT.step)(jax.vmap(TTT.step)(states, actions),
                           jnp.asarray(reply, jnp.int32))
  kept = tree_reuse.follow(trees, np.stack(
      [np.asarray(actions), reply], 1))
  assert (np.asarray(kept) > 0).all()
  key = jax.random.key(2)
  (actions2, winrates2, visits2), trees2 = fn(nxt, key, trees)
  alone = jax.jit(lambda p, s, k, t: search.alphago_search(
      TTT, uniform_policy, _value, (None, None), k, s, config=static,
      params=p, tree=t))
  keys = jax.random.split(key, 2)
  for k in range(2):
    part = lambda x: x[2 * k:2 * k + 2]
    out = alone(jax.tree.map(lambda x: x[k], params),
                jax.tree.map(part, nxt), keys[k], jax.tree.map(part, trees))
    np.testing.assert_array_equal(actions2[2 * k:2 * k + 2], out.action)
    np.testing.assert_allclose(winrates2[2 * k:2 * k + 2],
                               (out.root_value + 1) / 2, rtol=1e-6)
    np.testing.assert_array_equal(part(trees2.children_visits),
                                  out.search_tree.children_visits)
    assert (np.asarray(out.reused_nodes) > 0).all()
  # Each root kept its visits from the earlier search and added `sims`.
  before = np.asarray(trees.node_visits)[rows, np.asarray(kept)]
  np.testing.assert_array_equal(np.asarray(trees2.node_visits)[:, 0],
                                before + sims)
  # The root visits reported are its children's: the kept ones (all but
  # the root's own first visit) and this search's.
  np.testing.assert_array_equal(
      visits2, np.asarray(trees2.children_visits)[:, 0].sum(-1))
  np.testing.assert_array_equal(visits2, before - 1 + sims)


def _record(job, games):
  return {"job": job, "network": "net@1", "board_size": 9, "seconds": 1.0,
          "cpu_seconds": 1.0, "gnugo_cpu_seconds": 0.5, "games": games}


def _game(black, white, result, moves="D5", gnugo=None, score=7.5):
  return {"black": black, "white": white, "black_result": result,
          "score": score, "gnugo_score": gnugo, "plies": 1, "capped": False,
          "resigned": False, "moves": moves}


def test_summary_counts_and_elo_against_the_closed_form():
  # One variant, GNU Go level 1 only: 3 wins and 1 loss (one as Black of
  # each), so with one virtual draw the fitted Elo is 400 log10(3.5 / 1.5).
  config = ablation.AblationConfig(grid=(("c_puct", (5.0,)),),
                                   gnugo_levels=(1,), gnugo_games=4,
                                   round_robin_games=0, chunk=2)
  v, gg = "c_puct=5", "gnugo-1"
  games = [_game(v, gg, 1, "D5", gnugo=7.5), _game(v, gg, -1, "E5"),
           _game(gg, v, -1, "D5", gnugo=6.5), _game(gg, v, -1, "C3")]
  summary = report.summarize(config, [_record("gnugo1-000", games)])
  [p] = summary.pairings
  assert (p.player, p.opponent, p.wins, p.draws, p.losses) == (v, gg, 3, 0, 1)
  assert (p.black_games, p.black_wins, p.both_passed, p.scores_agree) == (
      2, 1, 2, 1)
  assert summary.ratings[gg] == (0.0, 0.0, 0.0)
  assert summary.ratings[v][0] == pytest.approx(400 * math.log10(3.5 / 1.5),
                                                abs=1e-6)
  assert summary.distinct_games == 4 and summary.complete
  # Rows for people: the same counts, the interval around the rate.
  assert "3-0-1 | 75%" in report.table_markdown(summary)
  [row] = list(csv.DictReader(report.results_csv(summary).splitlines()))
  assert (row["wins"], row["games"], row["scores_agree"]) == ("3", "4", "1")
  # The moves' search statistics are for the SGFs: the tables ignore them.
  analysed = [dict(g, winrates=[0.5], visits=[64]) for g in games]
  again = report.summarize(config, [_record("gnugo1-000", analysed)])
  assert again == summary
  assert report.table_markdown(again) == report.table_markdown(summary)


def test_cpu_per_move_counts_only_the_moves_we_chose():
  # 2 random opening plies (one each side), then: as Black in a 9-ply game
  # we search plies 2, 4, 6, 8 (4 moves); as White in an 8-ply game plies
  # 3, 5, 7 (3 moves); a round-robin game of 6 plies is all ours: 4 moves.
  config = ablation.AblationConfig(grid=(("c_puct", (1.0, 2.0)),),
                                   gnugo_levels=(10,), gnugo_games=4,
                                   round_robin_games=2, chunk=1,
                                   random_opening_moves=2)
  a, b, gg = "c_puct=1", "c_puct=2", "gnugo-10"
  vs_gnugo = [dict(_game(a, gg, 1), plies=9), dict(_game(gg, a, 1), plies=8)]
  rr = [dict(_game(a, b, 1), plies=6)]
  summary = report.summarize(config, [
      dict(_record("gnugo10-000", vs_gnugo), cpu_seconds=14.0),
      dict(_record("rr-000", rr), cpu_seconds=2.0)])
  assert summary.cost[gg][2:] == (14.0, 0.5, 7)
  assert summary.cost["round robin"][2:] == (2.0, 0.5, 4)
  table = report.table_markdown(summary)
  assert "| GNU Go 10 | 2 | 0.50 | 7.00 | 2.000 | 0.25 |" in table
  assert "| round robin | 1 | 1.00 | 2.00 | 0.500 | 0.50 |" in table


def test_anchor_falls_back_to_a_variant_before_gnugo_has_played():
  config = ablation.preset("lambda", gnugo_games=20, round_robin_games=10)
  names = config.variant_names()
  games = [_game(names[0], names[1], 1)] * 10
  summary = report.summarize(config, [_record("rr-000", games)])
  assert summary.anchor == names[0] and not summary.complete
  assert summary.ratings[names[0]] == (0.0, 0.0, 0.0)
  assert summary.ratings[names[1]][0] < 0
  assert set(summary.ratings) == set(names[:2])


def test_plan_interleaves_jobs_and_shares_one_shape():
  config = ablation.preset("lambda", gnugo_games=40, round_robin_games=10,
                           chunk=5)
  jobs = ablation.plan(config)
  assert [j.name for j in jobs] == [
      "rr-000", "gnugo1-000", "gnugo10-000", "gnugo1-001", "gnugo10-001"]
  # Every job: 10 groups (the pairs; each variant twice against GNU Go).
  assert {len(j.sides) for j in jobs} == {10}
  assert sorted(a for a, _ in jobs[1].sides) == sorted(list(range(5)) * 2)
  assert config.games_planned() == 10 * 10 + 2 * 5 * 40
  keys = {str(jax.random.key_data(j.key(0))) for j in jobs}
  seeds = {j.gnugo_seed(0) for j in jobs}
  assert len(keys) == len(seeds) == len(jobs)


@pytest.mark.slow
@needs_gnugo
def test_lambda_quick_run_survives_kill_9_and_shares_two_processes(
    tmp_path):
  # The λ preset (rollouts compiled in) in a subprocess, killed with
  # SIGKILL once its first job is on disk, then rerun with the same command
  # in two processes at once: every planned game once, the killed run's
  # job kept as it was.
  from helpers import ROOT, cpu_env  # pylint: disable=import-outside-toplevel
  out = str(tmp_path / "run")
  command = [sys.executable, "-m", "alphago_jax.cli", "sweep", "lambda",
             "--quick", "--gnugo-games", "12", "--output", out]
  proc = subprocess.Popen(command, cwd=ROOT, env=cpu_env(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
  first = os.path.join(out, "jobs", "rr-000.json")
  deadline = time.time() + 600
  while not os.path.exists(first) and proc.poll() is None:
    assert time.time() < deadline
    time.sleep(0.2)
  proc.send_signal(signal.SIGKILL)
  proc.wait()
  assert proc.returncode == -signal.SIGKILL  # killed, not finished
  assert len(os.listdir(os.path.join(out, "jobs"))) < 4
  kept = open(first, "rb").read()
  # Resumed by two processes at once: they share the remaining jobs.
  procs = [subprocess.Popen(command, cwd=ROOT, env=cpu_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
           for _ in range(2)]
  for p in procs:
    _, err = p.communicate(timeout=900)
    assert p.returncode == 0, err[-3000:]
  assert open(first, "rb").read() == kept
  config = ablation.read_config(out)[1]
  summary = report.summarize(config, ablation.finished_jobs(
      out, config).values())
  assert summary.complete and summary.games_played == 20 + 3 * 20
  # Every job once, no lock left behind.
  assert sorted(os.listdir(os.path.join(out, "jobs"))) == [
      "gnugo1-000.json", "gnugo1-001.json", "gnugo1-002.json",
      "rr-000.json"]


def test_job_with_games_gnugo_did_not_finish_is_read_back(tmp_path):
  # Regression: a job whose GNU Go died mid-game keeps the other games, and
  # the run must still read it (it was called damaged, stopping the run).
  config = ablation.AblationConfig(grid=(("c_puct", (5.0,)),),
                                   gnugo_levels=(1,), gnugo_games=4,
                                   round_robin_games=0, chunk=2)
  v, gg = "c_puct=5", "gnugo-1"
  games = [_game(v, gg, 1), _game(gg, v, -1), _game(gg, v, 1)]
  (tmp_path / "jobs").mkdir()
  path = tmp_path / "jobs" / "gnugo1-000.json"

  def write(**fields):
    path.write_text(json.dumps({**_record("gnugo1-000", games), **fields}))
  write(unplayed=1)
  [record] = ablation.finished_jobs(str(tmp_path), config).values()
  summary = report.summarize(config, [record])
  assert summary.games_played == 3 and not summary.complete
  write()  # Written before the count existed: fewer games only.
  assert len(ablation.finished_jobs(str(tmp_path), config)) == 1
  for bad in (dict(unplayed=0), dict(unplayed=2)):
    write(**bad)
    with pytest.raises(ValueError, match="damaged"):
      ablation.finished_jobs(str(tmp_path), config)


def test_a_lock_from_another_machine_is_never_taken_over(tmp_path):
  # A job's lock holds PID@HOST: one of a dead process of this machine (or
  # a bare pid, as older runs wrote) is a killed run's and is taken over;
  # one of another machine is left alone (its process cannot be seen here).
  (tmp_path / "jobs").mkdir()
  lock = tmp_path / "jobs" / "rr-000.lock"
  here = socket.gethostname()
  dead = subprocess.Popen(["true"])
  dead.wait()
  for holder, taken in ((f"{dead.pid}@{here}", True), (str(dead.pid), True),
                        (f"{os.getpid()}@{here}", False),
                        (str(os.getpid()), False),
                        (f"{dead.pid}@not-{here}", False)):
    lock.write_text(holder)
    path = ablation._claim(str(tmp_path), "rr-000")
    assert (path is not None) == taken, holder
    assert lock.read_text() == (f"{os.getpid()}@{here}" if taken else holder)


# -- Grids over static fields (compiled separately) ---------------------------

def _static_grid(sims=(16, 64), **fields):
  return ablation.custom(grid=(("num_simulations", sims),
                               ("c_puct", (1.0, 5.0))),
                         **{"gnugo_levels": (1,), "gnugo_games": 2,
                            "round_robin_games": 2, "chunk": 1, **fields})


def _jobs(config):
  """name -> (sides by variant name, key, GNU Go seed) of every job."""
  names = config.variant_names()
  return {j.name: (tuple((names[a], None if b < 0 else names[b])
                         for a, b in j.sides),
                   str(jax.random.key_data(j.key(0))), j.gnugo_seed(0))
          for j in ablation.plan(config)}


def test_static_grid_plans_a_job_set_per_configuration_and_cross_jobs():
  config = _static_grid()
  assert config.variant_names() == [
      "num_simulations=16,c_puct=1", "num_simulations=16,c_puct=5",
      "num_simulations=64,c_puct=1", "num_simulations=64,c_puct=5"]
  assert [(label, members) for label, members in config.static_groups()] == [
      ({"num_simulations": 16}, (0, 1)), ({"num_simulations": 64}, (2, 3))]
  assert [config.static(g).num_simulations for g in (0, 1)] == [16, 64]
  np.testing.assert_allclose(config.values()[0].c_puct, [1, 5, 1, 5])
  jobs = ablation.plan(config)
  assert [j.name for j in jobs] == [
      "sims16-rr-000", "sims64-rr-000", "sims16-vs-sims64-rr-000",
      "sims16-gnugo1-000", "sims64-gnugo1-000"]
  # A job never mixes static configurations on one side.
  assert jobs[2].sides == ((0, 2), (0, 3), (1, 2), (1, 3))
  assert config.games_planned() == 2 * (1 + 1 + 4) + 2 * 2 * 2
  # Each configuration's jobs are those of its sweep alone: same names,
  # players, keys and seeds; the cross job's key is none of theirs.
  mixed = _jobs(config)
  for sims in (16, 64):
    for name, job in _jobs(_static_grid(sims=(sims,))).items():
      assert mixed[name] == job
  keys = [k for _, k, _ in mixed.values()]
  assert keys.count(mixed["sims16-vs-sims64-rr-000"][1]) == 1
  # A grid of traced fields alone plans as a single program: no prefix.
  assert [j.name for j in ablation.plan(ablation.custom(
      grid=(("c_puct", (1.0, 5.0)),), gnugo_levels=(1,), gnugo_games=2,
      round_robin_games=2, chunk=1))] == ["rr-000", "gnugo1-000"]


def test_static_grid_labels_every_field_in_the_tables():
  from alphago_jax.cli import sweep as sweep_cli
  import tyro
  config = _static_grid(gnugo_levels=())
  a, b = "num_simulations=16,c_puct=1", "num_simulations=64,c_puct=5"
  summary = report.summarize(config, [
      _record("sims16-vs-sims64-rr-000", [_game(a, b, -1)])])
  assert summary.pairing(a, b).losses == 1
  rows = {r["player"]: r for r in csv.DictReader(
      report.elo_csv(summary).splitlines())}
  assert (rows[b]["num_simulations"], rows[b]["c_puct"]) == ("64", "5")
  table = report.table_markdown(summary)
  assert "simulations ∈ {16, 64}, c_puct ∈ {1, 5}" in table
  # The recorded command rebuilds the config.
  again = sweep_cli.command_for("custom", config)
  assert sweep_cli.build_config(tyro.cli(sweep_cli.SweepArgs,
                                         args=again))[1] == config


@pytest.mark.parametrize("grid,message", [
    (["num_simulations=16.5,64"],
     "num_simulations values must be positive integers, got 16.5"),
    (["num_simulations=0,4"], "num_simulations values must be positive"),
    (["rollout_policy=1,2"], "no field 'rollout_policy' can be swept"),
    (["leaves_per_step=1,3", "--simulations", "4"],
     "leaves_per_step=3: num_simulations=4 must be a multiple"),
])
def test_bad_static_grid_is_rejected_by_name(grid, message, tmp_path,
                                             capsys):
  assert sweep("custom", "--grid", "c_puct=1,2", *grid, "--output",
               str(tmp_path / "run")) == 2
  assert message in capsys.readouterr().err
  assert not os.path.exists(tmp_path / "run")


def test_static_grid_variant_plays_as_in_its_own_sweep():
  # 5x5 Go, a uniform prior and a fixed value, 4-ply games: a variant's
  # round-robin games in the grid over num_simulations are those of the
  # sweep of its num_simulations alone; across configurations, each side
  # plays with its own compiled search (one group a side, so that only one
  # more search compiles).
  from alphago_jax.games.go import Go
  network = ablation.Network(name="tiny", game=Go(size=5, komi=7.5),
                             policy_fn=uniform_policy, value_fn=_value,
                             variables=None)
  fields = dict(gnugo_levels=(), mixing=0.0, max_moves=4, network="tiny")
  mixed = _static_grid(sims=(1, 2), **fields)
  alone = _static_grid(sims=(2,), **fields)
  jobs = {j.name: j for j in ablation.plan(mixed)}
  timing = ("seconds", "cpu_seconds", "gnugo_cpu_seconds")
  strip = lambda r: {k: v for k, v in r.items() if k not in timing}
  [own] = ablation.plan(alone)
  assert strip(ablation.play_job(alone, own, network)) == strip(
      ablation.play_job(mixed, jobs[own.name], network))
  sims_only = ablation.custom(grid=(("num_simulations", (1, 2)),),
                              round_robin_games=2, chunk=1, **fields)
  [cross] = ablation.plan(sims_only)
  assert cross.name == "sims1-vs-sims2-rr-000"
  record = ablation.play_job(sims_only, cross, network)
  assert [(g["black"], g["white"]) for g in record["games"]] == [
      ("num_simulations=1", "num_simulations=2"),
      ("num_simulations=2", "num_simulations=1")]
