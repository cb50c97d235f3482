#!/usr/bin/env bash
# The main job: build Jacobian with its bundled portfolio from source and walk
# discover → invoke → verify, printing what an agent would receive.
# Pass `serve` to run the MCP server over stdio instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --release --locked --bin jacobian
if [ "${1:-demo}" = "serve" ]; then
  exec ./target/release/jacobian serve
fi
exec ./target/release/jacobian demo
