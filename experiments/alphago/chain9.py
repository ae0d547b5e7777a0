"""Runs AlphaGo's whole 2016 chain on 9×9: `alphago-jax train chain-9x9`.

    python experiments/alphago/chain9.py --output runs/chain9
    python experiments/alphago/chain9.py --output runs/chain9 --games-dir data/gnugo9
    python experiments/alphago/chain9.py --quick --output /tmp/chain  # smoke

The command lives in `alphago_jax.cli.stages.chain9` (--help lists its
options and stages); this script is kept so that its command lines still
work.
"""

import sys

from alphago_jax.cli import stages
from alphago_jax.cli.stages.chain9 import STAGES  # pylint: disable=unused-import


def main(argv=None):
  return stages.main("chain-9x9", argv, prog="chain9.py")


if __name__ == "__main__":
  sys.exit(main())
