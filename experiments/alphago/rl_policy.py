"""Trains AlphaGo's RL policy network p_ρ by REINFORCE from p_σ.

p_ρ starts as the supervised network of --sl-checkpoint and plays batches
of games against snapshots of itself (`training.reinforce`); OUTPUT gets
config.json, metrics.jsonl (the learner's win rate against its pool
opponent, mean game length, loss, gradient norm, every --log-every
iterations), tensorboard/ and orbax checkpoints (every --checkpoint-minutes
and on stopping; Ctrl-C and SIGTERM stop cleanly). A run stops after
--iterations, after --hours in this call, or once its training time over
all calls reaches --max-train-hours; --resume continues it exactly (the
run's config.json wins over the flags). At the end p_ρ plays p_σ
(--eval-games in all, half as each colour, both sampling at temperature 1
as in the paper's comparison) and the win rate is printed with a 95%
Wilson interval, then a `RESULT` line.

    python experiments/alphago/rl_policy.py --output runs/rl19 [--hours 2]
    python experiments/alphago/rl_policy.py --output runs/rl19 --resume
    python experiments/alphago/rl_policy.py --quick --output /tmp/rl-quick

--quick: a fresh 3-layer 8-filter net on 5×5 (no p_σ), 12 iterations of 32
games, 128 evaluation games: seconds after compiling.
"""

import argparse
import dataclasses
import json
import os
import sys

import jax

from alphago_jax.cli import rundir
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import policy_games
from alphago_jax.training import reinforce as rl
from alphago_jax.training.state import variables_of

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_SL = os.path.join("checkpoints", "sl19-partial")


def build_config(args, model=None) -> rl.ReinforceConfig:
  if args.quick:
    config = rl.ReinforceConfig(
        model=PolicyNetConfig.tiny(board_size=args.size or 5),
        games_per_iteration=32, optimizer="adam", learning_rate=1e-2,
        pool_size=4, snapshot_every=3, grad_chunk=256)
  else:
    config = rl.ReinforceConfig(model=model)
  overrides = {k: v for k, v in {
      "games_per_iteration": args.games, "learning_rate": args.lr,
      "optimizer": args.optimizer, "baseline": args.baseline,
      "pool_size": args.pool_size, "snapshot_every": args.snapshot_every,
      "temperature": args.temperature, "max_moves": args.max_moves,
      "grad_chunk": args.grad_chunk,
  }.items() if v is not None}
  return dataclasses.replace(config, **overrides)


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--sl-checkpoint", default=None,
                 help=f"p_σ: an SL run or checkpoint directory (default "
                 f"{DEFAULT_SL}; not read with --quick)")
  p.add_argument("--output", required=True, help="run directory")
  p.add_argument("--resume", action="store_true",
                 help="continue the run in OUTPUT with its config.json")
  p.add_argument("--quick", action="store_true",
                 help="a smoke run: tiny fresh net on 5x5, 12 iterations")
  p.add_argument("--size", type=int, default=None,
                 help="--quick only: board size (default 5)")
  p.add_argument("--iterations", type=int, default=None,
                 help="iterations of the run (default 10000; --quick 12)")
  p.add_argument("--games", type=int, default=None,
                 help="games an iteration (default 128)")
  p.add_argument("--optimizer", choices=rl.OPTIMIZERS, default=None)
  p.add_argument("--lr", type=float, default=None)
  p.add_argument("--baseline", choices=rl.BASELINES, default=None)
  p.add_argument("--pool-size", type=int, default=None)
  p.add_argument("--snapshot-every", type=int, default=None)
  p.add_argument("--temperature", type=float, default=None)
  p.add_argument("--max-moves", type=int, default=None)
  p.add_argument("--grad-chunk", type=int, default=None)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--hours", type=float, default=None,
                 help="stop after this much wall-clock time in this call")
  p.add_argument("--max-train-hours", type=float, default=6.0,
                 help="stop once the run's training time over all calls "
                 "reaches this")
  p.add_argument("--checkpoint-minutes", type=float, default=10.0)
  p.add_argument("--log-every", type=int, default=1)
  p.add_argument("--eval-games", type=int, default=None,
                 help="p_ρ vs p_σ games at the end, half as each colour "
                 "(default 400; --quick 128; 0 skips)")
  args = p.parse_args(argv)
  log = lambda line: print(line, flush=True)
  config_path = os.path.join(args.output, "config.json")
  ckpt_dir = os.path.join(args.output, "checkpoints")
  if args.resume and os.path.exists(config_path):
    with open(config_path) as f:
      saved = json.load(f)
    config = rl.ReinforceConfig.from_json(saved["config"])
    sl_path, seed = saved["sl_checkpoint"], saved["seed"]
    iterations, eval_games = saved["iterations"], saved["eval_games"]
  else:
    if ckpt.latest_step(ckpt_dir) is not None:
      p.error(f"{args.output} already holds a run; pass --resume to "
              f"continue it or choose another --output")
    seed = args.seed
    iterations = args.iterations or (12 if args.quick else 10_000)
    eval_games = args.eval_games if args.eval_games is not None else (
        128 if args.quick else 400)
    sl_path = None if args.quick else (args.sl_checkpoint or os.path.join(
        ROOT, DEFAULT_SL))
  if args.iterations is not None:
    iterations = args.iterations  # A resumed run may be extended.
  variables = model = None
  if sl_path is not None:
    try:
      model, variables, sl_step = rl.load_any_policy(ckpt.steps_directory(sl_path))
    except (FileNotFoundError, ckpt.CheckpointMismatchError) as e:
      print(f"error: --sl-checkpoint: {e}", file=sys.stderr)
      return 1
    log(f"p_σ: {sl_path} step {sl_step}, {model.num_layers}x"
        f"{model.filters} on {model.board_size}x{model.board_size}")
  if not (args.resume and os.path.exists(config_path)):
    try:
      config = build_config(args, model)
    except ValueError as e:
      p.error(str(e))
  if variables is None:  # --quick: p_σ is the fresh network of the seed.
    fresh = rl.init_reinforce_state(config, seed)
    variables = jax.tree.map(lambda x: x.copy(), variables_of(fresh))
  if not (args.resume and os.path.exists(config_path)):
    rundir.write_command(args.output, script=os.path.basename(__file__),
                         argv=sys.argv[1:] if argv is None else argv)
  os.makedirs(args.output, exist_ok=True)
  tmp = config_path + ".tmp"
  with open(tmp, "w") as f:
    json.dump({"config": config.to_json(), "sl_checkpoint": sl_path,
               "seed": seed, "iterations": iterations,
               "eval_games": eval_games}, f, indent=1)
  os.replace(tmp, config_path)
  try:
    state, _ = rl.train_reinforce(
        config, seed=seed, variables=variables, num_iterations=iterations,
        output_dir=args.output,
        max_seconds=None if args.hours is None else 3600 * args.hours,
        max_train_seconds=3600 * args.max_train_hours,
        log_every=args.log_every,
        checkpoint_seconds=60 * args.checkpoint_minutes, resume=True,
        log=log, progress=sys.stderr.isatty())
  except ckpt.CheckpointMismatchError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  done = int(state.iteration)
  fields = f"iterations={done} games={done * config.games_per_iteration}"
  if eval_games >= 2:
    per = eval_games // 2
    result = policy_games.policy_match(
        config.model, variables_of(state), config.model, variables,
        jax.random.key(seed + 1), games_per_colour=per, temperature=1.0,
        game=config.game, max_moves=config.max_moves,
        batch_games=min(128, 2 * per))
    log(f"p_ρ vs p_σ: {result['wins']} wins, {result['losses']} losses, "
        f"{result['draws']} draws of {result['games']}: win rate "
        f"{result['win_rate']:.3f} [{result['ci_low']:.3f}, "
        f"{result['ci_high']:.3f}] (95% Wilson), as Black "
        f"{result['black_win_rate']:.3f}, mean length "
        f"{result['mean_length']:.1f}")
    fields += (f" eval_games={result['games']} "
               f"win_rate={result['win_rate']:.4f} "
               f"ci_low={result['ci_low']:.4f} "
               f"ci_high={result['ci_high']:.4f}")
  print(f"RESULT {fields}", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
