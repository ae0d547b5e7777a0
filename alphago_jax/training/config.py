"""The one typed config of an AlphaZero training run."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Tuple

from alphago_jax.core import config_codec
from alphago_jax.core.checks import check_bool, check_int, check_positive
from alphago_jax.games import base as game_base
from alphago_jax.games.go import Go
from alphago_jax.models.resnet import ResNetConfig
from alphago_jax.search.alphazero import AlphaZeroSearchConfig

OPTIMIZERS = ("sgd", "adam")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainConfig:
  """Self-play, replay, loss and optimiser settings.

  Attributes:
    model: the network.
    search: the search used in self-play (its exploration settings apply).
    max_moves: moves per self-play chunk; a game not over by then yields no
      examples. Use at least the game's longest game (9 for tic-tac-toe).
    num_games: B, self-play games per chunk (per iteration).
    random_opening_moves: each self-play game starts with a uniformly random
      number in [0, k] of random moves (no examples from them); 0 is off.
    buffer_capacity: replay rows; at least num_games * max_moves.
    batch_size: examples per gradient step.
    gradient_steps: K, gradient steps per iteration.
    optimizer: "sgd" (with momentum, as AlphaGo Zero) or "adam".
    learning_rate: initial learning rate.
    momentum: SGD momentum.
    lr_boundaries: gradient steps at which the rate is multiplied by
      `lr_decay` (AlphaGo Zero: 0.01 -> 0.001 -> 0.0001).
    lr_decay: that factor.
    weight_decay: c in l = (z - v)^2 - pi^T log p + c ||theta||^2.
    save_buffer: include the replay buffer in checkpoints (needed for an
      identical continuation after resuming).
    sgf_games: K, the first K finished self-play games of each iteration
      written as SGF to `RUN/games/iteration-NNNNNN-KKKK.sgf` (Go only;
      moves, result, each searched move's root value and visits). 0 (the
      default) writes none and compiles the iteration without them; on,
      the games played are the same.
  """
  model: ResNetConfig
  search: AlphaZeroSearchConfig
  max_moves: int
  num_games: int = 128
  random_opening_moves: int = 0
  buffer_capacity: int = 1 << 15
  batch_size: int = 256
  gradient_steps: int = 8
  optimizer: str = "adam"
  learning_rate: float = 1e-3
  momentum: float = 0.9
  lr_boundaries: Tuple[int, ...] = ()
  lr_decay: float = 0.1
  weight_decay: float = 1e-4
  save_buffer: bool = True
  sgf_games: int = config_codec.omit_at_default(0)

  def __post_init__(self):
    if not isinstance(self.model, ResNetConfig):
      raise ValueError(f"model must be a ResNetConfig, got {self.model!r}")
    if not isinstance(self.search, AlphaZeroSearchConfig):
      raise ValueError(
          f"search must be an AlphaZeroSearchConfig, got {self.search!r}")
    check_int("max_moves", self.max_moves, 1)
    check_int("num_games", self.num_games, 1)
    check_int("random_opening_moves", self.random_opening_moves, 0)
    check_int("buffer_capacity", self.buffer_capacity, 1)
    check_int("batch_size", self.batch_size, 1)
    check_int("gradient_steps", self.gradient_steps, 1)
    if self.optimizer not in OPTIMIZERS:
      raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got "
                       f"{self.optimizer!r}")
    check_positive("learning_rate", self.learning_rate)
    check_positive("momentum", self.momentum, zero=True)
    if self.momentum >= 1:
      raise ValueError(f"momentum must be < 1, got {self.momentum!r}")
    if not isinstance(self.lr_boundaries, tuple) or any(
        isinstance(b, bool) or not isinstance(b, int) or b < 1
        for b in self.lr_boundaries) or list(self.lr_boundaries) != sorted(
            set(self.lr_boundaries)):
      raise ValueError("lr_boundaries must be a tuple of increasing positive "
                       f"integers, got {self.lr_boundaries!r}")
    check_positive("lr_decay", self.lr_decay)
    check_positive("weight_decay", self.weight_decay, zero=True)
    if self.buffer_capacity < self.num_games * self.max_moves:
      raise ValueError(
          f"buffer_capacity={self.buffer_capacity} is smaller than one "
          f"self-play chunk (num_games * max_moves = "
          f"{self.num_games * self.max_moves})")
    check_bool("save_buffer", self.save_buffer)
    check_int("sgf_games", self.sgf_games, 0)

  def check_game(self, game: game_base.Game) -> None:
    """Raises ValueError if this config cannot train on `game`."""
    self.search.num_considered_actions(game)
    if self.sgf_games and not isinstance(game, Go):
      raise ValueError(f"sgf_games={self.sgf_games}: SGF records Go games "
                       f"only, this run plays {game.name}")
    if len(game.observation_shape) != 3:
      raise ValueError(f"{game.name}: observations must be [H, W, C], got "
                       f"{game.observation_shape}")

  def architecture(self, game: game_base.Game) -> Dict[str, Any]:
    """What a checkpoint must match to be loaded: game, shapes, network,
    optimiser and buffer layout (JSON-able)."""
    return {
        "game": game.name,
        "num_actions": int(game.num_actions),
        "observation_shape": [int(d) for d in game.observation_shape],
        "model": config_codec.to_json(self.model),
        "optimizer": self.optimizer,
        "buffer_capacity": self.buffer_capacity if self.save_buffer else None,
    }
