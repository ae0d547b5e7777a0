"""`python -m alphago_jax.gtp [options]`: our player as a GTP engine."""

import sys

from alphago_jax.gtp.engine import main

if __name__ == "__main__":
  sys.exit(main())
