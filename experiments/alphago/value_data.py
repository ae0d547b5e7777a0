"""Generates the value network's self-play positions: `alphago-jax train
value-data` (`alphago_jax.cli.stages.value_data`, whose --help lists the
options), under the script's own command lines:

    python experiments/alphago/value_data.py --sl-checkpoint runs/sl9 \
        --games 100000 --output data/value9 [--rl-checkpoint runs/rl9]
    python experiments/alphago/value_data.py --quick --output /tmp/v  # smoke
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("value-data", argv, prog="value_data.py")


if __name__ == "__main__":
  sys.exit(main())
