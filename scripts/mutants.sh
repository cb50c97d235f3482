#!/usr/bin/env bash
# Mutation testing of the checker cores with cargo-mutants: every mutant of a
# `*-core` checker crate must be killed by its tests (a timeout counts: the
# mutant hangs), or listed, with why it changes no verdict, in that crate's
# `equivalent-mutants.txt` (lines `src/FILE.rs: DESCRIPTION — why`, as
# cargo-mutants describes the mutant, without its line and column). Fails on
# a survivor the list does not explain, and on a listed one that no longer
# survives (the list must stay true).
#   usage: scripts/mutants.sh [CRATE_DIR ...]   (default: every checker core)
# The SAT harness's differential leg (an outside program started per instance)
# is skipped; every other leg runs, the outside references included.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
if ! cargo mutants --version >/dev/null 2>&1; then
  cargo install cargo-mutants --locked --version 27.1.0
fi
crates=("$@")
if [ ${#crates[@]} -eq 0 ]; then
  crates=(checkers/lrat-core checkers/lrat-plain-core checkers/groebner-core checkers/graph-induced-tree-core checkers/graph-enumeration-core
    checkers/universal-algebra-core)
fi
# cargo-mutants builds in a copy of the tree; made beside this one, the copy's tests read the
# outside truth in ../shared as the tree's own do.
TMPDIR="$(cd .. && pwd)"
export TMPDIR
# Each mutant's test run would append its harness counts to the test command's report.
unset JACOBIAN_SOUNDNESS_REPORT
status=0
for dir in "${crates[@]}"; do
  package=$(sed -n 's/^name = "\(.*\)"/\1/p' "$dir/Cargo.toml" | head -n 1)
  out="target/mutants/$(basename "$dir")"
  rm -rf "$out" && mkdir -p "$out"
  echo "mutating $package"
  # Exit 2 means some survived: judged below, against the list.
  cargo mutants -p "$package" --profile release -j 2 --output "$out" -- -- --skip lrat_and_drat_agree >"$out/log.txt" 2>&1 || true
  if [ ! -f "$out/mutants.out/outcomes.json" ]; then
    tail -n 30 "$out/log.txt" >&2
    echo "cargo mutants did not run for $package" >&2
    status=1
    continue
  fi
  tail -n 1 "$out/log.txt"
  # Survivors as `src/FILE.rs: DESCRIPTION`, and the explained ones the same way.
  sed -E "s#^$dir/##; s#^([^:]+):[0-9]+:[0-9]+: #\1: #" "$out/mutants.out/missed.txt" | sort >"$out/survivors.txt"
  touch "$dir/equivalent-mutants.txt"
  { grep -v -e '^#' -e '^[[:space:]]*$' "$dir/equivalent-mutants.txt" || true; } | sed -E 's/ — .*$//' | sort >"$out/explained.txt"
  unexplained=$(comm -23 "$out/survivors.txt" "$out/explained.txt")
  stale=$(comm -13 "$out/survivors.txt" "$out/explained.txt")
  if [ -n "$unexplained" ]; then
    echo "$package: mutants no test kills and $dir/equivalent-mutants.txt does not explain:" >&2
    echo "$unexplained" >&2
    status=1
  fi
  if [ -n "$stale" ]; then
    echo "$package: listed in $dir/equivalent-mutants.txt but killed now (or gone): remove them:" >&2
    echo "$stale" >&2
    status=1
  fi
done
exit "$status"
