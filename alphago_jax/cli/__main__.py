"""`python -m alphago_jax.cli` is the `alphago-jax` command."""

import sys

from alphago_jax.cli.main import main

sys.exit(main())
