"""The typed configs of whole runs: what `config.json` records.

A run config holds everything that decides a run's result (the game, the
library's own config of the stage, the seed, budgets, evaluation settings,
the CPU device count): repeating a run needs nothing else. Where a run is
written (`--output`), progress display and the like stay outside it.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal, Optional

import tyro

from alphago_jax.core import config_codec
from alphago_jax.core.checks import check_bool, check_int, check_positive
from alphago_jax.training import game_specs
from alphago_jax.training.config import TrainConfig

# The games of `training.game_specs`, as choices for the command line.
AlphaZeroGame = Literal[tuple(game_specs.names())]


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlphaZeroRun:
  """An AlphaZero run: self-play and learning from random initialisation.

  Attributes:
    game: a game of `training.game_specs` (tictactoe, go9, ...).
    train: the self-play, network, search and optimiser config.
    seed: seeds the network and every random draw of the run.
    iterations: stop once this many iterations are done.
    hours: also stop after this much wall-clock time in one call (None: no
      limit); the run then stops at a checkpoint and can be resumed.
    checkpoint_every: iterations between checkpoints (one is always written
      when the run stops).
    eval_every: iterations between evaluations (0: none). Tic-tac-toe:
      the raw policy and network + search against the perfect solver; 9x9
      Go: both against random play, and a network snapshot for the
      learning curve.
    eval_games: games per colour of each evaluation.
    stop_when_perfect: games judged by the exact solver (tic-tac-toe): stop
      at the first evaluation in which neither the raw policy nor the
      search loses a game to the solver.
    augment: train on a random one of the 8 board symmetries per example
      (games whose rules have them, e.g. Go).
    cpu_devices: XLA CPU devices (one per core uses every core; the games
      and batches are split over them). XLA_FLAGS wins where it sets one.
    init_from: a run directory (a distillation, `train distill`, or an
      AlphaZero run) whose latest network the run starts from instead of a
      random one: the same model on the same game, or the run is refused;
      the optimiser, buffer and iteration counter start fresh.
  """
  game: Annotated[AlphaZeroGame, tyro.conf.Fixed]
  train: TrainConfig
  seed: int = 0
  iterations: int = 200
  hours: Optional[float] = None
  checkpoint_every: int = 10
  eval_every: int = 10
  eval_games: int = 256
  stop_when_perfect: bool = False
  augment: bool = False
  cpu_devices: int = 1
  init_from: Optional[str] = config_codec.omit_at_default(None)

  def __post_init__(self):
    try:
      spec = game_specs.get(self.game)
    except ValueError as e:
      raise ValueError(str(e)) from None
    if not isinstance(self.train, TrainConfig):
      raise ValueError(f"train must be a TrainConfig, got {self.train!r}")
    check_int("seed", self.seed, 0)
    check_int("iterations", self.iterations, 0)
    check_positive("hours", self.hours, optional=True)
    check_int("checkpoint_every", self.checkpoint_every, 1)
    check_int("eval_every", self.eval_every, 0)
    check_int("eval_games", self.eval_games, 1)
    check_int("cpu_devices", self.cpu_devices, 1)
    if self.init_from is not None and (
        not isinstance(self.init_from, str) or not self.init_from):
      raise ValueError(f"init_from must be a run directory, got "
                       f"{self.init_from!r}")
    if self.cpu_devices & (self.cpu_devices - 1):
      raise ValueError(f"cpu_devices must be a power of two, got "
                       f"{self.cpu_devices}")
    for name in ("stop_when_perfect", "augment"):
      check_bool(name, getattr(self, name))
    if self.stop_when_perfect and spec.evaluation != "solver":
      raise ValueError(f"stop_when_perfect needs the exact solver, which "
                       f"{self.game} has not")
    if self.augment and not spec.symmetric:
      raise ValueError(f"augment: the rules of {self.game} have no board "
                       f"symmetries")
    if self.stop_when_perfect and not self.eval_every:
      raise ValueError("stop_when_perfect needs eval_every >= 1")
    m = self.train.search.max_num_considered_actions
    if m is not None and m > spec.make().num_actions:
      raise ValueError(
          f"train.search.max_num_considered_actions={m} exceeds the "
          f"{spec.make().num_actions} actions of {self.game}")
    for name in ("num_games", "batch_size"):
      if getattr(self.train, name) % self.cpu_devices:
        raise ValueError(
            f"cpu_devices={self.cpu_devices} must divide train.{name}="
            f"{getattr(self.train, name)} (games and batches are split "
            f"over the devices)")


def alphazero_defaults(game: str) -> AlphaZeroRun:
  """The measured settings of `game` (its `training.game_specs` entry)."""
  spec = game_specs.get(game)
  return AlphaZeroRun(game=game, train=spec.train(), **spec.run_defaults)


# (AlphaGo's 2016 stages record their options in command.json instead:
# `alphago_jax.cli.stages`.)
STAGES = {"alphazero": AlphaZeroRun}
