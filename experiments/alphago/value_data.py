"""Generates the value network's self-play positions, one a game.

Per game: U uniform on {0, .., U_max - 1}, p_σ (--sl-checkpoint) for plies
0 .. U-1, a uniformly random legal move at U, p_ρ (--rl-checkpoint; default
p_σ again) to the end, Tromp-Taylor score; the position after the random
move and the outcome for the player to move there are kept, games that end
before U are discarded and counted (`training.value_data`). OUTPUT gets
config.json and chunk-NNNNN.npz files written atomically; rerunning the
same command after a kill (kill -9 included) plays only the missing
chunks, and asking for more --games extends the folder.

    python experiments/alphago/value_data.py --sl-checkpoint runs/sl9 \
        --games 100000 --output data/value9 [--rl-checkpoint runs/rl9]
    python experiments/alphago/value_data.py --quick --output /tmp/v  # smoke

--quick: a tiny untrained 9x9 policy when no --sl-checkpoint is given,
chunks of 32 games, 64 games.
"""

import argparse
import os
import sys

import jax

from alphago_jax import cpu_devices
from alphago_jax.cli import rundir
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import supervised as sl
from alphago_jax.training import value_data as vd


def load_any_policy(path: str):
  """(config, variables, step, kind) of an SL or RL policy checkpoint."""
  path = ckpt.steps_directory(path)
  try:
    from alphago_jax.training import reinforce  # pylint: disable=import-outside-toplevel
  except ImportError:
    reinforce = None
  if reinforce is not None:
    try:
      model, variables, step = reinforce.load_rl_policy(path)
      return model, variables, step, "rl_policy"
    except ckpt.CheckpointMismatchError:
      pass
  model, variables, step = sl.load_policy(path)
  return model, variables, step, "sl_policy"


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--sl-checkpoint", default=None,
                 help="p_σ: a run directory or its checkpoints/ folder")
  p.add_argument("--rl-checkpoint", default=None,
                 help="p_ρ (default: p_σ plays that part too)")
  p.add_argument("--games", type=int, default=None,
                 help="games in all, with earlier runs' (default 10000; "
                 "--quick 64)")
  p.add_argument("--output", required=True, help="the value-data folder")
  p.add_argument("--quick", action="store_true",
                 help="a smoke test (see the module docstring)")
  p.add_argument("--chunk-games", type=int, default=None,
                 help="games a chunk, one compiled call (default 256; "
                 "--quick 32)")
  p.add_argument("--max-random-ply", type=int, default=None,
                 help="U_max (default round(450 N² / 361))")
  p.add_argument("--test-fraction", type=float, default=0.05)
  p.add_argument("--komi", type=float, default=7.5)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--size", type=int, default=9,
                 help="board size of --quick's untrained policy")
  p.add_argument("--summary", action="store_true",
                 help="print the folder's counts and exit")
  p.add_argument("--cpu-devices", type=int, default=1,
                 help="XLA CPU devices (the generator runs on one)")
  args = p.parse_args(argv)
  try:
    cpu_devices.use_cpu_devices(args.cpu_devices)
  except ValueError as e:
    p.error(f"--cpu-devices: {e}")
  log = lambda line: print(line, flush=True)
  if args.summary:
    try:
      s = vd.summary(args.output)
    except vd.ValueDataError as e:
      print(f"error: {e}", file=sys.stderr)
      return 1
    log(" ".join(f"{k}={v}" for k, v in s.items()))
    return 0
  sources = {}
  try:
    if args.sl_checkpoint is None:
      if not args.quick:
        p.error("--sl-checkpoint is required (or --quick)")
      sl_model = PolicyNetConfig.tiny(board_size=args.size)
      sl_vars = init_policy_variables(PolicyNet(sl_model),
                                      jax.random.key(args.seed))
      sources["sl"] = {"untrained": "tiny", "seed": args.seed}
    else:
      sl_model, sl_vars, step, kind = load_any_policy(args.sl_checkpoint)
      sources["sl"] = {"path": os.path.normpath(args.sl_checkpoint),
                       "step": step, "kind": kind}
    rl = None
    if args.rl_checkpoint is not None and (
        os.path.abspath(args.rl_checkpoint)
        != os.path.abspath(args.sl_checkpoint or "")):
      rl_model, rl_vars, step, kind = load_any_policy(args.rl_checkpoint)
      rl = (rl_model, rl_vars)
      sources["rl"] = {"path": os.path.normpath(args.rl_checkpoint),
                       "step": step, "kind": kind}
    else:
      sources["rl"] = "same as sl"
  except (FileNotFoundError, ckpt.CheckpointMismatchError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  try:
    config = vd.ValueDataConfig(
        board_size=sl_model.board_size, komi=args.komi,
        max_random_ply=args.max_random_ply,
        chunk_games=args.chunk_games or (32 if args.quick else 256),
        test_fraction=args.test_fraction, seed=args.seed)
  except ValueError as e:
    p.error(str(e))
  games = args.games or (64 if args.quick else 10_000)
  log(f"p_σ {sources['sl']}, p_ρ {sources['rl']}; {games} games of "
      f"{config.board_size}x{config.board_size}, U_max {config.u_max}, "
      f"chunks of {config.chunk_games}")
  rundir.write_command(args.output, script=os.path.basename(__file__),
                       argv=sys.argv[1:] if argv is None else argv)
  try:
    result = vd.generate(args.output, config, (sl_model, sl_vars), rl,
                         games=games, sources=sources, log=log)
  except (vd.ValueDataError, ValueError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  print(f"RESULT games={result['games']} positions={result['positions']} "
        f"discarded={result['discarded']} new_games={result['new_games']} "
        f"games_per_second={result['games_per_second']:.2f} "
        f"mean_length={result.get('mean_length', float('nan')):.1f}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
