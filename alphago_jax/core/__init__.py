"""The lowest layer: what every other layer may import.

`types` (the contracts between games, networks, searches and agents),
`checks` (argument checks with errors that name the argument), `stats`
(intervals), `atomic_files` (files a crash cannot tear), `config_codec`
(the strict dataclass <-> JSON codec of every persisted config), `rundir`
(run directories) and `cpu_devices` (one XLA CPU device per core). Nothing here imports another layer.
"""
