"""Distils p_σ and v_θ into the AlphaZero loop's ResNet: `alphago-jax
train distill` (`alphago_jax.cli.stages.distill`, whose --help lists the
options), under the script's own command lines:

    python experiments/alphago/distill.py --policy checkpoints/sl9 \
        --value checkpoints/value9s2 --output runs/distill9 [--hours 1]
    python experiments/alphago/distill.py --quick --policy P --value V \
        --output O
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("distill", argv, prog="distill.py")


if __name__ == "__main__":
  sys.exit(main())
