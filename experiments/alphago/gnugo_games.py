"""Generates 9x9 expert games, GNU Go playing itself: `alphago-jax train
gnugo-games` (`alphago_jax.cli.stages.gnugo_games`, whose --help lists the
options), under the script's own command lines:

    python experiments/alphago/gnugo_games.py --output data/gnugo9 \
        --games 10000 --levels 10 --opening-moves 4 --workers 1
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("gnugo-games", argv, prog="gnugo_games.py")


if __name__ == "__main__":
  sys.exit(main())
