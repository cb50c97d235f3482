//! The soundness harness of the Gröbner checker.
//!
//! Ideals are small (one to three variables, one to three generators of
//! degree at most three, small coefficients), so their reduced Gröbner basis
//! is computed here by a plain Buchberger's algorithm of the harness's own
//! (every pair, no criterion, exact rationals), which also writes the trace a
//! certificate carries. The claim "this basis is the reduced Gröbner basis of
//! the ideal of these generators" is true exactly when the basis is that
//! set. Certificates come in classes:
//! - `valid`: the harness's basis and trace, the generators written in one
//!   of several equivalent ways (terms reordered, spaces, parentheses,
//!   fractions as `a/b*x` or `(a/b)*x`), the trace sometimes homogenized;
//! - `basis`: a valid certificate whose basis is changed (a coefficient, a
//!   term, an element dropped, added, scaled or replaced);
//! - `generators`: the generators changed under the old basis and trace;
//! - `trace`: the trace changed (an index, a reducer added or dropped);
//! - `order`: the basis claimed for another monomial order;
//! - `syntax`: a generator written in a form the conventions read two ways
//!   (`1/-2*2`, `2/3^2`, `2*-3`), which must never be read as the lazy
//!   parser read it.
//!
//! The differential leg asks sympy (`groebner`, in one Python process for the
//! whole run) for the reduced basis of every ideal: the harness's Buchberger
//! and sympy must agree, and every certificate the checker accepts must state
//! sympy's basis.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use jacobian_soundness::{Budget, Rng, Tally, Verdict, run_program, scratch};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use crate::{Certificate, Trace, judge};

const NAMES: [&str; 3] = ["x", "y", "z"];
const ORDERS: [&str; 3] = ["lex", "grlex", "grevlex"];

/// A polynomial: exponent vector → non-zero coefficient.
type Poly = BTreeMap<Vec<u32>, BigRational>;

fn compare(order: &str, a: &[u32], b: &[u32]) -> Ordering {
    let degree = |m: &[u32]| m.iter().sum::<u32>();
    match order {
        "lex" => a.cmp(b),
        "grlex" => degree(a).cmp(&degree(b)).then_with(|| a.cmp(b)),
        _ => degree(a).cmp(&degree(b)).then_with(|| {
            // Reverse lexicographic on the last differing exponent: the smaller exponent is larger.
            for (x, y) in a.iter().zip(b).rev() {
                if x != y {
                    return y.cmp(x);
                }
            }
            Ordering::Equal
        }),
    }
}

fn lead<'a>(order: &str, p: &'a Poly) -> Option<(&'a Vec<u32>, &'a BigRational)> {
    p.iter().max_by(|a, b| compare(order, a.0, b.0))
}

fn add_scaled(p: &mut Poly, q: &Poly, c: &BigRational, shift: &[u32]) {
    for (m, a) in q {
        let m: Vec<u32> = m.iter().zip(shift).map(|(x, y)| x + y).collect();
        let entry = p.entry(m.clone()).or_insert_with(BigRational::zero);
        *entry += a * c;
        if entry.is_zero() {
            p.remove(&m);
        }
    }
}

fn divides(a: &[u32], b: &[u32]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y)
}

/// S-polynomial of `f` and `g`.
fn s_poly(order: &str, f: &Poly, g: &Poly) -> Poly {
    let ((mf, cf), (mg, cg)) = (lead(order, f).unwrap(), lead(order, g).unwrap());
    let lcm: Vec<u32> = mf.iter().zip(mg).map(|(a, b)| *a.max(b)).collect();
    let mut s = Poly::new();
    let shift_f: Vec<u32> = lcm.iter().zip(mf).map(|(l, a)| l - a).collect();
    let shift_g: Vec<u32> = lcm.iter().zip(mg).map(|(l, a)| l - a).collect();
    add_scaled(&mut s, f, &(BigRational::one() / cf), &shift_f);
    add_scaled(&mut s, g, &(-BigRational::one() / cg), &shift_g);
    s
}

/// Reduce `p` by `by` as the checker's trace replays it: again and again, the
/// largest term some element's leading monomial divides, cancelled by the
/// first such element; the indices used.
fn reduce(order: &str, mut p: Poly, by: &[Poly]) -> (Poly, Vec<usize>) {
    let mut used = Vec::new();
    loop {
        let mut terms: Vec<(&Vec<u32>, &BigRational)> = p.iter().collect();
        terms.sort_by(|a, b| compare(order, b.0, a.0));
        let found = terms.iter().find_map(|(m, c)| {
            by.iter().enumerate().find_map(|(i, g)| {
                let (lm, lc) = lead(order, g)?;
                divides(lm, m).then(|| (i, (*m).clone(), (*c).clone() / lc))
            })
        });
        let Some((i, m, factor)) = found else { return (p, used) };
        let (lm, _) = lead(order, &by[i]).unwrap();
        let shift: Vec<u32> = m.iter().zip(lm).map(|(a, b)| a - b).collect();
        add_scaled(&mut p, &by[i], &-factor, &shift);
        used.push(i);
    }
}

/// Buchberger's algorithm on every pair; the polynomials (generators first)
/// and the trace steps, or `None` past `work` reductions or a large coefficient.
fn buchberger(order: &str, generators: &[Poly], work: usize) -> Option<(Vec<Poly>, Vec<Vec<usize>>)> {
    let mut h: Vec<Poly> = generators.to_vec();
    let mut steps = Vec::new();
    let mut pairs: Vec<(usize, usize)> = (0..h.len())
        .flat_map(|j| (0..j).map(move |i| (i, j)))
        .filter(|&(i, j)| !h[i].is_empty() && !h[j].is_empty())
        .collect();
    let mut done = 0;
    while let Some((i, j)) = pairs.pop() {
        done += 1;
        if done > work {
            return None;
        }
        let (r, used) = reduce(order, s_poly(order, &h[i], &h[j]), &h);
        if r.is_empty() {
            continue;
        }
        if r.values().any(|c| c.numer().bits() > 200 || c.denom().bits() > 200) || h.len() > 40 {
            return None;
        }
        steps.push([i, j].into_iter().chain(used).collect());
        let k = h.len();
        h.push(r);
        pairs.extend((0..k).filter(|&i| !h[i].is_empty()).map(|i| (i, k)));
    }
    Some((h, steps))
}

/// The reduced Gröbner basis from a Gröbner basis, in decreasing order of leading monomials.
fn reduced(order: &str, basis: &[Poly]) -> Vec<Poly> {
    let mut minimal: Vec<Poly> = Vec::new();
    for (i, g) in basis.iter().enumerate().filter(|(_, g)| !g.is_empty()) {
        let lm = lead(order, g).unwrap().0;
        let dropped = basis.iter().enumerate().any(|(j, f)| {
            if j == i || f.is_empty() {
                return false;
            }
            let lf = lead(order, f).unwrap().0;
            divides(lf, lm) && (lf != lm || j < i)
        });
        if !dropped {
            minimal.push(g.clone());
        }
    }
    let mut out: Vec<Poly> = Vec::new();
    for i in 0..minimal.len() {
        let others: Vec<Poly> = minimal.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, g)| g.clone()).collect();
        // Reduce the tail only: the leading term stays (no other leading monomial divides it).
        let (lm, lc) = lead(order, &minimal[i]).map(|(m, c)| (m.clone(), c.clone())).unwrap();
        let mut tail = minimal[i].clone();
        tail.remove(&lm);
        let (tail, _) = reduce(order, tail, &others);
        let mut g = tail;
        g.insert(lm, lc.clone());
        let monic: Poly = g.iter().map(|(m, c)| (m.clone(), c / &lc)).collect();
        out.push(monic);
    }
    out.sort_by(|a, b| compare(order, lead(order, b).unwrap().0, lead(order, a).unwrap().0));
    out
}

fn random_poly(rng: &mut Rng, n: usize) -> Poly {
    let mut p = Poly::new();
    for _ in 0..rng.range(2, 4) {
        let m: Vec<u32> = loop {
            let m: Vec<u32> = (0..n).map(|_| rng.below(3) as u32).collect();
            if m.iter().sum::<u32>() <= 3 {
                break m;
            }
        };
        let c = BigRational::new(
            BigInt::from(rng.range(1, 5) as i64 * if rng.chance(1, 2) { 1 } else { -1 }),
            BigInt::from(rng.range(1, 2)),
        );
        let entry = p.entry(m.clone()).or_insert_with(BigRational::zero);
        *entry += c;
        if entry.is_zero() {
            p.remove(&m);
        }
    }
    p
}

/// `p` as text, terms in a random order, written one of several equivalent ways.
fn show(rng: &mut Rng, p: &Poly, vars: &[&str]) -> String {
    if p.is_empty() {
        return "0".into();
    }
    let mut terms: Vec<(&Vec<u32>, &BigRational)> = p.iter().collect();
    let shuffle = rng.chance(1, 3);
    if shuffle {
        for i in (1..terms.len()).rev() {
            terms.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    let spaced = rng.chance(1, 2);
    let mut out = String::new();
    for (k, (m, c)) in terms.iter().enumerate() {
        let negative = c.is_negative();
        let magnitude = c.abs();
        let sign = match (k, negative, spaced) {
            (0, true, _) => "-",
            (0, false, _) => "",
            (_, true, true) => " - ",
            (_, true, false) => "-",
            (_, false, true) => " + ",
            (_, false, false) => "+",
        };
        out.push_str(sign);
        let factors: Vec<String> = m
            .iter()
            .zip(vars)
            .filter(|(e, _)| **e > 0)
            .map(|(e, v)| if *e == 1 && rng.chance(3, 4) { (*v).to_owned() } else { format!("{v}^{e}") })
            .collect();
        let coefficient = if magnitude.is_integer() {
            magnitude.numer().to_string()
        } else if rng.chance(1, 2) {
            format!("{}/{}", magnitude.numer(), magnitude.denom())
        } else {
            format!("({}/{})", magnitude.numer(), magnitude.denom())
        };
        match (factors.is_empty(), magnitude.is_one() && rng.chance(3, 4)) {
            (true, _) => out.push_str(&coefficient),
            (false, true) => out.push_str(&factors.join("*")),
            (false, false) => {
                let _ = write!(out, "{coefficient}*{}", factors.join("*"));
            }
        }
    }
    if rng.chance(1, 6) { format!("({out})") } else { out }
}

fn homogenize(p: &Poly) -> Poly {
    let degree = p.keys().map(|m| m.iter().sum::<u32>()).max().unwrap_or(0);
    p.iter()
        .map(|(m, c)| {
            let mut lifted = m.clone();
            lifted.push(degree - m.iter().sum::<u32>());
            (lifted, c.clone())
        })
        .collect()
}

/// One ideal with its truth and a valid certificate.
struct Ideal {
    vars: Vec<&'static str>,
    order: &'static str,
    generators: Vec<Poly>,
    basis: Vec<Poly>,
    trace: Trace,
}

fn ideal(rng: &mut Rng) -> Option<Ideal> {
    let n = if rng.chance(1, 6) { 1 } else { rng.range(2, 3) as usize };
    let vars: Vec<&'static str> = NAMES[..n].to_vec();
    let order = *rng.pick(&ORDERS);
    let count = match rng.below(20) {
        0..=3 => 1,
        4..=16 => 2,
        _ => 3,
    };
    let generators: Vec<Poly> = (0..count).map(|_| random_poly(rng, n)).filter(|p| !p.is_empty()).collect();
    if generators.is_empty() {
        return None;
    }
    let (h, steps) = buchberger(order, &generators, 400)?;
    let basis = reduced(order, &h);
    // Sometimes the trace runs on the generators homogenized by h, in grevlex (as the producer's does).
    let homogenized = n < 3 && rng.chance(1, 4);
    let trace = if homogenized {
        let lifted: Vec<Poly> = generators.iter().map(homogenize).collect();
        let (_, steps) = buchberger("grevlex", &lifted, 400)?;
        Trace { order: "grevlex".into(), homogenize: true, steps }
    } else {
        Trace { order: order.into(), homogenize: false, steps }
    };
    Some(Ideal { vars, order, generators, basis, trace })
}

fn certificate(rng: &mut Rng, ideal: &Ideal, basis: &[Poly]) -> Certificate {
    Certificate {
        format: "groebner-certificate/2".into(),
        vars: ideal.vars.iter().map(|v| (*v).to_owned()).collect(),
        order: ideal.order.into(),
        generators: ideal.generators.iter().map(|g| show(rng, g, &ideal.vars)).collect(),
        basis: basis.iter().map(|g| show(rng, g, &ideal.vars)).collect(),
        trace: ideal.trace.clone(),
    }
}

/// A basis changed in one place.
fn changed_basis(rng: &mut Rng, ideal: &Ideal) -> Vec<Poly> {
    let mut basis = ideal.basis.clone();
    let k = rng.below(basis.len() as u64) as usize;
    let n = ideal.vars.len();
    match rng.below(6) {
        0 => {
            let m = basis[k].keys().nth(rng.below(basis[k].len() as u64) as usize).unwrap().clone();
            *basis[k].get_mut(&m).unwrap() += BigRational::one();
            basis[k].retain(|_, c| !c.is_zero());
        }
        1 => {
            let extra = random_poly(rng, n);
            for (m, c) in extra {
                let entry = basis[k].entry(m.clone()).or_insert_with(BigRational::zero);
                *entry += c;
                if entry.is_zero() {
                    basis[k].remove(&m);
                }
            }
        }
        2 => {
            basis.remove(k);
        }
        3 => basis.push(random_poly(rng, n)),
        4 => {
            let two = BigRational::from_integer(2.into());
            basis[k] = basis[k].iter().map(|(m, c)| (m.clone(), c * &two)).collect();
        }
        _ => {
            // A multiple of an element: in the ideal, but not reduced.
            let mut shifted = Poly::new();
            let shift: Vec<u32> = (0..n).map(|_| rng.below(2) as u32).collect();
            add_scaled(&mut shifted, &basis[k], &BigRational::one(), &shift);
            basis.push(shifted);
        }
    }
    basis.retain(|p| !p.is_empty());
    basis
}

/// Whether `claimed` is `truth` (as sets of polynomials).
fn same(claimed: &[Poly], truth: &[Poly]) -> bool {
    claimed.len() == truth.len() && claimed.iter().all(|p| truth.contains(p))
}

struct Case {
    class: &'static str,
    certificate: Certificate,
    /// The ideal's generators and the claimed basis, as polynomials, for the truth.
    generators: Vec<Poly>,
    claimed: Vec<Poly>,
    order: &'static str,
    vars: Vec<&'static str>,
}

fn case(rng: &mut Rng) -> Option<Case> {
    let ideal = ideal(rng)?;
    let class = match rng.below(10) {
        0..=2 => "valid",
        3..=5 => "basis",
        6 => "generators",
        7 => "trace",
        8 => "order",
        _ => "syntax",
    };
    let mut generators = ideal.generators.clone();
    let mut order = ideal.order;
    let claimed = match class {
        "basis" => changed_basis(rng, &ideal),
        _ => ideal.basis.clone(),
    };
    let mut certificate = certificate(rng, &ideal, &claimed);
    match class {
        "generators" => {
            let k = rng.below(generators.len() as u64) as usize;
            let extra = random_poly(rng, ideal.vars.len());
            for (m, c) in extra {
                let entry = generators[k].entry(m.clone()).or_insert_with(BigRational::zero);
                *entry += c;
                if entry.is_zero() {
                    generators[k].remove(&m);
                }
            }
            if generators[k].is_empty() {
                return None;
            }
            certificate.generators[k] = show(rng, &generators[k], &ideal.vars);
        }
        "trace" => {
            let steps = &mut certificate.trace.steps;
            if steps.is_empty() {
                steps.push(vec![0, 0]);
            } else {
                let s = rng.below(steps.len() as u64) as usize;
                match rng.below(3) {
                    0 if steps[s].len() > 2 => {
                        steps[s].pop();
                    }
                    1 => steps[s].push(rng.below(4) as usize),
                    _ => {
                        let t = rng.below(steps[s].len() as u64) as usize;
                        steps[s][t] = rng.below(5) as usize;
                    }
                }
            }
        }
        "order" => {
            order = *rng.pick(&ORDERS);
            certificate.order = order.into();
        }
        "syntax" => {
            // A generator plus a constant written so that readings differ; the claimed
            // basis is the one for a lazy reading (the first listed), the truth the usual one.
            let k = rng.below(generators.len() as u64) as usize;
            let (text, usual, lazy): (&str, i64, (i64, i64)) = *rng.pick(&[
                (" + 1/-2*2", -1, (-1, 4)),
                (" + 2/3^2", 0, (4, 9)),
                (" + 2*-3", -6, (2, 1)),
                (" - -1", 1, (-1, 1)),
            ]);
            let zero = vec![0; ideal.vars.len()];
            let read = |constant: BigRational| {
                let mut g = generators[k].clone();
                let entry = g.entry(zero.clone()).or_insert_with(BigRational::zero);
                *entry += constant;
                if entry.is_zero() {
                    g.remove(&zero);
                }
                g
            };
            let lazy_generator = read(BigRational::new(lazy.0.into(), lazy.1.into()));
            let usual_generator = if text == " + 2/3^2" {
                read(BigRational::new(2.into(), 9.into()))
            } else {
                read(BigRational::from_integer(usual.into()))
            };
            let mut lazy_ideal = generators.clone();
            lazy_ideal[k] = lazy_generator;
            if lazy_ideal[k].is_empty() || usual_generator.is_empty() {
                return None;
            }
            let (h, _) = buchberger(order, &lazy_ideal, 400)?;
            let lazy_basis = reduced(order, &h);
            certificate.generators[k] = format!("({}){text}", show(rng, &generators[k], &ideal.vars));
            certificate.basis = lazy_basis.iter().map(|g| show(rng, g, &ideal.vars)).collect();
            generators[k] = usual_generator;
            return Some(Case { class, certificate, generators, claimed: lazy_basis, order, vars: ideal.vars });
        }
        _ => {}
    }
    Some(Case { class, certificate, generators, claimed, order, vars: ideal.vars })
}

fn truth(case: &Case) -> Option<bool> {
    let (h, _) = buchberger(case.order, &case.generators, 400)?;
    Some(same(&case.claimed, &reduced(case.order, &h)))
}

fn describe(seed: u64, index: u64, c: &Certificate) -> String {
    format!("seed {seed:#x} instance {index}\n{c:#?}")
}

#[test]
fn groebner_brute_force_no_false_basis_is_accepted() {
    let budget = Budget::from_env(3_000, 1);
    let mut tally = Tally::new("groebner", "brute force (own Buchberger)");
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed, index);
        let Some(case) = case(&mut rng) else { continue };
        let Some(truth) = truth(&case) else { continue };
        let verdict = Verdict::of(judge(&case.certificate).is_ok());
        tally.judge(case.class, truth, verdict, || describe(budget.seed, index, &case.certificate));
        if case.class == "valid" {
            assert_eq!(
                verdict,
                Verdict::Accepted,
                "a valid certificate: {}",
                describe(budget.seed, index, &case.certificate)
            );
        }
    }
    tally.report();
    tally.assert_both_sides(budget.instances.min(3_000) / 20, budget.instances.min(3_000) / 20);
}

/// sympy's reduced Gröbner basis of every ideal: the harness's own must be
/// the same, and every certificate the checker accepts must state it.
#[test]
fn groebner_agrees_with_sympy() {
    let python = std::path::PathBuf::from("python3");
    let probe = run_program(
        &python,
        &[std::path::Path::new("-c"), std::path::Path::new("import sympy")],
        Duration::from_secs(60),
    );
    let required = std::env::var("JACOBIAN_SOUNDNESS_REQUIRE").is_ok_and(|l| l.split(',').any(|r| r.trim() == "sympy"));
    if probe.code != Some(0) {
        assert!(!required, "the reference sympy is required (JACOBIAN_SOUNDNESS_REQUIRE) but python3 cannot import it");
        println!("sympy: not run (python3 cannot import it)");
        return;
    }
    let budget = Budget::from_env(1_500, 5);
    let mut cases = Vec::new();
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed ^ 0x5e, index);
        if let Some(case) = case(&mut rng) {
            cases.push((index, case));
        }
    }
    // One line of input per ideal: vars, order, generators as sympy reads them.
    let mut input = String::new();
    for (_, case) in &cases {
        let generators: Vec<String> = case.generators.iter().map(|g| sympy_text(g, &case.vars)).collect();
        let _ = writeln!(input, "{}\t{}\t{}", case.vars.join(","), case.order, generators.join(";"));
    }
    let dir = scratch("groebner");
    let (source, script) = (dir.join("ideals.txt"), dir.join("groebner.py"));
    std::fs::write(&source, input).unwrap();
    std::fs::write(&script, SYMPY_SCRIPT).unwrap();
    let run = run_program(&python, &[&script, &source], Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "sympy failed: {}", run.output);
    let answers: Vec<&str> = run.output.lines().collect();
    assert_eq!(answers.len(), cases.len(), "one answer per ideal");
    let mut tally = Tally::new("groebner", "sympy");
    for ((index, case), answer) in cases.iter().zip(answers) {
        let theirs: Vec<Poly> = answer
            .split(';')
            .filter(|t| !t.is_empty())
            .map(|t| {
                crate::poly(t, &case.vars.iter().map(|v| (*v).to_owned()).collect::<Vec<_>>())
                    .expect("sympy's polynomial")
                    .into_iter()
                    .collect()
            })
            .collect();
        let Some((h, _)) = buchberger(case.order, &case.generators, 400) else { continue };
        let ours_truth = reduced(case.order, &h);
        let truth = same(&case.claimed, &theirs);
        let verdict = Verdict::of(judge(&case.certificate).is_ok());
        let describe = || format!("{}\nsympy: {answer}", describe(budget.seed ^ 0x5e, *index, &case.certificate));
        tally.judge(case.class, truth, verdict, describe);
        // The harness's truth is sympy's.
        tally.compare(Verdict::of(same(&ours_truth, &theirs)), Verdict::Accepted, || None, describe);
    }
    tally.report();
    tally.assert_compared(cases.len() as u64 / 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `p` as sympy reads it (`**` for powers, every coefficient a fraction).
fn sympy_text(p: &Poly, vars: &[&str]) -> String {
    let terms: Vec<String> = p
        .iter()
        .map(|(m, c)| {
            let mut term = format!("Rational({}, {})", c.numer(), c.denom());
            for (e, v) in m.iter().zip(vars) {
                if *e > 0 {
                    let _ = write!(term, "*{v}**{e}");
                }
            }
            term
        })
        .collect();
    terms.join(" + ")
}

/// Reads `vars<TAB>order<TAB>g1;g2…` lines; prints each reduced basis,
/// elements separated by `;`, in the checker's syntax.
const SYMPY_SCRIPT: &str = r#"
import sys
from sympy import Rational, groebner, symbols, Poly
for line in open(sys.argv[1]):
    names, order, generators = line.rstrip("\n").split("\t")
    gens = symbols(names.replace(",", " "), seq=True)
    scope = {str(g): g for g in gens}
    scope["Rational"] = Rational
    polys = [eval(g, {"__builtins__": {}}, scope) for g in generators.split(";")]
    basis = groebner(polys, *gens, order=order)
    out = []
    for g in basis.exprs:
        p = Poly(g, *gens)
        lc = p.LC(order=order)
        terms = []
        for monom, coeff in p.terms():
            coeff = coeff / lc
            factors = ["%s^%d" % (v, e) for v, e in zip(names.split(","), monom) if e > 0]
            terms.append("(%s)*%s" % (coeff, "*".join(factors)) if factors else "(%s)" % coeff)
        out.append(" + ".join(terms))
    print(";".join(out))
"#;
