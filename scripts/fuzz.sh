#!/usr/bin/env bash
# cargo-fuzz targets (fuzz/fuzz_targets/), each run for FUZZ_SECONDS (default
# 20). libFuzzer first replays every committed input (fuzz/seeds/<target>,
# fuzz/regressions/<target>), then mutates; a crash fails the run and leaves
# the input in fuzz/artifacts/<target>/. Fix the defect, then move that file
# into fuzz/regressions/<target>/ so it is replayed forever (the stable test
# suite replays the host targets' inputs too).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-20}"
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version 0.13.2
fi
# Safe Rust throughout, so no sanitizer; without one, cargo-fuzz's coverage
# instrumentation needs only stable flags, so the project's one toolchain builds it.
# Coverage-guided, with debug assertions (overflow checks) on.
flags=(--fuzz-dir fuzz --sanitizer none --debug-assertions)
cargo fuzz build "${flags[@]}"
for target in invoke_request descriptor workspace_write dimacs_lrat polynomial; do
  corpus="target/fuzz-corpus/$target"
  mkdir -p "$corpus"
  echo "fuzzing $target for ${seconds}s"
  log="target/fuzz-corpus/$target.log"
  if ! cargo fuzz run "${flags[@]}" "$target" "$corpus" "fuzz/seeds/$target" "fuzz/regressions/$target" \
    -- -max_total_time="$seconds" -max_len=65536 -timeout=10 >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz target $target failed; the input is in fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E '^Done' "$log"
done
