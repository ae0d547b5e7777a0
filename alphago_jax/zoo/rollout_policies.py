"""The committed fast rollout policies p_π, by playout-policy name.

`"pattern"` was trained on 19x19 KGS games and `"pattern-9x9"` on 9x9 GNU
Go games; their features are local, so either plays on any board size.
Importing `alphago_jax.zoo` registers both with `games.go_playout`, so that
`GoPlayout(game, policy="pattern")` and the searches' `rollout_policy`
option find them; the weights are read on first use, not on import.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Dict

from alphago_jax.games import go_playout
from alphago_jax.models import rollout_policy
from alphago_jax.zoo.checkpoints import checkpoints_root

# Playout-policy name -> the checkpoint folder under `checkpoints_root()`.
COMMITTED: Dict[str, str] = {"pattern": "rollout_policy",
                             "pattern-9x9": "rollout9"}


def committed_dir(name: str) -> str:
  """The folder of the committed p_π called `name`."""
  if name not in COMMITTED:
    raise ValueError(f"unknown committed rollout policy {name!r}; known: "
                     f"{', '.join(sorted(COMMITTED))}")
  return os.path.join(checkpoints_root(), COMMITTED[name])


@functools.lru_cache(maxsize=None)
def committed_policy(name: str = "pattern"
                     ) -> rollout_policy.PatternRolloutPolicy:
  """A committed p_π at temperature 1, loaded once per process."""
  return rollout_policy.load_policy(committed_dir(name))


@dataclasses.dataclass(frozen=True)
class _Registered:
  """The committed p_π `name` as a playout policy, loaded on first use
  (incremental, so it carries its features: `GoPlayout.carries`)."""
  name: str
  carries_state = True

  def __call__(self, playout, state):
    return committed_policy(self.name)(playout, state)

  def init_carry(self, playout, board, extremes):
    return committed_policy(self.name).init_carry(playout, board, extremes)

  def update_carry(self, playout, carry, board, extremes):
    return committed_policy(self.name).update_carry(playout, carry, board,
                                                    extremes)


def register_committed() -> None:
  """Registers every committed p_π with `games.go_playout` by its name."""
  for name in COMMITTED:
    go_playout.register_policy(name, _Registered(name))
