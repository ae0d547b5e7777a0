"""Generates the value network's self-play positions, one a game.

Per game: U uniform on {0, .., U_max - 1}, p_σ (--sl-checkpoint) for plies
0 .. U-1, a uniformly random legal move at U, p_ρ (--rl-checkpoint; default
p_σ again) to the end, Tromp-Taylor score; the position after the random
move and the outcome for the player to move there are kept, games that end
before U are discarded and counted (`training.value_data`). OUTPUT gets
config.json, command.json (these options, resolved, of the first call)
and chunk-NNNNN.npz files written atomically; rerunning the same command
after a kill (kill -9 included) plays only the missing chunks, and asking
for more --games extends the folder.

--quick: a tiny untrained 9x9 policy when no --sl-checkpoint is given,
chunks of 32 games, 64 games.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Annotated, Optional

import jax
import tyro

from alphago_jax.cli import stages
from alphago_jax.core import cpu_devices
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import reinforce
from alphago_jax.training import supervised as sl
from alphago_jax.training import value_data as vd
from alphago_jax.training.mesh import make_mesh

STAGE = "value-data"
EXAMPLES = """examples:
  alphago-jax train value-data --sl-checkpoint checkpoints/sl9 --rl-checkpoint checkpoints/rl9 --games 100000 --output data/value9
  alphago-jax train value-data --output data/value9 --summary
  alphago-jax train value-data --quick --output /tmp/v   (a smoke test)"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options:
  """What a value-data folder holds (recorded in command.json).

  Attributes:
    sl_checkpoint: p_σ: a run directory or its checkpoints/ folder.
    rl_checkpoint: p_ρ (default: p_σ plays that part too).
    games: games in all, with earlier runs' (default 10000; --quick 64).
    quick: a smoke test (see above).
    chunk_games: games a chunk, one compiled call (default 256; --quick
      32).
    max_random_ply: U_max (default round(450 N² / 361)).
    test_fraction: share of the chunks kept for testing.
    komi: of the games.
    temperature: both policies' softmax temperature (paper: 1).
    playout_temperature: p_ρ's temperature after the random move (the
      outcome labels' play; default --temperature; 0: greedy).
    seed: the games' random draws (and --quick's untrained policy).
    size: board size of --quick's untrained policy.
    cpu_devices: XLA CPU devices, each playing its own chunks (default:
      a power of two up to the cores; --quick 1); the chunks do not
      depend on it.
  """
  sl_checkpoint: Optional[str] = None
  rl_checkpoint: Optional[str] = None
  games: Optional[int] = None
  quick: bool = False
  chunk_games: Optional[int] = None
  max_random_ply: Optional[int] = None
  test_fraction: float = 0.05
  komi: float = 7.5
  temperature: float = 1.0
  playout_temperature: Optional[float] = None
  seed: int = 0
  size: int = 9
  cpu_devices: Optional[int] = None

  def __post_init__(self):
    stages.check_optional_ints(self, {"games": 1, "chunk_games": 1,
                                      "max_random_ply": 1})
    if (isinstance(self.test_fraction, bool)
        or not isinstance(self.test_fraction, (int, float))
        or not 0 <= self.test_fraction < 1):
      raise ValueError(f"test_fraction must be in [0, 1), got "
                       f"{self.test_fraction!r}")
    if isinstance(self.komi, bool) or not isinstance(self.komi,
                                                     (int, float)):
      raise ValueError(f"komi must be a number, got {self.komi!r}")
    stages.check_int("seed", self.seed, 0)
    stages.check_int("size", self.size, 5)
    stages.check_optional_ints(self, {"cpu_devices": 1})

  def resolved(self) -> "Options":
    """The defaults that depend on --quick filled in (what command.json
    records); U_max stays None (the board's default, in config.json)."""
    return dataclasses.replace(
        self, games=self.games or (64 if self.quick else 10_000),
        chunk_games=self.chunk_games or (32 if self.quick else 256),
        cpu_devices=self.cpu_devices or (
            1 if self.quick else cpu_devices.default_cpu_device_count()))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Command:
  """A call of the stage.

  Attributes:
    output: the value-data folder.
    summary: print the folder's counts and exit.
  """
  output: str
  summary: bool = False
  options: Annotated[Options, tyro.conf.arg(name="")]


def load_any_policy(path: str):
  """(config, variables, step, kind) of an SL or RL policy checkpoint."""
  path = ckpt.steps_directory(path)
  try:
    model, variables, step = reinforce.load_rl_policy(path)
    return model, variables, step, "rl_policy"
  except ckpt.CheckpointMismatchError:
    pass
  model, variables, step = sl.load_policy(path)
  return model, variables, step, "sl_policy"


def run(command: Command) -> int:
  """Generates (or extends) the folder of `command`; the exit status."""
  options = command.options.resolved()
  stages.start_cpu_devices(options.cpu_devices)
  output = command.output
  log = stages.log
  if command.summary:
    try:
      s = vd.summary(output)
    except vd.ValueDataError as e:
      print(f"error: {e}", file=sys.stderr)
      return 1
    log(" ".join(f"{k}={v}" for k, v in s.items()))
    return 0
  sources = {}
  try:
    if options.sl_checkpoint is None:
      if not options.quick:
        return stages.fail("--sl-checkpoint is required (or --quick)")
      sl_model = PolicyNetConfig.tiny(board_size=options.size)
      sl_vars = init_policy_variables(PolicyNet(sl_model),
                                      jax.random.key(options.seed))
      sources["sl"] = {"untrained": "tiny", "seed": options.seed}
    else:
      sl_model, sl_vars, step, kind = load_any_policy(options.sl_checkpoint)
      sources["sl"] = {"path": os.path.normpath(options.sl_checkpoint),
                       "step": step, "kind": kind}
    rl = None
    if options.rl_checkpoint is not None and (
        os.path.abspath(options.rl_checkpoint)
        != os.path.abspath(options.sl_checkpoint or "")):
      rl_model, rl_vars, step, kind = load_any_policy(options.rl_checkpoint)
      rl = (rl_model, rl_vars)
      sources["rl"] = {"path": os.path.normpath(options.rl_checkpoint),
                       "step": step, "kind": kind}
    else:
      sources["rl"] = "same as sl"
  except (FileNotFoundError, ckpt.CheckpointMismatchError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  try:
    config = vd.ValueDataConfig(
        board_size=sl_model.board_size, komi=options.komi,
        max_random_ply=options.max_random_ply,
        chunk_games=options.chunk_games,
        test_fraction=options.test_fraction,
        temperature=options.temperature,
        playout_temperature=options.playout_temperature, seed=options.seed)
  except ValueError as e:
    return stages.fail(str(e))
  log(f"p_σ {sources['sl']}, p_ρ {sources['rl']}; {options.games} games "
      f"of {config.board_size}x{config.board_size}, U_max {config.u_max}, "
      f"chunks of {config.chunk_games}, temperature {config.temperature}, "
      f"playout temperature {config.playout_temperature}")
  stages.record(output, STAGE, options)
  try:
    devices = min(options.cpu_devices, jax.device_count())
    result = vd.generate(output, config, (sl_model, sl_vars), rl,
                         games=options.games, sources=sources, log=log,
                         mesh=make_mesh(jax.devices()[:devices])
                         if devices > 1 else None)
  except (vd.ValueDataError, ValueError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  print(f"RESULT games={result['games']} positions={result['positions']} "
        f"discarded={result['discarded']} new_games={result['new_games']} "
        f"games_per_second={result['games_per_second']:.2f} "
        f"mean_length={result.get('mean_length', float('nan')):.1f}")
  return 0


stages.register(__name__)
