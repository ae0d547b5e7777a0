"""The `alphago-jax` command line: train, selfplay, arena, gtp, show and
reproduce, over the library's typed configs (tyro), with run directories
that repeat a run from their `config.json` alone."""

from alphago_jax.cli.main import main
from alphago_jax.core.config_codec import RunConfigError
from alphago_jax.core.rundir import read_config, write_config

__all__ = ["RunConfigError", "main", "read_config", "write_config"]
