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

/// The rules at their edges, where the documentation puts them: the largest
/// id and variable, a tautological lemma, a hint whose remaining literal is
/// already true, the summary's counts, and the messages rejections print.
#[test]
fn the_rules_hold_at_their_edges() {
    let every = Formula { variables: 2, clauses: vec![vec![1, 2], vec![-1, 2], vec![1, -2], vec![-1, -2]] };
    let max = i32::MAX as u64;
    assert_eq!(check_lrat(&every, &format!("5 2 0 1 2 0\n{max} 0 5 3 4 0\n")).unwrap().empty_clause_id, max);
    let above = check_lrat(&every, &format!("5 2 0 1 2 0\n{} 0 5 3 4 0\n", max + 1)).unwrap_err();
    assert!(above.message.contains("is above"), "{above}");
    // Variable 2^30 (an extension variable) is read; 2^30 + 1 is not.
    let big = 1u64 << 30;
    assert!(check_lrat(&every, &format!("5 {big} 2 0 1 2 0\n6 2 0 1 2 0\n7 0 6 3 4 0\n")).is_ok());
    let wide = check_lrat(&every, &format!("5 {} 2 0 1 2 0\n", big + 1)).unwrap_err();
    assert!(wide.message.contains("out of range"), "{wide}");
    // A tautological lemma is implied as it is; the counts add up.
    let summary = check_lrat(&every, "5 1 -1 0 0\n6 2 0 1 2 0\n6 d 5 0\n7 0 6 3 4 0\n").unwrap();
    assert_eq!((summary.lemmas, summary.rat_lemmas, summary.deletions, summary.empty_clause_id), (3, 0, 1, 7));
    // A RAT lemma is counted as one.
    let rat =
        "5 -3 1 0 0\n6 -3 2 0 0\n7 3 -1 -2 0 -5 -6 0\n8 1 0 1 3 0\n9 -1 3 0 4 2 0\n10 3 0 8 9 0\n11 0 10 5 6 4 0\n";
    assert_eq!(check_lrat(&every, rat).unwrap().rat_lemmas, 3);
    // A hint whose one literal left is true already changes nothing (lrat-check allows it).
    assert!(check_lrat(&every, "5 2 0 1 1 2 0\n6 0 5 3 4 0\n").is_ok());
    // What a rejection prints.
    let at = |line| crate::Rejection { line, message: "why".into() };
    assert_eq!((at(3).to_string(), at(0).to_string()), ("line 3: why".to_owned(), "why".to_owned()));
    assert_eq!(ProofError::Rejected(at(2)).to_string(), "line 2: why");
    let unreadable = ProofError::Unreadable(std::io::Error::other("gone"));
    assert_eq!(unreadable.to_string(), "the proof could not be read: gone");
}

/// A model is read literal by literal: a literal twice is one, both signs
/// are refused, and a clause naming a variable the header does not declare
/// is not satisfied by it.
#[test]
fn a_model_is_read_literal_by_literal() {
    let formula = Formula { variables: 3, clauses: vec![vec![1, 2], vec![-3]] };
    assert!(check_model(&formula, &[1, 1, -3]).is_ok());
    assert!(check_model(&formula, &[1, -1, -3]).unwrap_err().message.contains("both ways"));
    assert!(check_model(&formula, &[1, 4]).unwrap_err().message.contains("outside 1..=3"));
    assert!(check_model(&formula, &[0]).unwrap_err().message.contains("outside 1..=3"));
    let undeclared = Formula { variables: 1, clauses: vec![vec![2]] };
    assert!(check_model(&undeclared, &[1]).unwrap_err().message.contains("not satisfied"));
}

/// Numbers at their edges in both syntaxes, and lines counted across blank
/// lines and comments for rejections.
#[test]
fn numbers_and_lines_are_read_exactly() {
    let every = Formula { variables: 2, clauses: vec![vec![1, 2], vec![-1, 2], vec![1, -2], vec![-1, -2]] };
    // The rejected step is on line 5, after a comment and blank lines.
    let text = "c a comment\n\n5 2 0 1 2 0\n\n6 0 5 3 9 0\n";
    assert_eq!(check_lrat(&every, text).unwrap_err().line, 5);
    let spaced = "5  2   0 1\t2 0\r\n6 0 5 3 4 0\n";
    assert!(check_lrat(&every, spaced).is_ok());
    // Blanks before a step, and lines of blanks only, are skipped (and counted).
    let indented = " \t5 2 0 1 2 0\n \r\n\t 6 0 5 3 4 0\n";
    assert!(check_lrat(&every, indented).is_ok());
    assert_eq!(check_lrat(&every, " 5 2 0 1 2 0\n\r\n  6 0 5 3 9 0\n").unwrap_err().line, 3);
    // Binary: the largest number a step may hold reads back exactly, a longer one is refused.
    let mut proof = Vec::new();
    proof.push(b'a');
    number(&mut proof, i32::MAX.into());
    number(&mut proof, 0);
    number(&mut proof, 0);
    let rejected = check_lrat_from(&every, proof.as_slice()).unwrap_err().to_string();
    assert!(rejected.contains("without a conflict"), "{rejected}");
    let mut long = vec![b'a'];
    long.extend([0xffu8; 10]);
    long.push(0x01);
    assert!(check_lrat_from(&every, long.as_slice()).unwrap_err().to_string().contains("out of range"));
    // A hint of 2^60 takes nine bytes: read, and found to name no clause.
    let mut far = vec![b'a'];
    for x in [5, 2, 0, 1i64 << 60, 0] {
        number(&mut far, x);
    }
    let rejected = check_lrat_from(&every, far.as_slice()).unwrap_err().to_string();
    assert!(rejected.contains("names no active clause"), "{rejected}");
    // A literal beyond the variables any lemma may hold is refused as read, in both syntaxes.
    for huge in [i64::from(i32::MAX) + 2, (1 << 30) + 1, (1 << 32) + 1] {
        let mut wide = vec![b'a'];
        for x in [5, huge, 0, 1, 0] {
            number(&mut wide, x);
        }
        let rejected = check_lrat_from(&every, wide.as_slice()).unwrap_err().to_string();
        assert!(rejected.contains("literal out of range"), "{huge}: {rejected}");
        let rejected = check_lrat(&every, &format!("5 {huge} 0 1 0\n")).unwrap_err().to_string();
        assert!(rejected.contains("literal out of range"), "{huge}: {rejected}");
    }
    // Cut inside a number, not between steps.
    let cut = &far[..far.len() - 3];
    assert!(check_lrat_from(&every, cut).unwrap_err().to_string().contains("ends inside a number"));
    // Cut after a whole number, inside a step.
    let short = &far[..far.len() - 1];
    let rejected = check_lrat_from(&every, short).unwrap_err().to_string();
    assert!(rejected.contains("ends inside") && !rejected.contains("a number"), "{rejected}");
}

/// A read the system interrupts is tried again, not taken for the end or a
/// failure; a step's id must be positive in either syntax.
#[test]
fn interrupted_reads_are_retried_and_ids_are_positive() {
    struct Interrupting<'a> {
        bytes: &'a [u8],
        calls: usize,
    }
    impl std::io::Read for Interrupting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 1 {
                return Err(std::io::Error::from(std::io::ErrorKind::Interrupted));
            }
            let n = buf.len().min(self.bytes.len()).min(3);
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }
    let every = Formula { variables: 2, clauses: vec![vec![1, 2], vec![-1, 2], vec![1, -2], vec![-1, -2]] };
    let proof = "5 2 0 1 2 0\n6 0 5 3 4 0\n";
    let read = Interrupting { bytes: proof.as_bytes(), calls: 0 };
    assert_eq!(check_lrat_from(&every, read).unwrap().empty_clause_id, 6);
    let deletion_by_zero = "0 d 1 0\n5 2 0 1 2 0\n";
    assert!(check_lrat(&every, deletion_by_zero).unwrap_err().message.contains("positive clause id"));
    let mut binary = vec![b'd'];
    number(&mut binary, 0);
    let rejected = check_lrat_from(&every, [&b"a"[..], &[0u8], &binary[1..]].concat().as_slice()).unwrap_err();
    assert!(rejected.to_string().contains("positive clause id"), "{rejected}");
}
