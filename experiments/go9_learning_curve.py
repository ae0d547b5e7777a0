"""Learning curve of a 9×9 Go run: Elo of its snapshots against fixed anchors.

Takes networks of RUN: its snapshots (`experiments/train_go9.py` writes one
every 5 iterations), its kept checkpoints (the last written when it stops)
and its initial network (from the run's seed) -- by default the initial one
and 5 spread over the run, always the last -- and plays each, as network +
search (the run's search, for evaluation: no noise, greedy; 16
simulations), against four anchors: a uniformly random agent, UCT with
uniformly random rollouts at the same 16 simulations, and GNU Go levels 1 and
10. Games are colour-alternated (half with each colour), start with
`--opening` random plies (both sides) so that deterministic players do not
repeat one game, and are scored Tromp-Taylor by our engine (GNU Go runs with
`--capture-all-dead`; its resignation is its loss); see
`evaluation/gnugo_match.py`. All snapshots play in one batch per anchor
(`make_stacked_evaluate_fn`), so every search compiles once. A few
anchor-vs-anchor games tie the anchors' scale together (GNU Go 10 meets only
the snapshots). Elo is fitted for all players jointly (Bradley-Terry, one
virtual draw per pair, random = 0) with 95% intervals from the fit's
information; wall-clock hours are the run's summed iteration "seconds" (self
-play + learning, without the evaluations).

Writes DOCS/go9_learning_curve.{md,png,json} (each to a temporary file, then
renamed). The plot is drawn from the JSON alone by `viz.plot_ablation` (the
ablations' Elo picture: Elo against hours, the anchors as reference lines),
so `--replot` redraws it from an existing JSON without playing a game.
Needs matplotlib for the plot (`pip install matplotlib`); without it the
table is still written.

The defaults are sized by cost: UCT with rollouts to the end and GNU Go
level 10 are the slow anchors, and each new batch shape compiles a search
once. So 8 games per network against random, UCT and GNU Go 1 (32 for the
last network against UCT, for the 90% target), GNU Go 10 (slow, and far
stronger) only against the last network, 4 games; 8 games per anchor pair.

    python experiments/go9_learning_curve.py [--run runs/go9] [--docs docs]
    python experiments/go9_learning_curve.py --replot [--docs docs]
"""

import argparse
import dataclasses
import json
import math
import os
import time

import jax
import numpy as np

from alphago_jax.core.atomic_files import write_atomic
from alphago_jax import evaluation, games, models, training, viz
from alphago_jax.models.resnet import make_stacked_evaluate_fn, stack_variables
from alphago_jax.evaluation.elo import elo_intervals
from alphago_jax.evaluation.gnugo_match import agent_match, gnugo_match
from alphago_jax.search.agents import random_agent
from alphago_jax.search.alphazero import network_agent
from alphago_jax.search.uct import UCTConfig, uct_agent
from alphago_jax.training import snapshots
from alphago_jax.core import stats

TARGET = 0.9  # Win rate against UCT at equal simulations.


def pick(iterations, count):
  """About `count` iterations spread evenly, always the last."""
  if len(iterations) <= count:
    return list(iterations)
  idx = np.linspace(0, len(iterations) - 1, count).round().astype(int)
  return sorted({iterations[i] for i in idx} | {iterations[-1]})


def hours_by_iteration(run):
  """Cumulative training hours (summed "seconds") after each iteration."""
  path = os.path.join(run, "metrics.jsonl")
  out, total = {}, 0.0
  if os.path.exists(path):
    with open(path) as f:
      for line in f:
        if line.strip():
          r = json.loads(line)
          total += r["seconds"]
          out[int(r["iteration"])] = total / 3600
  return out


def pct(k, n):
  lo, hi = stats.wilson_interval(k, n)
  return f"{100 * k / n:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}] ({n})"


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--run", default="runs/go9", help="training run directory")
  p.add_argument("--iterations", type=int, nargs="*",
                 help="snapshot iterations (default: --num-snapshots spread)")
  p.add_argument("--num-snapshots", type=int, default=5,
                 help="trained networks besides the initial one")
  p.add_argument("--simulations", type=int, default=16,
                 help="network and UCT simulations per move")
  p.add_argument("--games", type=int, default=8,
                 help="games per snapshot against random and UCT")
  p.add_argument("--final-uct-games", type=int, default=32,
                 help="games of the last snapshot against UCT (>= --games)")
  p.add_argument("--gnugo1-games", type=int, default=8)
  p.add_argument("--gnugo10-games", type=int, default=4)
  p.add_argument("--gnugo10-snapshots", type=int, default=1,
                 help="how many of the latest snapshots meet GNU Go 10")
  p.add_argument("--anchor-games", type=int, default=8,
                 help="games of each anchor pair (0: none)")
  p.add_argument("--opening", type=int, default=2, help="random first plies")
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--run-seed", type=int, default=0,
                 help="the run's --seed, for its initial network")
  p.add_argument("--initial", action=argparse.BooleanOptionalAction,
                 default=True, help="include the initial network (0 h)")
  p.add_argument("--docs", default="docs")
  p.add_argument("--replot", action="store_true",
                 help="only redraw DOCS/go9_learning_curve.png from its "
                 "JSON")
  args = p.parse_args(argv)
  base = os.path.join(args.docs, "go9_learning_curve")
  if args.replot:
    with open(base + ".json") as f:
      plot(base + ".png", json.load(f))
    return
  for name in ("games", "final_uct_games", "gnugo1_games", "gnugo10_games",
               "anchor_games"):
    v = getattr(args, name)
    if v < 0 or v % 2:
      p.error(f"--{name.replace('_', '-')} must be even and >= 0 (colours "
              f"alternate), got {v}")
  if args.games < 2 or args.final_uct_games < args.games:
    p.error("--games must be >= 2 and --final-uct-games >= --games")

  game = games.make("go", size=9)
  config = training.presets.go9()
  arch = config.architecture(game)
  available = {i: (lambda path=path: snapshots.load(
      path, architecture=arch)[0]) for i, path in snapshots.list_snapshots(
          os.path.join(args.run, "snapshots"))}
  # The run's kept checkpoints (the last is saved when it stops) where no
  # snapshot has that iteration, and its initial network (the run's seed),
  # so the curve has both ends.
  ckpt_dir = os.path.abspath(os.path.join(args.run, "checkpoints"))
  for step in training.checkpoint.all_steps(ckpt_dir):
    if step not in available:
      available[step] = lambda step=step: training.loop.variables_of(
          training.checkpoint.restore_checkpoint(
              ckpt_dir, training.loop.init_train_state(
                  game, config, args.run_seed), architecture=arch,
              step=step))
  if args.initial:
    available[0] = lambda: training.loop.variables_of(
        training.loop.init_train_state(game, config, args.run_seed))
  if not available:
    p.error(f"no snapshots or checkpoints in {args.run}")
  iterations = sorted(available)
  chosen = args.iterations or sorted(
      set(pick([i for i in iterations if i > 0], args.num_snapshots)) |
      ({0} if args.initial else set()))
  missing = [i for i in chosen if i not in available]
  if missing:
    p.error(f"no snapshot for iterations {missing}; have {iterations}")
  chosen = sorted(chosen)
  variables = [jax.device_get(available[i]()) for i in chosen]
  hours = hours_by_iteration(args.run)
  net = models.make_network(game, config.model)
  search = dataclasses.replace(config.search,
                               num_simulations=args.simulations)
  uct_name = f"UCT-{args.simulations}"
  anchors = ["random", uct_name, "GNU Go 1", "GNU Go 10"]
  snaps = [f"iter {i}" for i in chosen]
  names = anchors + snaps
  k = len(snaps)
  wdl = {}  # (player, opponent) -> [wins, draws, losses]
  timings = []
  key = jax.random.key(args.seed)
  uct = uct_agent(game, UCTConfig(num_simulations=args.simulations))

  def add(a, b, result):
    for x, y, r in ((a, b, (result.wins, result.draws, result.losses)),
                    (b, a, (result.losses, result.draws, result.wins))):
      w = wdl.setdefault((x, y), [0, 0, 0])
      for j in range(3):
        w[j] += r[j]

  def timed(label, games_played, fn):
    t = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t
    timings.append((label, games_played, seconds))
    print(f"{label}: {games_played} games, {seconds:.0f} s", flush=True)
    return out

  agents = {}

  def vs_snapshots(anchor, slots, games_total, play):
    """Snapshots `slots` (indices, may repeat) against one anchor."""
    nonlocal key
    if not slots or not games_total:
      return
    g = games_total // 2
    if tuple(slots) not in agents:  # Same slots, same agent: no recompile.
      agents[tuple(slots)] = network_agent(
          game, make_stacked_evaluate_fn(net, len(slots)),
          stack_variables([variables[s] for s in slots]), search)
    agent = agents[tuple(slots)]
    key, sub = jax.random.split(key)
    outcomes = timed(f"snapshots vs {anchor}", 2 * g * len(slots),
                     lambda: play(agent, sub, g * len(slots)))
    half = g * len(slots)
    for n, s in enumerate(slots):
      ids = [c * half + n * g + j for c in (0, 1) for j in range(g)]
      add(snaps[s], anchor, outcomes.result(ids))

  every = list(range(k))
  vs_snapshots("random", every, args.games,
               lambda a, kk, g: agent_match(
                   game, a, random_agent, kk, games_per_colour=g,
                   random_opening_moves=args.opening))
  extra = math.ceil(args.final_uct_games / args.games) - 1
  vs_snapshots(uct_name, every + [k - 1] * extra, args.games,
               lambda a, kk, g: agent_match(
                   game, a, uct, kk, games_per_colour=g,
                   random_opening_moves=args.opening))
  for level, n_games, slots in (
      (1, args.gnugo1_games, every),
      (10, args.gnugo10_games, every[k - args.gnugo10_snapshots:])):
    vs_snapshots(f"GNU Go {level}", slots, n_games,
                 lambda a, kk, g, level=level: gnugo_match(
                     game, a, kk, level=level, games_per_colour=g,
                     seed=args.seed + 1000 * level,
                     random_opening_moves=args.opening))
  if args.anchor_games:
    g = args.anchor_games // 2
    for a, b, fn in (
        (uct_name, "random", lambda kk: agent_match(
            game, uct, random_agent, kk, games_per_colour=g,
            random_opening_moves=args.opening)),
        ("random", "GNU Go 1", lambda kk: gnugo_match(
            game, random_agent, kk, level=1, games_per_colour=g,
            random_opening_moves=args.opening)),
        (uct_name, "GNU Go 1", lambda kk: gnugo_match(
            game, uct, kk, level=1, games_per_colour=g,
            random_opening_moves=args.opening))):
      key, sub = jax.random.split(key)
      add(a, b, timed(f"{a} vs {b}", 2 * g, lambda: fn(sub)).result())

  # Joint Elo fit, random = 0.
  index = {n: i for i, n in enumerate(names)}
  points = np.zeros((len(names), len(names)))
  played = np.zeros_like(points)
  for (a, b), (w, d, l) in wdl.items():
    points[index[a], index[b]] = w + 0.5 * d
    played[index[a], index[b]] = w + d + l
  table = evaluation.elo_table(names, points, played, prior_draws=1.0)
  intervals = elo_intervals(table.ratings, played,
                                       prior_draws=1.0)
  elo = {n: (float(table.ratings[i]), intervals[i]) for n, i in index.items()}

  def cell(s, a):
    w, d, l = wdl.get((s, a), (0, 0, 0))
    return pct(w, w + d + l) if w + d + l else "-"

  def elo_cell(n):
    r, (lo, hi) = elo[n]
    if n == "random":
      return "0 (fixed)"
    return (f"{r:+.0f} [{lo:+.0f}, {hi:+.0f}]" if math.isfinite(hi)
            else f"{r:+.0f}")

  fw, fd, fl = wdl[(snaps[-1], uct_name)]
  fn = fw + fd + fl
  flo, fhi = stats.wilson_interval(fw, fn)
  verdict = ("reached" if flo >= TARGET else
             "reached by the point estimate, not yet by the interval"
             if fw / fn >= TARGET else "not reached")
  lines = [
      "# 9×9 Go: learning curve against fixed anchors", "",
      f"Run `{args.run}` (preset `go9`); network + search with "
      f"{args.simulations} simulations (the run's search, for evaluation), "
      f"against: a uniformly random agent; {uct_name}, UCT with uniformly "
      f"random rollouts at the same {args.simulations} simulations; GNU Go "
      f"3.8 levels 1 and 10 (`--capture-all-dead`). Colours alternate; "
      f"games start with {args.opening} random plies and are scored "
      f"Tromp-Taylor (komi {game.komi}); a GNU Go resignation is its loss. "
      f"Elo: joint Bradley-Terry fit of every game below (one virtual draw "
      f"per pair), random = 0, 95% intervals from the fit's information "
      f"(none where the data cannot bound a rating). Win rates: wins, 95% "
      f"Wilson interval, (games). Hours: the run's summed iteration times. "
      f"Made by `experiments/go9_learning_curve.py`.", "",
      f"**Target** (beat {uct_name} in ≥ {100 * TARGET:.0f}% of games): "
      f"last snapshot ({snaps[-1]}) wins {fw}/{fn} = "
      f"{100 * fw / fn:.1f}% [95% Wilson {100 * flo:.1f}, "
      f"{100 * fhi:.1f}]: **{verdict}**.", "",
      "![learning curve](go9_learning_curve.png)", "",
      "| iteration | hours | Elo | vs random | vs " + uct_name +
      " | vs GNU Go 1 | vs GNU Go 10 |", "|---|---|---|---|---|---|---|"]
  for it, s in zip(chosen, snaps):
    h = "0" if it == 0 else f"{hours[it]:.2f}" if it in hours else "?"
    lines.append(f"| {it} | {h} | {elo_cell(s)} | " +
                 " | ".join(cell(s, a) for a in anchors) + " |")
  lines += ["", "Anchors:", "", "| anchor | Elo | games |", "|---|---|---|"]
  for a in anchors:
    lines.append(f"| {a} | {elo_cell(a)} | "
                 f"{int(played[index[a]].sum())} |")
  lines += ["", "Anchor pairs (row's win rate):", ""]
  for (a, b), (w, d, l) in sorted(wdl.items()):
    if a in anchors and b in anchors and index[a] < index[b]:
      lines.append(f"- {a} vs {b}: {pct(w, w + d + l)}")
  lines += ["", "Cost (wall-clock on the machine that made it):", ""]
  lines += [f"- {label}: {n} games, {s:.0f} s" for label, n, s in timings]
  os.makedirs(args.docs, exist_ok=True)
  curve = {
      "run": args.run, "iterations": chosen,
      "hours": {str(i): hours.get(i) for i in chosen},
      "elo": {n: {"rating": r, "interval": list(iv)}
              for n, (r, iv) in elo.items()},
      "results": [{"player": a, "opponent": b, "wins": w, "draws": d,
                   "losses": l} for (a, b), (w, d, l) in sorted(wdl.items())],
      "timings": timings, "args": vars(args)}
  write_atomic(base + ".md", ("\n".join(lines) + "\n").encode())
  write_atomic(base + ".json", json.dumps(curve, indent=1).encode())
  print("\n".join(lines))
  plot(base + ".png", curve)
  plot_training(args.run, os.path.join(args.docs, "go9_training.png"))


TRAINING_FIELDS = ("loss", "value_loss", "policy_loss", "policy_entropy",
                   "value_accuracy", "mean_game_length",
                   "random_policy_losses", "random_search_losses")


def plot_training(run, path):
  """The run's training curves (`viz.plot_metrics`, shared by every stage)."""
  try:
    fields = [f for f in TRAINING_FIELDS if f in viz.numeric_fields(
        viz.latest_records(os.path.join(run, "metrics.jsonl")))]
    viz.plot_metrics({os.path.basename(os.path.normpath(run)): run}, path,
                     fields=fields, title="9×9 Go AlphaZero: training")
  except ImportError:
    print("matplotlib is not installed: no training plot")
  except ValueError as e:
    print(f"no training plot: {e}")


def plot(path, curve):
  """The learning curve of `curve` (the JSON this script writes): Elo of
  each snapshot against its training hours, the anchors as lines."""
  snaps = [f"iter {i}" for i in curve["iterations"]]
  hours = [0.0 if i == 0 else curve["hours"].get(str(i)) for i in
           curve["iterations"]]
  point = lambda n: (curve["elo"][n]["rating"], *curve["elo"][n]["interval"])
  try:
    viz.plot_ablation(
        [math.nan if h is None else h for h in hours], {},
        [point(s) for s in snaps], path,
        xlabel="training wall-clock hours", elo_label="Elo (random = 0)",
        series_label="network + search (95% interval)",
        point_labels=[str(i) for i in curve["iterations"]],
        references={n: e["rating"] for n, e in curve["elo"].items()
                    if n not in snaps},
        title="9×9 Go AlphaZero: Elo against fixed anchors")
  except ImportError:
    print("matplotlib is not installed: no plot (pip install matplotlib)")


if __name__ == "__main__":
  main()
