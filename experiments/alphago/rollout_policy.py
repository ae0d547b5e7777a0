"""Trains AlphaGo's fast rollout policy p_π: `alphago-jax train
rollout-policy`.

    python experiments/alphago/rollout_policy.py --data ../shared/data/kgs-6d \
        --output runs/rollout [--cache DIR] [--total-samples N] [--resume]
    python experiments/alphago/rollout_policy.py --quick --data D --output O

The command lives in `alphago_jax.cli.stages.rollout_policy` (--help lists
its options); this script is kept so that its command lines still work.
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("rollout-policy", argv, prog="rollout_policy.py")


if __name__ == "__main__":
  sys.exit(main())
