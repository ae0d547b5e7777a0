"""Trains AlphaGo's fast rollout policy p_π: `alphago-jax train
rollout-policy` (`alphago_jax.cli.stages.rollout_policy`, whose --help
lists the options), under the script's own command lines:

    python experiments/alphago/rollout_policy.py --data ../shared/data/kgs-6d \
        --output runs/rollout [--cache DIR] [--total-samples N] [--resume]
    python experiments/alphago/rollout_policy.py --quick --data D --output O
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("rollout-policy", argv, prog="rollout_policy.py")


if __name__ == "__main__":
  sys.exit(main())
