#!/usr/bin/env bash
# Write the compatibility corpus's archives of one release with that release's
# own `jacobian` binary and its CLI only (tests/compat/README.md says how to
# build an earlier commit in a scratch directory). The archives are kept as
# written: tests replay and verify them on every later binary.
#   usage: make.sh JACOBIAN_BINARY OUT_DIR
# Two experiments, two packs:
#   portfolio.json  every bundled capability and checker, certificate.verify for
#                   each certificate, components' own refusals, an uploaded proof
#   budgets.json    a call out of fuel, one out of memory, one past the
#                   experiment's invocation cap (never run), under a policy
#                   with small budgets
set -euo pipefail
bin=$1
out=$2
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$work/data
inv() { # inv EXPERIMENT ID MODE JSON -> the result JSON on stdout (failures too)
  printf '%s' "$4" > "$work/input.json"
  "$bin" --data-dir "$data" invoke "$2" --mode "$3" --input "$work/input.json" --experiment "$1" || true
}
art() { jq -er --arg role "$1" '.artifacts[] | select(.role == $role) | .uri'; }
cert() { jq -er '.check_with.certificate_artifact'; }
route() { inv "$1" certificate.verify VERIFY "{\"certificate\":\"$2\"}" | jq -e '.verification.status == "VERIFIED"' >/dev/null; }

e=compat-portfolio
# Finite models: a countermodel and an enumeration, each with its checker and the router.
c=$(inv $e universal_algebra.search.countermodel EXPLORE \
  '{"hypotheses":["commutative"],"target":"associative","max_order":3}' | cert)
inv $e universal_algebra.countermodel.verify VERIFY "{\"countermodel\":\"$c\"}" >/dev/null
route $e "$c"
m=$(inv $e universal_algebra.enumerate.models EXPLORE \
  '{"hypotheses":["associative","commutative"],"order":3,"up_to":"isomorphism"}' | cert)
inv $e universal_algebra.models.verify VERIFY "{\"models\":\"$m\"}" >/dev/null
route $e "$m"
# SAT: UNSAT with an LRAT proof (both SAT checkers), SAT with a model, an outside DRAT proof uploaded.
php='p cnf 6 9\n1 2 0\n3 4 0\n5 6 0\n-1 -3 0\n-1 -5 0\n-3 -5 0\n-2 -4 0\n-2 -6 0\n-4 -6 0\n'
cnf=$(inv $e sat.cnf.construct EXPLORE "{\"dimacs\":\"$php\"}" | art cnf)
proof=$(inv $e sat.solve EXPLORE "{\"cnf\":\"$cnf\"}" | cert)
inv $e sat.certificate.verify VERIFY "{\"cnf\":\"$cnf\",\"certificate\":\"$proof\"}" >/dev/null
inv $e sat.certificate.plain.verify VERIFY "{\"cnf\":\"$cnf\",\"certificate\":\"$proof\"}" >/dev/null
route $e "$proof"
sat=$(inv $e sat.cnf.construct EXPLORE '{"dimacs":"p cnf 2 2\n1 2 0\n-1 0\n"}' | art cnf)
route $e "$(inv $e sat.solve EXPLORE "{\"cnf\":\"$sat\"}" | cert)"
printf -- '-1 0\n0\n' > "$work/php.drat"
upload=$("$bin" --data-dir "$data" artifact put "$work/php.drat" --schema jacobian:sat/drat-file@1 | grep -o 'artifact://sha256/[0-9a-f]*' | head -1)
route $e "$(inv $e sat.certificate.construct EXPLORE "{\"cnf\":\"$cnf\",\"proof\":\"$upload\"}" | cert)"
route $e "$(inv $e sat.certificate.construct EXPLORE "{\"cnf\":\"$cnf\",\"drat\":\"-1 0\\n0\\n\"}" | cert)"
# Graphs: an explicit graph and its largest induced tree; an enumeration.
petersen='{"vertices":10,"edges":[[0,1],[1,2],[2,3],[3,4],[4,0],[0,5],[1,6],[2,7],[3,8],[4,9],[5,7],[7,9],[9,6],[6,8],[8,5]]}'
g=$(inv $e graph.construct.explicit EXPLORE "$petersen" | art graph)
t=$(inv $e graph.induced_tree.maximum EXPLORE "{\"graph\":\"$g\"}" | cert)
inv $e graph.induced_tree.maximum.verify VERIFY "{\"graph\":\"$g\",\"certificate\":\"$t\"}" >/dev/null
route $e "$t"
n=$(inv $e graph.enumerate.nonisomorphic EXPLORE '{"family":"connected","order":5}' | cert)
inv $e graph.enumerate.nonisomorphic.verify VERIFY "{\"enumeration\":\"$n\"}" >/dev/null
route $e "$n"
# Groebner bases, with the checker and the router.
b=$(inv $e polynomial.compute.groebner_basis EXPLORE \
  '{"generators":["x^2 + y^2 - 1","x - y"],"vars":["x","y"],"order":"grevlex"}' | cert)
inv $e polynomial.groebner_basis.verify VERIFY "{\"certificate\":\"$b\"}" >/dev/null
route $e "$b"
# Claims and retrieval (no checker: COMPUTED).
p=$(inv $e claim.proposition.construct EXPLORE '{"formula":"p ∧ (q → r)"}' | art proposition)
part=$(inv $e claim.conjunction.split EXPLORE "{\"claim\":\"$p\"}" | art part-1)
inv $e claim.implication.obligations EXPLORE "{\"claim\":\"$part\"}" >/dev/null
inv $e knowledge.search EXPLORE '{"query":"LRAT proof format hints","limit":3}' >/dev/null
inv $e knowledge.catalog EXPLORE '{}' >/dev/null
# Refused by the components themselves (episodes); and by the host's schema
# validation (no episode: nothing to archive).
inv $e polynomial.compute.groebner_basis EXPLORE '{"generators":["x^"],"vars":["x"],"order":"lex"}' >/dev/null
inv $e claim.proposition.construct EXPLORE '{"formula":"p ->"}' >/dev/null
inv $e claim.proposition.construct EXPLORE '{"formul":"p -> q"}' >/dev/null
"$bin" --data-dir "$data" archive $e --out "$out/portfolio.json"

# Budgets: a second data directory whose policy has small budgets.
data=$work/budgets
cat > "$work/policy.toml" <<'POLICY'
[budgets]
fuel = 300000000
memory_bytes = 3145728
output_bytes = 4194304

[experiments.max_invocations]
"sat.solve" = 2
POLICY
"$bin" --data-dir "$data" components >/dev/null # installed (examples run) under the defaults
"$bin" --data-dir "$data" policy set "$work/policy.toml" >/dev/null
e=compat-budgets
php8=$(python3 -c "
n=8; v=lambda p,h: p*(n-1)+h+1
c=[[v(p,h) for h in range(n-1)] for p in range(n)]
c+=[[-v(p,h),-v(q,h)] for h in range(n-1) for p in range(n) for q in range(p+1,n)]
print('p cnf %d %d\\\\n' % (n*(n-1), len(c)) + ''.join(' '.join(map(str,x))+' 0\\\\n' for x in c))")
big=$(inv $e sat.cnf.construct EXPLORE "{\"dimacs\":\"$php8\"}" | art cnf)
inv $e sat.solve EXPLORE "{\"cnf\":\"$big\"}" | jq -e '.diagnostic.code == "FUEL_EXHAUSTED"' >/dev/null
python3 -c "
import json
clauses = ''.join('%d %d %d 0\\n' % (i % 500 + 1, -(i % 499 + 1), i % 498 + 1) for i in range(8000))
print(json.dumps({'dimacs': 'p cnf 500 8000\\n' + clauses}))" > "$work/wide.json"
inv $e sat.cnf.construct EXPLORE "$(cat "$work/wide.json")" | jq -e '.diagnostic.code == "MEMORY_LIMIT"' >/dev/null
inv $e sat.solve EXPLORE "{\"cnf\":\"$big\"}" >/dev/null
inv $e sat.solve EXPLORE "{\"cnf\":\"$big\"}" | jq -e '.diagnostic.code' >/dev/null
"$bin" --data-dir "$data" archive $e --out "$out/budgets.json"
