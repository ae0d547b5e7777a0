"""The lowest layer: what every other layer may import.

`types` (the contracts between games, networks, searches and agents),
`checks` (argument checks with errors that name the argument), `stats`
(intervals), `atomic_files` (files a crash cannot tear), `config_codec`
(the strict dataclass <-> JSON codec of every persisted config), `rundir`
(run directories), `cpu_devices` (one XLA CPU device per core) and
`ray_jobs` (idempotent jobs on a Ray cluster, written by the driver; Ray
is imported only when it runs). Nothing here imports another layer.
"""
