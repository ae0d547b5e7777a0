"""A policy or value network without search against GNU Go, many games in
parallel.

The network plays the move rule of `training.policy_games` (legal points
that fill no own one-point eye; pass only when none is left) greedily
(`--temperature 0`, the default: ties broken at random) or sampled at a
temperature; GNU Go plays each game in its own GTP process
(`evaluation.gnugo_match`: Chinese rules, positional superko, colours
alternated, every move checked by our engine, Tromp-Taylor scores).

    python experiments/alphago/policy_vs_gnugo.py --checkpoint runs/sl9 \
        --levels 1 10 --games-per-colour 50

The checkpoint is a supervised (p_σ) or REINFORCE (p_ρ) run directory or its
`checkpoints/` folder; with `--value`, a value network's (v_θ), which plays
the move whose successor it rates best (`zoo.greedy.value_scores`;
greedy only); with `--ensemble`, a policy network plays its mean over the 8
board symmetries; with `--rollout`, a fast rollout policy's weights (p_π:
`models.rollout_policy`, any board size), which plays the same move rule
by its pattern logits. Prints, per level, wins / losses with a 95% Wilson
interval and how many games were distinct (a greedy network against a
seeded GNU Go can replay a game; `--random-opening-moves` varies them), and
ends with `RESULT level_<L>_win_rate=<x> ... games=<n>`. `--sgf-dir` writes
every game as SGF (scored by our engine, Tromp-Taylor) for review, and a
game GNU Go failed in, unscored, into its `unplayed/`.
"""

import argparse
import os
import sys
import time

import jax

from alphago_jax.core import cpu_devices
from alphago_jax.games import sgf


def make_agent(logits, game, temperature: float):
  """`(states [B], key) -> actions [B]`: a move by `logits(game, states)
  -> [B, A]` under the policy games' move rule (legal points that fill no
  own one-point eye; pass only when none is left), greedy at temperature
  0 (ties at random)."""
  # pylint: disable=import-outside-toplevel
  from alphago_jax.training import policy_games

  def agent(states, key):
    mask = policy_games.sensible_mask(game, states)
    return policy_games.sample_actions(key, logits(game, states), mask,
                                       temperature)
  return agent


def game_result(outcomes, i):
  """SGF RE of game `i`: None if unplayed; `B+R`/`W+R` when GNU Go resigned;
  `B+F`/`W+F` when a side forfeited by an illegal move (the winner is the
  other side, as `returns` says); else the board's Tromp-Taylor score."""
  if outcomes.unplayed is not None and outcomes.unplayed[i]:
    return None
  ours_black = bool(outcomes.agent_black[i])
  if outcomes.resigned[i]:
    return "B+R" if ours_black else "W+R"
  if outcomes.forfeited is not None and outcomes.forfeited[i]:
    we_won = outcomes.returns[i] > 0
    return "B+F" if we_won == ours_black else "W+F"
  return sgf.result_string(float(outcomes.score[i]))


def forfeits(outcomes):
  """(our forfeits, GNU Go's) over the played games."""
  if outcomes.forfeited is None:
    return 0, 0
  lost = outcomes.forfeited & (outcomes.returns < 0)
  return int(lost.sum()), int((outcomes.forfeited & ~lost).sum())


def _write_sgfs(folder, game, outcomes, level, name, gnugo_seed=0,
                seed=None):
  """One SGF per game (`games.match_sgf`: players, result, rules, the
  match's key seed and the game's GNU Go seed in the root comment), named
  by level, index and our colour; written to a temporary name and renamed,
  so a killed run leaves no partial file.

  A game not played to the end (its GNU Go died or refused a move) goes,
  with no result (`Void`), into `unplayed/` with the moves up to the
  failure and GNU Go's seed in its name, so the failure can be replayed."""
  # pylint: disable=import-outside-toplevel
  from alphago_jax.core.atomic_files import write_atomic
  from alphago_jax.evaluation.ablation_report import GNUGO_FLAGS
  from alphago_jax.games import match_sgf
  os.makedirs(folder, exist_ok=True)
  for i, moves in enumerate(outcomes.moves):
    unplayed = bool(outcomes.unplayed[i])
    black = bool(outcomes.agent_black[i])
    ours = match_sgf.Player(f"network ({name})")
    theirs = match_sgf.Player(
        f"GNU Go level {level}" + (f" (seed {gnugo_seed + i})" if unplayed
                                   else ""),
        {"level": level, "flags": GNUGO_FLAGS})
    played = match_sgf.PlayedGame(
        game=game, actions=moves, black=ours if black else theirs,
        white=theirs if black else ours,
        result=game_result(outcomes, i) or match_sgf.result_text("unplayed"),
        seed=seed, match=f"policy vs GNU Go level {level}", index=i,
        settings={"gnugo_seed": gnugo_seed + i})
    where = os.path.join(folder, "unplayed") if unplayed else folder
    os.makedirs(where, exist_ok=True)
    path = os.path.join(
        where, f"level{level}-{i:03d}-{'black' if black else 'white'}.sgf")
    write_atomic(path, played.sgf())


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--checkpoint", required=True,
                 help="a p_σ or p_ρ run directory (or its checkpoints/)")
  p.add_argument("--value", action="store_true",
                 help="the checkpoint is a value network's: it plays the "
                 "move whose successor it rates best")
  p.add_argument("--rollout", action="store_true",
                 help="the checkpoint is a fast rollout policy's (p_π) "
                 "weights folder; give --size")
  p.add_argument("--size", type=int, default=None,
                 help="board size (--rollout only: p_π's patterns are "
                 "local, so its weights play any size)")
  p.add_argument("--levels", type=int, nargs="+", default=[1, 10])
  p.add_argument("--games-per-colour", type=int, default=50)
  p.add_argument("--temperature", type=float, default=0.0,
                 help="0: greedy (ties at random); else sampled")
  p.add_argument("--ensemble", action="store_true",
                 help="p_σ / p_ρ plays the mean of its policy over the 8 "
                 "board symmetries (8x the network's cost)")
  p.add_argument("--komi", type=float, default=7.5)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--random-opening-moves", type=int, default=0,
                 help="plies played uniformly at random by both sides first")
  p.add_argument("--sgf-dir", default=None,
                 help="write each game as SGF into this folder")
  args = p.parse_args(argv)
  if args.random_opening_moves < 0:
    p.error("--random-opening-moves must be >= 0")
  if args.games_per_colour < 1:
    p.error("--games-per-colour must be >= 1")
  if not args.temperature >= 0:
    p.error("--temperature must be >= 0")
  if args.value and args.temperature != 0:
    p.error("--value plays greedily: no --temperature")
  if args.ensemble and (args.value or args.rollout):
    p.error("--ensemble is for a policy network (p_σ or p_ρ)")
  if args.value and args.rollout:
    p.error("--value and --rollout name different networks: give one")
  if args.rollout and args.size is None:
    p.error("--rollout needs --size (p_π's weights play any board size)")
  if args.size is not None and not args.rollout:
    p.error("--size is for --rollout: a network's size is its checkpoint's")
  if args.size is not None and not 5 <= args.size <= 19:
    p.error(f"--size must be in 5..19, got {args.size}")
  try:  # One XLA device: GNU Go's processes take the other cores.
    cpu_devices.use_cpu_devices(1)
  except RuntimeError:
    pass  # Called from a process whose JAX has started: its devices.
  # pylint: disable=import-outside-toplevel
  from alphago_jax.evaluation.gnugo_match import gnugo_match
  from alphago_jax.core.stats import wilson_interval
  from alphago_jax.games.go import Go
  from alphago_jax.zoo import greedy, loaders
  from alphago_jax.models.rollout_policy import RolloutWeightsError
  from alphago_jax.training import checkpoint as ckpt
  from alphago_jax.training import policy_games
  try:
    if args.rollout:
      net = loaders.load(args.checkpoint, expect=("rollout_policy",))
      meta, logits = net.metadata, greedy.rollout_scores(net)
    elif args.value:
      net = loaders.load(args.checkpoint, expect=("value_net",))
      model, step, scores = net.model, net.step, greedy.value_scores(net)
    else:
      net = loaders.load(args.checkpoint, expect=loaders.POLICY_KINDS)
      model, variables, step = net.model, net.variables, net.step
  except (FileNotFoundError, ckpt.CheckpointMismatchError,
          RolloutWeightsError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  size = args.size if args.rollout else model.board_size
  game = Go(size=size, komi=args.komi)
  sampling = ("greedy" if args.temperature == 0 else
              f"sampled at temperature {args.temperature:g}")
  if args.rollout:
    agent = make_agent(logits, game, args.temperature)
    how = f"rollout policy p_π, {sampling}"
  elif args.value:
    agent = make_agent(scores, game, 0.0)
    how = "value network, greedy over successors"
  else:
    network = policy_games.policy_logits_fn(model, game,
                                            ensemble=args.ensemble)
    agent = make_agent(lambda g, states: network(variables, states), game,
                       args.temperature)
    how = sampling + (", 8-symmetry ensemble" if args.ensemble else "")
  if args.rollout:
    print(f"{args.checkpoint} (step {meta.get('step', '?')}, "
          f"{size}x{size}), {how}")
  else:
    print(f"{args.checkpoint} (step {step}, {model.num_layers}x"
          f"{model.filters}, {size}x{size}), {how}")
  results = []
  for i, level in enumerate(args.levels):
    start = time.perf_counter()
    gnugo_seed = 1000 * i  # Game j's GNU Go runs with seed gnugo_seed + j.
    outcomes = gnugo_match(
        game, agent, jax.random.key(args.seed + i), level=level,
        games_per_colour=args.games_per_colour, seed=gnugo_seed,
        random_opening_moves=args.random_opening_moves)
    result = outcomes.result()
    played = ~outcomes.unplayed
    distinct = len({tuple(m[m >= 0].tolist())
                    for m in outcomes.moves[played]})
    if args.sgf_dir:
      _write_sgfs(args.sgf_dir, game, outcomes, level, name=how,
                  gnugo_seed=gnugo_seed, seed=args.seed + i)
    wins, draws, losses = result.wins, result.draws, result.losses
    n = result.games
    lo, hi = wilson_interval(wins, n) if n else (float("nan"),) * 2
    rate = wins / n if n else float("nan")
    ours_f, theirs_f = forfeits(outcomes)
    print(f"GNU Go level {level}: {wins} wins, {draws} draws, {losses} "
          f"losses of {n} played ({rate:.3f} [{lo:.3f}, {hi:.3f}]), "
          f"{distinct} distinct, forfeits {ours_f} ours and {theirs_f} "
          f"GNU Go's, {time.perf_counter() - start:.0f} s")
    results.append((level, rate, n))
  print("RESULT " + " ".join(f"level_{lv}_win_rate={r:.4f}"
                             for lv, r, _ in results)
        + f" games={sum(n for _, _, n in results)}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
