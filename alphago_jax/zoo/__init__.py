"""The committed networks and the players made from them.

`load(directory)` loads any committed network, reading its kind from the
folder; `load_player(name)` builds a named preset (networks and how they
play, one record of `presets.toml`) as a GTP-ready player, and
`available_presets()` lists those whose networks are on disk. Importing
this package registers the committed rollout policies p_π with the Go
playout (`rollout_policies`).
"""

from alphago_jax.zoo import rollout_policies
from alphago_jax.zoo.checkpoints import checkpoints_root
from alphago_jax.zoo.loaders import Network, load
from alphago_jax.zoo.players import (AlphaGoPlayer, PolicyPlayer,
                                     SearchPlayer)
from alphago_jax.zoo.presets import (Preset, available_presets, load_player,
                                     register_preset)

rollout_policies.register_committed()

__all__ = ["AlphaGoPlayer", "Network", "PolicyPlayer", "Preset",
           "SearchPlayer", "available_presets", "checkpoints_root", "load",
           "load_player", "register_preset"]
