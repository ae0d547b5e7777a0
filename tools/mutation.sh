#!/usr/bin/env bash
# The mutation run of docs/results/mutation.md: cosmic-ray over the rules,
# the search's selection, the statistics and the match scoring, each module
# against its own small set of tests (tools/mutation/targets.toml).
#
#   bash tools/mutation.sh                  # every target (hours on 2 cores)
#   bash tools/mutation.sh --only stats elo # some targets
#   bash tools/mutation.sh --count          # how many mutants, no run
#   bash tools/mutation.sh --table          # the table of the saved results
#
# cosmic-ray lives in its own venv (MUTATION_VENV, default build/mutvenv),
# made on first use; the tests run under the project's .venv (--python to
# change). Results: docs/results/mutation/NAME.json. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${MUTATION_VENV:-build/mutvenv}
if [ ! -x "$VENV/bin/cosmic-ray" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "cosmic-ray==8.7.0"
fi
exec nice -n 10 "$VENV/bin/python" tools/mutation/run.py "$@"
