"""A new AlphaZero run's network taken from another run's checkpoint.

The compiled loop can start from a trained network instead of a random
one: a distillation of AlphaGo's networks (`training.distill`) or an
earlier AlphaZero run. Only the network is taken (`{"params",
"batch_stats"}`); the new run's optimiser state, replay buffer, key and
iteration counter start fresh. The source's checkpoint must describe the
same network on the same game: the fields the two stages' architectures
share (`NETWORK_FIELDS`), compared before anything is read.
"""

from __future__ import annotations

from typing import Any, Dict

import jax

from alphago_jax.games import base as game_base
from alphago_jax.models.resnet import init_variables, make_network
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training.config import TrainConfig

# What an AlphaZero run's and a distillation's checkpoints both record of
# their network (`TrainConfig.architecture`, `DistillConfig.architecture`).
NETWORK_FIELDS = ("game", "num_actions", "observation_shape", "model")


def network_from_run(directory: str, game: game_base.Game,
                     config: TrainConfig) -> Dict[str, Any]:
  """The variables of the latest checkpoint in `directory` (a run
  directory or its `checkpoints/`), for a run of `config` on `game`.

  Raises:
    FileNotFoundError: no checkpoint there.
    CheckpointMismatchError: its network or game differs from the run's;
      the message names each differing field and both values.
  """
  steps = ckpt.steps_directory(directory)
  if ckpt.latest_step(steps) is None:
    raise FileNotFoundError(f"{directory}: no checkpoint to start from")
  meta = ckpt.read_metadata(steps)
  want = config.architecture(game)
  diffs = [f"{k}: {directory} has {meta.get(k)!r}, this run has "
           f"{want.get(k)!r}" for k in NETWORK_FIELDS
           if meta.get(k) != want.get(k)]
  if diffs:
    raise ckpt.CheckpointMismatchError(
        f"{directory}: its network does not fit this run (" +
        "; ".join(diffs) + ")")
  template = init_variables(game, make_network(game, config.model),
                            jax.random.key(0))
  _, variables, _ = ckpt.restore_network(steps, template)
  return variables

