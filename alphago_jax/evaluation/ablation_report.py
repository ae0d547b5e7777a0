"""The results of a parameter ablation (`evaluation.ablation`): pairings,
one Elo table anchored on GNU Go, and the files a run writes, each written
atomically: `results.csv` (one row per pairing), `elo.csv`, `table.md` and
`plot.png`.

Every function reads the finished jobs' game records (see
`ablation.play_job`), so outputs made at any point of a run, or by any of
its workers, agree with the jobs on disk. `read_results_csv` and
`read_elo_csv` read the two CSV files back (a copy of a run without its
jobs, such as docs/ablations/), strictly: a damaged file is named.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.core.stats import wilson_interval
from alphago_jax.evaluation import elo as elo_lib
from alphago_jax.search import alphago
from alphago_jax.viz.ablation import plot_ablation

PARAMETERS = tuple(f.name for f in dataclasses.fields(alphago.AlphaGoParams))
# Readable names of the parameters, for tables and plots.
SYMBOLS = {"mixing": "λ", "c_puct": "c_puct", "virtual_loss": "n_vl",
           "rollout_temperature": "T_π", "random_symmetry": "sym",
           "num_simulations": "simulations",
           "rollouts_per_leaf": "rollouts per leaf",
           "leaves_per_step": "leaves per step"}
GNUGO_FLAGS = "--chinese-rules --positional-superko --capture-all-dead"
RESULTS_COLUMNS = ("player", "opponent", "games", "wins", "draws", "losses",
                   "win_rate", "win_rate_low", "win_rate_high",
                   "black_games", "black_wins", "both_passed",
                   "scores_agree", "capped")
ELO_COLUMNS = ("player", "elo", "elo_low", "elo_high", "games", "score")


def gnugo_name(level: int) -> str:
  """The player name of GNU Go at `level` in records and tables."""
  return f"gnugo-{level}"


# -- Results -------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Pairing:
  """One pairing's games, from `player`'s side.

  Attributes:
    player, opponent: names (a variant first; in the round robin the
      variant listed first).
    wins, draws, losses: `player`'s results.
    black_games, black_wins: those with `player` as Black.
    both_passed: games both sides passed out (scored by both engines).
    scores_agree: of those, GNU Go's `final_score` equal to Tromp-Taylor
      (against GNU Go only; 0 in the round robin).
    capped: games stopped by `max_moves`.
  """
  player: str
  opponent: str
  wins: int = 0
  draws: int = 0
  losses: int = 0
  black_games: int = 0
  black_wins: int = 0
  both_passed: int = 0
  scores_agree: int = 0
  capped: int = 0

  @property
  def games(self) -> int:
    return self.wins + self.draws + self.losses

  @property
  def points(self) -> float:
    return self.wins + 0.5 * self.draws

  def win_rate(self) -> float:
    return self.wins / self.games

  def interval(self) -> Tuple[float, float]:
    """95% Wilson interval of the win rate."""
    return wilson_interval(self.wins, self.games)


@dataclasses.dataclass(frozen=True)
class Summary:
  """An ablation's results so far.

  Attributes:
    config: the ablation.
    labels: per variant, `{field: value}`.
    pairings: in `config.players()` order, variant pairings first.
    ratings: player -> (Elo, low, high), 95%, anchor at 0; empty before
      any game.
    games_played, games_planned: totals.
    distinct_games: distinct move sequences, counted per (Black, White)
      pair of players: below games_played when games repeat.
    cost: kind ("round robin", "gnugo-L") -> (games, wall seconds, our CPU
      seconds, GNU Go CPU seconds, moves our side chose: every ply but the
      random opening ones, ours only against GNU Go).
    network: the network's name.
    board_size: the board's size (0 before any game).
    anchor: the player rated 0: `config.anchor()`, or before it has played,
      the first variant that has.
  """
  config: Any
  labels: List[Dict[str, float]]
  pairings: List[Pairing]
  ratings: Dict[str, Tuple[float, float, float]]
  games_played: int
  games_planned: int
  distinct_games: int
  cost: Dict[str, Tuple[int, float, float, float, int]]
  network: str
  board_size: int
  anchor: str

  @property
  def complete(self) -> bool:
    return self.games_played == self.games_planned

  def pairing(self, player: str, opponent: str) -> Optional[Pairing]:
    for p in self.pairings:
      if (p.player, p.opponent) == (player, opponent):
        return p
    return None


def summarize(config: "AblationConfig", records: Iterable[Mapping[str, Any]],
              *, prior_draws: float = 1.0) -> Summary:
  """Pairings, Elo and checks from finished jobs' records."""
  players = config.players()
  order = {n: i for i, n in enumerate(players)}
  counts: Dict[Tuple[str, str], Dict[str, int]] = {}
  sequences: Dict[Tuple[str, str], List[str]] = {}
  cost: Dict[str, List[float]] = {}
  played = 0
  network, board_size = "", 0
  for record in records:
    network, board_size = record["network"], record["board_size"]
    kind, chosen = None, 0
    for g in record["games"]:
      black, white = g["black"], g["white"]
      for name in (black, white):
        if name not in order:
          raise ValueError(f"ablation: job {record['job']} has a player "
                           f"{name!r} that this config does not have")
      player, opponent = sorted((black, white), key=order.get)
      c = counts.setdefault((player, opponent), dict.fromkeys(
          ("wins", "draws", "losses", "black_games", "black_wins",
           "both_passed", "scores_agree", "capped"), 0))
      result = g["black_result"] * (1 if player == black else -1)
      c["wins" if result > 0 else "losses" if result < 0 else "draws"] += 1
      if player == black:
        c["black_games"] += 1
        c["black_wins"] += int(result > 0)
      if g["gnugo_score"] is not None:
        c["both_passed"] += 1
        c["scores_agree"] += int(abs(g["gnugo_score"] - g["score"]) < 1e-6)
      c["capped"] += int(g["capped"])
      chosen += _chosen_moves(
          g["plies"], config.random_opening_moves,
          None if opponent in config.variant_names() else player == black)
      sequences.setdefault((black, white), []).append(g["moves"])
      played += 1
      kind = "round robin" if opponent in config.variant_names() else opponent
    if kind is not None:
      totals = cost.setdefault(kind, [0, 0.0, 0.0, 0.0, 0])
      totals[0] += len(record["games"])
      totals[1] += record["seconds"]
      totals[2] += record["cpu_seconds"]
      totals[3] += record["gnugo_cpu_seconds"]
      totals[4] += chosen
  pairings = [Pairing(player=p, opponent=o, **counts[(p, o)])
              for p, o in sorted(counts, key=lambda k: (order[k[0]],
                                                        order[k[1]]))]
  ratings, anchor = fit_ratings(config, pairings, prior_draws=prior_draws)
  distinct = sum(len(set(s)) for s in sequences.values())
  return Summary(config=config, labels=config.values()[1],
                 pairings=pairings, ratings=ratings, games_played=played,
                 games_planned=config.games_planned(),
                 distinct_games=distinct,
                 cost={k: tuple(v) for k, v in cost.items()},
                 network=network, board_size=board_size, anchor=anchor)


def _chosen_moves(plies: int, random_plies: int,
                  ours_black: Optional[bool]) -> int:
  """Moves of a game our side chose: all but the random opening plies, of
  our colour only (`ours_black`), or of both where both sides are ours
  (None: a round-robin game)."""
  chosen = max(plies - random_plies, 0)
  if ours_black is None:
    return chosen
  # Black plays the even plies (0, 2, ...): of those after the random ones.
  black_moves = (plies + 1) // 2 - (min(random_plies, plies) + 1) // 2
  return black_moves if ours_black else chosen - black_moves


def fit_ratings(config: "AblationConfig", pairings: List[Pairing], *,
                prior_draws: float = 1.0
                ) -> Tuple[Dict[str, Tuple[float, float, float]], str]:
  """`(ratings, anchor)`: one Elo table over every pairing (`elo_table`,
  `prior_draws` virtual draws per pair that played), player -> (Elo, low,
  high) at 95% for the players that played, and the player rated 0:
  `config.anchor()`, or before it has played, the first player that has."""
  players = config.players()
  ratings: Dict[str, Tuple[float, float, float]] = {}
  anchor = config.anchor()
  active = {n for p in pairings for n in (p.player, p.opponent)}
  if not pairings:
    return ratings, anchor
  if anchor not in active:
    anchor = next(n for n in players if n in active)
  names = [anchor] + [n for n in players if n != anchor]
  index = {n: i for i, n in enumerate(names)}
  k = len(names)
  points, games = np.zeros((k, k)), np.zeros((k, k))
  for p in pairings:
    i, j = index[p.player], index[p.opponent]
    points[i, j] += p.points
    points[j, i] += p.games - p.points
    games[i, j] += p.games
    games[j, i] += p.games
  table = elo_lib.elo_table(names, points, games, prior_draws=prior_draws)
  intervals = elo_lib.elo_intervals(table.ratings, games,
                                    prior_draws=prior_draws)
  for n, r, (lo, hi) in zip(names, table.ratings, intervals):
    if n in active:
      ratings[n] = (float(r), lo, hi)
  return ratings, anchor


# -- Output files --------------------------------------------------------------

def _fmt(x: float, digits: int = 3) -> str:
  return f"{x:.{digits}f}"


def results_csv(summary: Summary) -> str:
  """One row per pairing."""
  out = io.StringIO()
  w = csv.writer(out, lineterminator="\n")
  w.writerow(RESULTS_COLUMNS)
  for p in summary.pairings:
    lo, hi = p.interval()
    w.writerow([p.player, p.opponent, p.games, p.wins, p.draws, p.losses,
                _fmt(p.win_rate(), 4), _fmt(lo, 4), _fmt(hi, 4),
                p.black_games, p.black_wins, p.both_passed, p.scores_agree,
                p.capped])
  return out.getvalue()


def _player_games(summary: Summary, name: str) -> Tuple[int, float]:
  games = sum(p.games for p in summary.pairings if name in (p.player,
                                                           p.opponent))
  points = sum(p.points if p.player == name else p.games - p.points
               for p in summary.pairings if name in (p.player, p.opponent))
  return games, points


def elo_csv(summary: Summary) -> str:
  """One row per player: Elo with its 95% interval, games, score and the
  variant's parameter values (empty for GNU Go)."""
  out = io.StringIO()
  w = csv.writer(out, lineterminator="\n")
  fields = [n for n, _ in summary.config.grid]
  w.writerow(list(ELO_COLUMNS) + fields)
  labels = dict(zip(summary.config.variant_names(), summary.labels))
  for name in summary.config.players():
    if name not in summary.ratings:
      continue
    r, lo, hi = summary.ratings[name]
    games, points = _player_games(summary, name)
    label = labels.get(name, {})
    w.writerow([name, _fmt(r, 1), _fmt(lo, 1), _fmt(hi, 1), games,
                _fmt(points / games, 4)]
               + [f"{label[f]:g}" if f in label else "" for f in fields])
  return out.getvalue()


class ResultsFileError(ValueError):
  """A results.csv or elo.csv that cannot be read back; the message names
  the file and, where it is one line, the line."""


def _csv_rows(path: str, columns: Tuple[str, ...]) -> List[Dict[str, str]]:
  """The rows of `path` as dicts, its header starting with `columns`."""
  try:
    with open(path, encoding="utf-8", newline="") as f:
      rows = list(csv.reader(f))
  except FileNotFoundError:
    raise ResultsFileError(f"{path}: no such file") from None
  except (OSError, UnicodeDecodeError, csv.Error) as e:
    raise ResultsFileError(f"{path}: unreadable ({e})") from None
  if not rows or tuple(rows[0][:len(columns)]) != columns:
    raise ResultsFileError(f"{path}: line 1 must be the header "
                           f"{','.join(columns)},...")
  out = []
  for line, row in enumerate(rows[1:], start=2):
    if len(row) != len(rows[0]):
      raise ResultsFileError(f"{path}: line {line}: {len(row)} fields, "
                             f"the header has {len(rows[0])}")
    out.append(dict(zip(rows[0], row), line=str(line)))
  if not out:
    raise ResultsFileError(f"{path}: no rows")
  return out


def _count(path: str, row: Dict[str, str], name: str) -> int:
  text = row[name]
  if not text.isdigit():
    raise ResultsFileError(f"{path}: line {row['line']}: {name} must be a "
                           f"count, got {text!r}")
  return int(text)


def read_results_csv(path: str) -> List[Pairing]:
  """The pairings of a `results_csv` file, each row checked: counts are
  counts, games = wins + draws + losses > 0, the win rate agrees with them
  and no pairing appears twice.

  Raises:
    ResultsFileError: naming the file and the line.
  """
  pairings, seen = [], set()
  for row in _csv_rows(path, RESULTS_COLUMNS):
    where = f"{path}: line {row['line']}"
    counts = {name: _count(path, row, name)
              for name in RESULTS_COLUMNS[2:] if "rate" not in name}
    games = counts.pop("games")
    p = Pairing(player=row["player"], opponent=row["opponent"], **counts)
    if (p.player, p.opponent) in seen or p.player == p.opponent:
      raise ResultsFileError(f"{where}: pairing {p.player} - {p.opponent} "
                             f"again")
    seen.add((p.player, p.opponent))
    if not games or games != p.games:
      raise ResultsFileError(f"{where}: games={games} but wins + draws + "
                             f"losses = {p.games}")
    try:
      rate = float(row["win_rate"])
    except ValueError:
      rate = float("nan")
    if not abs(rate - p.win_rate()) <= 5e-5:  # written to 4 places
      raise ResultsFileError(f"{where}: win_rate {row['win_rate']!r} is not "
                             f"wins / games = {p.win_rate():.4f}")
    pairings.append(p)
  return pairings


def read_elo_csv(path: str) -> Dict[str, float]:
  """player -> Elo of an `elo_csv` file.

  Raises:
    ResultsFileError: naming the file and the line.
  """
  ratings = {}
  for row in _csv_rows(path, ELO_COLUMNS):
    try:
      ratings[row["player"]] = float(row["elo"])
    except ValueError:
      raise ResultsFileError(f"{path}: line {row['line']}: elo must be a "
                             f"number, got {row['elo']!r}") from None
  return ratings


def display_name(name: str) -> str:
  """`λ=0.25`, `GNU Go 10`: a player's name for people."""
  if name.startswith("gnugo-"):
    return f"GNU Go {name[len('gnugo-'):]}"
  return (name.replace("mixing=", "λ=").replace("virtual_loss=", "n_vl=")
          .replace("rollout_temperature=", "T_π=")
          .replace("random_symmetry=", "sym="))


def _rate_cell(p: Optional[Pairing]) -> str:
  if p is None:
    return "–"
  lo, hi = p.interval()
  return (f"{p.wins}-{p.draws}-{p.losses} | {100 * p.win_rate():.0f}% "
          f"[{100 * lo:.0f}, {100 * hi:.0f}]")


def table_markdown(summary: Summary) -> str:
  """The whole result for people: settings, pairings, Elo, checks, cost."""
  c = summary.config
  swept = ", ".join(f"{SYMBOLS[n]} ∈ {{{', '.join(f'{v:g}' for v in vs)}}}"
                    for n, vs in c.grid)
  variant = alphago.VARIANTS.get(c.variant)
  search = ("PUCT on raw Q in [−1, 1] (AlphaGo's scale, not mctx's "
            "normalised Q)" if c.variant == "puct"
            else f"variant {c.variant!r}: {variant.description}")
  fixed = [f"{SYMBOLS[n]} = {getattr(c, n):g}" for n in PARAMETERS
           if n not in dict(c.grid) and n in variant.reads
           and (n != "virtual_loss" or max(
               dict(c.grid).get("leaves_per_step", (c.leaves_per_step,))) > 1)
           and (n != "rollout_temperature"
                or (c.static().use_rollouts and c.rollout_policy != "random"))
           and n != "random_symmetry"]  # Said with the leaf evaluators.
  static = c.static()
  grid = dict(c.grid)
  # A static field in the grid is said as swept (its values are in the
  # title and each variant's name).
  sims, rollouts, leaves = (
      "swept" if n in grid else getattr(c, n)
      for n in ("num_simulations", "rollouts_per_leaf", "leaves_per_step"))
  leaf = []
  if static.use_value:
    leaf.append("value network v" if "+" in c.network else "value head v")
  if static.use_rollouts:
    leaf.append(f"{rollouts} {c.rollout_policy} rollout"
                f"{'s' if rollouts != 1 else ''} per leaf")
  board = (f"{summary.board_size}×{summary.board_size} "
           if summary.board_size else "")
  lines = [
      f"# Ablation of AlphaGo's search: {swept}", "",
      f"- Search: {sims} simulations per move, {search}, "
      f"{'; '.join(fixed) or 'nothing else fixed'}; "
      f"{leaves} leaf per step"
      f"{'' if leaves == 1 else 's'}; leaves valued by "
      f"{' and '.join(leaf)}"
      + ("; the networks see each position under a random board symmetry"
         if c.random_symmetry and "random_symmetry" not in dict(c.grid)
         else "")
      + ("; each game's search continues its previous tree below the moves "
         "played since (tree reuse)." if c.reuse_tree else "."),
      f"- Network: {summary.network or c.network} "
      + ("(AlphaGo's policy network = prior, its value network = v)."
         if "+" in c.network else "(policy head = prior, value head = v)."),
      f"- Games: {board}Go, "
      f"komi {c.komi:g}, positional superko, Tromp-Taylor scoring by our "
      f"engine, colours alternated, {c.random_opening_moves} random "
      f"opening plies, "
      + (f"stopped after {c.max_moves} plies and scored as they stand"
         if c.max_moves else "played to two passes") + "; GNU Go levels "
      f"{', '.join(map(str, c.gnugo_levels)) or 'none'} ({GNUGO_FLAGS}); "
      f"seed {c.seed}.",
      f"- Played: {summary.games_played} of {summary.games_planned} games"
      + ("." if summary.complete else " (run unfinished)."), ""]
  names = c.variant_names()
  if c.gnugo_levels:
    levels = sorted(c.gnugo_levels)
    lines += ["## Against GNU Go", "",
              "| variant | " + " | ".join(
                  f"GNU Go {l}: W-D-L | win rate [95% CI]" for l in levels)
              + " |", "|---|" + "---|---|" * len(levels)]
    for n in names:
      lines.append(f"| {display_name(n)} | " + " | ".join(
          _rate_cell(summary.pairing(n, gnugo_name(l))) for l in levels)
          + " |")
    lines.append("")
  rr = [p for p in summary.pairings if p.opponent in names]
  if rr:
    lines += ["## Round robin", "",
              "| player | opponent | W-D-L | win rate [95% CI] |",
              "|---|---|---|---|"]
    lines += [f"| {display_name(p.player)} | "
              f"{display_name(p.opponent)} | {_rate_cell(p)} |"
              for p in rr]
    lines.append("")
  if summary.ratings:
    lines += [f"## Elo (anchor: {display_name(summary.anchor)} = 0; one "
              f"fitted table over all games, one virtual draw per pair that "
              f"played)", "",
              "| player | Elo [95% CI] | games | score |", "|---|---|---|---|"]
    ranked = sorted(summary.ratings.items(), key=lambda kv: -kv[1][0])
    for name, (r, lo, hi) in ranked:
      games, points = _player_games(summary, name)
      lines.append(f"| {display_name(name)} | {r:+.0f} [{lo:+.0f}, "
                   f"{hi:+.0f}] | {games} | {100 * points / games:.1f}% |")
    lines.append("")
  vs_gnugo = [p for p in summary.pairings if p.opponent not in names]
  passed = sum(p.both_passed for p in vs_gnugo)
  agree = sum(p.scores_agree for p in vs_gnugo)
  capped = sum(p.capped for p in summary.pairings)
  lines += ["## Checks", "",
            f"- Every move was checked legal by our engine (an illegal one "
            f"forfeits the game: `forfeited` in jobs/; a game whose GNU Go "
            f"died is left out); GNU Go's board equalled ours at the end of "
            f"every other game.",
            f"- Games against GNU Go that both sides passed out: {passed}; "
            f"GNU Go's `final_score` equal to our Tromp-Taylor score in "
            f"{agree} (it removes stones it judges dead; we count every "
            f"stone).",
            f"- Games stopped by the ply cap: {capped}.",
            f"- Distinct games (move sequences, per pairing and colours): "
            f"{summary.distinct_games} of {summary.games_played}.", ""]
  if summary.cost:
    lines += ["## Cost", "", "| games | played | wall s per game | our CPU "
              "s per game | our CPU s per move | GNU Go CPU s per game |",
              "|---|---|---|---|---|---|"]
    for kind, (n, wall, ours, gnugo, moves) in summary.cost.items():
      label = kind if kind == "round robin" else display_name(kind)
      per_move = f"{ours / moves:.3f}" if moves else "–"
      lines.append(f"| {label} | {n} | {wall / n:.2f} | {ours / n:.2f} | "
                   f"{per_move} | {gnugo / n:.2f} |")
    lines += ["", "Our CPU s per move: our process's CPU seconds (its "
              "compilations included) over the moves it chose (the random "
              "opening plies left out), amortised over the games it played "
              "at once."]
    lines.append("")
  return "\n".join(lines)


def plot_summary(summary: Summary, output: str) -> None:
  """`plot.png`: win rate (Wilson 95%) and Elo (95%) against the swept
  parameter (or the variant, for a grid over several)."""
  c = summary.config
  names = c.variant_names()
  if len(c.grid) == 1:
    field, values = c.grid[0]
    x, ticks, xlabel = list(values), None, SYMBOLS[field]
  else:
    x, ticks, xlabel = list(range(len(names))), [
        display_name(n) for n in names], "variant"
  series = {}
  for opponent in [gnugo_name(l) for l in sorted(c.gnugo_levels)]:
    rows = [summary.pairing(n, opponent) for n in names]
    series[f"vs {display_name(opponent)}"] = [
        None if p is None else (p.win_rate(), *p.interval()) for p in rows]
  if c.round_robin_games:
    rr = []
    for n in names:
      games = wins = 0
      for p in summary.pairings:
        if p.opponent in names and n in (p.player, p.opponent):
          games += p.games
          wins += p.wins if p.player == n else p.losses
      rr.append(None if games == 0 else (wins / games,
                                         *wilson_interval(wins, games)))
    series["round robin (vs the other variants)"] = rr
  elo = [summary.ratings.get(n) for n in names]
  references = {display_name(gnugo_name(l)): summary.ratings[
      gnugo_name(l)][0] for l in sorted(c.gnugo_levels)
                if gnugo_name(l) in summary.ratings}
  plot_ablation(x, series, elo, output, xlabel=xlabel, tick_labels=ticks,
                references=references, log_x=(
                    len(c.grid) == 1 and c.grid[0][0] == "c_puct"),
                title=table_markdown(summary).splitlines()[0][2:])


def write_outputs(summary: Summary, run_dir: str, *, plot: bool = True
                  ) -> None:
  """results.csv, elo.csv, table.md and (with `plot`) plot.png, each
  written atomically."""
  write_atomic(os.path.join(run_dir, "results.csv"), results_csv(summary))
  write_atomic(os.path.join(run_dir, "elo.csv"), elo_csv(summary))
  write_atomic(os.path.join(run_dir, "table.md"), table_markdown(summary))
  if plot and summary.pairings:
    plot_summary(summary, os.path.join(run_dir, "plot.png"))


