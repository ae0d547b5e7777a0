"""What virtual loss costs and buys at equal simulations, on 9×9.

    python experiments/alphago/virtual_loss.py --games 100 --simulations 64

AlphaGo's asynchronous search selects K leaves in the same tree before
evaluating any, each pending path carrying n_vl virtual losses so that the
K selections spread out; the K leaves are then evaluated as one batch.
Here (`search.alphago`, `leaves_per_step`) that batch is what makes one
game's search fill the networks' batch:

* **Speed**: milliseconds per move of one game (batch 1) and of 16 games,
  for K = 1, 4, 8, 16 at the same simulations (median of --repeats timed
  searches after a warm-up, compilation excluded).
* **Strength**: K = --leaves (default 8) against K = 1, both with the same
  networks, simulations, λ and c_puct, --games games (half with each
  colour, a few random opening plies so that games differ); the K side's
  score with a 95% Wilson interval.

Networks: `--network` as in the ablations (default `sl9+value9`: p_σ as
prior, v_θ as v). Ends with `RESULT vl_score=<x> single_game_speedup=<y>`
(K = --leaves against K = 1, batch 1).
"""

import argparse
import dataclasses
import statistics
import sys
import time

import jax
import numpy as np

from alphago_jax.evaluation import ablation
from alphago_jax.evaluation.gnugo_match import agent_match
from alphago_jax.core.stats import wilson_interval
from alphago_jax.search import alphago


def _position(game, batch, plies=12, seed=0):
  """`batch` copies of a mid-opening position reached by random moves."""
  from alphago_jax.search.rollout import random_legal_action  # pylint: disable=import-outside-toplevel
  key = jax.random.key(seed)
  state = game.init(key)
  step = jax.jit(game.step)
  for i in range(plies):
    legal = state.legal_action_mask.at[game.pass_action].set(False)
    state = step(state, random_legal_action(jax.random.key(i), legal))
  return jax.tree.map(lambda x: np.stack([x] * batch), state)


def time_search(network, config, batch, repeats):
  """Median seconds of one search of `batch` games (after a warm-up)."""
  fn = jax.jit(lambda k, s: alphago.alphago_search(
      network.game, network.policy_fn, network.value_fn,
      (network.variables, network.variables), k, s, config=config).action)
  states = _position(network.game, batch)
  jax.block_until_ready(fn(jax.random.key(0), states))
  times = []
  for r in range(repeats):
    start = time.perf_counter()
    jax.block_until_ready(fn(jax.random.key(r + 1), states))
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--network", default="sl9+value9")
  p.add_argument("--simulations", type=int, default=64)
  p.add_argument("--mixing", type=float, default=0.0,
                 help="λ (default 0: the value network only)")
  p.add_argument("--c-puct", type=float, default=5.0)
  p.add_argument("--virtual-loss", type=float, default=3.0)
  p.add_argument("--leaves", type=int, default=8,
                 help="K of the strength match")
  p.add_argument("--speed-leaves", type=int, nargs="*",
                 default=[1, 4, 8, 16])
  p.add_argument("--repeats", type=int, default=5)
  p.add_argument("--games", type=int, default=100,
                 help="games of the strength match (even; 0 skips it)")
  p.add_argument("--opening-moves", type=int, default=4)
  p.add_argument("--max-moves", type=int, default=None)
  p.add_argument("--seed", type=int, default=0)
  args = p.parse_args(argv)
  if args.games % 2:
    p.error("--games must be even (half with each colour)")
  if args.simulations % max(args.speed_leaves + [args.leaves]):
    p.error("--simulations must be a multiple of every K")
  network = ablation.load_network(args.network, 7.5)
  base = alphago.AlphaGoSearchConfig(
      num_simulations=args.simulations, c_puct=args.c_puct,
      mixing=args.mixing, virtual_loss=args.virtual_loss)
  print(f"network {network.name}, {args.simulations} simulations, "
        f"λ = {args.mixing:g}, c_puct = {args.c_puct:g}, n_vl = "
        f"{args.virtual_loss:g}", flush=True)
  rows, ms = [], {}
  for k in args.speed_leaves:
    config = dataclasses.replace(base, leaves_per_step=k)
    for batch in (1, 16):
      ms[k, batch] = 1000 * time_search(network, config, batch, args.repeats)
    rows.append(f"| {k} | {ms[k, 1]:.0f} | {ms[k, 16]:.0f} | "
                f"{ms[k, 16] / 16:.1f} |")
    print(f"K = {k}: {ms[k, 1]:.0f} ms a move for one game, "
          f"{ms[k, 16]:.0f} ms for 16", flush=True)
  print("\n| K | one game: ms a move | 16 games: ms a search | "
        "16 games: ms a move |\n|---|---|---|---|")
  print("\n".join(rows))
  speedup = ms[1, 1] / ms[args.leaves, 1] if (
      (1, 1) in ms and (args.leaves, 1) in ms) else float("nan")
  score = float("nan")
  if args.games:
    vl = alphago.alphago_agent(
        network.game, network.policy_fn, network.value_fn,
        (network.variables, network.variables),
        dataclasses.replace(base, leaves_per_step=args.leaves))
    plain = alphago.alphago_agent(
        network.game, network.policy_fn, network.value_fn,
        (network.variables, network.variables), base)
    start = time.perf_counter()
    out = agent_match(network.game, vl, plain, jax.random.key(args.seed),
                      games_per_colour=args.games // 2,
                      max_moves=args.max_moves,
                      random_opening_moves=args.opening_moves)
    r = out.result()
    wins = r.as_first.wins + r.as_second.wins
    draws = r.as_first.draws + r.as_second.draws
    games = wins + draws + r.as_first.losses + r.as_second.losses
    score = (wins + 0.5 * draws) / games
    lo, hi = wilson_interval(wins + 0.5 * draws, games)
    print(f"\nK = {args.leaves} against K = 1, {games} games: {wins} wins, "
          f"{draws} draws; score {score:.3f} [{lo:.3f}, {hi:.3f}] (95% "
          f"Wilson), mean length {np.mean(out.lengths):.0f} plies, "
          f"{time.perf_counter() - start:.0f} s", flush=True)
  print(f"RESULT vl_score={score:.4f} single_game_speedup={speedup:.2f}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
