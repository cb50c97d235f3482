//! The soundness harness of the countermodel (witness) checker.
//!
//! Tables are small (orders 1 to 5, now and then up to 8), so whether a
//! table satisfies a law is known by evaluating it on every assignment
//! here, with a term evaluator of the harness's own (named laws by the
//! shared definitions of `tests/law-definitions`, equations by recursive
//! descent over the term). The claim — "this magma satisfies every
//! hypothesis and violates the target" — is true exactly then. Classes:
//! - `valid`: a countermodel found by random search, its witness a failing
//!   assignment;
//! - `witness`: the same with a witness where the target holds, or one that
//!   names a value outside the table, or leaves a variable out;
//! - `hypothesis`: a random table (a hypothesis may fail anywhere);
//! - `target`: a table on which the target holds everywhere;
//! - `malformed`: a table of the wrong shape or with an entry out of range;
//! - `overflow`: an order whose number of assignments is past the machine
//!   word (the published hole: such a hypothesis counted as holding).
//!
//! The differential leg asks z3 (one process for the run, a ground
//! encoding: a datatype of n constants and a function fixed by the table)
//! whether each hypothesis holds and the target fails on each table.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use jacobian_soundness::{Budget, Rng, Tally, Verdict, scratch};
use serde_json::{Value, json};

use crate::judge;

const NAMED: [&str; 8] = [
    "associative",
    "commutative",
    "idempotent",
    "left_alternative",
    "right_alternative",
    "flexible",
    "has_identity",
    "quasigroup",
];
const VARIABLES: [&str; 4] = ["x", "y", "z", "w"];

/// A term over the variables.
#[derive(Debug, Clone)]
enum Term {
    Var(usize),
    Op(Box<Term>, Box<Term>),
}

impl Term {
    fn eval(&self, values: &[usize], table: &[Vec<u64>]) -> usize {
        match self {
            Term::Var(i) => values[*i],
            Term::Op(a, b) => table[a.eval(values, table)][b.eval(values, table)] as usize,
        }
    }

    fn text(&self, out: &mut String) {
        match self {
            Term::Var(i) => out.push_str(VARIABLES[*i]),
            Term::Op(a, b) => {
                out.push('(');
                a.text(out);
                out.push('*');
                b.text(out);
                out.push(')');
            }
        }
    }

    fn smt(&self, out: &mut String) {
        match self {
            Term::Var(i) => out.push_str(VARIABLES[*i]),
            Term::Op(a, b) => {
                out.push_str("(op ");
                a.smt(out);
                out.push(' ');
                b.smt(out);
                out.push(')');
            }
        }
    }

    fn variables(&self, into: &mut Vec<usize>) {
        match self {
            Term::Var(i) => {
                if !into.contains(i) {
                    into.push(*i);
                }
            }
            Term::Op(a, b) => {
                a.variables(into);
                b.variables(into);
            }
        }
    }
}

/// A law: a named one, or an equation.
#[derive(Debug, Clone)]
enum Law {
    Named(&'static str),
    Equation(Term, Term),
}

impl Law {
    fn text(&self) -> String {
        match self {
            Law::Named(name) => (*name).to_owned(),
            Law::Equation(l, r) => {
                let mut out = String::new();
                l.text(&mut out);
                out.push_str(" = ");
                r.text(&mut out);
                out
            }
        }
    }

    fn variables(&self) -> Vec<usize> {
        let mut out = Vec::new();
        if let Law::Equation(l, r) = self {
            l.variables(&mut out);
            r.variables(&mut out);
        }
        out
    }

    /// A failing assignment (by variable index), if the law fails on `table`.
    fn failure(&self, table: &[Vec<u64>]) -> Option<Vec<usize>> {
        let n = table.len();
        match self {
            Law::Named(name) => {
                let op = |a: usize, b: usize| table[a][b] as usize;
                (!jacobian_test_law_definitions::holds(name, n, &op)).then(Vec::new)
            }
            Law::Equation(l, r) => {
                let k = VARIABLES.len();
                let total = n.pow(k as u32);
                (0..total).find_map(|mut code| {
                    let values: Vec<usize> = (0..k)
                        .map(|_| {
                            let v = code % n;
                            code /= n;
                            v
                        })
                        .collect();
                    (l.eval(&values, table) != r.eval(&values, table)).then_some(values)
                })
            }
        }
    }
}

fn term(rng: &mut Rng, depth: u32) -> Term {
    if depth == 0 || rng.chance(1, 3) {
        Term::Var(rng.below(3) as usize)
    } else {
        Term::Op(Box::new(term(rng, depth - 1)), Box::new(term(rng, depth - 1)))
    }
}

fn law(rng: &mut Rng) -> Law {
    if rng.chance(1, 2) {
        Law::Named(NAMED[rng.below(NAMED.len() as u64) as usize])
    } else {
        Law::Equation(term(rng, 3), term(rng, 3))
    }
}

fn table(rng: &mut Rng, n: usize) -> Vec<Vec<u64>> {
    (0..n).map(|_| (0..n).map(|_| rng.below(n as u64)).collect()).collect()
}

struct Case {
    class: &'static str,
    order: usize,
    table: Vec<Vec<u64>>,
    hypotheses: Vec<Law>,
    target: Law,
    witness: Value,
    truth: bool,
}

fn witness_of(target: &Law, values: &[usize]) -> Value {
    let assignment: serde_json::Map<String, Value> =
        target.variables().iter().map(|&i| (VARIABLES[i].to_owned(), json!(values[i]))).collect();
    json!({"kind": "equation", "assignment": assignment})
}

fn truth(table: &[Vec<u64>], hypotheses: &[Law], target: &Law) -> bool {
    hypotheses.iter().all(|h| h.failure(table).is_none()) && target.failure(table).is_some()
}

fn case(rng: &mut Rng) -> Case {
    let order = if rng.chance(1, 10) { rng.range(6, 8) as usize } else { rng.range(1, 5) as usize };
    let hypotheses: Vec<Law> = (0..rng.below(3)).map(|_| law(rng)).collect();
    let target = law(rng);
    let class = *rng.pick(&["valid", "valid", "witness", "hypothesis", "target", "malformed"]);
    // Search a little for a countermodel; keep the last table tried otherwise.
    let mut t = table(rng, order);
    let tries = if matches!(class, "valid" | "witness") { 200 } else { 1 };
    for _ in 0..tries {
        if truth(&t, &hypotheses, &target) {
            break;
        }
        t = table(rng, order);
    }
    let failure = target.failure(&t);
    let mut witness = witness_of(&target, failure.as_deref().unwrap_or(&[0; 4]));
    match class {
        "witness" => match rng.below(3) {
            0 => witness = witness_of(&target, &[0; 4]),
            1 => {
                if let Some(first) = target.variables().first() {
                    witness["assignment"][VARIABLES[*first]] = json!(order + rng.below(3) as usize);
                }
            }
            _ => {
                if let Some(first) = target.variables().first() {
                    witness["assignment"].as_object_mut().unwrap().remove(VARIABLES[*first]);
                }
            }
        },
        "target" => {
            // A table on which the target holds: search for one.
            for _ in 0..200 {
                if target.failure(&t).is_none() {
                    break;
                }
                t = table(rng, order);
            }
        }
        "malformed" => match rng.below(3) {
            0 => t[rng.below(order as u64) as usize].push(0),
            1 => {
                t.pop();
            }
            _ => {
                let (a, b) = (rng.below(order as u64) as usize, rng.below(order as u64) as usize);
                t[a][b] = order as u64 + rng.below(2);
            }
        },
        _ => {}
    }
    let well_formed = t.len() == order && t.iter().all(|r| r.len() == order && r.iter().all(|&v| (v as usize) < order));
    let truth = well_formed && truth(&t, &hypotheses, &target);
    Case { class, order, table: t, hypotheses, target, witness, truth }
}

fn verdict(case: &Case) -> Verdict {
    let hypotheses: Vec<String> = case.hypotheses.iter().map(Law::text).collect();
    Verdict::of(judge(case.order, &case.table, &hypotheses, &case.target.text(), &case.witness).is_ok())
}

fn describe(seed: u64, index: u64, case: &Case) -> String {
    let hypotheses: Vec<String> = case.hypotheses.iter().map(Law::text).collect();
    format!(
        "seed {seed:#x} instance {index}: order {} table {:?} hypotheses {hypotheses:?} target {} witness {}",
        case.order,
        case.table,
        case.target.text(),
        case.witness
    )
}

#[test]
fn countermodel_brute_force_no_false_countermodel_is_accepted() {
    let budget = Budget::from_env(10_000, 1);
    let mut tally = Tally::new("countermodel", "brute force");
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed, index);
        let case = case(&mut rng);
        tally.judge(case.class, case.truth, verdict(&case), || describe(budget.seed, index, &case));
    }
    // Past the machine word: 1626^6 assignments. x = 1 already fails, and must be found.
    let n = 1626;
    let constant = vec![vec![0u64; n]; n];
    let overflow = judge(n, &constant, &["x*y*z*u*v*w = x".into()], "x*x = x", &json!({"assignment": {"x": 1}}));
    tally.judge("overflow", false, Verdict::of(overflow.is_ok()), || "order 1626, x*y*z*u*v*w = x".into());
    tally.report();
    tally.assert_both_sides(budget.instances.min(10_000) / 20, budget.instances.min(10_000) / 10);
}

/// z3's judgement of the same tables (a ground encoding, one process for the run).
#[test]
fn countermodel_agrees_with_z3() {
    let z3 = jacobian_soundness::Reference::find("z3", "JACOBIAN_Z3", "z3");
    let Some(z3) = z3 else { return };
    let budget = Budget::from_env(1_000, 10);
    let cases: Vec<(u64, Case)> = budget
        .indices()
        .map(|index| (index, case(&mut Rng::for_instance(budget.seed ^ 0x23, index))))
        .filter(|(_, c)| {
            c.table.len() == c.order
                && c.table.iter().all(|r| r.len() == c.order && r.iter().all(|&v| (v as usize) < c.order))
        })
        .collect();
    let mut script = String::new();
    for order in 1..=8 {
        let constants: Vec<String> = (0..order).map(|i| format!("(e{order}_{i})")).collect();
        let _ = writeln!(script, "(declare-datatypes () ((E{order} {})))", constants.join(" "));
    }
    for (_, case) in &cases {
        for law in case.hypotheses.iter().chain([&case.target]) {
            let _ = writeln!(script, "(push)");
            encode(&mut script, case.order, &case.table, law);
            let _ = writeln!(script, "(check-sat)\n(pop)");
        }
    }
    let dir = scratch("countermodel");
    let file = dir.join("laws.smt2");
    std::fs::write(&file, script).unwrap();
    let run = z3.run(&[&PathBuf::from("-smt2"), &file], Duration::from_secs(600));
    let mut answers = run.output.lines().filter(|l| matches!(l.trim(), "sat" | "unsat"));
    let mut tally = Tally::new("countermodel", "z3");
    for (index, case) in &cases {
        // Each query asks for a failure: unsat means the law holds.
        let mut holds =
            || answers.next().unwrap_or_else(|| panic!("z3 answered too few queries: {}", run.output)) == "unsat";
        // Every answer is read, in order, before any is judged.
        let answered: Vec<bool> = case.hypotheses.iter().map(|_| holds()).collect();
        let hypotheses_hold = answered.iter().all(|h| *h);
        let target_fails = !holds();
        let theirs = hypotheses_hold && target_fails;
        let describe = || describe(budget.seed ^ 0x23, *index, case);
        tally.judge(case.class, case.truth, verdict(case), describe);
        // The harness's truth is z3's, and an accepted countermodel is one for z3.
        tally.compare(Verdict::of(case.truth), Verdict::of(theirs), || None, describe);
        if verdict(case) == Verdict::Accepted {
            tally.compare(Verdict::Accepted, Verdict::of(theirs), || None, describe);
        }
    }
    tally.report();
    tally.assert_compared(cases.len() as u64);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The query "the law fails on this table" (sat when it fails).
fn encode(out: &mut String, n: usize, table: &[Vec<u64>], law: &Law) {
    let sort = format!("E{n}");
    let e = |i: u64| format!("e{n}_{i}");
    let _ = writeln!(out, "(declare-fun op ({sort} {sort}) {sort})");
    for (a, row) in table.iter().enumerate() {
        for (b, v) in row.iter().enumerate() {
            let _ = writeln!(out, "(assert (= (op {} {}) {}))", e(a as u64), e(b as u64), e(*v));
        }
    }
    let definition = match law {
        Law::Named("associative") => "(forall ((x S) (y S) (z S)) (= (op x (op y z)) (op (op x y) z)))".to_owned(),
        Law::Named("commutative") => "(forall ((x S) (y S)) (= (op x y) (op y x)))".to_owned(),
        Law::Named("idempotent") => "(forall ((x S)) (= (op x x) x))".to_owned(),
        Law::Named("left_alternative") => "(forall ((x S) (y S)) (= (op x (op x y)) (op (op x x) y)))".to_owned(),
        Law::Named("right_alternative") => "(forall ((x S) (y S)) (= (op (op y x) x) (op y (op x x))))".to_owned(),
        Law::Named("flexible") => "(forall ((x S) (y S)) (= (op x (op y x)) (op (op x y) x)))".to_owned(),
        Law::Named("has_identity") => {
            "(exists ((e S)) (forall ((x S)) (and (= (op e x) x) (= (op x e) x))))".to_owned()
        }
        Law::Named("quasigroup") => {
            "(forall ((a S) (x S) (y S)) (and (=> (= (op a x) (op a y)) (= x y)) (=> (= (op x a) (op y a)) (= x y))))"
                .to_owned()
        }
        Law::Named(other) => panic!("no encoding of {other}"),
        Law::Equation(l, r) => {
            let vars: Vec<String> = law.variables().iter().map(|&i| format!("({} S)", VARIABLES[i])).collect();
            let (mut lhs, mut rhs) = (String::new(), String::new());
            l.smt(&mut lhs);
            r.smt(&mut rhs);
            format!("(forall ({}) (= {lhs} {rhs}))", vars.join(" "))
        }
    };
    let _ = writeln!(out, "(assert (not {}))", definition.replace(" S)", &format!(" {sort})")));
}

// ---- listings of models up to isomorphism (`models::judge`) ----

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

fn decode(n: usize, code: usize) -> Vec<Vec<u64>> {
    let mut code = code;
    let mut t = vec![vec![0u64; n]; n];
    for cell in 0..n * n {
        t[cell / n][cell % n] = (code % n) as u64;
        code /= n;
    }
    t
}

fn digits(t: &[Vec<u64>]) -> String {
    t.iter().flatten().map(|v| char::from(b'0' + *v as u8)).collect()
}

/// The least digit string over every relabelling (and, with `anti`, of the opposite too).
fn class_key(t: &[Vec<u64>], anti: bool, perms: &[Vec<usize>]) -> String {
    let n = t.len();
    let mut best: Option<String> = None;
    for p in perms {
        for opposite in [false, true].into_iter().take(if anti { 2 } else { 1 }) {
            let mut r = vec![vec![0u64; n]; n];
            for a in 0..n {
                for b in 0..n {
                    let v = if opposite { t[b][a] } else { t[a][b] };
                    r[p[a]][p[b]] = p[v as usize] as u64;
                }
            }
            let code = digits(&r);
            if best.as_ref().is_none_or(|b| code < *b) {
                best = Some(code);
            }
        }
    }
    best.unwrap_or_default()
}

fn opposite(t: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let n = t.len();
    (0..n).map(|a| (0..n).map(|b| t[b][a]).collect()).collect()
}

struct Listing {
    class: &'static str,
    n: usize,
    hypotheses: Vec<Law>,
    anti: bool,
    tables: Vec<String>,
    truth: bool,
}

fn listing(rng: &mut Rng) -> Listing {
    let n = rng.range(1, 3) as usize;
    let hypotheses: Vec<Law> = (0..rng.range(0, 2)).map(|_| law(rng)).collect();
    let anti = rng.chance(1, 2);
    let perms = permutations(n);
    let models: Vec<Vec<Vec<u64>>> = (0..n.pow((n * n) as u32))
        .map(|c| decode(n, c))
        .filter(|t| hypotheses.iter().all(|h| h.failure(t).is_none()))
        .collect();
    let closed = !anti || models.iter().all(|t| hypotheses.iter().all(|h| h.failure(&opposite(t)).is_none()));
    let mut by_class: std::collections::BTreeMap<String, Vec<&Vec<Vec<u64>>>> = std::collections::BTreeMap::new();
    for t in &models {
        by_class.entry(class_key(t, anti, &perms)).or_default().push(t);
    }
    // One random member of each class, in a random order.
    let mut tables: Vec<String> = by_class
        .values()
        .map(|members| {
            let member: &&Vec<Vec<u64>> = rng.pick(members);
            digits(member)
        })
        .collect();
    for i in (1..tables.len()).rev() {
        tables.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let class = *rng.pick(&["valid", "valid", "missing", "duplicate", "non_model", "malformed"]);
    match class {
        "missing" if !tables.is_empty() => {
            tables.remove(rng.below(tables.len() as u64) as usize);
        }
        "duplicate" if !tables.is_empty() => {
            let members = by_class.values().nth(rng.below(by_class.len() as u64) as usize).unwrap();
            let member: &&Vec<Vec<u64>> = rng.pick(members);
            let copy = digits(member);
            let at = rng.below(tables.len() as u64 + 1) as usize;
            tables.insert(at, copy);
        }
        "non_model" => {
            let t = decode(n, rng.below(n.pow((n * n) as u32) as u64) as usize);
            if tables.is_empty() || rng.chance(1, 2) {
                tables.push(digits(&t));
            } else {
                let k = rng.below(tables.len() as u64) as usize;
                tables[k] = digits(&t);
            }
        }
        "malformed" => {
            let bad = match rng.below(3) {
                0 => "0".repeat(n * n + 1),
                1 => "9".repeat(n * n),
                _ => "x".repeat(n * n),
            };
            tables.push(bad);
        }
        _ => {}
    }
    // The truth, from the listing as given: each a model (its opposite too, up to anti),
    // one per class, every class.
    let mut keys = std::collections::BTreeSet::new();
    let mut truth = closed;
    for text in &tables {
        let values: Option<Vec<u64>> = text
            .bytes()
            .map(|b| (b.is_ascii_digit() && usize::from(b - b'0') < n).then(|| u64::from(b - b'0')))
            .collect();
        let Some(values) = values.filter(|v| v.len() == n * n) else {
            truth = false;
            break;
        };
        let t: Vec<Vec<u64>> = values.chunks(n).map(<[u64]>::to_vec).collect();
        truth &= hypotheses.iter().all(|h| h.failure(&t).is_none());
        truth &= keys.insert(class_key(&t, anti, &perms));
    }
    truth &= keys.len() == by_class.len() && keys.iter().all(|k| by_class.contains_key(k));
    Listing { class, n, hypotheses, anti, tables, truth }
}

#[test]
fn model_listings_brute_force_no_incomplete_or_redundant_listing_is_accepted() {
    use crate::models::{Classes, Judgement, judge as judge_listing};
    let budget = Budget::from_env(1_500, 1);
    let mut tally = Tally::new("model listing", "brute force");
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed ^ 0x11, index);
        let case = listing(&mut rng);
        let hypotheses: Vec<String> = case.hypotheses.iter().map(Law::text).collect();
        let classes = if case.anti { Classes::IsomorphismOrAnti } else { Classes::Isomorphism };
        let judged = judge_listing(case.n, &hypotheses, classes, &case.tables, 1 << 40);
        let verdict = Verdict::of(matches!(judged, Judgement::Complete(..)));
        tally.judge(case.class, case.truth, verdict, || {
            format!(
                "seed {:#x} instance {index}: order {} {hypotheses:?} anti {} tables {:?}",
                budget.seed ^ 0x11,
                case.n,
                case.anti,
                case.tables
            )
        });
        assert!(
            !(case.truth && verdict == Verdict::Rejected),
            "a complete listing rejected: order {} {hypotheses:?} anti {} tables {:?}: {judged:?}",
            case.n,
            case.anti,
            case.tables
        );
    }
    tally.report();
    tally.assert_both_sides(budget.instances.min(1_500) / 10, budget.instances.min(1_500) / 10);
}
