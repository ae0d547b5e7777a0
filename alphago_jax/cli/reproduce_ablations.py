"""`alphago-jax reproduce lambda` and `reproduce c-puct`: the committed
ablations of AlphaGo's search (`alphago-jax sweep`, docs/ablations/) beside
what AlphaGo (Silver et al. 2016) published.

Our numbers are recomputed from the run's results.csv (W-D-L per pairing,
Wilson intervals, and Elo by the sweep's own fit,
`ablation_report.fit_ratings`) and checked against its elo.csv and
config.json, so a damaged or hand-edited file is refused, named, rather
than printed. The paper's figures are 19×19 Elo on its own scale; ours
are 9×9, anchored on GNU Go level 1 = 0: orders and gaps compare, absolute
values do not.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Dict, List, Optional, Tuple

from alphago_jax.cli import sweep
from alphago_jax.core.stats import wilson_interval
from alphago_jax.evaluation import ablation
from alphago_jax.evaluation import ablation_report as report
from alphago_jax.evaluation.ablation_report import (SYMBOLS, display_name,
                                                    gnugo_name)

# Silver et al. 2016, Extended Data Table 7 (the single-machine variants
# that Figure 4b plots): Elo of AlphaGo with the leaf value mixed by λ,
# p_σ as the prior, v_θ and p_π rollouts; 19×19.
PAPER_LAMBDA_ELO = {0.0: 2177, 0.5: 2890, 1.0: 2416}
# The exploration constant AlphaGo played with (Extended Data Table 5), on
# Q = the mean outcome in [-1, 1]; the paper publishes no ablation of it.
PAPER_C_PUCT = 5.0

# name -> (the sweep's stage, the swept field, the committed run).
TABLES = {
    "lambda": ("lambda", "mixing", os.path.join("docs", "ablations",
                                                "lambda-ag")),
    "c-puct": ("c-puct", "c_puct", os.path.join("docs", "ablations",
                                                "cpuct-ag")),
}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


@dataclasses.dataclass(frozen=True)
class Ablation:
  """A finished (or partly played) one-parameter ablation, read back.

  Attributes:
    run_dir: where it was read.
    stage: the sweep's preset.
    config: its `AblationConfig`.
    variants: (player name, the swept value), in the grid's order.
    pairings: results.csv's rows.
    ratings: player -> (Elo, low, high), 95%, `anchor` at 0.
    anchor: the player rated 0.
  """
  run_dir: str
  stage: str
  config: object
  variants: List[Tuple[str, float]]
  pairings: list
  ratings: Dict[str, Tuple[float, float, float]]
  anchor: str

  def pairing(self, player: str, opponent: str):
    return next((p for p in self.pairings
                 if (p.player, p.opponent) == (player, opponent)), None)

  def games(self) -> int:
    return sum(p.games for p in self.pairings)


def default_run(name: str) -> str:
  """The committed run of table `name` (in a source checkout)."""
  return os.path.join(ROOT, TABLES[name][2])


def load(name: str, run_dir: str) -> Ablation:
  """Table `name`'s ablation in `run_dir` (config.json, results.csv,
  elo.csv).

  Raises:
    ValueError: a missing, damaged or foreign file, named.
  """
  stage, field, _ = TABLES[name]
  config_path = os.path.join(run_dir, "config.json")
  found, config = ablation.read_config(run_dir)
  if found != stage or len(config.grid) != 1 or config.grid[0][0] != field:
    raise ValueError(f"{config_path}: the {found} sweep over "
                     f"{[f for f, _ in config.grid]}, not `sweep {stage}` "
                     f"over {field}")
  results = os.path.join(run_dir, "results.csv")
  pairings = report.read_results_csv(results)
  players = set(config.players())
  for p in pairings:
    for who in (p.player, p.opponent):
      if who not in players:
        raise report.ResultsFileError(
            f"{results}: player {who!r} is not in {config_path} "
            f"({', '.join(config.players())})")
  ratings, anchor = report.fit_ratings(config, pairings)
  elo_path = os.path.join(run_dir, "elo.csv")
  written = report.read_elo_csv(elo_path)
  for player, (elo, _, _) in ratings.items():
    # elo.csv holds one decimal of the same fit over the same games.
    if player not in written or abs(written[player] - elo) > 0.051:
      raise report.ResultsFileError(
          f"{elo_path}: {player} is rated {written.get(player)} there but "
          f"{elo:.1f} by the games of {results}: the files disagree")
  values = config.grid[0][1]
  return Ablation(run_dir=run_dir, stage=stage, config=config,
                  variants=list(zip(config.variant_names(), values)),
                  pairings=pairings, ratings=ratings, anchor=anchor)


def _percent(wins: int, games: int) -> str:
  lo, hi = wilson_interval(wins, games)
  return f"{100 * wins / games:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"


def _vs(ab: Ablation, player: str, opponent: str) -> str:
  p = ab.pairing(player, opponent)
  if p is None:
    return "–"
  return f"{p.wins}-{p.draws}-{p.losses}, {_percent(p.wins, p.games)}"


def _round_robin(ab: Ablation, player: str) -> str:
  """W-D-L of `player` against the other variants, all pairs together."""
  names = [n for n, _ in ab.variants]
  w = d = l = 0
  for p in ab.pairings:
    if p.opponent in names and player in (p.player, p.opponent):
      mine = p.player == player
      w += p.wins if mine else p.losses
      d += p.draws
      l += p.losses if mine else p.wins
  if not w + d + l:
    return "–"
  return f"{w}-{d}-{l}, {_percent(w, w + d + l)}"


def _elo(ab: Ablation, player: str) -> str:
  if player not in ab.ratings:
    return "–"
  r, lo, hi = ab.ratings[player]
  return f"{r:+.0f} [{lo:+.0f}, {hi:+.0f}]"


def _header(ab: Ablation, what: str) -> List[str]:
  c = ab.config
  fixed = "λ" if ab.stage == "c-puct" else "c_puct"
  fixed_value = c.mixing if ab.stage == "c-puct" else c.c_puct
  leaf = ("value network only" if c.mixing == 0 and ab.stage == "c-puct"
          else f"{c.rollouts_per_leaf} {c.rollout_policy} rollout a leaf")
  planned = c.games_planned()
  played = ab.games()
  swept = SYMBOLS[c.grid[0][0]]
  return [
      f"{what}: ours beside AlphaGo (Silver et al. 2016)", "",
      f"- ours: {os.path.relpath(ab.run_dir)}: 9×9 Go, komi {c.komi:g}, "
      f"{c.num_simulations} simulations a move, network {c.network}, "
      f"{swept} swept, {fixed} = {fixed_value:g}, {leaf}; {played} of "
      f"{planned} games"
      + ("." if played == planned else " (run unfinished)."),
      # config.json's command is `sweep`, whose search, `search.alphago`,
      # never normalises Q (mctx's PUCT policies do by default).
      f"- Q in PUCT: the raw mean outcome in [−1, 1], AlphaGo's "
      f"definition (`sweep` searches with `search.alphago`), not "
      f"normalised to [0, 1] as mctx does by default; normalising "
      f"rescales the Q gaps that c_puct's bonus competes with, so one "
      f"c_puct does not mean the same on both scales.",
      f"- Elo: one fit over all of the run's games, "
      f"{display_name(ab.anchor)} = 0, 95% intervals."]


def _levels(ab: Ablation) -> List[str]:
  return [gnugo_name(level) for level in sorted(ab.config.gnugo_levels)]


def _best(ab: Ablation) -> Optional[float]:
  rated = [(ab.ratings[n][0], v) for n, v in ab.variants if n in ab.ratings]
  return max(rated)[1] if rated else None


def _result(ab: Ablation, name: str, paper: str) -> str:
  elo = ",".join(f"{v:g}:{ab.ratings[n][0]:.1f}" for n, v in ab.variants
                 if n in ab.ratings)
  best = _best(ab)
  return (f"RESULT {name}_ours_best={'nan' if best is None else f'{best:g}'} "
          f"{paper} games={ab.games()} elo={elo}")


def lambda_table(ab: Ablation) -> str:
  """The λ table: ours beside Extended Data Table 7's Elo."""
  levels = _levels(ab)
  lines = _header(ab, "λ, the leaf value (1 − λ)·v + λ·z") + [
      "- AlphaGo: 19×19, Extended Data Table 7 (the single-machine "
      "variants of Figure 4b), Elo on the paper's own scale; it rated no λ "
      "but 0, 0.5 and 1.", "",
      "| λ | leaf value | AlphaGo 2016 Elo | ours: Elo [95%] | "
      + " | ".join(f"ours vs {display_name(l)}" for l in levels)
      + " | ours vs the other λ |",
      "|---|---|---|---|" + "---|" * len(levels) + "---|"]
  for name, value in ab.variants:
    leaf = {0.0: "value network only", 0.5: "even mix",
            1.0: "rollouts only"}.get(value, "mixed")
    paper = PAPER_LAMBDA_ELO.get(value)
    lines.append(
        f"| {value:g} | {leaf} | {'–' if paper is None else paper} | "
        f"{_elo(ab, name)} | "
        + " | ".join(_vs(ab, name, l) for l in levels)
        + f" | {_round_robin(ab, name)} |")
  best = _best(ab)
  paper_best = max(PAPER_LAMBDA_ELO, key=PAPER_LAMBDA_ELO.get)
  ours = {v: ab.ratings[n][0] for n, v in ab.variants if n in ab.ratings}
  gaps = ", ".join(
      f"λ = {v:g}: AlphaGo {PAPER_LAMBDA_ELO[v] - PAPER_LAMBDA_ELO[paper_best]:+d}"
      f", ours {ours[v] - ours[paper_best]:+.0f}"
      for v in sorted(PAPER_LAMBDA_ELO) if v != paper_best and v in ours
      and paper_best in ours)
  lines += ["", f"Strongest λ: AlphaGo {paper_best:g}, ours "
            f"{'–' if best is None else f'{best:g}'}. Against λ = "
            f"{paper_best:g}: {gaps or '–'}.", "",
            _result(ab, "lambda", f"paper_best_lambda={paper_best:g}")]
  return "\n".join(lines)


def c_puct_table(ab: Ablation) -> str:
  """The c_puct table: ours, and the value AlphaGo used."""
  levels = _levels(ab)
  lines = _header(ab, "c_puct, PUCT's exploration constant") + [
      f"- AlphaGo: no c_puct ablation published; it played with c_puct = "
      f"{PAPER_C_PUCT:g} (Extended Data Table 5), Q in [−1, 1] as here.",
      "",
      "| c_puct | AlphaGo 2016 | ours: Elo [95%] | "
      + " | ".join(f"ours vs {display_name(l)}" for l in levels)
      + " | ours vs the other c_puct |",
      "|---|---|---|" + "---|" * len(levels) + "---|"]
  for name, value in ab.variants:
    paper = "its value" if value == PAPER_C_PUCT else "–"
    lines.append(f"| {value:g} | {paper} | {_elo(ab, name)} | "
                 + " | ".join(_vs(ab, name, l) for l in levels)
                 + f" | {_round_robin(ab, name)} |")
  best = _best(ab)
  lines += ["", f"Strongest c_puct here: "
            f"{'–' if best is None else f'{best:g}'} (AlphaGo's "
            f"{PAPER_C_PUCT:g} was set for 19×19 and far larger searches)."
            , "",
            _result(ab, "c_puct", f"paper_c_puct={PAPER_C_PUCT:g} "
                    f"q_range=-1,1")]
  return "\n".join(lines)


def rerun_command(ab: Ablation, output: str) -> List[str]:
  """`alphago-jax sweep` arguments that replay `ab`'s games into
  `output` (the same config; the same command resumes it)."""
  return sweep.command_for(ab.stage, ab.config) + ["--output", output]


def print_table(name: str, run_dir: str, output: str) -> None:
  """Prints table `name` of `run_dir`, then the command that replays it."""
  ab = load(name, run_dir)
  print(lambda_table(ab) if name == "lambda" else c_puct_table(ab))
  command = " ".join(["alphago-jax sweep"] + rerun_command(ab, output))
  print(f"\nreplay its games: {command}\n(or `alphago-jax reproduce "
        f"{name} --rerun [--output DIR] [-- SWEEP FLAGS]`)")
