//! The DRAT checker alone: drat-trim's proofs for the examples, stripped of
//! their hints to DRAT, are accepted in text and binary however they are
//! read; no proof is accepted for a satisfiable formula (brute force decides,
//! over thousands of seeded formulas and proofs); deletions are honoured
//! except unit deletions, which are ignored as drat-trim ignores them.

use crate::tests::{Trickle, number, pairs};
use crate::{DratSummary, Formula, MAX_VARIABLE, ProofError, check_drat, check_drat_from};

/// The DRAT proof inside an LRAT proof: its lemmas without ids and hints,
/// and its deletions by id written out as the deleted clauses.
fn drat_of(formula: &Formula, lrat: &str) -> String {
    let mut clauses: std::collections::HashMap<i64, Vec<i64>> = formula
        .clauses
        .iter()
        .enumerate()
        .map(|(i, c)| (i as i64 + 1, c.iter().map(|&l| i64::from(l)).collect()))
        .collect();
    let mut out = String::new();
    for line in lrat.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('c')) {
        let numbers: Vec<&str> = line.split_whitespace().collect();
        let id: i64 = numbers[0].parse().unwrap();
        if numbers[1] == "d" {
            for deleted in numbers[2..].iter().map(|t| t.parse::<i64>().unwrap()).take_while(|&d| d != 0) {
                let clause = clauses.remove(&deleted).unwrap();
                let text: Vec<String> = clause.iter().map(i64::to_string).collect();
                out += &format!("d {} 0\n", text.join(" "));
            }
        } else {
            let lemma: Vec<i64> = numbers[1..].iter().map(|t| t.parse().unwrap()).take_while(|&l| l != 0).collect();
            let text: Vec<String> = lemma.iter().map(i64::to_string).collect();
            out += format!("{} 0\n", text.join(" ")).trim_start();
            clauses.insert(id, lemma);
        }
    }
    out
}

/// The binary form of a text DRAT proof: `a` literals 0, `d` literals 0.
fn binary(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('c')) {
        let literals = match line.strip_prefix("d ") {
            Some(rest) => {
                out.push(b'd');
                rest
            }
            None => {
                out.push(b'a');
                line
            }
        };
        literals.split_whitespace().for_each(|t| number(&mut out, t.parse().unwrap()));
    }
    out
}

#[test]
fn drat_trim_proofs_as_drat_are_accepted_in_text_and_binary_however_read() {
    let all = pairs();
    assert!(all.len() >= 8);
    for (name, formula, lrat) in &all {
        let text = drat_of(formula, lrat);
        let summary = check_drat(formula, &text).unwrap_or_else(|r| panic!("{name}: {r}"));
        assert!(summary.lemmas > 0 && summary.refuted_at > 0 && !summary.binary, "{name}: {summary:?}");
        if name == "example-4-vars" {
            assert!(summary.rat_lemmas > 0, "{name} has a RAT step: {summary:?}");
        }
        let bytes = binary(&text);
        for step in [1, 5, 4096] {
            for (form, proof) in [("text", text.as_bytes()), ("binary", &bytes[..])] {
                let read = Trickle { bytes: proof, step, fail_at: None, at: 0 };
                let got = check_drat_from(formula, read).unwrap_or_else(|e| panic!("{name} {form}: {e}"));
                assert_eq!(got, DratSummary { binary: form == "binary", ..summary }, "{name} {form} by {step}");
            }
        }
        // A read that fails is no judgement of the proof.
        let read = Trickle { bytes: &bytes, step: 7, fail_at: Some(bytes.len() / 2), at: 0 };
        assert!(matches!(check_drat_from(formula, read), Err(ProofError::Unreadable(_))), "{name}");
        // The same proof for the formula without its last clause is accepted only if that is still unsatisfiable.
        if formula.variables <= 12 {
            for dropped in 0..formula.clauses.len() {
                let mut weaker = formula.clone();
                weaker.clauses.remove(dropped);
                if check_drat(&weaker, &text).is_ok() {
                    assert!(!satisfiable(&weaker), "{name} without clause {dropped}: accepted, but satisfiable");
                }
            }
        }
    }
}

fn satisfiable(formula: &Formula) -> bool {
    let variables = formula.variables;
    (0u32..1 << variables).any(|bits| {
        formula.clauses.iter().all(|c| {
            c.iter().any(|&l| {
                let v = l.unsigned_abs();
                v <= variables && ((bits >> (v - 1)) & 1 == 1) == (l > 0)
            })
        })
    })
}

/// Seeded xorshift, so a failure names its case.
struct Seeded(u64);

impl Seeded {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn clause(&mut self, variables: u64, most: u64) -> Vec<i32> {
        (0..self.below(most) + 1)
            .map(|_| {
                let v = self.below(variables) as i32 + 1;
                if self.below(2) == 0 { v } else { -v }
            })
            .collect()
    }
}

#[test]
fn no_proof_is_accepted_for_a_satisfiable_formula() {
    let (mut accepted, mut with_lemmas, mut refused_sat, mut rat) = (0, 0, 0, 0);
    for case in 0..20_000u64 {
        let mut random = Seeded(0x5eed_0000 + case * 0x9e37_79b9);
        let variables = 3 + random.below(3);
        // No units, so that propagation alone rarely settles it.
        let clauses: Vec<Vec<i32>> = (0..4 + random.below(16))
            .map(|_| {
                let mut c = random.clause(variables, 2);
                c.extend(random.clause(variables, 2));
                c
            })
            .collect();
        let formula = Formula { variables: variables as u32, clauses };
        let mut proof = String::new();
        for _ in 0..random.below(10) {
            // Lemmas may use one variable the formula does not, often as the
            // pivot, as extended resolution does: RAT steps.
            let mut clause = random.clause(variables + 1, 3);
            if random.below(3) == 0 {
                clause[0] = if random.below(2) == 0 { 1 } else { -1 } * (variables as i32 + 1);
            }
            let text: Vec<String> = clause.iter().map(i32::to_string).collect();
            let delete = if random.below(4) == 0 { "d " } else { "" };
            proof += &format!("{delete}{} 0\n", text.join(" "));
        }
        if random.below(2) == 0 {
            proof += "0\n";
        }
        let sat = satisfiable(&formula);
        match check_drat(&formula, &proof) {
            Ok(summary) => {
                assert!(!sat, "case {case}: a proof accepted for a satisfiable formula\n{formula:?}\n{proof}");
                accepted += 1;
                rat += usize::from(summary.rat_lemmas > 0);
                with_lemmas += usize::from(summary.lemmas > 0);
            }
            Err(_) => refused_sat += usize::from(sat),
        }
        assert!(check_drat_from(&formula, binary(&proof).as_slice()).is_ok() == check_drat(&formula, &proof).is_ok());
    }
    // Both sides are exercised.
    let counts =
        format!("{accepted} accepted ({with_lemmas} with lemmas, {rat} with RAT), {refused_sat} satisfiable refused");
    assert!(accepted > 1_000 && with_lemmas > 300 && rat > 100 && refused_sat > 1_000, "{counts}");
}

#[test]
fn a_lemma_that_does_not_follow_is_rejected_at_its_line() {
    // x1 = x2 = true is a model; ¬x2 is neither RUP nor RAT.
    let formula = Formula { variables: 2, clauses: vec![vec![1, 2], vec![-1, 2], vec![1, -2]] };
    let rejection = check_drat(&formula, "c a comment\n-2 0\n0\n").expect_err("not implied");
    assert_eq!(rejection.line, 2, "{rejection}");
    assert!(rejection.message.contains("neither RUP nor RAT"), "{rejection}");
    // A step may span lines (DRAT is a stream of numbers); its newlines count for the next.
    let rejection = check_drat(&formula, "c x\n2\n 0\n-2 0\n").expect_err("not implied");
    assert_eq!(rejection.line, 4, "{rejection}");
    assert!(rejection.message.contains("neither RUP nor RAT"), "{rejection}");
    // A proof that never conflicts.
    let rejection = check_drat(&formula, "2 0\n").expect_err("no refutation");
    assert!(rejection.message.contains("without refuting"), "{rejection}");
}

#[test]
fn deletions_are_honoured_but_unit_deletions_are_ignored() {
    // All four clauses over two variables: (x1) is RUP; with (x1 ∨ x2) deleted the rest is satisfiable.
    let every = Formula { variables: 2, clauses: vec![vec![1, 2], vec![1, -2], vec![-1, 2], vec![-1, -2]] };
    assert!(check_drat(&every, "1 0\n0\n").is_ok());
    let rejection = check_drat(&every, "d 2 1 0\n1 0\n0\n").expect_err("the deleted clause is gone");
    assert_eq!(rejection.line, 2, "{rejection}");
    let rejection = check_drat(&every, "d 2 1 2 0\n1 0\n").expect_err("a repeated literal matches once");
    assert_eq!(rejection.line, 2, "{rejection}");
    // A deletion of a clause that is not there changes nothing.
    let summary = check_drat(&every, "d 3 0\nd -1 2 -2 0\n1 0\n").unwrap();
    assert_eq!((summary.ignored_absent_deletions, summary.deletions, summary.refuted_at), (2, 0, 3), "{summary:?}");
    // (x1) is the reason for x1: its deletion is ignored, so (x2) still follows by propagation.
    let chain =
        Formula { variables: 4, clauses: vec![vec![1], vec![-1, 2, 3], vec![-1, 2, -3], vec![-2, 4], vec![-2, -4]] };
    let text = "d 1 0\n2 0\n";
    let summary = check_drat(&chain, text).unwrap();
    assert_eq!((summary.ignored_unit_deletions, summary.deletions, summary.refuted_at), (1, 0, 2), "{summary:?}");
    // The binary form starts with `d` too: told apart from text by its zero bytes.
    let bytes = binary(text);
    assert_eq!(bytes[0], b'd');
    assert_eq!(check_drat_from(&chain, bytes.as_slice()).unwrap(), DratSummary { binary: true, ..summary });
    // A binary proof that ends inside a step.
    assert!(matches!(check_drat_from(&chain, &b"a\x04"[..]), Err(ProofError::Rejected(_))));
    // Extension variables are indexed by how many there are, not by their numbers: (x1073741824 ∨ ¬x1) is
    // RAT on its fresh first literal; (¬x1073741824 ∨ x5) is not (its resolvent (x5 ∨ ¬x1) does not
    // follow), and its rejection names the literals as written.
    let big = MAX_VARIABLE as i32;
    let two = Formula { variables: 2, clauses: vec![vec![1, 2], vec![-1, 2], vec![1, -2]] };
    let rejection = check_drat(&two, &format!("{big} -1 0\n-{big} 5 0\n")).expect_err("not RAT");
    assert_eq!(rejection.line, 2, "{rejection}");
    assert!(
        rejection.message.contains(&format!("literal -{big}: the resolvent with the clause [{big}, -1]")),
        "{rejection}"
    );
    // A long candidate is named by its first literals and its length.
    let long: Vec<String> = (10..1010).map(|v| v.to_string()).collect();
    let rejection = check_drat(&two, &format!("-9 {} 0\n9 0\n", long.join(" "))).expect_err("not RAT");
    assert!(rejection.message.contains("… (1001 literals)") && rejection.message.len() < 400, "{rejection}");
    // A formula that propagation alone refutes needs no proof.
    let refuted = Formula { variables: 1, clauses: vec![vec![1], vec![-1]] };
    assert_eq!(check_drat(&refuted, "").unwrap().refuted_at, 0);
}

/// The clause that implied a literal stays while the literal does: its
/// deletion is ignored, whether it implied the literal when it was added or
/// by propagation later, and a clause added under a literal already true
/// does not take its place. A deletion that went through would leave the
/// literal true with nothing implying it, and then a false unit follows.
#[test]
fn the_reason_of_a_true_literal_keeps_it() {
    // (¬x1 ∨ x2) is watched, then (x1) makes x2 true by propagation: (¬x2) is then no lemma.
    let propagated = Formula { variables: 2, clauses: vec![vec![-1, 2], vec![1]] };
    let rejection = check_drat(
        &propagated,
        "d -1 2 0
-2 0
",
    )
    .expect_err("satisfiable: x1 = x2 = true");
    assert_eq!(rejection.line, 2, "{rejection}");
    // x4 is implied by (¬x3 ∨ x4) when it is added; the lemma (x4) adds nothing, so the
    // deletion of (¬x3 ∨ x4) is ignored, and counted as such.
    let mut every = vec![vec![3], vec![-3, 4]];
    every.extend([vec![1, 2], vec![1, -2], vec![-1, 2], vec![-1, -2]]);
    let formula = Formula { variables: 4, clauses: every };
    let summary = check_drat(
        &formula,
        "4 0
d -3 4 0
1 0
",
    )
    .unwrap();
    assert_eq!((summary.ignored_unit_deletions, summary.deletions), (1, 0), "{summary:?}");
    // Rejections name an extension variable as written, with one declared variable too.
    let one = Formula { variables: 1, clauses: vec![vec![1]] };
    let rejection = check_drat(
        &one,
        "5 0
-5 -1 0
",
    )
    .expect_err("not RAT");
    assert!(rejection.message.contains("first literal -5: the resolvent with the clause [5]"), "{rejection}");
}

/// After deletions enough to compact the clause arena, the rules hold as
/// before: a reason's deletion is still ignored, the deleted clauses are
/// gone, and the proof is judged as it would be without the compaction.
#[test]
fn deletions_that_compact_the_arena_keep_every_rule() {
    // x1, x2, x3 follow at the top level (reasons (x1), (¬x1 ∨ x2), (¬x2 ∨ x3)); the four clauses
    // over x4, x5 under x3 refute it once (x4) is added; forty clauses over x6, x7 are deleted.
    let mut clauses =
        vec![vec![1], vec![-1, 2], vec![-2, 3], vec![-3, 4, 5], vec![-3, -4, 5], vec![-3, 4, -5], vec![-3, -4, -5]];
    let junk: Vec<Vec<i32>> = (0..40).map(|i| vec![6 + i % 2, -7 - i % 3, 8 + i]).collect();
    clauses.extend(junk.iter().cloned());
    let formula = Formula { variables: 50, clauses };
    let mut proof: String =
        junk.iter().map(|c| format!("d {} 0\n", c.iter().map(i32::to_string).collect::<Vec<_>>().join(" "))).collect();
    proof += "d -1 2 0\nd 1 0\n";
    let prefix = proof.clone();
    proof += "4 0\n";
    let summary = check_drat(&formula, &proof).unwrap();
    assert_eq!((summary.deletions, summary.ignored_unit_deletions, summary.lemmas), (40, 2, 1), "{summary:?}");
    assert_eq!(summary.refuted_at, 43);
    // The deleted clauses are gone: deleting one again is ignored as absent.
    let again = format!(
        "{}d {} 0\n4 0\n",
        &proof[..proof.len() - 4],
        junk[0].iter().map(i32::to_string).collect::<Vec<_>>().join(" ")
    );
    assert_eq!(check_drat(&formula, &again).unwrap().ignored_absent_deletions, 1);
    // (x10) follows from (x10 ∨ x11), (x10 ∨ ¬x11); once (x10 ∨ x11) is deleted, after the compaction,
    // it is neither RUP nor RAT (its resolvent with (¬x10 ∨ x12) does not follow).
    let more = [vec![10, 11], vec![10, -11], vec![-10, 12]];
    let wider = Formula { variables: 50, clauses: [formula.clauses.clone(), more.to_vec()].concat() };
    assert!(check_drat(&wider, &format!("{prefix}10 0\n4 0\n")).is_ok());
    let rejection = check_drat(&wider, &format!("{prefix}d 10 11 0\n10 0\n")).unwrap_err();
    assert_eq!(rejection.line, 44, "{rejection}");
}

/// A lemma with a literal true at the top level follows as it is; a
/// tautology, in the formula or the proof, is kept and never propagates; a
/// RAT lemma is counted as one.
#[test]
fn true_literals_tautologies_and_rat_lemmas_are_judged_as_the_rules_say() {
    // (x5 ∨ x1) holds because x1 does; without that it would need RAT on x5, whose
    // candidate (¬x5 ∨ x2) gives a resolvent that does not follow.
    let unit = Formula { variables: 5, clauses: vec![vec![1], vec![-5, 2]] };
    assert_eq!(check_drat(&unit, "5 1 0\n").unwrap_err().line, 0, "the lemma is accepted; the proof just ends");
    // A tautological clause neither propagates nor blocks: (x1 ∨ ¬x1) beside the four clauses over x2, x3.
    let every = vec![vec![2, 3], vec![-2, 3], vec![2, -3], vec![-2, -3]];
    let tautology = Formula { variables: 3, clauses: [vec![vec![1, -1]], every.clone()].concat() };
    let summary = check_drat(&tautology, "3 0\n").unwrap();
    assert_eq!((summary.lemmas, summary.rat_lemmas, summary.refuted_at), (1, 0, 1));
    // A tautological lemma is taken as it is, and deleted again.
    let summary = check_drat(&tautology, "2 -2 0\nd 2 -2 0\n3 0\n").unwrap();
    assert_eq!((summary.lemmas, summary.deletions, summary.refuted_at), (2, 1, 3));
    // RAT on a fresh variable, counted.
    let plain = Formula { variables: 3, clauses: every };
    let summary = check_drat(&plain, "4 5 0\n3 0\n").unwrap();
    assert_eq!((summary.lemmas, summary.rat_lemmas, summary.refuted_at), (2, 1, 2));
}

/// A clause added twice is held twice: each deletion removes one, and the
/// second is found after the first is gone.
#[test]
fn a_clause_held_twice_is_deleted_twice() {
    let mut two = vec![vec![1, 2], vec![1, -2], vec![-1, 2], vec![-1, -2]];
    two.extend([vec![3, 4], vec![3, -4], vec![-3, 4], vec![-3, -4]]);
    let formula = Formula { variables: 4, clauses: two };
    let summary = check_drat(&formula, "1 2 0\nd 1 2 0\nd 2 1 0\nd 1 2 0\n3 0\n").unwrap();
    assert_eq!((summary.deletions, summary.ignored_absent_deletions), (2, 1), "{summary:?}");
}
