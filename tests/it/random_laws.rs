//! Seeded random laws of one binary operation, built here (not by the
//! capability's parser), and z3 on a ground encoding of them over a finite
//! sort: outside truth for the finder. Shared by `countermodels.rs` and the
//! benchmark's `-- finder` section (which includes this file by path).
#![allow(dead_code)]

use std::io::Write;
use std::time::{Duration, Instant};

/// A term: a variable (by index into [`NAMES`]) or a product.
#[derive(Debug, Clone)]
pub enum Term {
    Var(usize),
    Op(Box<Term>, Box<Term>),
}

pub const NAMES: [&str; 5] = ["x", "y", "z", "u", "v"];

/// xorshift64: the seeded stream both corpora are drawn from.
pub fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

impl Term {
    /// A random term over `vars` variables, at most `depth` products deep.
    pub fn random(seed: &mut u64, vars: usize, depth: u32) -> Term {
        if depth == 0 || next(seed).is_multiple_of(4) {
            return Term::Var((next(seed) % vars as u64) as usize);
        }
        Term::Op(Box::new(Term::random(seed, vars, depth - 1)), Box::new(Term::random(seed, vars, depth - 1)))
    }

    /// In the capability's law syntax.
    pub fn text(&self) -> String {
        match self {
            Term::Var(i) => NAMES[*i].to_owned(),
            Term::Op(l, r) => format!("({}*{})", l.text(), r.text()),
        }
    }

    pub fn ops(&self) -> usize {
        match self {
            Term::Var(_) => 0,
            Term::Op(l, r) => 1 + l.ops() + r.ops(),
        }
    }

    fn smt(&self, assignment: &[usize]) -> String {
        match self {
            Term::Var(i) => format!("e{}", assignment[*i]),
            Term::Op(l, r) => format!("(m {} {})", l.smt(assignment), r.smt(assignment)),
        }
    }

    fn largest_var(&self) -> Option<usize> {
        match self {
            Term::Var(i) => Some(*i),
            Term::Op(l, r) => l.largest_var().max(r.largest_var()),
        }
    }
}

/// `lhs = rhs` at order `n` for z3: a finite sort of `n` elements and every
/// ground instance asserted.
pub fn ground_smt(lhs: &Term, rhs: &Term, n: usize) -> String {
    let k = lhs.largest_var().max(rhs.largest_var()).map_or(0, |m| m + 1);
    let elements: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    let mut smt = format!("(declare-datatypes () ((E {})))\n(declare-fun m (E E) E)\n", elements.join(" "));
    for code in 0..n.pow(k as u32) {
        let assignment: Vec<usize> = (0..k).map(|i| code / n.pow(i as u32) % n).collect();
        smt += &format!("(assert (= {} {}))\n", lhs.smt(&assignment), rhs.smt(&assignment));
    }
    smt + "(check-sat)\n"
}

/// z3's answer (`Some(true)` for sat, `None` when it gave up within `cap`) and its wall time.
pub fn run_z3(smt: &str, cap: Duration) -> (Option<bool>, Duration) {
    let start = Instant::now();
    let mut child = std::process::Command::new("z3")
        .args(["-in", &format!("-T:{}", cap.as_secs().max(1))])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("z3 is installed (scripts/test.sh installs it with apt-get)");
    child.stdin.take().expect("stdin").write_all(smt.as_bytes()).expect("z3 reads the problem");
    let output = child.wait_with_output().expect("z3 answers");
    let answer = match String::from_utf8_lossy(&output.stdout).trim() {
        "sat" => Some(true),
        "unsat" => Some(false),
        _ => None,
    };
    (answer, start.elapsed())
}
