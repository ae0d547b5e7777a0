"""`alphago-jax reproduce NAME`: rerun a published table or one of our results.

    alphago-jax reproduce mcts-vs-random [--games 200] [--seed 0]
    alphago-jax reproduce tictactoe-perfect [--output runs/ttt-perfect]
    alphago-jax reproduce go9-curve [-- --run runs/go9 ...]
    alphago-jax reproduce lambda [--run DIR] [--rerun [-- SWEEP FLAGS]]
    alphago-jax reproduce c-puct [--run DIR] [--rerun [-- SWEEP FLAGS]]

- `mcts-vs-random`: UCT (X, moves first) against a uniformly random O on
  tic-tac-toe at 0, 10, 100 and 1000 simulations a move: win/draw/loss
  with 95% Wilson intervals beside the published 200-game figures,
  and whether each row is consistent with them (a Newcombe interval per
  outcome).
- `tictactoe-perfect`: AlphaZero on tic-tac-toe from random initialisation
  (the game spec's defaults) until neither the raw policy nor the network with
  search loses a game to the perfect solver (1000 games a colour each); a
  run directory, resumable, with the table at the end.
- `go9-curve`: the 9×9 learning curve (`experiments/go9_learning_curve.py`
  of the source checkout; arguments after `--` go to it).
- `lambda`, `c-puct`: the committed ablations of AlphaGo's search
  (docs/ablations/lambda-ag, cpuct-ag; `--run` another sweep's directory)
  beside AlphaGo's published figures (`cli.reproduce_ablations`), with
  the `alphago-jax sweep` command that replays their games; `--rerun`
  runs it (into --output; arguments after `--` are added to it), then
  prints the table of the new run.
"""

from __future__ import annotations

import dataclasses
import os
import runpy
import sys
import time
from typing import List, Literal, Optional, Tuple

import jax
import tyro

from alphago_jax import games, play, search
from alphago_jax.cli import reproduce_ablations as tables
from alphago_jax.cli import parsing, sweep
from alphago_jax.cli.stages.alphazero import run_alphazero
from alphago_jax.cli.configs import STAGES, alphazero_defaults
from alphago_jax.core import rundir, stats
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.core.stats import Z95
from alphago_jax.viz.curves import latest_records

# The published table: UCT X against random O, 200 games a row (w/d/l, %).
PUBLISHED = {0: (58.5, 12.5, 29.0), 10: (87.5, 5.5, 7.0),
             100: (97.5, 2.5, 0.0), 1000: (98.0, 2.0, 0.0)}
PUBLISHED_GAMES = 200
OUTCOMES = ("wins", "draws", "losses")


def consistent(n, rec, z=None):
  """Whether `rec` (X's record at `n` simulations) agrees with the published
  row: Newcombe's interval of our rate minus the published one (200 games)
  must contain 0 for each outcome (coverage set by z; default 95%)."""
  z = Z95 if z is None else z
  for i, outcome in enumerate(OUTCOMES):
    k_pub = round(PUBLISHED[n][i] * PUBLISHED_GAMES / 100)
    lo, hi = stats.difference_interval(
        getattr(rec, outcome), rec.games, k_pub, PUBLISHED_GAMES, z)
    if not lo <= 0 <= hi:
      return False
  return True


def mcts_vs_random(num_games, seed=0, simulations=(0, 10, 100, 1000)):
  """Yields (simulations, record of X, seconds) per budget, in order.

  Budget 0 is a random X. Each row's key is split off one seed's chain.
  """
  game = games.make("tictactoe")
  key = jax.random.key(seed)
  for n in simulations:
    key, sub = jax.random.split(key)
    x = (search.random_agent if n == 0 else
         search.uct_agent(game, search.UCTConfig(num_simulations=n)))
    t = time.perf_counter()
    rec = play.record(play.play(
        game, (x, search.random_agent), sub, num_games=num_games))
    yield n, rec, time.perf_counter() - t


def print_mcts_vs_random(num_games: int, seed: int,
                         simulations=(0, 10, 100, 1000)) -> bool:
  """Prints the table as Markdown; True when every published row agrees."""
  print(f"UCT (X, first) vs random (O): {num_games} games per setting\n")
  print("| simulations/move | win | draw | loss | published (w/d/l) "
        "| consistent | seconds |")
  print("|---|---|---|---|---|---|---|")
  all_ok = True
  for n, rec, seconds in mcts_vs_random(num_games, seed, simulations):
    cells = []
    for outcome in OUTCOMES:
      lo, hi = rec.interval(outcome)
      cells.append(f"{100 * rec.rate(outcome):.1f}% "
                   f"[{100 * lo:.1f}, {100 * hi:.1f}]")
    if n in PUBLISHED:
      pub = "/".join(f"{v:.1f}%" for v in PUBLISHED[n])
      ok = consistent(n, rec)
      all_ok &= ok
      verdict = "yes" if ok else "NO"
    else:
      pub = verdict = "-"
    label = "0 (pure random)" if n == 0 else str(n)
    print(f"| {label} | {' | '.join(cells)} | {pub} | {verdict} "
          f"| {seconds:.1f} |", flush=True)
  return all_ok


def tictactoe_perfect(output: str, *, seed: int = 0,
                      max_iterations: int = 400,
                      eval_games: int = 1000) -> int:
  """Trains the default tic-tac-toe run until perfect; prints its table."""
  config_path = os.path.join(output, rundir.CONFIG_FILE)
  if os.path.exists(config_path):
    _, run, _ = rundir.read_config(output, STAGES)
    print(f"resuming {output}")
  else:
    run = dataclasses.replace(alphazero_defaults("tictactoe"), seed=seed,
                              iterations=max_iterations,
                              eval_games=eval_games, stop_when_perfect=True)
  run_alphazero(run, output)
  records = [r for r in latest_records(os.path.join(output, "metrics.jsonl"))
             if "solver_policy_losses" in r or r["iteration"] == 1]
  games = 2 * run.eval_games
  print(f"\n| iteration | loss | value loss | policy loss | value accuracy "
        f"| policy losses vs solver (of {games}) | search losses (of "
        f"{games}) |")
  print("|---|---|---|---|---|---|---|")
  for r in records:
    cell = lambda k: (str(int(r[k])) if k in r else "–")
    print(f"| {r['iteration']} | {r['loss']:.2f} | {r['value_loss']:.2f} | "
          f"{r['policy_loss']:.2f} | {r['value_accuracy']:.2f} | "
          f"{cell('solver_policy_losses')} | "
          f"{cell('solver_search_losses')} |")
  last = records[-1] if records else {}
  perfect = (last.get("solver_policy_losses") == 0 and
             last.get("solver_search_losses") == 0)
  print(f"RESULT perfect={perfect} iteration={last.get('iteration')}")
  return 0 if perfect else 1


def go9_curve(argv: List[str]) -> int:
  """Runs the source checkout's `experiments/go9_learning_curve.py`."""
  root = os.path.dirname(os.path.dirname(os.path.dirname(
      os.path.abspath(__file__))))
  script = os.path.join(root, "experiments", "go9_learning_curve.py")
  if not os.path.exists(script):
    print("error: go9-curve runs experiments/go9_learning_curve.py of a "
          "source checkout (pip install -e .); none beside this package",
          file=sys.stderr)
    return 2
  old = sys.argv
  sys.argv = [script] + list(argv)
  try:
    runpy.run_path(script, run_name="__main__")
  finally:
    sys.argv = old
  return 0


EXAMPLES = """examples:
  alphago-jax reproduce mcts-vs-random --games 200
  alphago-jax reproduce tictactoe-perfect --output runs/ttt-perfect
  alphago-jax reproduce go9-curve -- --run runs/go9 --final-uct-games 128
  alphago-jax reproduce lambda
  alphago-jax reproduce c-puct --run runs/c-puct
  alphago-jax reproduce lambda --rerun --output runs/lambda-ag -- --gnugo-games 100"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReproduceArgs:
  """Rerun a published table or one of our results.

  Attributes:
    name: mcts-vs-random, tictactoe-perfect, go9-curve, lambda or c-puct.
    games: mcts-vs-random: games per row.
    simulations: mcts-vs-random: the budgets (0: a random X).
    seed: the seed.
    output: tictactoe-perfect: the run directory, resumed if it holds the
      run (default runs/ttt-perfect); lambda, c-puct: the directory that
      --rerun plays into (default runs/lambda-ag, runs/cpuct-ag).
    max_iterations: tictactoe-perfect: give up after this many iterations.
    eval_games: tictactoe-perfect: games per colour against the solver.
    run: lambda, c-puct: the sweep's run directory to read (default the
      committed one under docs/ablations/).
    rerun: lambda, c-puct: play the committed run's games again with
      `alphago-jax sweep` into --output (hours), then print its table.
  """
  name: tyro.conf.Positional[Literal["mcts-vs-random", "tictactoe-perfect",
                                     "go9-curve", "lambda", "c-puct"]]
  games: int = 200
  simulations: Tuple[int, ...] = (0, 10, 100, 1000)
  seed: int = 0
  output: Optional[str] = None
  max_iterations: int = 400
  eval_games: int = 1000
  run: Optional[str] = None
  rerun: bool = False


def ablation_table(args: ReproduceArgs, sweep_flags: List[str]) -> int:
  """`reproduce lambda` / `c-puct`: the table of a sweep's run directory,
  after replaying the committed run's games with --rerun."""
  committed = tables.default_run(args.name)
  output = args.output or os.path.join(
      "runs", os.path.basename(tables.TABLES[args.name][2]))
  try:
    if args.rerun:
      if args.run is not None:
        raise ValueError("--rerun replays the committed run: no --run")
      argv = tables.rerun_command(tables.load(args.name, committed),
                                  output) + sweep_flags
      print("$ alphago-jax sweep " + " ".join(argv), flush=True)
      status = sweep.main(argv)
      if status:
        return status
      tables.print_table(args.name, output, output)
    else:
      if sweep_flags:
        raise ValueError(f"{' '.join(sweep_flags)}: flags after -- are for "
                         f"the sweep of --rerun")
      tables.print_table(args.name, args.run or committed, output)
  except ValueError as e:  # ResultsFileError too: each names its file
    return parsing.fail(str(e))
  return 0


def main(argv: List[str]) -> int:
  if argv and argv[0] == "go9-curve":
    rest = argv[1:]
    if rest and rest[0] == "--":
      rest = rest[1:]
    return go9_curve(rest)
  sweep_flags = []
  if "--" in argv:
    at = argv.index("--")
    argv, sweep_flags = argv[:at], argv[at + 1:]
  args = parsing.parse(ReproduceArgs, argv, prog="alphago-jax reproduce",
                       examples=EXAMPLES)
  if args.name in ("lambda", "c-puct"):
    return ablation_table(args, sweep_flags)
  if sweep_flags:
    return parsing.fail(f"{args.name} takes no arguments after --")
  if args.games < 1 or any(n < 0 for n in args.simulations):
    return parsing.fail("--games must be >= 1 and --simulations >= 0")
  if args.name == "mcts-vs-random":
    ok = print_mcts_vs_random(args.games, args.seed, args.simulations)
    return 0 if ok else 1
  if args.max_iterations < 1 or args.eval_games < 1:
    return parsing.fail("--max-iterations and --eval-games must be >= 1")
  try:
    return tictactoe_perfect(args.output or "runs/ttt-perfect",
                             seed=args.seed,
                             max_iterations=args.max_iterations,
                             eval_games=args.eval_games)
  except RunConfigError as e:
    return parsing.fail(str(e))
