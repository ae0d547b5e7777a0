"""The documented figures are the committed artefacts': each figure is
recomputed from a committed file (metrics, SGFs, job files, review CSVs)
and the number the README or a document under `docs/` quotes by its label
must equal it, to the digits it is quoted with (an edit to either side
that breaks the agreement fails here). Only the figures are checked: a
label is a few words matched loosely (case, spacing, markdown emphasis),
and the prose around it is free."""

import csv
import json
import math
import os
import re
import statistics

import pytest

from alphago_jax.core import stats
from alphago_jax.evaluation import ablation, match_review
from alphago_jax.games import sgf

ROOT = os.path.join(os.path.dirname(__file__), "..")


def _read(*path):
  with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
    return f.read()


def _flat(text):
  """`text` on one line, without markdown emphasis and code marks: what a
  label is matched in."""
  return " ".join(text.replace("*", "").replace("`", "").split())


DOCUMENTS = ("README.md", "docs/results/go.md", "docs/results/alphazero.md",
             "docs/results/search.md", "docs/results/benchmarks.md",
             "docs/guides/cli.md", "docs/guides/gtp.md",
             "docs/guides/testing.md")
# The documents as one line: a label may wrap, and may sit in any of them.
README = _flat(" ".join(_read(*d.split("/")) for d in DOCUMENTS))
ABLATIONS = _flat(_read("docs", "ablations.md"))
METRICS = [json.loads(l) for l in _read(
    "checkpoints", "go9", "metrics.jsonl").splitlines()]
CURVE = json.loads(_read("docs", "go9_learning_curve.json"))

# A figure as the documents write it (3,072, 0.612, -4 or with U+2212),
# not part of a longer number.
NUMBER = r"(?<![\d.,])[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])"


def _plain(figure):
  """A figure as a comparable string: no thousands separators, an ASCII
  minus; its decimals kept, so 0.60 is not 0.6."""
  return str(figure).replace(",", "").replace("\u2212", "-")


def _label(words):
  """A pattern for the words of a label: any case, any spacing, and at a
  `...` a few words of anything."""
  return r".{0,80}?".join(r"\s*".join(map(re.escape, _flat(part).split()))
                          for part in words.split("..."))


def quotes(template, text=README):
  """The figures `text` quotes where `template` stands: a tuple of plain
  figures (one for each `{}` of the template) for each place. The words
  around the `{}`s are the figures' labels, matched ignoring case,
  spacing and markdown emphasis (`...`: a few words of any prose)."""
  labels = [_label(part) for part in template.split("{}")]
  pattern = rf"\s*({NUMBER})\s*".join(labels)
  return [tuple(map(_plain, m.groups()))
          for m in re.finditer(pattern, text, re.IGNORECASE)]


def quoted(template, *figures, text=README):
  """Asserts that `text` (by default the documents) quotes `figures` (the
  values recomputed from the artefacts, formatted to the digits the
  documents give) in some place where `template` stands."""
  assert template.count("{}") == len(figures), template
  want = tuple(map(_plain, figures))
  found = quotes(template, text)
  assert want in found, (f"{template!r}: the artefacts give {want}, the "
                         f"documents quote {found or 'nothing there'}")


def test_run_size_and_loss():
  assert [m["iteration"] for m in METRICS] == list(range(1, 49))
  games = sum(m["games_finished"] for m in METRICS)
  hours = sum(m["seconds"] for m in METRICS) / 3600
  quoted("{} hours of summed iteration time", f"{hours:.2f}")
  quoted("{} iterations ({} games)", len(METRICS), f"{games:.0f}")
  quoted("loss fell from {} to {}", f"{METRICS[0]['loss']:.2f}",
         f"{METRICS[-1]['loss']:.2f}")


def test_raw_policy_against_random():
  by_it = {m["iteration"]: m for m in METRICS if "random_policy_losses" in m}
  games = {i: sum(m[f"random_policy_as_{side}_{result}"]
                  for side in ("first", "second")
                  for result in ("wins", "draws", "losses"))
           for i, m in by_it.items()}
  quoted("losing {} of {} games against random play (iteration {})",
         f"{by_it[10]['random_policy_losses']:.0f}", games[10], 10)
  wins = {i: m["random_policy_as_first_wins"] + m[
      "random_policy_as_second_wins"] for i, m in by_it.items()}
  assert {wins[i] for i in (25, 30, 35, 40, 45)} == {32}
  # Every evaluation from the first perfect one on won every game.
  perfect = [i for i in sorted(wins) if wins[i] == games[i]]
  assert perfect == [i for i in sorted(wins) if i >= perfect[0]], wins
  quoted("winning {} of {} (iterations {}–{})", wins[perfect[0]],
         games[perfect[0]], perfect[0], perfect[-1])


def _result(player, opponent):
  for r in CURVE["results"]:
    if (r["player"], r["opponent"]) == (player, opponent):
      return r
  raise KeyError((player, opponent))


def test_target_match_and_elo():
  r = _result("UCT-16", "iter 48")
  wins, n = r["losses"], r["wins"] + r["draws"] + r["losses"]
  lo, hi = stats.wilson_interval(wins, n)
  quoted("won {} of {} games (95% Wilson interval {}–{}%)", wins, n,
         f"{100 * lo:.1f}", f"{100 * hi:.0f}")
  r0 = _result("UCT-16", "iter 0")
  quoted("network with search already won {} of {}", r0["losses"],
         r0["wins"] + r0["losses"] + r0["draws"])
  elo = CURVE["elo"]
  quoted("UCT-16 rates only +{} Elo", f"{elo['UCT-16']['rating']:.0f}")
  lo48, hi48 = elo["iter 48"]["interval"]
  quoted("from +{} at iteration 0 to +{} [+{}, +{}] at iteration 48",
         f"{elo['iter 0']['rating']:.0f}", f"{elo['iter 48']['rating']:.0f}",
         f"{lo48:.0f}", f"{hi48:.0f}")
  quoted("GNU Go level 1 (+{})", f"{elo['GNU Go 1']['rating']:.0f}")
  # "still win every game" against every snapshot and UCT-16.
  for r in CURVE["results"]:
    if r["player"].startswith("GNU Go"):
      assert r["losses"] == r["draws"] == 0, r


def _metrics(*path):
  return [json.loads(l) for l in _read(*path).splitlines()]


def test_2016_pipeline_figures_are_the_committed_runs():
  # The 19x19 p_σ: its training budget used and the curve's last point.
  sl = [m for m in _metrics("checkpoints", "sl_policy", "metrics.jsonl")
        if "eval_top1" in m]
  last = sl[-1]
  quoted("{}M training samples", f"{last['samples'] / 1e6:.2f}")
  quoted("{} h of its 8-hour budget", f"{last['train_seconds'] / 3600:.1f}")
  quoted("{}% at {}M", f"{100 * last['eval_top1']:.1f}",
         f"{last['samples'] / 1e6:.2f}")
  # The 9x9 p_π: its last test evaluation.
  rp = [m for m in _metrics("checkpoints", "rollout9", "metrics.jsonl")
        if "eval_top1" in m][-1]
  quoted("Top-1 {}% (top-5 {}%) on its 40 test games ({} positions)",
         f"{100 * rp['eval_top1']:.1f}", f"{100 * rp['eval_top5']:.1f}",
         rp["eval_positions"])
  # The whole-game value network: final train and test MSE.
  vw = [m for m in _metrics("docs", "value9-whole", "metrics.jsonl")
        if "test_mse" in m][-1]
  quoted("MSE: train {}, test {}", f"{vw['train_mse']:.3f}",
         f"{vw['test_mse']:.3f}")


def test_19x19_longer_sl_policy_figures_are_the_committed_run():
  """`checkpoints/sl_policy_long`: its size, time and curve as the README
  gives them (the test-set accuracies are `eval_policy.py`'s, re-measured
  by hand; the curve is the metrics')."""
  sl = [m for m in _metrics("checkpoints", "sl_policy_long",
                            "metrics.jsonl") if "eval_top1" in m]
  last = sl[-1]
  quoted("sl_policy_long/: {}M training samples ({} epochs), {} h of "
         "training", f"{last['samples'] / 1e6:.2f}", f"{last['epoch']:.2f}",
         f"{last['train_seconds'] / 3600:.1f}")
  # The curve as the documents quote it: every accuracy at the samples
  # they give it for is the metrics' there.
  at = {f"{m['samples'] / 1e6:.2f}": f"{100 * m['eval_top1']:.1f}"
        for m in sl}
  quoted("fell from {}% at {}M samples to {}% at {}M", at["5.40"], "5.40",
         at["5.63"], "5.63")
  quoted("{}% at {}M, {}% at {}M, {}% at {}M, {}% at {}M",
         *(f for s in ("8.19", "8.45", "8.96", "10.00") for f in (at[s], s)))


def test_19x19_ladder_run_figures_are_the_committed_network():
  """`checkpoints/sl_policy_ladders`: its size and time as the README gives
  them (with the runs it grew from, `checkpoints/sl_policy_long` and
  `checkpoints/sl12-partial`), and every held-out evaluation in its
  metrics stands in the README's curve of the ladder run."""
  sl = [m for m in _metrics("checkpoints", "sl_policy_ladders",
                            "metrics.jsonl") if "eval_top1" in m]
  last = sl[-1]
  grown_from = [[m for m in _metrics("checkpoints", name, "metrics.jsonl")
                 if "samples" in m][-1]
                for name in ("sl_policy_long", "sl12-partial")]
  hours = sum(m["train_seconds"] for m in [last, *grown_from]) / 3600
  samples = sum(m["samples"] for m in [last, *grown_from]) / 1e6
  quoted("{}M training samples in this run ({} epochs), {} h of its "
         "training", f"{last['samples'] / 1e6:.2f}", f"{last['epoch']:.2f}",
         f"{last['train_seconds'] / 3600:.1f}")
  quoted("{} h with the runs it grew from ({}M samples)", f"{hours:.1f}",
         f"{samples:.1f}")
  assert len(sl) >= 8
  # The curve: every evaluation, in order, as (top-1, nll, samples).
  quoted("metrics): "
         + ", ".join(["{}% / {} at {}M samples"]
                     + ["{}% / {} at {}M"] * (len(sl) - 1)),
         *(f for m in sl for f in (f"{100 * m['eval_top1']:.1f}",
                                   f"{m['eval_nll']:.3f}",
                                   f"{m['samples'] / 1e6:.2f}")))


def _rate_figures(wins, games, decimals=1):
  """`(wins, games, rate %, Wilson interval % low, high)` as the documents
  quote a match's result."""
  lo, hi = stats.wilson_interval(wins, games)
  return (wins, games,
          *(f"{100 * x:.{decimals}f}" for x in (wins / games, lo, hi)))


def _match_wins(*folder):
  """{colour: (wins, games)} of the network in a folder of match SGFs,
  each game's result read from its SGF (our engine's score)."""
  tally = {"black": [0, 0], "white": [0, 0]}
  for name in sorted(os.listdir(os.path.join(ROOT, *folder))):
    if name.endswith(".sgf"):
      colour = "black" if name.endswith("-black.sgf") else "white"
      result = re.search(r"RE\[([^]]*)\]", _read(*folder, name)).group(1)
      tally[colour][0] += result.startswith(colour[0].upper())
      tally[colour][1] += 1
  return tally


def test_19x19_sl_policy_match_is_the_committed_games():
  """p_σ against GNU Go level 10: the README's counts are the committed
  games'. Of the 50 scheduled, game 11 was not played (GNU Go crashed);
  its absence is the log's, not a lost file."""
  folder = ("docs", "results", "sl-policy-19-vs-gnugo10")
  tally = _match_wins(*folder)
  won, n = (sum(t[i] for t in tally.values()) for i in (0, 1))
  assert n == 49 and not any(f.startswith("level10-011-")
                             for f in os.listdir(os.path.join(ROOT, *folder)))
  quoted("in a first match: {} wins of {} played, {}% [{}, {}]",
         *_rate_figures(won, n))
  quoted("as Black {} of {}, as White {} of {}", *tally["black"],
         *tally["white"])
  log = _read(*folder, "log.txt")
  assert f"{won} wins, 0 draws, {n - won} losses of {n} played" in log
  assert "game 11 not played" in log and "(status -11)" in log
  # The second, smaller match (another seed) and both together.
  more = _match_wins("docs", "results", "sl-policy-19-vs-gnugo10-seed1")
  more_won, more_n = (sum(t[i] for t in more.values()) for i in (0, 1))
  assert more_n == 24
  quoted("won {} of {}, {}% [{}, {}]", *_rate_figures(more_won, more_n))
  quoted("{} of {}, {}% [{}, {}]",
         *_rate_figures(won + more_won, n + more_n))


def _block(seed, folder):
  """A pre-planned block of 50 games: its count is its SGFs' and its
  log's, a game GNU Go failed in is in its unplayed/ and its log and
  nowhere counted, and the README's row for it is so. Returns its
  `_match_wins` tally and the number of games left unplayed."""
  tally = _match_wins(*folder)
  w, n = (sum(t[i] for t in tally.values()) for i in (0, 1))
  cut = os.path.join(ROOT, *folder, "unplayed")
  unplayed = len(os.listdir(cut)) if os.path.isdir(cut) else 0
  log = _read(*folder, "log.txt")
  assert n + unplayed == 50
  assert log.count("UserWarning: gnugo_match: game") == unplayed
  assert f"{w} wins, 0 draws, {n - w} losses of {n} played" in log
  quoted("| {} | {} of {} | {}% [{}, {}] |", seed, *_rate_figures(w, n))
  return tally, unplayed


def test_19x19_sl_policy_preplanned_match_is_the_committed_games():
  """The pre-planned 200 games (four blocks of 50, seeds 2 to 5): each
  block's count is its SGFs' and its log's; a game GNU Go failed in is in
  the block's unplayed/ and its log, and nowhere counted."""
  won = played = 0
  colours = {"black": [0, 0], "white": [0, 0]}
  for seed in (2, 3, 4, 5):
    folder = ("docs", "results", f"sl-policy-19-vs-gnugo10-seed{seed}")
    tally, _ = _block(seed, folder)
    for colour, (w, n) in tally.items():
      colours[colour][0] += w
      colours[colour][1] += n
    w, n = (sum(t[i] for t in tally.values()) for i in (0, 1))
    won, played = won + w, played + n
  _quoted_colours(colours)
  quoted("The pre-planned match: {} wins of {} played, {}% [{}, {}]",
         *_rate_figures(won, played))
  quoted("{} of {}, {}% [{}, {}]", *_rate_figures(won, 200))
  # With the two matches before it: all of this network's games.
  for folder in ("sl-policy-19-vs-gnugo10", "sl-policy-19-vs-gnugo10-seed1"):
    tally = _match_wins("docs", "results", folder)
    won += sum(w for w, _ in tally.values())
    played += sum(n for _, n in tally.values())
  won, played, *rate = _rate_figures(won, played)
  quoted("All six matches of this network, {} games, give {} wins, {}% "
         "[{}, {}]", played, won, *rate)


def _preplanned_match(prefix, seeds, log_head, name):
  """A pre-planned match of four blocks of 50 (`docs/results/PREFIX-seedS`
  for S in `seeds`), as far as its blocks are committed: each block's
  count is its SGFs' and its log's (which starts with `log_head`), and
  the README's totals are theirs, headed `name` once all four are in.
  Returns (won, played, {colour: [won, played]}, {seed: [won, played]})
  over the committed blocks."""
  won = played = unplayed_all = 0
  colours = {"black": [0, 0], "white": [0, 0]}
  blocks = {s: [0, 0] for s in seeds if os.path.isdir(os.path.join(
      ROOT, "docs", "results", f"{prefix}-seed{s}"))}
  assert blocks, f"no block of {name} is committed"
  for seed, block in blocks.items():
    folder = ("docs", "results", f"{prefix}-seed{seed}")
    tally, unplayed = _block(seed, folder)
    assert _read(*folder, "log.txt").startswith(log_head)
    for colour, (w, n) in tally.items():
      colours[colour][0] += w
      colours[colour][1] += n
      block[0] += w
      block[1] += n
    won += block[0]
    played += block[1]
    unplayed_all += unplayed
  if len(blocks) == len(seeds):
    quoted(name + ": {} wins of {} played, {}% [{}, {}]",
           *_rate_figures(won, played))
  else:
    quoted("So far, {} of its {} blocks: {} wins of {} played, {}% [{}, {}]",
           len(blocks), len(seeds), *_rate_figures(won, played))
  quoted("{} of {}, {}% [{}, {}] with GNU Go's crashes counted as losses",
         *_rate_figures(won, played + unplayed_all))
  return won, played, colours, blocks


def _quoted_colours(colours):
  """The wins of a match's blocks by the network's colour, as quoted."""
  quoted("As Black it won {} of {}, as White {} of {}", *colours["black"],
         *colours["white"])


def _gain(won, played, prefix, seeds):
  """The gain of `won` of `played` over the blocks `PREFIX-seedS`, and
  Newcombe's interval for it, in points as the documents quote them."""
  earlier = [_match_wins("docs", "results", f"{prefix}-seed{s}")
             for s in seeds]
  k, n = (sum(t[i] for tally in earlier for t in tally.values())
          for i in (0, 1))
  lo, hi = stats.difference_interval(won, played, k, n)
  return tuple(f"{100 * x:.1f}" for x in (won / played - k / n, lo, hi))


def test_19x19_long_ensemble_preplanned_match_is_the_committed_games():
  """The second pre-planned match (the longer p_σ's ensemble, seeds 6 to
  9), and its gain over the first (seeds 2 to 5)."""
  won, played, colours, blocks = _preplanned_match(
      "sl-policy-19-long-ensemble-vs-gnugo10", (6, 7, 8, 9),
      "checkpoints/sl_policy_long (step 78125, 6x64, 19x19), greedy, "
      "8-symmetry ensemble", "The second pre-planned match")
  if len(blocks) == 4:
    _quoted_colours(colours)
    quoted("gained {} points [{}, {}]",
           *_gain(won, played, "sl-policy-19-vs-gnugo10", (2, 3, 4, 5)))


def test_19x19_ladder_ensemble_preplanned_match_is_the_committed_games():
  """The third pre-planned match (the ladder network's ensemble, seeds 10
  to 13), as far as its blocks are committed, and once all four are in,
  its colours and its gain over the second (seeds 6 to 9)."""
  won, played, colours, blocks = _preplanned_match(
      "sl-policy-19-ladders-ensemble-vs-gnugo10", (10, 11, 12, 13),
      "checkpoints/sl_policy_ladders (step 32812, 12x64, 19x19), greedy, "
      "8-symmetry ensemble", "The third pre-planned match")
  # Its rows in the two tables of 19x19 networks.
  _, _, *rate = _rate_figures(won, played, decimals=0)
  for label in ("ensemble: ", "ensemble "):
    if len(blocks) == 4:
      quoted(label + "{}% [{}, {}], {} pre-planned games |", *rate, played)
    else:
      quoted(label + "{}% [{}, {}], {} of {} pre-planned games so far |",
             *rate, played, 200)
  if len(blocks) == 4:
    _quoted_colours(colours)
    quoted("gained {} points [{}, {}] over the second",
           *_gain(won, played, "sl-policy-19-long-ensemble-vs-gnugo10",
                  (6, 7, 8, 9)))
    # The blocks' spread: Pearson's chi-squared on the 4 x 2 table.
    # pylint: disable-next=import-outside-toplevel
    from scipy import stats as scipy_stats
    table = [[w, n - w] for w, n in blocks.values()]
    p = scipy_stats.chi2_contingency(table).pvalue
    quoted("(χ² test of homogeneity, p = {})", f"{p:.3f}")


REVIEW_SAMPLE = 5


def _review_rows(name, prefix, seeds):
  """The rows of `match_review.py`'s table `docs/results/NAME` of the blocks
  `PREFIX-seedS`, after checking that they are one row for each committed
  SGF, in order."""
  rows = list(csv.DictReader(_read("docs", "results", name).splitlines()))
  games = sorted(
      f"docs/results/{prefix}-seed{s}/{n}" for s in seeds
      for n in os.listdir(os.path.join(ROOT, "docs", "results",
                                       f"{prefix}-seed{s}"))
      if n.endswith(".sgf"))
  assert [r["source"] for r in rows] == games
  return rows


def _recomputed(row, record):
  """A review row's ladder and atari-run columns recomputed from its SGF
  (GNU Go's count at its pass is not replayed: that needs GNU Go)."""
  gnugo = "BW".index(row["gnugo_colour"])
  runs = [match_review.lost_atari_run(record, c) for c in (1 - gnugo,
                                                           gnugo)]
  ladders = match_review.ladder_counts(record)
  return {"lost_atari_run": runs[0], "gnugo_lost_atari_run": runs[1],
          "atari_extensions": ladders[1 - gnugo][0],
          "into_ladders": ladders[1 - gnugo][1],
          "gnugo_atari_extensions": ladders[gnugo][0],
          "gnugo_into_ladders": ladders[gnugo][1]}


def _review(name, prefix, seeds, *, sample=REVIEW_SAMPLE):
  """`match_review.py`'s table `docs/results/NAME` of the blocks
  `PREFIX-seedS`: one row for each committed SGF, with its result, its
  first pass recomputed, and every game GNU Go did not resign passed in;
  the documents' counts of its passes are so. The ladder and atari-run
  columns, most of a review's cost, are recomputed for every `sample`-th
  row and every game decided after a pass (`sample=1`: all of them, the
  slow test). Returns the summary and the reviews (from the table)."""
  rows = _review_rows(name, prefix, seeds)
  reviews = []
  for i, row in enumerate(rows):
    record = sgf.parse_sgf(_read(row["source"]), source=row["source"])
    assert row["result"] == record.result and int(row["plies"]) == len(
        record.moves)
    first = match_review.first_pass(record, opening_plies=2)
    assert row["first_pass"] == ("" if first is None else str(first))
    gnugo = "BW".index(row["gnugo_colour"])
    review = match_review.Review(
        source=row["source"], gnugo_colour=gnugo,
        plies=len(record.moves), winner=record.winner,
        result=sgf.result_score(record.result), first_pass=first,
        count_at_pass=sgf.result_score(row["count_at_pass"] or None),
        **{k: int(row[k]) for k in (
            "lost_atari_run", "gnugo_lost_atari_run", "atari_extensions",
            "into_ladders", "gnugo_atari_extensions", "gnugo_into_ladders")})
    if i % sample == 0 or review.decided_after_pass:
      recomputed = _recomputed(row, record)
      assert {k: int(row[k]) for k in recomputed} == recomputed, row["source"]
    reviews.append(review)
  assert all(r["result"].endswith("+R") == (r["first_pass"] == "")
             for r in rows)
  resigned = sum(r["result"].endswith("+R") for r in rows)
  s = match_review.summarize(reviews)
  quoted("GNU Go passed in {} of the {} games (it resigned the other {}), "
         "and in {} of them", s["gnugo_passed"], s["games"], resigned,
         s["count_is_result"])
  return s, reviews


@pytest.mark.slow
@pytest.mark.parametrize("name,prefix,seeds", [
    ("sl-policy-19-vs-gnugo10-preplanned-review.csv",
     "sl-policy-19-vs-gnugo10", (2, 3, 4, 5)),
    ("sl-policy-19-long-ensemble-vs-gnugo10-review.csv",
     "sl-policy-19-long-ensemble-vs-gnugo10", (6, 7, 8, 9)),
    ("sl-policy-19-ladders-ensemble-vs-gnugo10-review.csv",
     "sl-policy-19-ladders-ensemble-vs-gnugo10", (10, 11, 12, 13))])
def test_every_review_row_is_recomputed_from_its_game(name, prefix, seeds):
  """The default suite recomputes a sample of each review's rows; this,
  all of them."""
  s, _ = _review(name, prefix, seeds, sample=1)
  assert s["games"] == len(_review_rows(name, prefix, seeds))


def _losses(s, reviews, head):
  """The network's losses in a review (it never resigns): asserts that the
  documents quote their number (at the `{}` of `head`), median margin and
  how many were by 20 points or more; returns the margins."""
  margins = sorted(-r.result * (1 if r.gnugo_colour == 1 else -1)
                   for r in reviews if r.winner == r.gnugo_colour)
  assert len(margins) == s["games"] - s["won"] and min(margins) > 0
  quoted(head + " by a median of {} points, {} by 20 points or more",
         len(margins), f"{statistics.median(margins):g}",
         sum(m >= 20 for m in margins))
  return margins


def _game(review):
  """`(seed, game number)` of a reviewed game, from its SGF's path."""
  seed, game = re.search(r"-seed(\d+)/level\d+-(\d+)-",
                         review.source).groups()
  return int(seed), int(game)


def test_19x19_preplanned_match_review_is_the_committed_games():
  """The first pre-planned match's review: the README's counts are its."""
  s, reviews = _review(
      "sl-policy-19-vs-gnugo10-preplanned-review.csv",
      "sl-policy-19-vs-gnugo10", (2, 3, 4, 5))
  assert s["games"] == 198 and s["won"] == 66
  flips = [r for r in reviews if r.decided_after_pass]
  assert s["lost_when_ahead"] == len(flips) == 1
  assert s["won_when_behind"] == 0
  if s["gnugo_ladder_runs"] == 0:
    quoted("in the first match the network did in {} of its {} losses, GNU "
           "Go in none", s["lost_with_ladder_run"], s["games"] - s["won"])
  else:
    quoted("in the first match the network did in {} of its {} losses, GNU "
           "Go in {}", s["lost_with_ladder_run"], s["games"] - s["won"],
           s["gnugo_ladder_runs"])
  quoted("(in the first match {} of {} against {} of {})", s["into_ladders"],
         s["atari_extensions"], s["gnugo_into_ladders"],
         s["gnugo_atari_extensions"])
  r = flips[0]
  quoted("seed {}, game {}, which the network led by {} there and lost by {}",
         *_game(r), f"{abs(r.count_at_pass):g}", f"{abs(r.result):g}")
  assert r.source.endswith("seed5/level10-047-white.sgf")


def test_19x19_second_preplanned_match_review_is_the_committed_games():
  """The second pre-planned match's review: the README's counts are its."""
  s, reviews = _review(
      "sl-policy-19-long-ensemble-vs-gnugo10-review.csv",
      "sl-policy-19-long-ensemble-vs-gnugo10", (6, 7, 8, 9))
  assert s["games"] == 197 and s["won"] == 89
  # No game changed winner after GNU Go's pass.
  assert s["lost_when_ahead"] == s["won_when_behind"] == 0
  margins = _losses(s, reviews, "of its {},")
  assert match_review.LADDER_RUN == 5
  quoted("in {} of the {} the network ran a ladder out and lost it",
         s["lost_with_ladder_run"], len(margins))
  assert s["gnugo_ladder_runs"] == 0
  quoted("GNU Go did so in none of the {} games", s["games"])
  # As the third match's review quotes them.
  quoted("({} of {} in the second match)", s["lost_with_ladder_run"],
         len(margins))
  quoted("({} of {}, in {} of {}, without the ladder planes)",
         s["into_ladders"], s["atari_extensions"], s["games_into_ladders"],
         s["games"])
  lost_runs = [r for r in reviews if r.winner == r.gnugo_colour
               and r.lost_atari_run >= match_review.LADDER_RUN]
  each = "each" if all(r.into_ladders for r in lost_runs) else "not all"
  quoted("ran into a ladder that works {} times of {}, in {} of the {} games "
         "and in " + each + " of those {}", s["into_ladders"],
         s["atari_extensions"], s["games_into_ladders"], s["games"],
         len(lost_runs))
  quoted("GNU Go's {} times of {}", s["gnugo_into_ladders"],
         s["gnugo_atari_extensions"])


def test_19x19_third_preplanned_match_review_is_the_committed_games():
  """The third pre-planned match's review: the README's counts are its."""
  s, reviews = _review(
      "sl-policy-19-ladders-ensemble-vs-gnugo10-review.csv",
      "sl-policy-19-ladders-ensemble-vs-gnugo10", (10, 11, 12, 13))
  assert s["games"] == 200 and s["won"] == 155
  assert s["won_when_behind"] == 0
  flips = [r for r in reviews if r.decided_after_pass]
  assert s["lost_when_ahead"] == len(flips) == 2
  games = [r.source.split("seed")[1] for r in flips]
  assert games == ["11/level10-017-black.sgf", "11/level10-024-black.sgf"]
  quoted("games {} and {}, which the network led by {} and {} there and "
         "lost by {} and {}", *(_game(r)[1] for r in flips),
         *(f"{abs(r.count_at_pass):g}" for r in flips),
         *(f"{abs(r.result):g}" for r in flips))
  margins = _losses(s, reviews, "Of its {} losses,")
  assert match_review.LADDER_RUN == 5 and s["gnugo_ladder_runs"] == 0
  quoted("in {} of the {} the network ran a ladder out and lost it",
         s["lost_with_ladder_run"], len(margins))
  quoted("GNU Go in none of the {} games", s["games"])
  quoted("ran into a ladder that works {} times of {}, in {} of the {} games",
         s["into_ladders"], s["atari_extensions"], s["games_into_ladders"],
         s["games"])
  quoted("GNU Go's {} times of {}", s["gnugo_into_ladders"],
         s["gnugo_atari_extensions"])


def _value_run(*folder):
  """A value network run's evaluations (metrics with `test_mse`) and its
  batch size."""
  config = json.loads(_read(*folder, "config.json"))["config"]
  return ([m for m in _metrics(*folder, "metrics.jsonl") if "test_mse" in m],
          config["batch_size"])


def _training_positions_fit(positions, evaluation, batch_size):
  """Asserts that a quoted count of training positions is the run's: its
  epochs are whole batches of them (`samples / epoch`)."""
  batches = int(_plain(positions)) // batch_size
  assert batches * batch_size == round(
      evaluation["samples"] / evaluation["epoch"]), (positions, evaluation)


def test_19x19_value_figures_are_the_committed_runs():
  # One position per self-play game: the committed network's last test.
  evals, batch_size = _value_run("checkpoints", "value19")
  v = evals[-1]
  quoted("MSE: train {}, test {}", f"{v['train_mse']:.3f}",
         f"{v['test_mse']:.3f}")
  quoted("(sign of the outcome right in {}% / {}%)",
         f"{100 * v['train_sign_accuracy']:.1f}",
         f"{100 * v['test_sign_accuracy']:.1f}")
  [(positions, *mse)] = quotes("(checkpoints/value19) | {} | {} | {} |")
  assert mse == [f"{v['train_mse']:.3f}", f"{v['test_mse']:.3f}"], mse
  _training_positions_fit(positions, v, batch_size)
  # Every position of 30 KGS games.
  w, _ = _value_run("docs", "value19-whole")
  quoted("MSE: train {}, test {} (sign accuracy {}% / {}%)",
         f"{w[-1]['train_mse']:.3f}", f"{w[-1]['test_mse']:.3f}",
         f"{100 * w[-1]['train_sign_accuracy']:.1f}",
         f"{100 * w[-1]['test_sign_accuracy']:.1f}")
  quoted("(test MSE {} at {} epochs, then rising)",
         f"{w[0]['test_mse']:.3f}", f"{w[0]['epoch']:.0f}")
  assert min(m["test_mse"] for m in w) == w[0]["test_mse"]


def _value_figures(name, v, batch_size, sign):
  """A 9x9 value network's last evaluation `v` as the documents quote it:
  its MSE and sign accuracies (`sign`: the template after the MSE), and
  its row in the table of networks (training positions, training
  minutes, MSE)."""
  quoted("MSE: train {}, test {} " + sign, f"{v['train_mse']:.3f}",
         f"{v['test_mse']:.3f}", f"{100 * v['train_sign_accuracy']:.1f}",
         f"{100 * v['test_sign_accuracy']:.1f}")
  [(positions, _, minutes, *mse)] = quotes(
      f"v_θ {name} | 9×9 | 6 × 64 + 256 | {{}} positions, p_σ playouts at "
      f"T 0.5 | {{}} + {{}} min | MSE {{}} / {{}};")
  assert minutes == f"{v['train_seconds'] / 60:.0f}", minutes
  assert mse == [f"{v['train_mse']:.3f}", f"{v['test_mse']:.3f}"], mse
  _training_positions_fit(positions, v, batch_size)


def test_9x9_sharper_label_value_figures_are_the_committed_run():
  # The committed network's last evaluation, as the README states it.
  evals, batch_size = _value_run("checkpoints", "value9s")
  _value_figures("value9s", evals[-1], batch_size, "(sign {}% / {}%)")


def test_9x9_doubled_data_value_figures_are_the_committed_run():
  evals, batch_size = _value_run("checkpoints", "value9s2")
  v = evals[-1]
  _value_figures("value9s2", v, batch_size, "(sign {}% / {}%;")
  quoted("({} epochs, {} minutes,", f"{v['epoch']:.1f}",
         f"{v['train_seconds'] / 60:.0f}")


def test_value9s_strength_figures_are_the_committed_matches():
  # Both value9s matches against GNU Go level 10 and their pooled rate, as
  # the README and docs/ablations.md state them, recounted from the jobs.
  counts = []
  for run in ("strength-l10-512-v9s", "strength-l10-512-v9s-seed1",
              "strength-l10-512-v9s2-seed2"):
    [p] = ablation.load_summary(os.path.join(ROOT, "docs", "ablations",
                                             run)).pairings
    counts.append((p.wins, p.games))
  pooled = tuple(map(sum, zip(*counts[:2])))
  for text in (README, ABLATIONS):
    for wins, games in counts + [pooled]:
      quoted("{} of {}, {}% [{}, {}]",
             *_rate_figures(wins, games, decimals=0), text=text)
  # All three: the same search, two value networks.
  wins, games, *rate = _rate_figures(*map(sum, zip(*counts)), decimals=0)
  quoted("{} of {} for two networks ... about {}% [{}, {}]", wins, games,
         *rate, text=ABLATIONS)


def test_random_symmetry_strength_figures_are_the_committed_match():
  # The match with random symmetry and 576 simulations, recounted from its
  # jobs, with its recorded settings and cost as the texts give them.
  counts = []
  for seed in (3, 4):
    run = ("docs", "ablations", f"strength-l10-576-v9s2-sym-seed{seed}")
    summary = ablation.load_summary(os.path.join(ROOT, *run))
    [p] = summary.pairings
    config = summary.config
    assert config.random_symmetry and config.num_simulations == 576
    assert config.network == "sl9+value9s2" and config.seed == seed
    counts.append((p.wins, p.games))
    # Its cost as its report gives it, recomputed from its jobs.
    n, wall, ours, gnugo, moves = summary.cost["gnugo-10"]
    assert n == p.games
    quoted("| GNU Go 10 | {} | {} | {} | {} | {} |", n, f"{wall / n:.2f}",
           f"{ours / n:.2f}", f"{ours / moves:.3f}", f"{gnugo / n:.2f}",
           text=_flat(_read(*run, "table.md")))
    # Its row in the table of 9x9 configurations: simulations, win rate,
    # our CPU seconds a move, games.
    _, _, *rate = _rate_figures(p.wins, p.games, decimals=0)
    quoted("sym-seed{}/) | {} | {}% [{}, {}] | {} s | {} |", seed,
           config.num_simulations, *rate, f"{ours / moves:.2f}", p.games,
           text=ABLATIONS)
  pooled = tuple(map(sum, zip(*counts)))
  for text in (README, ABLATIONS):
    for wins, games in counts + [pooled]:
      quoted("{} of {}, {}% [{}, {}]",
             *_rate_figures(wins, games, decimals=0), text=text)


def test_gumbel_against_puct_figures_are_the_committed_matches():
  # docs/results/gumbel-9x9.md: each player's record recounted from its
  # jobs, its settings as the plan fixed them, its cost, and the
  # difference recomputed as the plan names it (and as the committed
  # comparison file holds it).
  text = _flat(_read("docs", "results", "gumbel-9x9.md"))
  records = {}
  for variant in ("gumbel", "puct"):
    run = ("docs", "ablations", f"{variant}-l10-64-seed5")
    summary = ablation.load_summary(os.path.join(ROOT, *run))
    config = summary.config
    assert (config.variant, config.num_simulations, config.seed,
            config.network, config.grid, config.random_symmetry,
            config.gnugo_levels) == (variant, 64, 5, "sl9+value9s2",
                                     (("mixing", (0.0,)),), True, (10,))
    assert config.variant == "gumbel" or config.c_puct == 1.0
    [p] = summary.pairings
    assert p.games == 100 and p.draws == 0
    records[variant] = (p.wins, p.games)
    quoted("{} of {}, {}% [{}, {}]", *_rate_figures(p.wins, p.games,
                                                    decimals=0), text=text)
    n, _, ours, _, moves = summary.cost["gnugo-10"]
    quoted("| {} s | [" + variant, f"{ours / moves:.3f}", text=text)
  (wg, ng), (wp, np_) = records["gumbel"], records["puct"]
  pg, pp = wg / ng, wp / np_
  half = stats.Z95 * math.sqrt(pg * (1 - pg) / ng + pp * (1 - pp) / np_)
  d = pg - pp
  for where in (text, README):
    quoted("Gumbel minus PUCT: {} points [{}, {}]", *(
        f"{100 * x:.0f}" for x in (d, d - half, d + half)), text=where)
  quoted("({}% against {}%)", f"{100 * pg:.0f}", f"{100 * pp:.0f}")
  # The control's confirmation (seed 6), pooled with seed 5, beside the
  # two random-symmetry matches of strongest-9x9.
  run = ("docs", "ablations", "puct-l10-64-seed6")
  summary = ablation.load_summary(os.path.join(ROOT, *run))
  [p] = summary.pairings
  assert (summary.config.seed, summary.config.variant,
          summary.config.c_puct) == (6, "puct", 1.0)
  _, _, ours, _, moves = summary.cost["gnugo-10"]
  quoted("| {} s | [puct-l10-64-seed6", f"{ours / moves:.3f}", text=text)
  pooled = (wp + p.wins, np_ + p.games)
  for wins, games in ((p.wins, p.games), pooled):
    quoted("{} of {}, {}% [{}, {}]", *_rate_figures(wins, games, decimals=0),
           text=text)
  assert p.wins >= p.games / 2  # The plan's rule: confirmed.
  strongest = [ablation.load_summary(os.path.join(
      ROOT, "docs", "ablations", f"strength-l10-576-v9s2-sym-seed{seed}")
                ).pairings[0] for seed in (3, 4)]
  quoted("576 simulations, {} of {}, {}% [{}, {}]", *_rate_figures(
      sum(q.wins for q in strongest), sum(q.games for q in strongest),
      decimals=0), text=text)
  saved = json.loads(_read("docs", "results", "gumbel-9x9.json"))
  assert saved["first_minus_second"]["difference"] == pytest.approx(d)
  assert saved["first_minus_second"]["interval"] == pytest.approx(
      [d - half, d + half])
  assert saved["first_minus_second"]["distinguished"] == (d + half < 0)


def test_gumbel_move_figures_are_the_committed_match():
  # docs/results/gumbel-move.md quotes the match file; the file's interval
  # is the Wilson interval of its counts, and its settings are the plan's.
  saved = json.loads(_read("docs", "results", "gumbel-move-go9.json"))
  assert (saved["network"], saved["simulations"], saved["games_per_colour"],
          saved["random_opening_plies"], saved["seed"]) == (
              "checkpoints/go9", 64, 100, 4, 0)
  wins = saved["halving_wins_as_black"] + saved["halving_wins_as_white"]
  assert wins == saved["halving_wins"] and saved["games"] == 200
  low, high = stats.wilson_interval(wins, saved["games"])
  assert saved["halving_score_interval"] == pytest.approx([low, high])
  text = _flat(_read("docs", "results", "gumbel-move.md"))
  for colour in ("black", "white"):
    quoted("| " + colour.capitalize() + " | {} | {} |",
           saved["games_per_colour"], saved[f"halving_wins_as_{colour}"],
           text=text)
  for where in (text, README):
    quoted("{} of {}, {}% [{}, {}]", wins, saved["games"],
           f"{100 * wins / saved['games']:.1f}", f"{100 * low:.1f}",
           f"{100 * high:.1f}", text=where)
  quoted("the interval contains {}%", 50, text=text)
  assert low < 0.5 < high  # what the document reads off the interval


def test_value_data_benchmark_figures_are_its_committed_output():
  out = _read("docs", "results", "value-data-benchmark.txt")
  assert out.startswith("$ python benchmarks/value_data.py\n")
  result = dict(re.findall(r"(\w+)=(\S+)", out.strip().splitlines()[-1]))
  rows = {int(b): (g, e, f, r) for b, g, e, f, r in re.findall(
      r"^\| (\d+) \| ([\d.]+) \| (\d+) \| (\d+) \| ([\d.]+) \|$", out, re.M)}
  games, evals, fwd, ratio = rows[max(rows)]
  assert (result["evals_per_s"], result["forward_evals_per_s"]) == (evals,
                                                                    fwd)
  assert float(result["ratio"]) == pytest.approx(int(evals) / int(fwd),
                                                 abs=5e-4)
  text = _flat(_read("docs", "results", "benchmarks.md"))
  quoted("generates {} games/s at {} games at once", f"{float(games):.1f}",
         max(rows), text=text)
  quoted("{} network evaluations/s against {} for", evals, fwd, text=text)
  quoted("ratio={} ({} at {} games)", result["ratio"], rows[min(rows)][3],
         min(rows), text=text)


def test_suite_time_is_the_committed_ci_run():
  """The testing guide's suite size and time are the committed clean-clone
  run's (`docs/results/ci-run.txt`), and that run was under 12 minutes of
  tests with nothing skipped."""
  run = _read("docs", "results", "ci-run.txt")
  passed, seconds = re.search(r"^=+ (\d+) passed in ([\d.]+)s \(", run,
                              re.M).groups()
  assert float(seconds) < 12 * 60
  assert f"check_junit: {passed} test cases, none skipped" in run
  commit = re.search(r"\.ci/run +# at commit ([0-9a-f]{7,})", run).group(1)
  minutes = f"{int(float(seconds)) // 60}:{int(float(seconds)) % 60:02d}"
  assert (f"at commit {commit} on 2 cores with nothing else running: "
          f"{passed} passed in {minutes} of tests") in _flat(
              _read("docs", "guides", "testing.md"))


def test_incremental_rollout_speed_is_the_committed_benchmark():
  """go.md's p_pi speed is the committed benchmark output's RESULT line."""
  out = _read("docs", "results", "rollouts-pattern-benchmark.txt")
  result = dict(re.findall(r"(\w+)=(\S+)", out.strip().splitlines()[-1]))
  text = _flat(_read("docs", "results", "go.md"))
  nine, nineteen = (result[f"pattern_us_per_move_core_{n}x{n}"]
                    for n in (9, 19))
  assert (f"p_π incremental {float(nine):.1f} µs per move per core on 9×9"
          in text), nine
  assert f"and {float(nineteen):.1f} on 19×19" in text, nineteen
  assert f"random playouts {result['random_us_per_move_core_9x9']}" in text


def test_distillation_figures_are_the_committed_evaluation():
  """distill.md's test-split table is distill-9x9.json's (written by
  experiments/alphago/eval_distill.py), and so is the checkpoint's hash:
  the committed network is the one evaluated."""
  import jax  # pylint: disable=import-outside-toplevel
  from alphago_jax.core import result_file  # pylint: disable=import-outside-toplevel
  from alphago_jax.zoo import loaders  # pylint: disable=import-outside-toplevel
  result = json.loads(_read("docs", "results", "distill-9x9.json"))
  text = _flat(_read("docs", "results", "distill.md"))
  for label, key in (("top-1 agreement with p_σ", "agreement"),
                     ("KL(p_σ ‖ student)", "kl"),
                     ("MSE against v_θ", "value_mse")):
    figure = result["test"][key]
    lo, hi = figure["interval"]
    assert (f"| {label} | {figure['mean']:.3f} [{lo:.3f}, {hi:.3f}]"
            in text), label
  assert (f"chance {result['chance_agreement']:.3f}") in text
  assert (f"{result['games']} games, {result['positions']} positions"
          in text)
  network = loaders.load(os.path.join(ROOT, result["run"]))
  assert network.step == result["step"]
  assert result_file.variables_sha256(
      jax.device_get(network.variables)) == result["student_sha256"]
