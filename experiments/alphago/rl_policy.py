"""Trains AlphaGo's RL policy network p_ρ: `alphago-jax train rl-policy`.

    python experiments/alphago/rl_policy.py --output runs/rl19 [--hours 2]
    python experiments/alphago/rl_policy.py --output runs/rl19 --resume
    python experiments/alphago/rl_policy.py --quick --output /tmp/rl-quick

The command lives in `alphago_jax.cli.stages.rl_policy` (--help lists its
options); this script is kept so that its command lines still work.
"""

import sys

from alphago_jax.cli import stages


def main(argv=None):
  return stages.main("rl-policy", argv, prog="rl_policy.py")


if __name__ == "__main__":
  sys.exit(main())
