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
        self.smt_as(&|i| format!("e{}", assignment[i]))
    }

    /// In SMT-LIB, variable `i` written `name(i)`.
    fn smt_as(&self, name: &dyn Fn(usize) -> String) -> String {
        match self {
            Term::Var(i) => name(*i),
            Term::Op(l, r) => format!("(m {} {})", l.smt_as(name), r.smt_as(name)),
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
    let mut smt = sort_and_operation(n);
    assert_instances(&mut smt, lhs, rhs, n);
    smt + "(check-sat)\n"
}

/// The finite sort of `n` elements and the operation `m` on it.
fn sort_and_operation(n: usize) -> String {
    let elements: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    format!("(declare-datatypes () ((E {})))\n(declare-fun m (E E) E)\n", elements.join(" "))
}

/// The number of variables `lhs = rhs` uses (they are numbered from 0).
fn variables(lhs: &Term, rhs: &Term) -> usize {
    lhs.largest_var().max(rhs.largest_var()).map_or(0, |m| m + 1)
}

/// Assert every ground instance of `lhs = rhs` at order `n`.
fn assert_instances(smt: &mut String, lhs: &Term, rhs: &Term, n: usize) {
    let k = variables(lhs, rhs);
    for code in 0..n.pow(k as u32) {
        let assignment: Vec<usize> = (0..k).map(|i| code / n.pow(i as u32) % n).collect();
        *smt += &format!("(assert (= {} {}))\n", lhs.smt(&assignment), rhs.smt(&assignment));
    }
}

/// `op(l, r)`: the product `l*r`.
pub fn op(l: Term, r: Term) -> Term {
    Term::Op(Box::new(l), Box::new(r))
}

/// A law `lhs = rhs`.
pub type Law = (Term, Term);

/// A law in the capability's syntax.
pub fn law_text((lhs, rhs): &Law) -> String {
    format!("{} = {}", lhs.text(), rhs.text())
}

/// A countermodel at order `n` for z3: every ground instance of each
/// hypothesis asserted, and the target refuted at some constants.
pub fn countermodel_smt(hypotheses: &[Law], target: &Law, n: usize) -> String {
    let mut smt = sort_and_operation(n);
    for (lhs, rhs) in hypotheses {
        assert_instances(&mut smt, lhs, rhs, n);
    }
    // The target's variables as constants: z3 picks the instance (faster for
    // it than a disjunction over every instance).
    let constants: Vec<String> = (0..variables(&target.0, &target.1)).map(|i| format!("c{i}")).collect();
    for c in &constants {
        smt += &format!("(declare-const {c} E)\n");
    }
    let refuted = |t: &Term| t.smt_as(&|i| constants[i].clone());
    smt + &format!("(assert (not (= {} {})))\n(check-sat)\n", refuted(&target.0), refuted(&target.1))
}

/// Laws whose smallest countermodel's order mathematics knows: (what it is,
/// hypotheses, target, that order).
pub fn textbook() -> Vec<(&'static str, Vec<Law>, Law, usize)> {
    let (x, y, z) = (|| Term::Var(0), || Term::Var(1), || Term::Var(2));
    // Groups written with division x*y = x/y: Higman and Neumann's single
    // axiom x/((((x/x)/y)/z)/(((x/x)/x)/z)) = y defines them. Their product
    // is x/((x/x)/y) (e = x/x, y⁻¹ = e/y). Every group of order at most 5 is
    // abelian, and S3 (order 6) is not.
    let xx = || op(x(), x());
    let hn = (op(x(), op(op(op(xx(), y()), z()), op(op(xx(), x()), z()))), y());
    let abelian = (op(x(), op(xx(), y())), op(y(), op(op(y(), y()), x())));
    // Steiner quasigroups: idempotent, commutative, x*(x*y) = y. They exist
    // exactly for orders 1 and 3 (mod 6); the one of order 3 is distributive,
    // the Fano plane's (order 7) is not.
    let steiner = vec![(xx(), x()), (op(x(), y()), op(y(), x())), (op(x(), op(x(), y())), y())];
    let distributive = (op(x(), op(y(), z())), op(op(x(), y()), op(x(), z())));
    vec![
        ("groups (division, Higman-Neumann axiom) not all abelian: S3", vec![hn], abelian, 6),
        ("Steiner quasigroups not all distributive: the Fano plane", steiner, distributive, 7),
    ]
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
