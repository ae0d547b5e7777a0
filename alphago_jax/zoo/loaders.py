"""Loading committed networks from their run directories."""

from __future__ import annotations

import json
import os

from alphago_jax.games.go import Go
from alphago_jax.models.resnet import (ResNetConfig, make_evaluate_fn,
                                       make_network)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import reinforce, snapshots, supervised
from alphago_jax.training.checkpoint import CheckpointMismatchError


def load_alphazero_network(directory: str):
  """`(game, evaluate, variables, iteration)` of an AlphaZero run directory
  (its `config.json` and the latest of `snapshots/`)."""
  config_path = os.path.join(directory, "config.json")
  if not os.path.isfile(config_path):
    raise FileNotFoundError(f"gtp: {directory} is not an AlphaZero run "
                            f"directory (no config.json)")
  with open(config_path) as f:
    architecture = json.load(f)
  shape = architecture.get("observation_shape")
  if architecture.get("game") != "go" or not isinstance(
      shape, list) or len(shape) != 3 or shape[0] != shape[1]:
    raise CheckpointMismatchError(
        f"gtp: {config_path} is not a Go network (game "
        f"{architecture.get('game')!r}, observations {shape})")
  try:
    model = ResNetConfig(**architecture["model"])
  except (KeyError, TypeError, ValueError) as e:
    raise CheckpointMismatchError(f"gtp: {config_path}: not an AlphaZero "
                                  f"ResNet ({e})") from None
  game = Go(size=shape[0], history_length=(shape[2] - 1) // 2)
  found = snapshots.list_snapshots(os.path.join(directory, "snapshots"))
  if not found:
    raise FileNotFoundError(f"gtp: no network snapshot in "
                            f"{os.path.join(directory, 'snapshots')}")
  iteration, path = found[-1]
  variables, _ = snapshots.load(path, architecture=architecture)
  evaluate = make_evaluate_fn(make_network(game, model))
  return game, evaluate, variables, iteration


def load_policy_network(directory: str):
  """`(PolicyNetConfig, variables, step)` of a p_σ (`training.supervised`)
  or p_ρ (`training.reinforce`) run directory or its `checkpoints/`.

  Raises:
    FileNotFoundError: no checkpoint there.
    CheckpointMismatchError: a checkpoint of neither kind.
  """
  ckpt_dir = ckpt.steps_directory(directory)
  try:
    return supervised.load_policy(ckpt_dir)
  except ckpt.CheckpointMismatchError as sl_error:
    try:
      return reinforce.load_rl_policy(ckpt_dir)
    except ckpt.CheckpointMismatchError as rl_error:
      raise ckpt.CheckpointMismatchError(
          f"gtp: {directory} holds neither a supervised nor an RL policy "
          f"network ({sl_error}; {rl_error})") from None
