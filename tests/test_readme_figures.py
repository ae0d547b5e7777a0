"""The documented figures are the committed artefacts': each figure is read
from a committed file (metrics, SGFs, job files, review CSVs) and must
appear, so written, in the documents that state it: the README and the
results and guides under `docs/` (an edit to either side that breaks the
agreement fails here)."""

import json
import os
import statistics

from alphago_jax.core import stats

ROOT = os.path.join(os.path.dirname(__file__), "..")


def _read(*path):
  with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
    return f.read()


DOCUMENTS = ("README.md", "docs/results/go.md", "docs/results/alphazero.md",
             "docs/results/search.md", "docs/results/benchmarks.md",
             "docs/guides/cli.md", "docs/guides/gtp.md",
             "docs/guides/testing.md")
# The documents as one line: phrases may wrap, and may sit in any of them.
README = " ".join(" ".join(_read(*d.split("/")).split()) for d in DOCUMENTS)
METRICS = [json.loads(l) for l in _read(
    "checkpoints", "go9", "metrics.jsonl").splitlines()]
CURVE = json.loads(_read("docs", "go9_learning_curve.json"))


def said(phrase):
  assert phrase in README, f"no document says {phrase!r}"


def test_run_size_and_loss():
  assert [m["iteration"] for m in METRICS] == list(range(1, 49))
  games = sum(m["games_finished"] for m in METRICS)
  hours = sum(m["seconds"] for m in METRICS) / 3600
  said(f"{hours:.2f} hours of summed iteration time and {len(METRICS)} "
       f"iterations ({games:,.0f} games)")
  said(f"The loss fell from {METRICS[0]['loss']:.2f} to "
       f"{METRICS[-1]['loss']:.2f} (iteration means)")


def test_raw_policy_against_random():
  by_it = {m["iteration"]: m for m in METRICS if "random_policy_losses" in m}
  said(f"losing {by_it[10]['random_policy_losses']:.0f} of 32 games against "
       f"random play (iteration 10)")
  wins = {i: m["random_policy_as_first_wins"] + m[
      "random_policy_as_second_wins"] for i, m in by_it.items()}
  assert {wins[i] for i in (25, 30, 35, 40, 45)} == {32}
  said("winning 32 of 32 (iterations 25–45)")


def _result(player, opponent):
  for r in CURVE["results"]:
    if (r["player"], r["opponent"]) == (player, opponent):
      return r
  raise KeyError((player, opponent))


def test_target_match_and_elo():
  r = _result("UCT-16", "iter 48")
  wins, n = r["losses"], r["wins"] + r["draws"] + r["losses"]
  lo, hi = stats.wilson_interval(wins, n)
  said(f"won {wins} of {n} games (95% Wilson interval "
       f"{100 * lo:.1f}–{100 * hi:.0f}%)")
  r0 = _result("UCT-16", "iter 0")
  said(f"the untrained network with search already won {r0['losses']} of "
       f"{r0['wins'] + r0['losses'] + r0['draws']}")
  elo = CURVE["elo"]
  said(f"UCT-16 rates only +{elo['UCT-16']['rating']:.0f} Elo")
  lo48, hi48 = elo["iter 48"]["interval"]
  said(f"from +{elo['iter 0']['rating']:.0f} at iteration 0 to "
       f"+{elo['iter 48']['rating']:.0f} [+{lo48:.0f}, +{hi48:.0f}] at "
       f"iteration 48")
  said(f"GNU Go level 1 (+{elo['GNU Go 1']['rating']:.0f})")
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
  said(f"**{last['samples'] / 1e6:.2f}M training samples")
  said(f"{last['train_seconds'] / 3600:.1f} h of its 8-hour budget")
  said(f"{100 * last['eval_top1']:.1f}% at {last['samples'] / 1e6:.2f}M.")
  # The 9x9 p_π: its last test evaluation.
  rp = [m for m in _metrics("checkpoints", "rollout9", "metrics.jsonl")
        if "eval_top1" in m][-1]
  said(f"Top-1 {100 * rp['eval_top1']:.1f}% (top-5 "
       f"{100 * rp['eval_top5']:.1f}%) on its 40 test games "
       f"({rp['eval_positions']:,} positions)")
  # The whole-game value network: final train and test MSE.
  vw = [m for m in _metrics("docs", "value9-whole", "metrics.jsonl")
        if "test_mse" in m][-1]
  said(f"**MSE: train {vw['train_mse']:.3f}, test {vw['test_mse']:.3f}**")


def test_19x19_longer_sl_policy_figures_are_the_committed_run():
  """`checkpoints/sl_policy_long`: its size, time and curve as the README
  gives them (the test-set accuracies are `eval_policy.py`'s, re-measured
  by hand; the curve is the metrics')."""
  sl = [m for m in _metrics("checkpoints", "sl_policy_long",
                            "metrics.jsonl") if "eval_top1" in m]
  last = sl[-1]
  said(f"**The longer network, `checkpoints/sl_policy_long/`: "
       f"{last['samples'] / 1e6:.2f}M training samples "
       f"({last['epoch']:.2f} epochs), {last['train_seconds'] / 3600:.1f} h "
       f"of training in all")
  at = {round(m["samples"] / 1e6, 2): 100 * m["eval_top1"] for m in sl}
  said(f"fell from {at[5.4]:.1f}% at 5.40M samples to {at[5.63]:.1f}% at "
       f"5.63M")
  said(f"{at[8.19]:.1f}% at 8.19M, {at[8.45]:.1f}% at 8.45M, {at[8.96]:.1f}% "
       f"at 8.96M, {at[10.0]:.1f}% at 10.00M")


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
  said(f"{last['samples'] / 1e6:.2f}M training samples in this run "
       f"({last['epoch']:.2f} epochs), {last['train_seconds'] / 3600:.1f} h "
       f"of its training, and {hours:.1f} h with the runs it grew from "
       f"({samples:.1f}M samples)")
  assert len(sl) >= 8
  points = [f"{100 * m['eval_top1']:.1f}% / {m['eval_nll']:.3f} at "
            f"{m['samples'] / 1e6:.2f}M" for m in sl]
  said(f"(top-1 / nll, every evaluation of the committed step's metrics): "
       f"{points[0]} samples, " + ", ".join(points[1:]) + ".")


def _match_wins(*folder):
  """{colour: (wins, games)} of the network in a folder of match SGFs,
  each game's result read from its SGF (our engine's score)."""
  import re  # pylint: disable=import-outside-toplevel
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
  lo, hi = stats.wilson_interval(won, n)
  said(f"in a first match: {won} wins of {n} played, {100 * won / n:.1f}% "
       f"[{100 * lo:.1f}, {100 * hi:.1f}]")
  said(f"as Black {tally['black'][0]} of {tally['black'][1]}, as White "
       f"{tally['white'][0]} of {tally['white'][1]}")
  log = _read(*folder, "log.txt")
  assert f"{won} wins, 0 draws, {n - won} losses of {n} played" in log
  assert "game 11 not played" in log and "(status -11)" in log
  # The second, smaller match (another seed) and both together.
  more = _match_wins("docs", "results", "sl-policy-19-vs-gnugo10-seed1")
  more_won, more_n = (sum(t[i] for t in more.values()) for i in (0, 1))
  assert more_n == 24
  lo, hi = stats.wilson_interval(more_won, more_n)
  said(f"won **{more_won} of {more_n}, {100 * more_won / more_n:.1f}% "
       f"[{100 * lo:.1f}, {100 * hi:.1f}]**")
  total, total_won = n + more_n, won + more_won
  lo, hi = stats.wilson_interval(total_won, total)
  said(f"{total_won} of {total}, {100 * total_won / total:.1f}% "
       f"[{100 * lo:.1f}, {100 * hi:.1f}]")



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
  lo, hi = stats.wilson_interval(w, n)
  said(f"| {seed} | {w} of {n} | {100 * w / n:.1f}% [{100 * lo:.1f}, "
       f"{100 * hi:.1f}] |")
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
  said(f"As Black it won {colours['black'][0]} of {colours['black'][1]}, as "
       f"White {colours['white'][0]} of {colours['white'][1]}")
  lo, hi = stats.wilson_interval(won, played)
  said(f"The pre-planned match: {won} wins of {played} played, "
       f"{100 * won / played:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]**")
  lo, hi = stats.wilson_interval(won, 200)
  said(f"{won} of 200, {100 * won / 200:.1f}% [{100 * lo:.1f}, "
       f"{100 * hi:.1f}]")
  # With the two matches before it: all of this network's games.
  for folder in ("sl-policy-19-vs-gnugo10", "sl-policy-19-vs-gnugo10-seed1"):
    tally = _match_wins("docs", "results", folder)
    won += sum(w for w, _ in tally.values())
    played += sum(n for _, n in tally.values())
  lo, hi = stats.wilson_interval(won, played)
  said(f"All six matches of this network, {played} games, give {won} wins, "
       f"{100 * won / played:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")


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
  lo, hi = stats.wilson_interval(won, played)
  head = (name if len(blocks) == len(seeds) else
          f"So far, {len(blocks)} of its {len(seeds)} blocks")
  said(f"{head}: {won} wins of {played} played, {100 * won / played:.1f}% "
       f"[{100 * lo:.1f}, {100 * hi:.1f}]**")
  counted = played + unplayed_all
  lo, hi = stats.wilson_interval(won, counted)
  said(f"{won} of {counted}, {100 * won / counted:.1f}% [{100 * lo:.1f}, "
       f"{100 * hi:.1f}] with GNU Go's crashes counted as losses")
  return won, played, colours, blocks


def _colours(colours):
  return (f"As Black it won {colours['black'][0]} of {colours['black'][1]}, "
          f"as White {colours['white'][0]} of {colours['white'][1]}")


def _gain(won, played, prefix, seeds):
  """The README's phrase for the gain of `won` of `played` over the
  blocks `PREFIX-seedS` (Newcombe's interval)."""
  earlier = [_match_wins("docs", "results", f"{prefix}-seed{s}")
             for s in seeds]
  k, n = (sum(t[i] for tally in earlier for t in tally.values())
          for i in (0, 1))
  lo, hi = stats.difference_interval(won, played, k, n)
  return (f"gained {100 * (won / played - k / n):.1f} points "
          f"[{100 * lo:.1f}, {100 * hi:.1f}]")


def test_19x19_long_ensemble_preplanned_match_is_the_committed_games():
  """The second pre-planned match (the longer p_σ's ensemble, seeds 6 to
  9), and its gain over the first (seeds 2 to 5)."""
  won, played, colours, blocks = _preplanned_match(
      "sl-policy-19-long-ensemble-vs-gnugo10", (6, 7, 8, 9),
      "checkpoints/sl_policy_long (step 78125, 6x64, 19x19), greedy, "
      "8-symmetry ensemble", "The second pre-planned match")
  if len(blocks) == 4:
    said(_colours(colours))
    said(_gain(won, played, "sl-policy-19-vs-gnugo10", (2, 3, 4, 5)))


def test_19x19_ladder_ensemble_preplanned_match_is_the_committed_games():
  """The third pre-planned match (the ladder network's ensemble, seeds 10
  to 13), as far as its blocks are committed, and once all four are in,
  its colours and its gain over the second (seeds 6 to 9)."""
  won, played, colours, blocks = _preplanned_match(
      "sl-policy-19-ladders-ensemble-vs-gnugo10", (10, 11, 12, 13),
      "checkpoints/sl_policy_ladders (step 32812, 12x64, 19x19), greedy, "
      "8-symmetry ensemble", "The third pre-planned match")
  # Its rows in the two tables of 19x19 networks.
  lo, hi = stats.wilson_interval(won, played)
  games = (f"{played} pre-planned games" if len(blocks) == 4 else
           f"{played} of 200 pre-planned games so far")
  rate = f"{100 * won / played:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"
  said(f"| ensemble: {rate}, {games} |")
  said(f"| ensemble {rate}, {games} |")
  if len(blocks) == 4:
    said(_colours(colours))
    said(_gain(won, played, "sl-policy-19-long-ensemble-vs-gnugo10",
               (6, 7, 8, 9)) + " over the second")
    # The blocks' spread: Pearson's chi-squared on the 4 x 2 table.
    # pylint: disable-next=import-outside-toplevel
    from scipy import stats as scipy_stats
    table = [[w, n - w] for w, n in blocks.values()]
    p = scipy_stats.chi2_contingency(table).pvalue
    said(f"(χ² test of homogeneity, p = {p:.3f})")


def _review(name, prefix, seeds):
  """`match_review.py`'s table `docs/results/NAME` of the blocks
  `PREFIX-seedS`: one row for each committed SGF, with its result, its
  first pass recomputed, and every game GNU Go did not resign passed in;
  the README's sentence on it is so. Returns the summary and the
  reviews."""
  # pylint: disable=import-outside-toplevel
  import csv
  from alphago_jax.evaluation import match_review
  from alphago_jax.games import sgf
  rows = list(csv.DictReader(_read("docs", "results", name).splitlines()))
  games = sorted(
      f"docs/results/{prefix}-seed{s}/{n}" for s in seeds
      for n in os.listdir(os.path.join(ROOT, "docs", "results",
                                       f"{prefix}-seed{s}"))
      if n.endswith(".sgf"))
  assert [r["source"] for r in rows] == games
  reviews = []
  for row in rows:
    record = sgf.parse_sgf(_read(row["source"]), source=row["source"])
    assert row["result"] == record.result and int(row["plies"]) == len(
        record.moves)
    first = match_review.first_pass(record, opening_plies=2)
    assert row["first_pass"] == ("" if first is None else str(first))
    gnugo = "BW".index(row["gnugo_colour"])
    runs = [match_review.lost_atari_run(record, c) for c in (1 - gnugo,
                                                             gnugo)]
    assert [int(row["lost_atari_run"]),
            int(row["gnugo_lost_atari_run"])] == runs
    ladders = [*match_review.into_ladders(record, 1 - gnugo),
               *match_review.into_ladders(record, gnugo)]
    assert [int(row[k]) for k in (
        "atari_extensions", "into_ladders", "gnugo_atari_extensions",
        "gnugo_into_ladders")] == ladders
    reviews.append(match_review.Review(
        source=row["source"], gnugo_colour=gnugo,
        plies=len(record.moves), winner=record.winner,
        result=sgf.result_score(record.result), first_pass=first,
        count_at_pass=sgf.result_score(row["count_at_pass"] or None),
        lost_atari_run=runs[0], gnugo_lost_atari_run=runs[1],
        atari_extensions=ladders[0], into_ladders=ladders[1],
        gnugo_atari_extensions=ladders[2], gnugo_into_ladders=ladders[3]))
  assert all(r["result"].endswith("+R") == (r["first_pass"] == "")
             for r in rows)
  resigned = sum(r["result"].endswith("+R") for r in rows)
  s = match_review.summarize(reviews)
  said(f"GNU Go passed in {s['gnugo_passed']} of the {s['games']} games (it "
       f"resigned the other {resigned}), and in {s['count_is_result']} of "
       f"them its count there was the final result")
  return s, reviews


def _losses(s, reviews):
  """The network's losses in a review (it never resigns): their margins,
  and the README's phrase on them."""
  margins = sorted(-r.result * (1 if r.gnugo_colour == 1 else -1)
                   for r in reviews if r.winner == r.gnugo_colour)
  assert len(margins) == s["games"] - s["won"] and min(margins) > 0
  return margins, (f"by a median of {statistics.median(margins):g} points, "
                   f"{sum(m >= 20 for m in margins)} by 20 points or more")


def test_19x19_preplanned_match_review_is_the_committed_games():
  """The first pre-planned match's review: the README's counts are its."""
  s, reviews = _review(
      "sl-policy-19-vs-gnugo10-preplanned-review.csv",
      "sl-policy-19-vs-gnugo10", (2, 3, 4, 5))
  assert s["games"] == 198 and s["won"] == 66
  flips = [r for r in reviews if r.decided_after_pass]
  assert s["lost_when_ahead"] == len(flips) == 1
  assert s["won_when_behind"] == 0
  said(f"in the first match the network did in {s['lost_with_ladder_run']}"
       f" of its {s['games'] - s['won']} losses, GNU Go in "
       f"{'none' if s['gnugo_ladder_runs'] == 0 else s['gnugo_ladder_runs']}")
  said(f"(in the first match {s['into_ladders']} of "
       f"{s['atari_extensions']} against {s['gnugo_into_ladders']} of "
       f"{s['gnugo_atari_extensions']})")
  r = flips[0]
  said(f"seed 5, game 47, which the network led by "
       f"{abs(r.count_at_pass):g} there and lost by {abs(r.result):g}")
  assert r.source.endswith("seed5/level10-047-white.sgf")


def test_19x19_second_preplanned_match_review_is_the_committed_games():
  """The second pre-planned match's review: the README's counts are its."""
  s, reviews = _review(
      "sl-policy-19-long-ensemble-vs-gnugo10-review.csv",
      "sl-policy-19-long-ensemble-vs-gnugo10", (6, 7, 8, 9))
  assert s["games"] == 197 and s["won"] == 89
  said("the final result; no game changed winner after GNU Go's pass")
  assert s["lost_when_ahead"] == s["won_when_behind"] == 0
  margins, phrase = _losses(s, reviews)
  said(f"of its {len(margins)}, {phrase}")
  # pylint: disable-next=import-outside-toplevel
  from alphago_jax.evaluation import match_review
  assert match_review.LADDER_RUN == 5
  said(f"in {s['lost_with_ladder_run']} of the {len(margins)} the network "
       f"ran a ladder out and lost it, a run of five or more")
  assert s["gnugo_ladder_runs"] == 0
  said(f"GNU Go did so in none of the {s['games']} games")
  # As the third match's review quotes them.
  said(f"({s['lost_with_ladder_run']} of {len(margins)} in the second match)")
  said(f"({s['into_ladders']} of {s['atari_extensions']}, in "
       f"{s['games_into_ladders']} of {s['games']}, without the ladder "
       f"planes)")
  lost_runs = [r for r in reviews if r.winner == r.gnugo_colour
               and r.lost_atari_run >= match_review.LADDER_RUN]
  each = "each" if all(r.into_ladders for r in lost_runs) else "not all"
  said(f"extensions ran into a ladder that works {s['into_ladders']} times "
       f"of {s['atari_extensions']}, in {s['games_into_ladders']} of the "
       f"{s['games']} games and in {each} of those {len(lost_runs)}, and "
       f"GNU Go's {s['gnugo_into_ladders']} times of "
       f"{s['gnugo_atari_extensions']}")


def test_19x19_third_preplanned_match_review_is_the_committed_games():
  """The third pre-planned match's review: the README's counts are its."""
  # pylint: disable-next=import-outside-toplevel
  from alphago_jax.evaluation import match_review
  s, reviews = _review(
      "sl-policy-19-ladders-ensemble-vs-gnugo10-review.csv",
      "sl-policy-19-ladders-ensemble-vs-gnugo10", (10, 11, 12, 13))
  assert s["games"] == 200 and s["won"] == 155
  assert s["won_when_behind"] == 0
  flips = [r for r in reviews if r.decided_after_pass]
  assert s["lost_when_ahead"] == len(flips) == 2
  games = [r.source.split("seed")[1] for r in flips]
  assert games == ["11/level10-017-black.sgf", "11/level10-024-black.sgf"]
  said(f"games 17 and 24, which the network led by "
       f"{abs(flips[0].count_at_pass):g} and {abs(flips[1].count_at_pass):g}"
       f" there and lost by {abs(flips[0].result):g} and "
       f"{abs(flips[1].result):g}")
  margins, phrase = _losses(s, reviews)
  said(f"Of its {len(margins)} losses, {phrase}")
  assert match_review.LADDER_RUN == 5 and s["gnugo_ladder_runs"] == 0
  said(f"in {s['lost_with_ladder_run']} of the {len(margins)} the network "
       f"ran a ladder out and lost it")
  said(f"GNU Go in none of the {s['games']} games")
  said(f"ran into a ladder that works {s['into_ladders']} times of "
       f"{s['atari_extensions']}, in {s['games_into_ladders']} of the "
       f"{s['games']} games")
  said(f"GNU Go's {s['gnugo_into_ladders']} times of "
       f"{s['gnugo_atari_extensions']}")


def test_19x19_value_figures_are_the_committed_runs():
  # One position per self-play game: the committed network's last test.
  v = [m for m in _metrics("checkpoints", "value19", "metrics.jsonl")
       if "test_mse" in m][-1]
  said(f"**MSE: train {v['train_mse']:.3f}, test {v['test_mse']:.3f}**")
  said(f"(sign of the outcome right in {100 * v['train_sign_accuracy']:.1f}%"
       f" / {100 * v['test_sign_accuracy']:.1f}%)")
  said(f"| 19×19 | one per self-play game (`checkpoints/value19`) | 4,402 | "
       f"{v['train_mse']:.3f} | {v['test_mse']:.3f} |")
  # Every position of 30 KGS games.
  w = [m for m in _metrics("docs", "value19-whole", "metrics.jsonl")
       if "test_mse" in m]
  said(f"**MSE: train {w[-1]['train_mse']:.3f}, test "
       f"{w[-1]['test_mse']:.3f}** (sign accuracy "
       f"{100 * w[-1]['train_sign_accuracy']:.1f}% / "
       f"{100 * w[-1]['test_sign_accuracy']:.1f}%)")
  said(f"(test MSE {w[0]['test_mse']:.3f} at 2 epochs, then rising)")
  assert min(m["test_mse"] for m in w) == w[0]["test_mse"]


def test_9x9_sharper_label_value_figures_are_the_committed_run():
  # The committed network's last evaluation, as the README states it.
  v = [m for m in _metrics("checkpoints", "value9s", "metrics.jsonl")
       if "test_mse" in m][-1]
  said(f"**MSE: train {v['train_mse']:.3f}, test {v['test_mse']:.3f}** "
       f"(sign {100 * v['train_sign_accuracy']:.1f}% / "
       f"{100 * v['test_sign_accuracy']:.1f}%)")
  said(f"| v_θ `value9s` | 9×9 | 6 × 64 + 256 | 58,721 positions, p_σ "
       f"playouts at T 0.5 | 49 + 34 min | MSE {v['train_mse']:.3f} / "
       f"{v['test_mse']:.3f};")



def _rate(wins, games):
  lo, hi = stats.wilson_interval(wins, games)
  return (f"{wins} of {games}, {100 * wins / games:.0f}% "
          f"[{100 * lo:.0f}, {100 * hi:.0f}]")


def test_9x9_doubled_data_value_figures_are_the_committed_run():
  v = [m for m in _metrics("checkpoints", "value9s2", "metrics.jsonl")
       if "test_mse" in m][-1]
  said(f"**MSE: train {v['train_mse']:.3f}, test {v['test_mse']:.3f}** "
       f"(sign {100 * v['train_sign_accuracy']:.1f}% / "
       f"{100 * v['test_sign_accuracy']:.1f}%;")
  said(f"({v['epoch']:.1f} epochs, {v['train_seconds'] / 60:.0f} minutes,")
  said(f"| v_θ `value9s2` | 9×9 | 6 × 64 + 256 | 117,166 positions, p_σ "
       f"playouts at T 0.5 | 130 + {v['train_seconds'] / 60:.0f} min | MSE "
       f"{v['train_mse']:.3f} / {v['test_mse']:.3f};")


def test_value9s_strength_figures_are_the_committed_matches():
  # Both value9s matches against GNU Go level 10 and their pooled rate, as
  # the README and docs/ablations.md state them, recounted from the jobs.
  from alphago_jax.evaluation import ablation  # pylint: disable=import-outside-toplevel
  counts = []
  for run in ("strength-l10-512-v9s", "strength-l10-512-v9s-seed1",
              "strength-l10-512-v9s2-seed2"):
    [p] = ablation.load_summary(os.path.join(ROOT, "docs", "ablations",
                                             run)).pairings
    counts.append((p.wins, p.games))
  pooled = tuple(map(sum, zip(*counts[:2])))
  docs = " ".join(_read("docs", "ablations.md").split())
  for text in (README, docs):
    for wins, games in counts + [pooled]:
      assert _rate(wins, games) in text.replace("**", ""), (wins, games)
  # All three: the same search, two value networks.
  wins, games = map(sum, zip(*counts))
  lo, hi = stats.wilson_interval(wins, games)
  assert (f"{wins} of {games} for two networks that differ by no more "
          f"than chance: about {100 * wins / games:.0f}% [{100 * lo:.0f}, "
          f"{100 * hi:.0f}]") in docs


def test_random_symmetry_strength_figures_are_the_committed_match():
  # The match with random symmetry and 576 simulations, recounted from its
  # jobs, with its recorded settings and cost as the texts give them.
  from alphago_jax.evaluation import ablation  # pylint: disable=import-outside-toplevel
  counts = []
  for seed in (3, 4):
    summary = ablation.load_summary(os.path.join(
        ROOT, "docs", "ablations", f"strength-l10-576-v9s2-sym-seed{seed}"))
    [p] = summary.pairings
    config = summary.config
    assert config.random_symmetry and config.num_simulations == 576
    assert config.network == "sl9+value9s2" and config.seed == seed
    counts.append((p.wins, p.games))
  pooled = tuple(map(sum, zip(*counts)))
  docs = " ".join(_read("docs", "ablations.md").split())
  readme = " ".join(README.split())
  for text in (readme, docs):
    for wins, games in counts + [pooled]:
      assert _rate(wins, games) in text.replace("**", ""), (wins, games)
  assert "| 576 | 53% [43, 62] | 0.75 s | 100 |" in docs
  assert "| 576 | 51% [41, 61] | 0.79 s | 100 |" in docs
  cost = _read("docs", "ablations", "strength-l10-576-v9s2-sym-seed3",
               "table.md")
  assert "| GNU Go 10 | 100 | 37.85 | 26.30 | 0.750 | 10.09 |" in cost
