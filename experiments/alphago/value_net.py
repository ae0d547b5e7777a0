"""Trains AlphaGo's value network v_θ: `alphago-jax train value-net`
(`alphago_jax.cli.stages.value_net`, whose --help lists the options), under
the script's own command lines:

    python experiments/alphago/value_net.py --data data/value9 \
        --output runs/value9 [--hours 2] [--resume]
    python experiments/alphago/value_net.py --quick --data D --output O
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("value-net", argv, prog="value_net.py")


if __name__ == "__main__":
  sys.exit(main())
