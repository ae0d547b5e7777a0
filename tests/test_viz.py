"""Board pictures and training curves, read back and checked against
hand-worked positions, sgfmill's board and the network itself."""

import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from sgfmill import boards, sgf as sgfmill_sgf

from alphago_jax import games, viz
from alphago_jax.cli import show

SVG = "{http://www.w3.org/2000/svg}"
ROOT = os.path.join(os.path.dirname(__file__), os.pardir)


def parse(picture):
  return ET.fromstring(viz.board_svg(picture))


def elements(root, cls):
  return [e for e in root.iter() if e.get("class") == cls]


def drawn_stones(root):
  """{point: +1 black / -1 white} of the stones in an SVG."""
  out = {}
  for colour, sign in (("black", 1), ("white", -1)):
    for e in elements(root, f"stone {colour}"):
      out[int(e.get("data-point"))] = sign
  return out


def test_stones_sit_under_their_gtp_coordinates():
  # D4 on 9x9 is column 3 (A B C D), row 9 - 4 = 5 from the top: 48.
  game = games.make("go", size=9)
  assert game.vertex_to_action("D4") == 48
  stones = np.zeros(81, int)
  stones[48] = 1
  stones[game.vertex_to_action("J9")] = -1  # top-right corner: point 8
  root = parse(viz.BoardPicture(size=9, stones=stones))
  [black] = elements(root, "stone black")
  [white] = elements(root, "stone white")
  assert black.get("data-point") == "48" and white.get("data-point") == "8"
  coords = elements(root, "coord")
  column = {float(e.get("x")): e.text for e in coords}
  row = {float(e.get("y")) - 4: e.text for e in coords
         if not e.text.isalpha()}
  assert column[float(black.get("cx"))] == "D"
  assert row[float(black.get("cy"))] == "4"
  assert column[float(white.get("cx"))] == "J"
  assert row[float(white.get("cy"))] == "9"
  assert "I" not in column.values()


def test_a_capture_sequence_is_drawn_with_its_move_numbers():
  # B B1, W A1, B A2 captures A1; W E5; B A1 fills the corner.
  args = show.ShowArgs(moves=("B1", "A1", "A2", "E5", "A1"), network="none",
                       numbers=10)
  pic = show.picture(args)
  root = parse(pic)
  game = games.make("go", size=9)
  p = game.vertex_to_action
  assert drawn_stones(root) == {p("B1"): 1, p("A2"): 1, p("A1"): 1,
                                p("E5"): -1}
  numbers = {int(e.get("data-point")): e.text
             for e in elements(root, "move-number")}
  # A1 shows the move that put the stone now there (5), not White's 2.
  assert numbers == {p("B1"): "1", p("A2"): "3", p("E5"): "4",
                     p("A1"): "5"}
  [last] = elements(root, "last-move")
  assert last.get("data-point") == str(p("A1"))
  assert pic.caption[0] == "move 5, White to play"
  with pytest.raises(show.SpecError, match="move 3 A1 is illegal"):
    show.position(show.ShowArgs(moves=("A2", "A1", "A1"), network="none"))
  with pytest.raises(show.SpecError, match="move 1 'Z9'"):
    show.position(show.ShowArgs(moves=("Z9",), network="none"))


# Black captures White's E5 at move 7 and the A9 corner at move 11.
SGF = (b"(;GM[1]FF[4]SZ[9]KM[7.5];B[de];W[ee];B[fe];W[aa];B[ed];W[ia];"
       b"B[ef];W[ii];B[ba];W[hi];B[ab];W[gg])")


def test_sgf_positions_match_sgfmill_after_every_move(tmp_path):
  path = tmp_path / "game.sgf"
  path.write_bytes(SGF)
  moves = sgfmill_sgf.Sgf_game.from_bytes(SGF).get_main_sequence()[1:]
  board = boards.Board(9)
  for k in range(len(moves) + 1):
    if k:
      colour, point = moves[k - 1].get_move()
      board.play(point[0], point[1], colour)
    pic = show.picture(show.ShowArgs(sgf=str(path), move=k, network="none"))
    want = {}
    for r in range(9):
      for c in range(9):
        colour = board.get(r, c)  # sgfmill: row 0 is the bottom
        if colour is not None:
          want[(8 - r) * 9 + c] = 1 if colour == "b" else -1
    assert drawn_stones(parse(pic)) == want, k
  # Two stones were captured: 10 on the board after 12 moves.
  assert len(moves) == 12 and len(want) == 10


def test_heat_map_shades_by_share_and_labels():
  heat = np.zeros(81)
  heat[[10, 20, 30]] = [4.0, 2.0, 1.0]
  root = parse(viz.BoardPicture(size=9, stones=np.zeros(81, int), heat=heat,
                                labels={10: "57%"}, caption=("value +0.10",)))
  cells = {int(e.get("data-point")): float(e.get("fill-opacity"))
           for e in elements(root, "heat")}
  assert sorted(cells) == [10, 20, 30]  # no square where the heat is 0
  assert cells[10] > cells[20] > cells[30] > 0
  assert cells[10] == pytest.approx(0.85)
  [label] = elements(root, "label")
  assert label.get("data-point") == "10" and label.text == "57%"
  assert [e.text for e in elements(root, "caption")] == ["value +0.10"]


def test_move_numbers_keep_the_latest_stone_and_the_last_k():
  stones = np.zeros(9, int)
  stones[[0, 4]] = [1, -1]
  # Point 0 played at move 1, captured, replayed at move 4; a pass (9).
  assert viz.move_numbers([0, 1, 9, 0, 4], stones) == {0: 4, 4: 5}
  assert viz.move_numbers([0, 1, 9, 0, 4], stones, last=1) == {4: 5}


def test_tictactoe_style_and_bad_input():
  stones = np.array([1, 0, -1, 0, 1, 0, 0, 0, 0])
  root = parse(viz.BoardPicture(size=3, stones=stones, style="tictactoe"))
  assert [e.text for e in elements(root, "stone black")] == ["X", "X"]
  assert [e.text for e in elements(root, "stone white")] == ["O"]
  with pytest.raises(ValueError, match="stones must be 81 values"):
    viz.BoardPicture(size=9, stones=np.zeros(80, int))
  with pytest.raises(ValueError, match="heat must be"):
    viz.BoardPicture(size=3, stones=stones, heat=[-1.0] * 9)
  with pytest.raises(ValueError, match="labels: points"):
    viz.BoardPicture(size=3, stones=stones, labels={9: "x"})
  for size in (1, 26, True, 9.0):
    with pytest.raises(ValueError, match=r"^size must be an integer from 2 "
                                         r"to 25, got "):
      viz.BoardPicture(size=size, stones=np.zeros(81, int))
    with pytest.raises(ValueError, match=r"^size must be an integer from 2 "
                                         r"to 25, got "):
      viz.board_text(size, np.zeros(81, int))


def test_png_and_svg_files(tmp_path):
  pic = show.picture(show.ShowArgs(moves=("D4", "E5"), network="none"))
  show.write(pic, str(tmp_path / "b.png"))
  show.write(pic, str(tmp_path / "b.svg"))
  assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  assert drawn_stones(ET.parse(tmp_path / "b.svg").getroot()) == {
      48: 1, 40: -1}
  assert sorted(os.listdir(tmp_path)) == ["b.png", "b.svg"]


def test_plot_metrics_from_any_stage(tmp_path):
  az = tmp_path / "az"
  az.mkdir()
  lines = [{"iteration": 1, "loss": 2.0, "value_loss": 1.0},
           {"iteration": 2, "loss": 1.5, "value_loss": 0.8},
           {"iteration": 2, "loss": 1.4, "value_loss": 0.7},  # a rerun
           {"iteration": 3, "loss": 1.0, "value_loss": "nan"}]
  (az / "metrics.jsonl").write_text(
      "".join(json.dumps(r) + "\n" for r in lines) + '{"iterat')
  records = viz.latest_records(str(az / "metrics.jsonl"))
  assert [(r["iteration"], r["loss"]) for r in records] == [
      (1, 2.0), (2, 1.4), (3, 1.0)]
  sl = tmp_path / "sl.jsonl"
  sl.write_text(json.dumps({"iteration": 200, "loss": 3.0,
                            "eval_top1": 0.3}) + "\n")
  out = str(tmp_path / "curves.png")
  drawn = viz.plot_metrics({"az": str(az), "sl": str(sl)}, out)
  assert drawn == ["eval_top1", "loss", "value_loss"]
  assert open(out, "rb").read(4) == b"\x89PNG"
  with pytest.raises(ValueError, match=r"numeric field\(s\) \['lossy'\]"):
    viz.plot_metrics({"az": str(az)}, out, fields=["lossy"])


def _drawn_figures(monkeypatch):
  """The figures the viz functions close after saving, kept to read."""
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  figures, close = [], plt.close
  monkeypatch.setattr(plt, "close", lambda fig=None: (
      figures.append(fig), close(fig)))
  return figures


def test_plot_ablation_draws_two_panels_or_the_elo_panel_alone(
    tmp_path, monkeypatch):
  figures = _drawn_figures(monkeypatch)
  elo = [(-60.0, -120.0, 0.0), None, (40.0, 0.0, 80.0)]
  viz.plot_ablation([0, 0.5, 1], {"vs GNU Go 1": [(0.4, 0.3, 0.5)] * 3},
                    elo, str(tmp_path / "two.png"), xlabel="λ",
                    references={"GNU Go 1": 0.0})
  viz.plot_ablation([0.0, 1.5, 3.0], {}, elo, str(tmp_path / "one.png"),
                    xlabel="hours", references={"random": 0.0, "UCT": 30.0},
                    point_labels=["0", "5", "20"], elo_label="Elo (random)",
                    series_label="snapshots")
  two, one = figures
  assert len(two.axes) == 2 and len(one.axes) == 1
  ax = one.axes[0]
  # The points with an interval, labelled; a missing one is left out.
  assert sorted(t.get_text() for t in ax.texts) == ["0", "20"]
  assert [tuple(line.get_ydata()) for line in ax.lines
          if line.get_label() in ("random", "UCT")] == [(0.0, 0.0),
                                                         (30.0, 30.0)]
  assert ax.get_ylabel() == "Elo (random)"
  assert "snapshots" in [t.get_text() for t in ax.get_legend().get_texts()]
  with pytest.raises(ValueError, match="every series needs 3 points"):
    viz.plot_ablation([0, 1, 2], {}, elo, str(tmp_path / "x.png"),
                      xlabel="x", point_labels=["a"])


def test_learning_curve_script_replots_its_json_with_the_shared_function(
    tmp_path, monkeypatch):
  # experiments/go9_learning_curve.py draws docs/go9_learning_curve.png
  # with viz.plot_ablation from the JSON it writes: --replot redraws it
  # from the committed JSON, without a game.
  import importlib.util  # pylint: disable=import-outside-toplevel
  import shutil  # pylint: disable=import-outside-toplevel
  spec = importlib.util.spec_from_file_location(
      "go9_learning_curve",
      os.path.join(ROOT, "experiments", "go9_learning_curve.py"))
  script = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(script)
  source = os.path.join(ROOT, "docs", "go9_learning_curve.json")
  shutil.copy(source, tmp_path)
  with open(source) as f:
    curve = json.load(f)
  calls = []
  draw = viz.plot_ablation
  monkeypatch.setattr(viz, "plot_ablation",
                      lambda *a, **k: (calls.append((a, k)), draw(*a, **k)))
  script.main(["--replot", "--docs", str(tmp_path)])
  (x, win_rates, elo, path), kwargs = calls[0]
  iterations = curve["iterations"]
  assert x == [0.0] + [curve["hours"][str(i)] for i in iterations[1:]]
  assert win_rates == {} and elo == [
      (curve["elo"][f"iter {i}"]["rating"], *curve["elo"][f"iter {i}"][
          "interval"]) for i in iterations]
  assert kwargs["point_labels"] == [str(i) for i in iterations]
  assert kwargs["references"] == {
      n: curve["elo"][n]["rating"]
      for n in ("random", "UCT-16", "GNU Go 1", "GNU Go 10")}
  assert path == str(tmp_path / "go9_learning_curve.png")
  assert open(path, "rb").read(4) == b"\x89PNG"


def test_show_draws_the_committed_networks_policy_and_search(tmp_path):
  from alphago_jax import training
  from alphago_jax.models.resnet import make_evaluate_fn, make_network
  from alphago_jax.training import snapshots
  network = os.path.join(ROOT, "checkpoints", "go9")
  moves = ("E5", "D4", "C3")
  policy = show.picture(show.ShowArgs(moves=moves, network=network,
                                      overlay="policy", top=3))
  # The network's policy, computed here directly.
  game = games.make("go", size=9)
  config = training.presets.go9()
  [(_, path)] = snapshots.list_snapshots(os.path.join(network, "snapshots"))
  variables, _ = snapshots.load(path, architecture=config.architecture(game))
  _, _, state = show.position(show.ShowArgs(moves=moves, network="none"))
  evaluate = make_evaluate_fn(make_network(game, config.model))
  logits, value = evaluate(variables, game.observe(state)[None],
                           state.legal_action_mask[None])
  logits = np.where(np.asarray(state.legal_action_mask), logits[0], -np.inf)
  probs = np.exp(logits - logits.max())
  probs /= probs.sum()
  np.testing.assert_allclose(policy.heat, probs[:81], rtol=1e-4,
                             atol=1e-6)
  top3 = list(np.argsort(-probs[:81], kind="stable")[:3])
  assert sorted(policy.labels) == sorted(int(p) for p in top3)
  assert f"network value {float(value[0]):+.2f}" in policy.caption[1]
  # Occupied points get no policy.
  assert all(policy.heat[p] == 0 for p in np.flatnonzero(policy.stones))
  visits = show.picture(show.ShowArgs(moves=moves, network=network,
                                      simulations=16))
  pass_visits = int(visits.caption[1].split("pass ")[1].split()[0])
  assert visits.heat.sum() + pass_visits == 16
  best = game.action_to_vertex(int(np.argmax(visits.heat)))
  assert f"best {best}" in visits.caption[1]
  show.write(visits, str(tmp_path / "v.svg"))
  root = ET.parse(tmp_path / "v.svg").getroot()
  assert len(elements(root, "heat")) == int((visits.heat > 0).sum())
