"""The λ ablation of AlphaGo's search on 9×9: λ ∈ {0, 0.25, 0.5, 0.75, 1}
in a round robin and against GNU Go levels 1 and 10, with an Elo table
anchored on GNU Go level 1 (`alphago-jax sweep lambda`, which this runs;
any option of it may follow).

    python experiments/alphago/ablate_lambda.py --output runs/lambda
    python experiments/alphago/ablate_lambda.py --quick --output runs/lq

Results and the full command: docs/ablations.md.
"""

import sys

from alphago_jax.cli.main import main

if __name__ == "__main__":
  sys.exit(main(["sweep", "lambda", *sys.argv[1:]]))
