"""Trains AlphaGo's RL policy network p_ρ: `alphago-jax train rl-policy`
(`alphago_jax.cli.stages.rl_policy`, whose --help lists the options), under
the script's own command lines:

    python experiments/alphago/rl_policy.py --output runs/rl19 [--hours 2]
    python experiments/alphago/rl_policy.py --output runs/rl19 --resume
    python experiments/alphago/rl_policy.py --quick --output /tmp/rl-quick
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("rl-policy", argv, prog="rl_policy.py")


if __name__ == "__main__":
  sys.exit(main())
