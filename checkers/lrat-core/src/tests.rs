//! The checker alone: every LRAT proof drat-trim wrote for the examples is
//! accepted (outside truth), single-point corruptions of each are rejected
//! with their line, models are judged clause by clause, and no proof text
//! makes it panic.

use std::path::PathBuf;

use proptest::prelude::*;

use crate::{Formula, ProofError, check_lrat, check_lrat_from, check_model};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/sat/drat-trim-examples")
}

/// DIMACS, as the examples are written (comments, a header, clauses ending in 0).
fn dimacs(text: &str) -> Formula {
    let mut variables = 0;
    let mut clauses = Vec::new();
    let mut clause = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('c')) {
        if let Some(header) = line.strip_prefix("p cnf") {
            variables = header.split_whitespace().next().unwrap().parse().unwrap();
            continue;
        }
        for literal in line.split_whitespace().map(|t| t.parse::<i32>().unwrap()) {
            if literal == 0 {
                clauses.push(std::mem::take(&mut clause));
            } else {
                clause.push(literal);
            }
        }
    }
    Formula { variables, clauses }
}

pub(crate) fn pairs() -> Vec<(String, Formula, String)> {
    let mut names: Vec<String> = std::fs::read_dir(examples())
        .unwrap_or_else(|e| panic!("outside truth {}: {e}", examples().display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok()?.strip_suffix(".cnf").map(str::to_owned))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let cnf = std::fs::read_to_string(examples().join(format!("{name}.cnf"))).unwrap();
            let proof = std::fs::read_to_string(examples().join(format!("{name}.lrat"))).unwrap();
            (name, dimacs(&cnf), proof)
        })
        .collect()
}

#[test]
fn every_drat_trim_proof_is_accepted() {
    let all = pairs();
    assert!(all.len() >= 8);
    for (name, formula, proof) in &all {
        let summary = check_lrat(formula, proof).unwrap_or_else(|r| panic!("{name}: {r}"));
        assert!(summary.lemmas > 0 && summary.empty_clause_id > formula.clauses.len() as u64, "{name}");
        if name == "example-4-vars" {
            assert!(summary.rat_lemmas > 0, "{name} has a RAT step (a negative hint)");
        }
    }
}

#[test]
fn single_point_corruptions_are_rejected_with_their_line() {
    for (name, formula, proof) in pairs() {
        let lines: Vec<&str> = proof.lines().collect();
        let last = lines.iter().rposition(|l| l.split_whitespace().nth(1) != Some("d")).unwrap();
        // The last lemma's final hint names no clause; its id no longer increases; the proof loses its end.
        let mut tokens: Vec<String> = lines[last].split_whitespace().map(str::to_owned).collect();
        let hint = tokens.len() - 2;
        tokens[hint] = "999999999".into();
        let corrupt = |replacement: Option<String>| {
            let mut copy: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            match replacement {
                Some(line) => copy[last] = line,
                None => {
                    copy.remove(last);
                }
            }
            check_lrat(&formula, &copy.join("\n"))
        };
        let rejection = corrupt(Some(tokens.join(" "))).expect_err(&name);
        assert_eq!(rejection.line, last + 1, "{name}: {rejection}");
        let mut renumbered: Vec<String> = lines[last].split_whitespace().map(str::to_owned).collect();
        renumbered[0] = "1".into();
        assert!(corrupt(Some(renumbered.join(" "))).is_err(), "{name}: an id that does not increase");
        assert!(corrupt(None).is_err(), "{name}: a proof without the empty clause");
    }
}

/// The binary form of a text proof, written from its description (drat-trim's
/// `compress`): `a` id literals 0 hints 0, `d` ids 0, each number `2|x| + (x < 0)`
/// in groups of 7 bits, low first, the high bit set on all but the last.
fn binary(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('c')) {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens[1] == "d" {
            out.push(b'd');
            tokens[2..].iter().for_each(|t| number(&mut out, t.parse().unwrap()));
        } else {
            out.push(b'a');
            tokens.iter().for_each(|t| number(&mut out, t.parse().unwrap()));
        }
    }
    out
}

/// One number of a binary proof: `2|x| + (x < 0)` in groups of 7 bits, low
/// first, the high bit set on all but the last.
pub(crate) fn number(out: &mut Vec<u8>, x: i64) {
    let mut mapped = (x.unsigned_abs() << 1) | u64::from(x < 0);
    loop {
        let low = (mapped & 0x7f) as u8;
        mapped >>= 7;
        if mapped == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// A reader that hands out at most `step` bytes a call, then fails if told to.
pub(crate) struct Trickle<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) step: usize,
    pub(crate) fail_at: Option<usize>,
    pub(crate) at: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.fail_at.is_some_and(|f| self.at >= f) {
            return Err(std::io::Error::other("the store went away"));
        }
        let n = self.step.min(buf.len()).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[test]
fn binary_proofs_and_proofs_read_a_few_bytes_at_a_time_check_alike() {
    for (name, formula, proof) in pairs() {
        let text = check_lrat(&formula, &proof).unwrap();
        let bytes = binary(&proof);
        assert!(matches!(bytes[0], b'a' | b'd'), "{name}");
        for step in [1, 3, 4096] {
            let read = Trickle { bytes: &bytes, step, fail_at: None, at: 0 };
            assert_eq!(check_lrat_from(&formula, read).unwrap_or_else(|e| panic!("{name}: {e}")), text, "{name}");
            let read = Trickle { bytes: proof.as_bytes(), step, fail_at: None, at: 0 };
            assert_eq!(check_lrat_from(&formula, read).unwrap(), text, "{name}");
        }
        // A read that fails is no judgement of the proof.
        let read = Trickle { bytes: &bytes, step: 7, fail_at: Some(bytes.len() / 2), at: 0 };
        assert!(matches!(check_lrat_from(&formula, read), Err(ProofError::Unreadable(_))), "{name}");
        // One hint flipped to another clause in the binary form: rejected at that step.
        let lines: Vec<&str> = proof.lines().filter(|l| !l.trim().is_empty()).collect();
        let last = lines.iter().rposition(|l| l.split_whitespace().nth(1) != Some("d")).unwrap();
        let mut tokens: Vec<String> = lines[last].split_whitespace().map(str::to_owned).collect();
        let hint = tokens.len() - 2;
        tokens[hint] = "999999".into();
        let mut flipped: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        flipped[last] = tokens.join(" ");
        match check_lrat_from(&formula, binary(&flipped.join("\n")).as_slice()) {
            Err(ProofError::Rejected(r)) => assert_eq!(r.line, last + 1, "{name}: {r}"),
            other => panic!("{name}: {other:?}"),
        }
        // Cut inside the last step.
        let cut = &bytes[..bytes.len() - 1];
        assert!(matches!(check_lrat_from(&formula, cut), Err(ProofError::Rejected(_))), "{name}");
    }
}

#[test]
fn models_are_judged_clause_by_clause() {
    let formula = Formula { variables: 3, clauses: vec![vec![1, 2], vec![-1, 3], vec![-2, -3]] };
    assert!(check_model(&formula, &[1, -2, 3]).is_ok());
    let rejection = check_model(&formula, &[1, 2, 3]).expect_err("clause 3 fails");
    assert!(rejection.message.contains('3'), "{rejection}");
    // The 4-variable example is unsatisfiable: no assignment is a model.
    let (_, unsat, _) = pairs().into_iter().find(|(n, _, _)| n == "example-4-vars").unwrap();
    for bits in 0u32..16 {
        let assignment: Vec<i32> = (1..=4).map(|v| if bits >> (v - 1) & 1 == 1 { v } else { -v }).collect();
        assert!(check_model(&unsat, &assignment).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn no_proof_text_makes_it_panic_or_accept_without_the_empty_clause(
        lines in prop::collection::vec(prop::collection::vec(-12i64..40, 0..8), 0..12)
    ) {
        let formula = Formula { variables: 4, clauses: vec![vec![1, 2], vec![-1, 2], vec![1, -2], vec![-1, -2]] };
        let text: Vec<String> = lines
            .iter()
            .map(|tokens| tokens.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" "))
            .collect();
        if let Ok(summary) = check_lrat(&formula, &text.join("\n")) {
            prop_assert!(summary.empty_clause_id > 4, "accepted only with a derived empty clause");
        }
    }
}
