#!/usr/bin/env bash
# The checkers' soundness harnesses (the `soundness` test modules of the
# `*-core` checker crates), run longer than the test suite runs them:
# SOUNDNESS_SECONDS per leg (default 3600), or SOUNDNESS_INSTANCES instances,
# with a fresh seed unless SOUNDNESS_SEED names one. A false claim accepted
# or an unexplained disagreement with a reference fails the run and names
# the seed and instance that reproduce it. The counts go to
# target/soundness-long.txt. Outside references are found as in the test
# suite (docs/trust.md): on PATH, or named by JACOBIAN_LRAT_CHECK,
# JACOBIAN_DRAT_TRIM, JACOBIAN_RATE.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
export JACOBIAN_SOUNDNESS_SECONDS="${SOUNDNESS_SECONDS:-3600}"
if [ -n "${SOUNDNESS_INSTANCES:-}" ]; then
  export JACOBIAN_SOUNDNESS_INSTANCES="$SOUNDNESS_INSTANCES"
fi
export JACOBIAN_SOUNDNESS_SEED="${SOUNDNESS_SEED:-$(date +%s)}"
export JACOBIAN_SOUNDNESS_REPORT="$(pwd)/target/soundness-long.txt"
mkdir -p target && : >"$JACOBIAN_SOUNDNESS_REPORT"
echo "seed $JACOBIAN_SOUNDNESS_SEED" | tee -a "$JACOBIAN_SOUNDNESS_REPORT"
for crate in jacobian-lrat-core jacobian-groebner-checker-core jacobian-graph-induced-tree-checker-core \
  jacobian-graph-enumeration-checker-core jacobian-universal-algebra-checker-core; do
  cargo test --release --locked -p "$crate" --lib soundness -- --test-threads 2
done
cat "$JACOBIAN_SOUNDNESS_REPORT"
