"""The notebooks run through a real Jupyter kernel (nbclient), at the small
budget (`ALPHAGO_JAX_NOTEBOOK_BUDGET=small`), and what they print or write
is checked against independent references: the tour's against a
pure-Python negamax and the seed's published table; the 9x9 game against
our rules engine replayed here and a GNU Go of the test's own."""

import ast
import functools
import json
import os
import re
import sys

import nbclient
import nbformat
import numpy as np
import pytest

import python_uct
from test_experiments import load
from alphago_jax.core import stats
from alphago_jax import play
from alphago_jax import engines


NOTEBOOKS = os.path.join(os.path.dirname(__file__), os.pardir, "notebooks")
# Every notebook in notebooks/ must be listed here with its checks (a new
# one fails test_every_notebook_is_checked until it is).
CHECKED = ("alphago_pipeline.ipynb", "go9_vs_gnugo.ipynb",
           "tour_tictactoe.ipynb")


def execute(name, tmp_path, monkeypatch, budget="small"):
  """Runs notebook `name` in a fresh kernel of this Python, working
  directory `tmp_path`; returns the executed notebook and its stdout."""
  # A kernel spec of this interpreter, ahead of any other on the Jupyter
  # path, so the kernel imports this checkout's environment.
  spec = tmp_path / "jupyter" / "kernels" / "python3"
  spec.mkdir(parents=True)
  (spec / "kernel.json").write_text(json.dumps({
      "argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
               "{connection_file}"],
      "display_name": "alphago-jax tests", "language": "python"}))
  monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
  monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
  monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
  monkeypatch.setenv("ALPHAGO_JAX_NOTEBOOK_BUDGET", budget)
  monkeypatch.setenv("ALPHAGO_JAX_NOTEBOOK_OUTPUT", str(tmp_path))
  with open(os.path.join(NOTEBOOKS, name)) as f:
    nb = nbformat.read(f, as_version=4)
  client = nbclient.NotebookClient(
      nb, timeout=600, kernel_name="python3",
      resources={"metadata": {"path": str(tmp_path)}})
  try:
    client.execute()
  except nbclient.exceptions.CellExecutionError as e:
    raise AssertionError(f"{name}: a cell failed:\n{e}") from None
  out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                for o in c.outputs if o.output_type == "stream"
                and o.name == "stdout")
  assert out, f"{name} printed nothing"
  return nb, out


def test_every_notebook_is_checked():
  assert tuple(sorted(n for n in os.listdir(NOTEBOOKS)
                      if n.endswith(".ipynb"))) == CHECKED


# -- The tour ------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def negamax(board, player):
  """Exact value for `player` (1 = X, 2 = O) to move, on the pure-Python
  boards of benchmarks/python_uct.py."""
  if python_uct.winner(board):
    return -1  # The last mover won.
  moves = python_uct.moves(board)
  if not moves:
    return 0
  return max(-negamax(python_uct.play(board, m, player), 3 - player)
             for m in moves)


def printed(out, label):
  """The Python literal printed after `label` on its own line."""
  return ast.literal_eval(re.search(f"^{re.escape(label)}(.*)$", out,
                                    re.M).group(1).strip())


def record(out, who):
  m = re.search(f"^{re.escape(who)}: (\\d+) wins, (\\d+) draws, "
                f"(\\d+) losses$", out, re.M)
  assert m, f"no record of {who!r} in:\n{out}"
  return tuple(int(x) for x in m.groups())


# The small budget in the default suite; the full one, what a person gets,
# in the slow suite.
BUDGETS = ["small", pytest.param("full", marks=pytest.mark.slow)]


@pytest.mark.parametrize("budget", BUDGETS)
def test_tour_tictactoe(tmp_path, monkeypatch, budget):
  _, out = execute("tour_tictactoe.ipynb", tmp_path, monkeypatch, budget)
  assert f"budget: {budget}" in out
  # The position: X at 4, 8; O at 0, 2; X to move.
  m = re.search(r"^([.XO]{3})\n([.XO]{3})\n([.XO]{3})$", out, re.M)
  board = tuple(".XO".index(c) for c in "".join(m.groups()))
  assert board == (2, 0, 2, 0, 1, 0, 0, 0, 1), board
  # Exact move values against an independent negamax: 1 draws (blocks O's
  # top row), the rest lose.
  exact = {m: -negamax(python_uct.play(board, m, 1), 2)
           for m in python_uct.moves(board)}
  assert exact == {1: 0, 3: -1, 5: -1, 6: -1, 7: -1}
  assert printed(out, "exact move values for X:") == exact
  # UCT-500 blocks in every copy of the position.
  chosen = printed(out, "moves chosen:")
  assert chosen[1] == sum(chosen) > 0, chosen
  # Minimax and alpha-beta agree, alpha-beta visiting fewer nodes; the empty
  # board is a draw.
  (v_mm, n_mm), (v_ab, n_ab) = (printed(out, "minimax  (value, nodes):"),
                                printed(out, "alphabeta (value, nodes):"))
  assert v_mm == v_ab == 0 and n_ab < n_mm
  assert printed(out, "empty board:")[0] == negamax((0,) * 9, 1) == 0
  # UCT-100 against random: consistent with the seed's published row (the
  # 95% Newcombe test of experiments/mcts_vs_random.py).
  experiment = load("mcts_vs_random")
  w, d, l = record(out, "UCT-100 vs random")
  rec = play.Record(wins=w, draws=d, losses=l)
  assert rec.games == (64 if budget == "small" else 128)
  assert experiment.consistent(100, rec), rec
  # The 4-iteration network with search: perfect play never loses, so it
  # wins none, as X or O, and it loses some ("still loses to perfect
  # play"); it beats random play "most of the time": more wins as X than a
  # random X (the seed's 117 of 200) and as O than a random O (58 of 200),
  # each by a 95% Newcombe interval of the difference above 0.
  wins = losses = 0
  for colour in "XO":
    w, _, l = record(out, f"vs perfect as {colour}")
    wins, losses = wins + w, losses + l
  assert wins == 0 and losses > 0, out
  for colour, random_wins in (("X", 117), ("O", 58)):
    w, d, l = record(out, f"vs random as {colour}")
    lo, _ = stats.difference_interval(w, w + d + l, random_wins, 200)
    assert lo > 0, (colour, out)


# -- The 9x9 game against GNU Go ----------------------------------------------

def _gnugo():
  if engines.find_gnugo() is None:
    pytest.skip("GNU Go is not installed (apt-get install gnugo)")


def _replay(game_data):
  """Our rules engine, replaying the notebook's game: every move must be
  legal for the side to move. Returns the game, the states before each
  move and the final state."""
  import jax  # pylint: disable=import-outside-toplevel
  from alphago_jax import games  # pylint: disable=import-outside-toplevel
  game = games.make("go", size=9, komi=game_data["komi"], superko=True)
  step = jax.jit(game.step)
  state = game.init(jax.random.key(0))
  before = []
  for i, move in enumerate(game_data["moves"]):
    assert not bool(state.terminated), f"move {i + 1} after the end"
    assert move["colour"] == int(state.current_player), move
    before.append(state)
    if move["vertex"] == "resign":
      assert i == len(game_data["moves"]) - 1 and move["player"] == "gnugo"
      state = game.resign(state)
      break
    action = game.vertex_to_action(move["vertex"])
    assert bool(state.legal_action_mask[action]), (
        f"move {i + 1} {move['vertex']} is illegal in our engine")
    state = step(state, action)
  return game, before, state


@pytest.mark.parametrize("budget", BUDGETS)
def test_go9_vs_gnugo(tmp_path, monkeypatch, budget):
  _gnugo()
  # pylint: disable=import-outside-toplevel
  from alphago_jax.games import sgf
  from alphago_jax.evaluation.watch import gnugo_score
  nb, out = execute("go9_vs_gnugo.ipynb", tmp_path, monkeypatch, budget)
  assert f"budget: {budget}" in out
  with open(tmp_path / "game.json") as f:
    data = json.load(f)
  assert data["simulations"] == (16 if budget == "small" else 256)
  game, before, final = _replay(data)
  moves = data["moves"]
  assert len(moves) > 20, len(moves)
  # The network plays Black, GNU Go White, alternately.
  assert [m["player"] for m in moves] == [
      "network" if m["colour"] == 0 else "gnugo" for m in moves]
  for move, state in zip(moves, before):
    if move["player"] != "network":
      continue
    legal = np.asarray(state.legal_action_mask)
    policy = np.asarray(move["policy"])
    visits = np.asarray(move["visits"])
    # The policy heat map is a distribution over the legal moves; the
    # visits are the search's, all on legal moves, one per simulation.
    np.testing.assert_allclose(policy.sum(), 1.0, atol=1e-5)
    assert (policy >= 0).all() and not policy[~legal].any()
    assert (visits >= 0).all() and not visits[~legal].any()
    assert visits.sum() == data["simulations"], (move["number"],
                                                 visits.sum())
    assert -1 <= move["value"] <= 1 and -1 <= move["search_value"] <= 1
    assert visits[game.vertex_to_action(move["vertex"])] > 0
  # The score the notebook reports is our Tromp-Taylor count of the board
  # replayed here; GNU Go's is what a GNU Go of our own says of it.
  assert data["finished"] == bool(final.terminated)
  ended = bool(final.terminated) and not data["resigned"]
  ours = float(final.score if ended else game.area_score(final))
  assert data["score"] == pytest.approx(ours)
  with engines.GnuGoPlayer(game, level=data["gnugo_level"], seed=0,
                       extra_args=("--capture-all-dead",)) as judge:
    judge.replay(game.vertex_to_action(m["vertex"]) for m in moves
                 if m["vertex"] != "resign")
    theirs = gnugo_score(judge)
    dead = sorted(judge.engine.send("final_status_list dead").split())
  assert data["gnugo_score"] == theirs and data["gnugo_dead"] == dead
  if data["finished"] and not data["resigned"]:
    # Finished: with GNU Go's dead stones off the board (none, when it
    # captured them all itself), our count is GNU Go's.
    # (Without dead stones the board is the final one as it is: no
    # rebuilding, whose legality pass costs seconds of op-by-op dispatch.)
    board = final
    if dead:
      stones = np.asarray(game.stones(final)).astype(int)
      for v in dead:
        stones[game.vertex_to_action(v)] = 0
      board = game.from_board(stones)
    assert float(game.area_score(board)) == theirs
    if not dead:
      assert ours == theirs
  assert f"our score (Tromp-Taylor): {sgf.result_string(ours)}" in out
  # The SGF record replays to the same game.
  with open(tmp_path / "game.sgf", "rb") as f:
    rec = sgf.parse_sgf(f.read())
  assert [game.action_to_vertex(a) for _, a in rec.moves] == [
      m["vertex"] for m in moves if m["vertex"] != "resign"]
  # Heat-map pictures were drawn (SVG in HTML), shading only legal points
  # of the positions they show.
  html = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code"
          for o in c.outputs if o.output_type == "display_data"
          and "text/html" in o.get("data", {})]
  heat = [int(p) for h in html[:1] for p in re.findall(
      r'class="heat"[^>]*data-point="(\d+)"', h)]
  assert heat and all(bool(before[0].legal_action_mask[p]) for p in heat)


# -- The AlphaGo pipeline -----------------------------------------------------

def _first_moves(archive, n):
  """The first record's first `n` moves as GTP vertices, read with sgfmill
  and tarfile (not our SGF or data code)."""
  import tarfile  # pylint: disable=import-outside-toplevel
  from sgfmill import sgf as sgfmill  # pylint: disable=import-outside-toplevel
  with tarfile.open(archive) as tar:
    member = next(m for m in tar if m.name.endswith(".sgf"))
    game = sgfmill.Sgf_game.from_bytes(tar.extractfile(member).read())
  vertices = []
  for node in game.get_main_sequence()[1:n + 1]:
    _, move = node.get_move()
    row, col = move
    vertices.append(f"{'ABCDEFGHJ'[col]}{row + 1}")
  return vertices


@pytest.mark.parametrize("budget", BUDGETS)
def test_alphago_pipeline(tmp_path, monkeypatch, budget):
  # pylint: disable=import-outside-toplevel
  import jax
  from alphago_jax.games import go_features
  from alphago_jax.games.go import Go
  from alphago_jax.zoo import checkpoints, loaders
  from alphago_jax.models.policy import PolicyNet
  from alphago_jax.models.value import ValueNet, make_value_fn
  from alphago_jax.training import value_net
  _, out = execute("alphago_pipeline.ipynb", tmp_path, monkeypatch, budget)
  assert f"budget: {budget}" in out
  with open(tmp_path / "pipeline.json") as f:
    data = json.load(f)
  root = os.path.join(NOTEBOOKS, os.pardir)
  # The position: the unseen archive's first game, replayed here.
  game = Go(size=9)
  vertices = _first_moves(os.path.join(root, "data", "gnugo9",
                                       "games-00008.tar.gz"), 20)
  assert [game.action_to_vertex(a) for a in data["actions"]] == vertices
  state = game.init(jax.random.key(0))
  step = jax.jit(game.step)
  for v in vertices:
    assert bool(state.legal_action_mask[game.vertex_to_action(v)]), v
    state = step(state, game.vertex_to_action(v))
  legal = np.asarray(state.legal_action_mask)
  features = jax.jit(functools.partial(go_features.alphago_features, game),
                     static_argnums=1)
  # p_σ's prior and v_θ's value: the networks applied here to planes
  # computed from this replay.
  ckpts = checkpoints.checkpoints_root()
  net = loaders.load(os.path.join(ckpts, "sl9"))
  model, variables = net.model, net.variables
  planes = features(state, tuple(model.features))[None]
  logits = np.asarray(PolicyNet(model).apply(variables, planes,
                                             state.legal_action_mask[None]))
  logits = np.where(legal, logits[0], -np.inf)
  want = np.exp(logits - logits.max())
  np.testing.assert_allclose(data["prior"], want / want.sum(), atol=1e-5)
  vmodel, vvars, _ = value_net.load_value(os.path.join(ckpts, "value9",
                                                       "checkpoints"))
  vplanes = features(state, tuple(vmodel.features))[None]
  value = float(make_value_fn(ValueNet(vmodel))(vvars, vplanes)[0])
  assert data["value"] == pytest.approx(value, abs=1e-5)
  # Each search: one visit per simulation, on legal moves; the move played
  # is a most visited one.
  assert set(data["searches"]) == {"0.0", "0.5", "1.0"}
  for s in data["searches"].values():
    visits = np.asarray(s["visits"])
    assert visits.sum() == data["simulations"] == (
        32 if budget == "small" else 512)
    assert not visits[~legal].any()
    assert visits[s["action"]] == visits.max()
    assert -1 <= s["root_value"] <= 1
  # Accuracy: counted over the positions asked for, hits within range, the
  # line printed from them.
  for name, r in (("p_σ", data["sl"]), ("p_π", data["rollout"])):
    assert r["positions"] == (400 if budget == "small" else 5556)
    assert 0 < r["top1_hits"] <= r["top5_hits"] <= r["positions"]
    assert (f"{name}: top-1 {r['top1_hits']} of {r['positions']} = "
            f"{100 * r['top1']:.1f}%") in out
  # The ablation's pairings, counted here from the games in its jobs.
  jobs = os.path.join(root, "docs", "ablations", "lambda-ag", "jobs")
  counts = {}
  for name in sorted(os.listdir(jobs)):
    with open(os.path.join(jobs, name)) as f:
      for g in json.load(f)["games"]:
        pair = tuple(sorted((g["black"], g["white"]),
                            key=lambda n: (n.startswith("gnugo"), n)))
        sign = g["black_result"] * (1 if pair[0] == g["black"] else -1)
        c = counts.setdefault(pair, [0, 0, 0])
        c[0 if sign > 0 else 1 if sign == 0 else 2] += 1
  assert counts
  for (a, b), (w, d, l) in counts.items():
    assert f"{a} vs {b}: {w}-{d}-{l}," in out, (a, b)
