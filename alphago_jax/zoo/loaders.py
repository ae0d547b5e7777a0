"""One loader for every committed network: `load(directory)`.

A network's folder says what it holds, so the caller never names the kind:

* an AlphaZero run (`config.json` naming a game and a ResNet, the latest
  of `snapshots/`): kind `"alphazero"`; so is a distillation run
  (`training.distill`: its latest checkpoint), whose network is the
  loop's ResNet;
* an orbax checkpoint whose metadata names its training stage: `"sl_policy"`
  (p_σ), `"rl_policy"` (p_ρ) or `"value_net"` (v_θ);
* a p_π weights folder (`config.json` of kind `pattern_rollout_policy`):
  kind `"rollout_policy"`.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Dict, Tuple

from alphago_jax.games.go import Go
from alphago_jax.models import rollout_policy
from alphago_jax.models.resnet import (ResNetConfig, make_evaluate_fn,
                                       make_network)
from alphago_jax.training import (checkpoint as ckpt, distill, reinforce,
                                  snapshots, supervised, value_net)
from alphago_jax.training.checkpoint import CheckpointMismatchError

KINDS = ("alphazero", "sl_policy", "rl_policy", "value_net",
         "rollout_policy")
POLICY_KINDS = ("sl_policy", "rl_policy")


@dataclasses.dataclass(frozen=True, eq=False)
class Network:
  """A loaded network and what it is.

  Attributes:
    kind: one of `KINDS`.
    directory: the folder it was read from.
    name: `<folder>@<step>`, the label players and logs show.
    step: its training step (AlphaZero: iteration), or None if unknown.
    board_size: the Go board it plays.
    model: its architecture: `ResNetConfig` (alphazero),
      `PolicyNetConfig` (sl/rl policy), `ValueNetConfig` (value_net),
      `go_patterns.PatternConfig` (rollout_policy).
    variables: its weights (a Flax variables tree; p_π: float32 `[F]`).
    game: the Go game its observations are made for (AlphaZero's history
      length; the board size and komi 7.5 otherwise).
    evaluate: AlphaZero only: the `core.types.EvaluateFn` of the ResNet.
    metadata: the folder's own record (checkpoint metadata or config).
  """
  kind: str
  directory: str
  name: str
  step: Any
  board_size: int
  model: Any
  variables: Any
  game: Go
  evaluate: Any = None
  metadata: Dict[str, Any] = dataclasses.field(default_factory=dict)


def label(directory: str) -> str:
  """The folder's name (a run directory's, for its `checkpoints/`)."""
  base = os.path.basename(os.path.normpath(directory))
  if base == "checkpoints":
    base = os.path.basename(os.path.dirname(os.path.normpath(directory)))
  return base


def _read_json(path: str) -> Dict[str, Any]:
  try:
    with open(path, encoding="utf-8") as f:
      record = json.load(f)
  except (OSError, ValueError) as e:
    raise CheckpointMismatchError(f"{path}: unreadable ({e})") from None
  if not isinstance(record, dict):
    raise CheckpointMismatchError(f"{path}: not a JSON object")
  return record


def kind_of(directory: str) -> str:
  """The kind of network in `directory` (one of `KINDS`).

  Raises:
    FileNotFoundError: no such folder, or nothing loadable in it.
    CheckpointMismatchError: a folder whose records name no known kind.
  """
  if not os.path.isdir(directory):
    raise FileNotFoundError(f"{directory}: no such folder")
  config_path = os.path.join(directory, "config.json")
  config = _read_json(config_path) if os.path.isfile(config_path) else {}
  if config.get("kind") == rollout_policy.KIND:
    return "rollout_policy"
  steps = ckpt.steps_directory(directory)
  if ckpt.latest_step(steps) is not None:
    stage = ckpt.read_metadata(steps).get("stage")
    if stage in ("sl_policy", "rl_policy", value_net.STAGE):
      return "value_net" if stage == value_net.STAGE else stage
    if stage == distill.STAGE:
      return "alphazero"
  if "game" in config and "model" in config:
    return "alphazero"
  if not config and ckpt.latest_step(steps) is None:
    raise FileNotFoundError(
        f"{directory}: no network here (no config.json, no checkpoint)")
  raise CheckpointMismatchError(
      f"{directory}: not a network this loader knows (kinds: "
      f"{', '.join(KINDS)})")


def load(directory: str, *, expect: Tuple[str, ...] = KINDS) -> Network:
  """The network in `directory`, of whichever kind it is.

  Args:
    directory: a run directory (or its `checkpoints/` folder) or a p_π
      weights folder.
    expect: the kinds the caller can use; another kind is refused.

  Raises:
    FileNotFoundError: nothing loadable there.
    CheckpointMismatchError: a kind not in `expect` (the message names the
      folder, its kind and the kinds expected), or damaged records.
  """
  directory = os.fspath(directory)
  kind = kind_of(directory)
  if kind not in expect:
    raise CheckpointMismatchError(
        f"{directory} holds a {kind} network; expected "
        f"{' or '.join(expect)}")
  return _LOADERS[kind](directory)


def _alphazero(directory: str) -> Network:
  steps = ckpt.steps_directory(directory)
  if ckpt.latest_step(steps) is not None and ckpt.read_metadata(
      steps).get("stage") == distill.STAGE:
    return _distilled(directory)
  config_path = os.path.join(directory, "config.json")
  architecture = _read_json(config_path)
  shape = architecture.get("observation_shape")
  if architecture.get("game") != "go" or not isinstance(
      shape, list) or len(shape) != 3 or shape[0] != shape[1]:
    raise CheckpointMismatchError(
        f"{config_path} is not a Go network (game "
        f"{architecture.get('game')!r}, observations {shape})")
  try:
    ResNetConfig(**architecture["model"])
  except (KeyError, TypeError, ValueError) as e:
    raise CheckpointMismatchError(
        f"{config_path}: not an AlphaZero ResNet ({e})") from None
  folder = os.path.join(directory, "snapshots")
  found = snapshots.list_snapshots(folder)
  if not found:
    raise FileNotFoundError(f"no network snapshot in {folder}")
  iteration, path = found[-1]
  variables, _ = snapshots.load(path, architecture=architecture)
  return _resnet(directory, architecture, variables, iteration)


def _resnet(directory: str, architecture: Dict[str, Any],
            variables: Dict[str, Any], step: int) -> Network:
  """The loop's two-headed ResNet of `architecture` (a run's recorded
  game, observation shape and model) with `variables`."""
  shape = architecture["observation_shape"]
  model = ResNetConfig(**architecture["model"])
  game = Go(size=shape[0], history_length=(shape[2] - 1) // 2)
  return Network(kind="alphazero", directory=directory,
                 name=f"{label(directory)}@{step}", step=step,
                 board_size=shape[0], model=model, variables=variables,
                 game=game,
                 evaluate=make_evaluate_fn(make_network(game, model)),
                 metadata=architecture)


def _distilled(directory: str) -> Network:
  architecture, variables, step = distill.load_student(directory)
  return _resnet(directory, architecture, variables, step)


def _orbax(read):
  def loader(directory: str) -> Network:
    steps = ckpt.steps_directory(directory)
    model, variables, step = read(steps)
    meta = ckpt.read_metadata(steps)
    return Network(kind=meta["stage"], directory=directory,
                   name=f"{label(directory)}@{step}", step=step,
                   board_size=model.board_size, model=model,
                   variables=variables, game=Go(size=model.board_size),
                   metadata=meta)
  return loader


def _rollout(directory: str) -> Network:
  weights, features, meta = rollout_policy.load_weights(directory)
  size = int(meta.get("train", {}).get("board_size", 19))
  step = meta.get("step")
  return Network(kind="rollout_policy", directory=directory,
                 name=f"{label(directory)}@{'?' if step is None else step}",
                 step=step, board_size=size, model=features,
                 variables=weights, game=Go(size=size), metadata=meta)


_LOADERS = {
    "alphazero": _alphazero,
    "sl_policy": _orbax(supervised.load_policy),
    "rl_policy": _orbax(reinforce.load_rl_policy),
    "value_net": _orbax(value_net.load_value),
    "rollout_policy": _rollout,
}
