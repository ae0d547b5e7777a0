"""The c_puct ablation of AlphaGo's search on 9×9: c_puct ∈ {0.5, 1, 2, 5,
10} on raw Q in [-1, 1] at a fixed λ (give the λ ablation's best with
`--mixing`), in a round robin and against GNU Go levels 1 and 10
(`alphago-jax sweep c-puct`, which this runs; any option of it may follow).

    python experiments/alphago/ablate_cpuct.py --mixing 0.5 --output runs/c-puct

Results and the full command: docs/ablations.md.
"""

import sys

from alphago_jax.cli.main import main

if __name__ == "__main__":
  sys.exit(main(["sweep", "c-puct", *sys.argv[1:]]))
