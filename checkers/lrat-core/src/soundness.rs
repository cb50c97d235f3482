//! The soundness harness of the SAT checkers (LRAT, DRAT and models).
//!
//! Formulas are small (at most 8 variables), so whether each is satisfiable
//! is known by trying every assignment. Certificates come in classes:
//! - `valid`: a refutation this harness builds for an unsatisfiable formula
//!   on its own (a decision tree whose every node is a RUP lemma, after a
//!   preamble of RAT lemmas: extension-variable definitions, blocked
//!   clauses and clauses RAT by unit propagation, and deletions);
//! - `nearby`: a valid refutation of a formula, given for the same formula
//!   with one clause weakened (a literal added, often the negation of a RAT
//!   pivot, which makes it a RAT candidate without a hint group);
//! - `mutated`: a valid refutation changed in one to three places (a hint,
//!   a group, a literal, an id, a deletion, a line dropped or repeated);
//! - `rat_pair`: the shapes a lazy RAT check accepts — `(p)` then `(¬p)`,
//!   each with some of its candidates' groups, groups for clauses that are
//!   not candidates, out of order, repeated, naming deleted or absent
//!   clauses, then the empty clause from the two (the published bogus
//!   refutation is one of them);
//! - `random`: lines of random numbers.
//!
//! A false claim is a refutation of a satisfiable formula: accepting one
//! fails at once, with the seed. The differential legs run drat-trim's
//! `lrat-check` (the program `JACOBIAN_LRAT_CHECK` names, or `lrat-check`
//! on `PATH`) on the same LRAT proofs, and `rate` and drat-trim on their
//! clauses as DRAT; every disagreement fails unless it is one of
//! [`LratDifference`]'s documented differences.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jacobian_soundness::{Budget, Reference, Rng, Tally, Verdict, scratch};

use crate::{Formula, check_drat, check_lrat, check_model};

mod certificates;
use certificates::*;

/// One proof step.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Add { id: u64, literals: Vec<i32>, hints: Vec<i64> },
    Delete(Vec<u64>),
}

#[derive(Debug, Clone, Default)]
struct Proof(Vec<Step>);

impl Proof {
    /// The text, a deletion line numbered as the lemma before it (the formula's last clause at first).
    fn lrat(&self, formula: &Formula) -> String {
        let mut out = String::new();
        let mut last = formula.clauses.len() as u64;
        for step in &self.0 {
            match step {
                Step::Add { id, literals, hints } => {
                    last = *id;
                    let _ = write!(out, "{id} ");
                    literals.iter().for_each(|l| {
                        let _ = write!(out, "{l} ");
                    });
                    out.push_str("0 ");
                    hints.iter().for_each(|h| {
                        let _ = write!(out, "{h} ");
                    });
                    out.push_str("0\n");
                }
                Step::Delete(ids) => {
                    let _ = write!(out, "{last} d ");
                    ids.iter().for_each(|d| {
                        let _ = write!(out, "{d} ");
                    });
                    out.push_str("0\n");
                }
            }
        }
        out
    }

    /// The same clauses as DRAT (deletions by their literals), up to the
    /// first empty clause.
    fn drat(&self, formula: &Formula) -> String {
        let mut clauses: BTreeMap<u64, Vec<i32>> =
            formula.clauses.iter().enumerate().map(|(i, c)| (i as u64 + 1, c.clone())).collect();
        let mut out = String::new();
        let line = |out: &mut String, prefix: &str, literals: &[i32]| {
            out.push_str(prefix);
            literals.iter().for_each(|l| {
                let _ = write!(out, "{l} ");
            });
            out.push_str("0\n");
        };
        for step in &self.0 {
            match step {
                Step::Add { id, literals, .. } => {
                    line(&mut out, "", literals);
                    if literals.is_empty() {
                        break;
                    }
                    clauses.insert(*id, literals.clone());
                }
                Step::Delete(ids) => {
                    for id in ids {
                        if let Some(c) = clauses.remove(id) {
                            line(&mut out, "d ", &c);
                        }
                    }
                }
            }
        }
        out
    }
}

// ---- formulas and brute force ----

fn satisfiable(formula: &Formula) -> bool {
    let n = formula.variables;
    (0u32..1 << n).any(|bits| {
        formula.clauses.iter().all(|c| {
            c.iter().any(|&l| {
                let v = l.unsigned_abs();
                v <= n && ((bits >> (v - 1)) & 1 == 1) == (l > 0)
            })
        })
    })
}

/// A clause of `width` distinct variables of `1..=variables`.
fn clause(rng: &mut Rng, variables: u32, width: usize) -> Vec<i32> {
    let mut out: Vec<i32> = Vec::with_capacity(width);
    while out.len() < width.min(variables as usize) {
        let v = rng.range(1, u64::from(variables)) as i32;
        if out.iter().all(|l| l.abs() != v) {
            out.push(rng.signed(i64::from(v)) as i32);
        }
    }
    out
}

fn formula(rng: &mut Rng) -> Formula {
    let variables = rng.range(3, 8) as u32;
    let count = (u64::from(variables) * rng.range(20, 55) / 10) as usize;
    let clauses = (0..count)
        .map(|_| {
            let width = match rng.below(20) {
                0 => 1,
                1..=7 => 2,
                _ => 3,
            };
            let mut c = clause(rng, variables, width);
            // Now and then a literal written twice, as DIMACS allows.
            if rng.chance(1, 40) {
                c.push(c[0]);
            }
            c
        })
        .collect();
    Formula { variables, clauses }
}

/// One instance: a formula, an LRAT proof text, its class, and the steps when it has them.
struct Instance {
    class: &'static str,
    formula: Formula,
    proof: String,
    steps: Option<Proof>,
}

fn instance(rng: &mut Rng) -> Instance {
    // An unsatisfiable formula is what the valid and mutated classes need.
    let mut f = formula(rng);
    for _ in 0..20 {
        if !satisfiable(&f) {
            break;
        }
        f = formula(rng);
    }
    let unsat = !satisfiable(&f);
    let m = f.clauses.len() as u64;
    let with =
        |class, formula, proof: Proof| Instance { class, proof: proof.lrat(&formula), formula, steps: Some(proof) };
    match rng.below(10) {
        0..=2 if unsat => with("valid", f.clone(), valid_refutation(rng, &f)),
        3..=4 if unsat => {
            let proof = valid_refutation(rng, &f);
            let weaker = weakened(rng, &f, &proof);
            with("nearby", weaker, proof)
        }
        5..=7 if unsat => {
            let mut proof = valid_refutation(rng, &f);
            let top = proof.0.iter().filter_map(|s| if let Step::Add { id, .. } = s { Some(*id) } else { None }).max();
            for _ in 0..rng.range(1, 3) {
                mutate(rng, &mut proof, top.unwrap_or(m));
            }
            let formula = if rng.chance(1, 2) { weakened(rng, &f, &proof) } else { f.clone() };
            with("mutated", formula, proof)
        }
        8 => {
            let g = if rng.chance(1, 2) { formula(rng) } else { f };
            if rng.chance(1, 5) {
                let v = rng.range(1, u64::from(g.variables)) as i32;
                return with("published", g.clone(), published_bogus(g.clauses.len() as u64, v));
            }
            with("rat_pair", g.clone(), rat_pair(rng, &g))
        }
        _ => {
            let g = formula(rng);
            let text = random_text(rng, g.clauses.len() as u64);
            Instance { class: "random", formula: g, proof: text, steps: None }
        }
    }
}

fn describe(seed: u64, index: u64, formula: &Formula, proof: &str) -> String {
    format!("seed {seed:#x} instance {index}\nformula: {:?}\nproof:\n{proof}", formula.clauses)
}

fn dimacs(formula: &Formula, header_clauses: usize) -> String {
    let mut out = format!("p cnf {} {}\n", formula.variables, header_clauses);
    for c in &formula.clauses {
        c.iter().for_each(|l| {
            let _ = write!(out, "{l} ");
        });
        out.push_str("0\n");
    }
    out
}

// ---- the documented differences with lrat-check ----

/// Why this checker and drat-trim's `lrat-check` may judge one proof
/// differently. Each is a rule of ours that is stricter than lrat-check's
/// and sound either way, or a fault of lrat-check's; any other
/// disagreement fails the differential test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LratDifference {
    /// lrat-check accepted a refutation of a formula that has a model
    /// (brute force): it accepts an empty clause whose hints end without a
    /// conflict when no RAT groups follow.
    ReferenceUnsound,
    /// lrat-check accepts an empty clause whose hints end without a
    /// conflict (of a formula that happens to be unsatisfiable): the fault
    /// behind [`LratDifference::ReferenceUnsound`], where it is not a false claim.
    EmptyClauseWithoutConflict,
    /// A clause repeats a literal: ours reads it as the literal once (a
    /// unit hint when the rest is false), lrat-check counts each occurrence
    /// and refuses it as a unit. Our own solver's proofs of such formulas
    /// use them.
    RepeatedLiteral,
    /// Ours requires increasing clause ids; lrat-check overwrites a clause
    /// that reuses an id (and then checks RAT candidates only up to it).
    IdsNotIncreasing,
    /// Ours rejects deleting an id that is not active; lrat-check warns and goes on.
    DeletesInactive,
    /// Ours stops at the first empty clause; lrat-check reads on and may reject a later line.
    StepsAfterEmptyClause,
}

impl LratDifference {
    fn text(self) -> &'static str {
        match self {
            LratDifference::ReferenceUnsound => "lrat-check accepted a refutation of a satisfiable formula",
            LratDifference::EmptyClauseWithoutConflict => {
                "an empty clause whose hints end without a conflict (ours rejects, lrat-check accepts)"
            }
            LratDifference::RepeatedLiteral => "a clause repeats a literal (ours reads it once, lrat-check twice)",
            LratDifference::IdsNotIncreasing => "ids do not increase (ours rejects, lrat-check does not check)",
            LratDifference::DeletesInactive => "a deletion of an inactive id (ours rejects, lrat-check warns)",
            LratDifference::StepsAfterEmptyClause => {
                "steps after the empty clause (ours stops there, lrat-check reads on)"
            }
        }
    }
}

/// The shapes of a proof that the documented differences are about, found
/// by walking its steps here.
#[derive(Debug, Default)]
struct Shapes {
    not_increasing: bool,
    deletes_inactive: bool,
    after_empty: bool,
    /// The first empty clause's hints (read by the unit rule here) end without a conflict.
    empty_without_conflict: bool,
    /// A clause of the formula or the proof repeats a literal.
    repeated_literal: bool,
}

fn shapes(formula: &Formula, proof: &Proof) -> Shapes {
    let mut active: BTreeMap<u64, Vec<i32>> =
        formula.clauses.iter().enumerate().map(|(i, c)| (i as u64 + 1, c.clone())).collect();
    let mut last = formula.clauses.len() as u64;
    let repeats = |c: &[i32]| c.iter().enumerate().any(|(i, l)| c[..i].contains(l));
    let mut found = Shapes { repeated_literal: formula.clauses.iter().any(|c| repeats(c)), ..Shapes::default() };
    let mut ended = false;
    for step in &proof.0 {
        if ended {
            found.after_empty = true;
            break;
        }
        match step {
            Step::Add { id, literals, hints } => {
                found.repeated_literal |= repeats(literals);
                found.not_increasing |= *id <= last;
                last = last.max(*id);
                if literals.is_empty() {
                    ended = true;
                    found.empty_without_conflict = !hints_conflict(&active, hints);
                }
                active.insert(*id, literals.clone());
            }
            Step::Delete(ids) => {
                for id in ids {
                    found.deletes_inactive |= active.remove(id).is_none();
                }
            }
        }
    }
    found
}

/// Whether the positive hints up to the first negative one reach a conflict
/// from the empty assignment (a hint naming no active clause, or not unit,
/// counts as a conflict: it is a rejection, not this shape).
fn hints_conflict(active: &BTreeMap<u64, Vec<i32>>, hints: &[i64]) -> bool {
    let mut values = Values::default();
    for &h in hints.iter().take_while(|h| **h > 0) {
        let Some(c) = active.get(&(h as u64)) else { return true };
        let open: Vec<i32> = c.iter().copied().filter(|&l| values.of(l) != Some(false)).collect();
        match open.as_slice() {
            [] => return true,
            [lit] => values.make_true(*lit),
            _ => return true,
        }
    }
    false
}

// ---- the tests ----

fn dimacs_text(text: &str) -> Formula {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
    let variables = header[2].parse().expect("a header");
    let clauses = lines
        .map(|l| l.split_whitespace().map(|t| t.parse::<i32>().expect("a literal")).take_while(|l| *l != 0).collect())
        .collect();
    Formula { variables, clauses }
}

/// The published bogus refutation and its variants (`tests/fixtures/soundness/lrat-variants.json`,
/// with what drat-trim's lrat-check said of each) are rejected, each for its reason; the valid
/// RAT refutation with an extension variable is accepted.
#[test]
fn the_published_bogus_refutation_and_its_variants_are_rejected_and_a_valid_rat_refutation_is_not() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/soundness/lrat-variants.json");
    let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let satisfiable_formula = dimacs_text(fixture["satisfiable"].as_str().unwrap());
    assert!(satisfiable(&satisfiable_formula));
    let variants = fixture["false_refutations"].as_array().unwrap();
    assert!(variants.len() >= 7);
    for variant in variants {
        let (name, proof) = (variant["name"].as_str().unwrap(), variant["proof"].as_str().unwrap());
        let rejection = check_lrat(&satisfiable_formula, proof).expect_err(name);
        let expected = variant["rejection"].as_str().unwrap();
        assert!(rejection.message.contains(expected), "{name}: {rejection} (expected {expected:?})");
    }
    let unsatisfiable_formula = dimacs_text(fixture["unsatisfiable"].as_str().unwrap());
    let valid = &fixture["valid_rat_refutation"];
    let summary = check_lrat(&unsatisfiable_formula, valid["proof"].as_str().unwrap()).expect("a valid RAT refutation");
    assert_eq!(summary.rat_lemmas, valid["rat_lemmas"].as_u64().unwrap());
}

#[test]
fn lrat_brute_force_no_refutation_of_a_satisfiable_formula_is_accepted() {
    let budget = Budget::from_env(40_000, 1);
    let mut tally = Tally::new("lrat", "brute force");
    let mut drat = Tally::new("drat", "brute force");
    let mut model_tally = Tally::new("model", "brute force");
    // The second checker (jacobian-lrat-plain-core) on the same instances:
    // against the truth, and against this one (every disagreement fails).
    let mut plain = Tally::new("lrat, second checker", "brute force");
    let mut plain_model = Tally::new("model, second checker", "brute force");
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed, index);
        let case = instance(&mut rng);
        let truth = !satisfiable(&case.formula);
        let verdict = Verdict::of(check_lrat(&case.formula, &case.proof).is_ok());
        tally.judge(case.class, truth, verdict, || describe(budget.seed, index, &case.formula, &case.proof));
        let second =
            Verdict::of(jacobian_lrat_plain_core::refutes(&case.formula.clauses, case.proof.as_bytes()).is_ok());
        plain.judge(case.class, truth, second, || describe(budget.seed, index, &case.formula, &case.proof));
        plain.compare(second, verdict, || None, || describe(budget.seed, index, &case.formula, &case.proof));
        // A valid refutation is accepted: as LRAT always; as DRAT when it deletes nothing (a
        // deleted unit clause is kept, as drat-trim keeps it, and may then need a RAT group).
        let valid = case.class == "valid";
        assert!(!valid || verdict == Verdict::Accepted, "{}", describe(budget.seed, index, &case.formula, &case.proof));
        if let Some(steps) = &case.steps {
            let text = steps.drat(&case.formula);
            let verdict = Verdict::of(check_drat(&case.formula, &text).is_ok());
            drat.judge(case.class, truth, verdict, || describe(budget.seed, index, &case.formula, &text));
            let deletes = steps.0.iter().any(|s| matches!(s, Step::Delete(_)));
            assert!(
                !valid || deletes || verdict == Verdict::Accepted,
                "{}",
                describe(budget.seed, index, &case.formula, &text)
            );
        }
        // A model of a satisfiable formula, found here by trying every
        // assignment, often spoiled: a value flipped, a variable left out.
        let g = loop {
            let g = formula(&mut rng);
            if satisfiable(&g) {
                break g;
            }
        };
        let n = g.variables;
        let models: Vec<u32> = (0u32..1 << n)
            .filter(|bits| {
                g.clauses.iter().all(|c| c.iter().any(|&l| ((bits >> (l.unsigned_abs() - 1)) & 1 == 1) == (l > 0)))
            })
            .collect();
        let bits = *rng.pick(&models);
        let mut assignment: Vec<i32> =
            (1..=n as i32).map(|v| if (bits >> (v - 1)) & 1 == 1 { v } else { -v }).collect();
        match rng.below(4) {
            0 => {
                let k = rng.below(assignment.len() as u64) as usize;
                assignment[k] = -assignment[k];
            }
            1 => {
                assignment.remove(rng.below(assignment.len() as u64) as usize);
            }
            _ => {}
        }
        let satisfied = g.clauses.iter().all(|c| c.iter().any(|l| assignment.contains(l)));
        let verdict = Verdict::of(check_model(&g, &assignment).is_ok());
        model_tally.judge("assignment", satisfied, verdict, || format!("{:?} under {assignment:?}", g));
        let second = Verdict::of(jacobian_lrat_plain_core::model_satisfies(n, &g.clauses, &assignment).is_ok());
        plain_model.judge("assignment", satisfied, second, || format!("{:?} under {assignment:?}", g));
        plain_model.compare(second, verdict, || None, || format!("{:?} under {assignment:?}", g));
        assert!(!(satisfied && verdict == Verdict::Rejected), "a model rejected: {g:?} under {assignment:?}");
    }
    tally.report();
    drat.report();
    model_tally.report();
    plain.report();
    plain_model.report();
    plain.assert_both_sides(budget.instances.min(40_000) / 20, budget.instances.min(40_000) / 20);
    plain_model.assert_both_sides(budget.instances.min(40_000) / 50, budget.instances.min(40_000) / 20);
    tally.assert_both_sides(budget.instances.min(40_000) / 20, budget.instances.min(40_000) / 20);
    drat.assert_both_sides(budget.instances.min(40_000) / 20, budget.instances.min(40_000) / 50);
    model_tally.assert_both_sides(budget.instances.min(40_000) / 50, budget.instances.min(40_000) / 20);
}

/// Runs `lrat-check` and drat-trim beside this checker (when found) and
/// `rate` (DRAT, with unit deletions skipped as drat-trim skips them).
#[test]
fn lrat_and_drat_agree_with_outside_checkers() {
    let lrat_check = Reference::find("lrat-check", "JACOBIAN_LRAT_CHECK", "lrat-check");
    let drat_trim = Reference::find("drat-trim", "JACOBIAN_DRAT_TRIM", "drat-trim");
    let rate = Reference::find("rate", "JACOBIAN_RATE", "rate");
    if lrat_check.is_none() && drat_trim.is_none() && rate.is_none() {
        return;
    }
    let budget = Budget::from_env(600, 20);
    let dir = scratch("lrat");
    let (cnf, padded, lrat, drat) = (dir.join("f.cnf"), dir.join("padded.cnf"), dir.join("p.lrat"), dir.join("p.drat"));
    let mut against_lrat_check = Tally::new("lrat", "lrat-check");
    let mut lrat_against_rate = Tally::new("lrat (as DRAT)", "rate");
    let mut drat_against_rate = Tally::new("drat", "rate");
    let mut drat_against_drat_trim = Tally::new("drat", "drat-trim");
    let limit = Duration::from_secs(20);
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed ^ 0xd1ff, index);
        let case = instance(&mut rng);
        let Some(steps) = &case.steps else { continue };
        let truth = !satisfiable(&case.formula);
        let describe = || describe(budget.seed ^ 0xd1ff, index, &case.formula, &case.proof);
        std::fs::write(&cnf, dimacs(&case.formula, case.formula.clauses.len())).unwrap();
        // lrat-check sizes its clause table by the header's count and
        // overruns it on tiny formulas: the padded header keeps it in bounds.
        std::fs::write(&padded, dimacs(&case.formula, 10_000)).unwrap();
        std::fs::write(&lrat, &case.proof).unwrap();
        let judged = check_lrat(&case.formula, &case.proof);
        let ours = Verdict::of(judged.is_ok());
        if let Some(reference) = &lrat_check {
            let run = reference.run(&[&padded, &lrat], limit);
            let theirs = Verdict::of(run.code == Some(0) && run.output.lines().any(|l| l.trim() == "c VERIFIED"));
            against_lrat_check.judge(case.class, truth, ours, describe);
            let shape = shapes(&case.formula, steps);
            let explain = || {
                let difference = match (ours, theirs) {
                    (Verdict::Rejected, Verdict::Accepted) if !truth => LratDifference::ReferenceUnsound,
                    (Verdict::Rejected, Verdict::Accepted) if shape.empty_without_conflict => {
                        LratDifference::EmptyClauseWithoutConflict
                    }
                    (Verdict::Accepted, Verdict::Rejected) if shape.repeated_literal => LratDifference::RepeatedLiteral,
                    (Verdict::Rejected, Verdict::Accepted) if shape.not_increasing => LratDifference::IdsNotIncreasing,
                    (Verdict::Rejected, Verdict::Accepted) if shape.deletes_inactive => LratDifference::DeletesInactive,
                    (Verdict::Accepted, Verdict::Rejected) if shape.after_empty => {
                        LratDifference::StepsAfterEmptyClause
                    }
                    _ => return None,
                };
                Some(difference.text())
            };
            against_lrat_check.compare(ours, theirs, explain, || {
                format!("{}\nours: {judged:?}\nlrat-check said:\n{}", describe(), run.output)
            });
        }
        let text = steps.drat(&case.formula);
        std::fs::write(&drat, &text).unwrap();
        let drat_ours = Verdict::of(check_drat(&case.formula, &text).is_ok());
        if let Some(reference) = &rate {
            // Every lemma of an accepted LRAT proof is RUP or RAT on its first literal against
            // the clauses then active, so its clauses are a DRAT proof with every deletion honoured.
            let theirs = rate_verdict(reference, &["-p"], &cnf, &drat, limit);
            lrat_against_rate.judge(case.class, truth, ours, describe);
            if ours == Verdict::Accepted {
                lrat_against_rate.compare(ours, theirs, || None, || format!("{}\nDRAT:\n{text}", describe()));
            }
            // The DRAT checker's own rules: forward, every active clause a RAT candidate, the
            // pivot first, unit deletions ignored.
            let theirs = rate_verdict(reference, &["-p", "-f", "-r", "-d"], &cnf, &drat, limit);
            drat_against_rate.judge(case.class, truth, drat_ours, describe);
            drat_against_rate.compare(drat_ours, theirs, || None, || format!("{}\nDRAT:\n{text}", describe()));
        }
        if let Some(reference) = &drat_trim {
            let run = reference.run(&[&cnf, &drat], limit);
            let theirs = Verdict::of(run.output.lines().any(|l| l.trim() == "s VERIFIED"));
            drat_against_drat_trim.judge(case.class, truth, drat_ours, describe);
            drat_against_drat_trim.compare(
                drat_ours,
                theirs,
                || None,
                || format!("{}\nDRAT:\n{text}\ndrat-trim said:\n{}", describe(), run.output),
            );
        }
    }
    for (tally, reference) in [
        (&against_lrat_check, &lrat_check),
        (&lrat_against_rate, &rate),
        (&drat_against_rate, &rate),
        (&drat_against_drat_trim, &drat_trim),
    ] {
        if reference.is_some() {
            tally.report();
            tally.assert_compared(budget.instances.min(600) / 20);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn rate_verdict(rate: &Reference, flags: &[&str], cnf: &Path, drat: &Path, limit: Duration) -> Verdict {
    let mut args: Vec<PathBuf> = flags.iter().map(PathBuf::from).collect();
    args.extend([cnf.to_path_buf(), drat.to_path_buf()]);
    let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
    let run = rate.run(&args, limit);
    Verdict::of(run.output.lines().any(|l| l.trim() == "s VERIFIED"))
}
