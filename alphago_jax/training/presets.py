"""Named training configs that have been run and measured."""

from __future__ import annotations

from alphago_jax.models.resnet import ResNetConfig
from alphago_jax.search.alphazero import AlphaZeroSearchConfig
from alphago_jax.training.config import TrainConfig


def tictactoe(policy: str = "gumbel") -> TrainConfig:
  """AlphaZero on tic-tac-toe, sized for a 2-core CPU."""
  if policy == "gumbel":
    search = AlphaZeroSearchConfig(num_simulations=16, policy="gumbel",
                                   temperature_moves=9, gumbel_scale=1.0)
  else:
    search = AlphaZeroSearchConfig(num_simulations=64, policy="puct",
                                   c_puct=1.25, dirichlet_alpha=1.0,
                                   dirichlet_fraction=0.25,
                                   temperature_moves=4)
  return TrainConfig(
      model=ResNetConfig(num_blocks=1, channels=16, value_hidden=32),
      search=search, max_moves=9, num_games=128, random_opening_moves=4,
      buffer_capacity=128 * 9 * 16, batch_size=256, gradient_steps=8,
      optimizer="adam", learning_rate=3e-3, lr_boundaries=(800, 1600),
      lr_decay=0.3, weight_decay=1e-4)


def go9() -> TrainConfig:
  """AlphaZero on 9×9 Go, sized for hours on a 2-core CPU.

  A small tower and few Gumbel simulations: Gumbel MuZero's policy
  improvement is sound with few simulations, which is what a CPU affords.
  The replay buffer is left out of checkpoints (hundreds of MB); a resumed
  run refills it from new self-play.
  """
  search = AlphaZeroSearchConfig(num_simulations=16, policy="gumbel",
                                 temperature_moves=10, gumbel_scale=1.0,
                                 max_num_considered_actions=16)
  return TrainConfig(
      model=ResNetConfig(num_blocks=3, channels=32, value_hidden=64),
      search=search, max_moves=162, num_games=64, random_opening_moves=8,
      buffer_capacity=64 * 162 * 4, batch_size=256, gradient_steps=32,
      optimizer="adam", learning_rate=2e-3, lr_boundaries=(20000,),
      lr_decay=0.3, weight_decay=1e-4, save_buffer=False)
