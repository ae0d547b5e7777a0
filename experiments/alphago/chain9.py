"""Runs AlphaGo's whole 2016 chain on 9×9: `alphago-jax train chain-9x9`
(`alphago_jax.cli.stages.chain9`, whose --help lists the options and
stages), under the script's own command lines:

    python experiments/alphago/chain9.py --output runs/chain9
    python experiments/alphago/chain9.py --output runs/chain9 --games-dir data/gnugo9
    python experiments/alphago/chain9.py --quick --output /tmp/chain  # smoke
"""

import sys

from alphago_jax.cli import stages
from alphago_jax.cli.stages.chain9 import STAGES  # pylint: disable=unused-import


def main(argv=None):
  return stages.main("chain-9x9", argv, prog="chain9.py")


if __name__ == "__main__":
  sys.exit(main())
