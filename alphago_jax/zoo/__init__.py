"""The committed networks and the players made from them.

`load_player(name)` builds a named preset (a network and how it searches)
as a GTP-ready player; `available_presets()` lists those whose network is
on disk. `players` holds the player classes (`SearchPlayer`,
`AlphaGoPlayer`, `PolicyPlayer`); `alphago_networks` loads AlphaGo's
p_σ / v_θ pair for its search. Importing this package registers the
committed rollout policies p_π with the Go playout (`rollout_policies`).
"""

from alphago_jax.zoo import rollout_policies
from alphago_jax.zoo.checkpoints import checkpoints_root
from alphago_jax.zoo.players import (AlphaGoPlayer, Candidate, Decision,
                                     PolicyPlayer, SearchPlayer)
from alphago_jax.zoo.presets import (Preset, available_presets, load_player,
                                     register_preset)

rollout_policies.register_committed()

__all__ = ["AlphaGoPlayer", "Candidate", "Decision", "PolicyPlayer",
           "Preset", "SearchPlayer", "available_presets", "checkpoints_root",
           "load_player", "register_preset"]
