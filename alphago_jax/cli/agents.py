"""Games, networks and agents named on the command line.

Agent specs (for `arena` and `selfplay`):

    random            uniformly random legal moves
    uct:N             UCT with random rollouts, N simulations a move
    mc:N              pure Monte Carlo, N rollouts after each legal move
    solver            perfect play (tic-tac-toe)
    policy:DIR        a network's raw policy (argmax of its legal logits)
    net:DIR[:N]       a network + its run's search for evaluation (no
                      noise, greedy), N simulations (default: the run's)

DIR is a run directory (its latest snapshot, else its latest checkpoint),
e.g. `checkpoints/go9`, or a distillation run (`train distill`: its
network under the game's own search settings).

External engines, played over GTP from the host (`arena` only, Go only):

    gnugo[:LEVEL]     GNU Go at LEVEL 0..10 (default 10)
    gtp:COMMAND       any GTP engine, COMMAND its command line (quoted,
                      split like a shell's), e.g. gtp:"gnugo --mode gtp"
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
from typing import Any, Optional, Tuple

from alphago_jax import search, training
from alphago_jax.training.state import variables_of
from alphago_jax.training import distill
from alphago_jax.training.checkpoint import (CheckpointMismatchError,
                                             latest_step, read_metadata,
                                             restore_checkpoint, template_of)
from alphago_jax.cli.configs import STAGES, AlphaZeroRun
from alphago_jax.core import rundir
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.engines import gnugo_player
from alphago_jax.models.resnet import make_evaluate_fn, make_network
from alphago_jax.training import game_specs, snapshots
from alphago_jax.zoo import loaders


class SpecError(ValueError):
  """An agent spec or network directory that cannot be used."""


def make_game(name: str):
  """The game `name` of `training.game_specs`."""
  try:
    return game_specs.get(name).make()
  except ValueError as e:
    raise SpecError(str(e)) from None


def run_train_config(run_dir: str, game_name: str):
  """The TrainConfig of a run directory: its config.json (when it is a run
  file of this game), else the game's preset (the committed checkpoints/go9
  predates run files); the checkpoint's architecture check catches a
  mismatch either way."""
  try:
    stage, run, _ = rundir.read_config(run_dir, STAGES)
  except RunConfigError:
    stage = run = None
  if isinstance(run, AlphaZeroRun):
    if run.game != game_name:
      raise SpecError(f"{run_dir} is a {run.game} run, not {game_name}")
    return run.train
  del stage
  return game_specs.get(game_name).train()


def load_network(run_dir: str, game_name: str) -> Tuple[Any, Any, Any, int]:
  """`(config, evaluate, variables, iteration)` of a run directory's
  newest network (snapshot, else checkpoint)."""
  if not os.path.isdir(run_dir):
    raise SpecError(f"{run_dir}: no such run directory")
  game = make_game(game_name)
  config = run_train_config(run_dir, game_name)
  architecture = config.architecture(game)
  snaps = snapshots.list_snapshots(os.path.join(run_dir, "snapshots"))
  ckpts = os.path.join(run_dir, "checkpoints")
  step = latest_step(ckpts)
  if step is not None and read_metadata(ckpts).get("stage") == distill.STAGE:
    return _distilled(run_dir, game, game_name)
  try:
    if snaps and (step is None or snaps[-1][0] >= step):
      variables, iteration = snapshots.load(snaps[-1][1],
                                            architecture=architecture)
    elif step is not None:
      template = template_of(
          lambda: training.init_train_state(game, config, 0))
      state = restore_checkpoint(ckpts, template,
                                          architecture=architecture)
      variables, iteration = variables_of(state), int(
          state.iteration)
    else:
      raise SpecError(f"{run_dir}: no snapshot or checkpoint")
  except CheckpointMismatchError as e:
    raise SpecError(f"{run_dir}: {e}") from None
  evaluate = make_evaluate_fn(make_network(game, config.model))
  return config, evaluate, variables, iteration


def _distilled(run_dir: str, game, game_name: str):
  """`load_network` of a distillation run: its student under the game's
  preset search (the run trained no search of its own)."""
  try:
    network = loaders.load(run_dir, expect=("alphazero",))
  except (FileNotFoundError, CheckpointMismatchError) as e:
    raise SpecError(f"{run_dir}: {e}") from None
  if (list(network.game.observation_shape) != list(game.observation_shape)
      or network.metadata.get("num_actions") != game.num_actions):
    raise SpecError(f"{run_dir}: its network plays observations "
                    f"{list(network.game.observation_shape)}, {game_name} "
                    f"has {list(game.observation_shape)}")
  config = dataclasses.replace(game_specs.get(game_name).train(),
                               model=network.model)
  evaluate = make_evaluate_fn(make_network(game, network.model))
  return config, evaluate, network.variables, network.step


def _count(spec: str, text: str) -> int:
  try:
    n = int(text)
  except ValueError:
    n = 0
  if n < 1:
    raise SpecError(f"agent {spec!r}: the count must be an integer >= 1, "
                    f"got {text!r}")
  return n


@dataclasses.dataclass(frozen=True)
class EngineSpec:
  """An external GTP engine named by an agent spec.

  Attributes:
    spec: the spec as written.
    command: the engine's argv for `gtp:COMMAND`; None for GNU Go.
    level: GNU Go's level.
  """
  spec: str
  command: Optional[Tuple[str, ...]] = None
  level: int = 10


def engine_spec(spec: str) -> Optional[EngineSpec]:
  """The `EngineSpec` of a `gnugo[:LEVEL]` or `gtp:COMMAND` spec, None for
  any other spec.

  Raises:
    SpecError: a bad level or command, or the engine is not installed.
  """
  kind, sep, rest = spec.partition(":")
  if kind == "gnugo":
    if rest.isdigit() and 0 <= int(rest) <= 10:
      level = int(rest)
    elif not sep:
      level = 10
    else:
      raise SpecError(f"agent {spec!r}: GNU Go's level must be 0..10, got "
                      f"{rest!r}")
    if gnugo_player.find_gnugo() is None:
      raise SpecError(f"agent {spec!r}: GNU Go is not installed (looked at "
                      f"$GNUGO, PATH and {gnugo_player.GNUGO_FALLBACK}); "
                      f"install it, e.g. `apt-get install gnugo`")
    return EngineSpec(spec, level=level)
  if kind == "gtp":
    try:
      argv = tuple(shlex.split(rest))
    except ValueError as e:
      raise SpecError(f"agent {spec!r}: unreadable command: {e}") from None
    if not argv:
      raise SpecError(f"agent {spec!r}: name the engine's command, e.g. "
                      f"gtp:\"gnugo --mode gtp\"")
    if shutil.which(argv[0]) is None:
      raise SpecError(f"agent {spec!r}: engine command {argv[0]!r} not "
                      f"found")
    return EngineSpec(spec, command=argv)
  return None


def make_agent(spec: str, game_name: str):
  """An `Agent` from its spec (see the module docstring)."""
  game = make_game(game_name)
  kind, _, rest = spec.partition(":")
  if kind == "random" and not rest:
    return search.random_agent
  if kind == "uct":
    return search.uct_agent(game, search.UCTConfig(
        num_simulations=_count(spec, rest)))
  if kind == "mc":
    return search.monte_carlo_agent(game, search.MonteCarloConfig(
        rollouts_per_action=_count(spec, rest)))
  if kind == "solver" and not rest:
    if game_specs.get(game_name).evaluation != "solver":
      raise SpecError(f"the exact solver does not play {game_name} (only "
                      f"games small enough to solve, e.g. tictactoe)")
    return search.solver_agent(game)
  if kind in ("policy", "net") and rest:
    path, sims = rest, None
    if kind == "net" and ":" in rest:
      head, _, tail = rest.rpartition(":")
      if tail.isdigit():
        path, sims = head, _count(spec, tail)
    config, evaluate, variables, _ = load_network(path, game_name)
    if kind == "policy":
      return search.policy_agent(game, evaluate, variables)
    search_config = config.search
    if sims is not None:
      search_config = dataclasses.replace(search_config,
                                          num_simulations=sims)
    return search.network_agent(game, evaluate, variables, search_config)
  if kind in ("gnugo", "gtp"):
    raise SpecError(f"agent {spec!r}: an external GTP engine plays only in "
                    f"`alphago-jax arena`")
  raise SpecError(f"unknown agent {spec!r}: use random, uct:N, mc:N, "
                  f"solver, policy:DIR or net:DIR[:N] (arena also: "
                  f"gnugo[:LEVEL], gtp:COMMAND)")
