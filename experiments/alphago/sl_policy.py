"""Trains AlphaGo's supervised policy network p_σ: `alphago-jax train
sl-policy` (`alphago_jax.cli.stages.sl_policy`, whose --help lists the
options), under the script's own command lines:

    python experiments/alphago/sl_policy.py --data ../shared/data/kgs-6d \
        --output runs/sl19 [--cache /tmp/caches] [--hours 2] [--resume]
    python experiments/alphago/sl_policy.py --preset paper ...  # 13x192
    python experiments/alphago/sl_policy.py --quick --data D --output O
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("sl-policy", argv, prog="sl_policy.py")


if __name__ == "__main__":
  sys.exit(main())
