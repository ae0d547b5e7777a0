"""The games the AlphaZero loop and the command line know, by name.

A `GameSpec` is everything the edges need to train, play and evaluate a
game without naming it: how to build it, its AlphaZero training config
and run defaults, how training evaluates it (the exact solver where one
fits, else a reference agent), and whether board symmetries augment its
data. `register` adds one; the CLI (`train`, `arena`, `selfplay`) reads
`names()` and `get(name)` and never names a game itself.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, List, Mapping

from alphago_jax import games
from alphago_jax.core.registry import Registry
from alphago_jax.games import base as game_base
from alphago_jax.models.resnet import ResNetConfig
from alphago_jax.search.alphazero import AlphaZeroSearchConfig
from alphago_jax.training import presets
from alphago_jax.training.config import TrainConfig

EVALUATIONS = ("solver", "random")


@dataclasses.dataclass(frozen=True, kw_only=True)
class GameSpec:
  """One trainable game.

  Attributes:
    name: the command line's name ("tictactoe", "go9").
    description: one line for help texts.
    make: builds the game.
    train: its AlphaZero `TrainConfig` (sized for a 2-core CPU).
    run_defaults: the run settings of `alphago-jax train NAME` that differ
      from `AlphaZeroRun`'s defaults (iterations, hours, evaluation...).
    evaluation: "solver" (against the exact solver; small games) or
      "random" (against uniformly random play, with a network snapshot per
      evaluation for later learning curves).
    symmetric: the rules are invariant under the 8 symmetries of the
      square board, so training may augment by them.
    go: the game is Go (SGF records, GTP engines such as GNU Go apply).
  """
  name: str
  description: str
  make: Callable[[], game_base.Game]
  train: Callable[[], TrainConfig]
  run_defaults: Mapping[str, object] = dataclasses.field(
      default_factory=dict)
  evaluation: str = "random"
  symmetric: bool = False
  go: bool = False

  def __post_init__(self):
    if self.evaluation not in EVALUATIONS:
      raise ValueError(f"evaluation must be one of {EVALUATIONS}, got "
                       f"{self.evaluation!r}")


_SPECS: Registry[GameSpec] = Registry("game")


def register(spec: GameSpec) -> GameSpec:
  """Adds `spec` (its name must be new)."""
  return _SPECS.register(spec.name, spec)


def names() -> List[str]:
  """The registered games' names, in registration order."""
  return _SPECS.names()


def get(name: str) -> GameSpec:
  """The spec called `name`.

  Raises:
    ValueError: an unknown name (the message lists the known ones).
  """
  return _SPECS.get(name)


register(GameSpec(
    name="tictactoe", description="tic-tac-toe (solved: the exact solver "
    "judges it)", make=lambda: games.make("tictactoe"),
    train=presets.tictactoe, evaluation="solver",
    run_defaults=dict(iterations=200, checkpoint_every=10, eval_every=10,
                      eval_games=256)))
register(GameSpec(
    name="go9", description="9x9 Go, komi 7.5, positional superko",
    make=lambda: games.make("go", size=9), train=presets.go9,
    evaluation="random", symmetric=True, go=True,
    run_defaults=dict(iterations=100_000, hours=3.0, checkpoint_every=2,
                      eval_every=5, eval_games=16, augment=True,
                      cpu_devices=2)))
register(GameSpec(
    name="othello", description="8x8 Othello (pgx's rules; judged against "
    "random play)", make=lambda: games.make("othello"),
    # A go9-like recipe with a smaller tower: 60 placements plus passes fit
    # in 130 moves, so every self-play game ends within one chunk; the
    # replay buffer stays out of checkpoints, as go9's.
    train=lambda: TrainConfig(
        model=ResNetConfig(num_blocks=2, channels=32, value_hidden=64),
        search=AlphaZeroSearchConfig(
            num_simulations=16, policy="gumbel", temperature_moves=10,
            gumbel_scale=1.0, max_num_considered_actions=16),
        max_moves=130, num_games=64, random_opening_moves=4,
        buffer_capacity=64 * 130 * 4, batch_size=256, gradient_steps=16,
        optimizer="adam", learning_rate=2e-3, lr_boundaries=(10000,),
        lr_decay=0.3, weight_decay=1e-4, save_buffer=False),
    evaluation="random", symmetric=True,
    run_defaults=dict(iterations=300, checkpoint_every=2, eval_every=5,
                      eval_games=16, augment=True)))
