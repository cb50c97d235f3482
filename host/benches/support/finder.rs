//! `-- finder`: `universal_algebra.search.countermodel` in the sandbox against
//! Debian's z3 on a seeded corpus of laws `x = t(x, y[, z])` (terms of depth
//! at most 4), grouped by the order of their smallest non-trivial model.
//!
//! For each law the sandbox searches orders 2..=7 in one invocation (the
//! whole invocation is timed); z3 gets a ground encoding over a finite sort
//! for each order from 2 until it answers `sat`, one process per order, and
//! its time is the sum less the start-up of a z3 process answering an empty
//! problem (measured in the same run). Laws the sandbox stops on (its default
//! work budget) are given to z3 with a time cap, to see whether a model of
//! order at most 7 was missed. A law whose model was found by an affine
//! magma after the search stopped at a smaller order is counted apart: its
//! smallest model's order is not known.
//!
//! `-- finder_large`: a second seeded corpus for orders 6 and 7 (laws over
//! 2..5 variables, filtered for having no small linear model), see
//! [`larger_orders`].

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::random_laws::{NAMES, Term, countermodel_smt, ground_smt, law_text, run_z3, textbook};

/// z3 on `x = rhs` at order `n`: its answer and wall time.
fn z3(rhs: &Term, n: usize, cap: Duration) -> (Option<bool>, Duration) {
    run_z3(&ground_smt(&Term::Var(0), rhs, n), cap)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

type Invoke<'a> = &'a dyn Fn(&str, Value) -> jacobian::contract::CapabilityResult;

const SEARCH: &str = "universal_algebra.search.countermodel";

/// The finder's output for `input` (it always answers one).
fn output(invoke: Invoke, input: Value) -> Value {
    let result = invoke(SEARCH, input);
    result.output.unwrap_or_else(|| panic!("the finder answered {:?}", result.diagnostic))
}

/// `invoke` runs a capability in the sandbox.
pub fn figures(invoke: Invoke) {
    checker_figures(invoke);
    let search = |input: Value| output(invoke, input);
    let Some(start_up) = z3_start_up() else { return };
    let mut seed = 0x00f1_dbe7_u64;
    let mut corpus: Vec<Term> = Vec::new();
    while corpus.len() < 1200 {
        let vars = if corpus.len() % 3 == 2 { 3 } else { 2 };
        let rhs = Term::random(&mut seed, vars, 4);
        let text = rhs.text();
        if rhs.ops() >= 3 && text.contains('y') && (vars == 2 || text.contains('z')) {
            corpus.push(rhs);
        }
    }
    // By our smallest order: (law, its right-hand side, our time).
    let mut groups: Vec<Vec<(String, Term, Duration)>> = vec![Vec::new(); 8];
    let mut stopped: Vec<(String, Term, usize)> = Vec::new();
    let (mut none, mut affine, mut past_stop) = (0, 0, Vec::new());
    for rhs in corpus {
        let law = format!("x = {}", rhs.text());
        let start = Instant::now();
        let output = search(
            json!({"hypotheses": [law], "target": "x = y", "min_order": 2, "max_order": 7, "max_work": 100_000_000}),
        );
        let ours = start.elapsed();
        affine += usize::from(output["found_by"].as_str().is_some_and(|f| f.starts_with("affine")));
        match (output["order"].as_u64(), output["budget_exhausted"] == true) {
            // Every smaller order exhausted: the smallest model's order.
            (Some(order), false) if groups[order as usize].len() < 12 => groups[order as usize].push((law, rhs, ours)),
            (Some(_), false) => {}
            // An affine model found after the search stopped at a smaller order.
            (Some(order), true) => past_stop.push((output["stopped_at_order"].as_u64().unwrap_or(2), order)),
            (None, true) => stopped.push((law, rhs, output["stopped_at_order"].as_u64().unwrap_or(2) as usize)),
            (None, false) => none += 1,
        }
    }
    println!(
        "finder: 1,200 seeded laws x = t(x,y[,z]), depth <= 4; sandbox orders 2..7, default budgets; z3 {} (start-up \
{:.0} ms, subtracted); {none} laws have no model of order 2..7 (exhausted), {} stopped on the work budget with no \
model, {} found a model by an affine magma of a later order after the search stopped ((stopped at, found at): {:?}); \
{affine} models in all were affine",
        String::from_utf8_lossy(&std::process::Command::new("z3").arg("--version").output().expect("z3").stdout).trim(),
        start_up.as_secs_f64() * 1e3,
        stopped.len(),
        past_stop.len(),
        past_stop.iter().fold(std::collections::BTreeMap::<(u64, u64), usize>::new(), |mut m, k| {
            *m.entry(*k).or_default() += 1;
            m
        })
    );
    let cap = Duration::from_secs(60);
    for (order, group) in groups.iter().enumerate().skip(2) {
        if group.is_empty() {
            println!("  order {order}: no law of the corpus has its smallest model here");
            continue;
        }
        let (mut ours, mut theirs, mut within) = (Vec::new(), Vec::new(), 0);
        for (law, rhs, time) in group {
            let mut total = Duration::ZERO;
            let mut found = None;
            for n in 2..=order {
                let (answer, t) = z3(rhs, n, cap);
                total += t.saturating_sub(start_up);
                if answer != Some(false) {
                    found = answer.map(|_| n);
                    break;
                }
            }
            assert_eq!(found, Some(order), "{law}: z3's smallest model order");
            within += usize::from(time.as_secs_f64() <= 1.0);
            ours.push(time.as_secs_f64() * 1e3);
            theirs.push(total.as_secs_f64() * 1e3);
        }
        let (m_ours, m_theirs) = (median(ours.clone()), median(theirs.clone()));
        println!(
            "  order {order}: {} laws, {within} found within 1 s in the sandbox; median sandbox {m_ours:.1} ms (max \
{:.1}), z3 {m_theirs:.1} ms (max {:.1}); z3/sandbox {:.1}x",
            group.len(),
            ours.iter().copied().fold(0.0, f64::max),
            theirs.iter().copied().fold(0.0, f64::max),
            m_theirs / m_ours
        );
    }
    // The orders the sandbox did not exhaust, for the first eight laws it stopped on.
    let (mut missed, mut unknown) = (0, 0);
    for (law, rhs, from) in stopped.iter().take(8) {
        for n in *from..=7 {
            match z3(rhs, n, Duration::from_secs(10)).0 {
                Some(false) => continue,
                Some(true) => {
                    missed += 1;
                    println!("  stopped at order {from}: {law}: z3 finds a model of order {n}");
                }
                None => unknown += 1,
            }
            break;
        }
    }
    println!(
        "  of the first {} laws the sandbox stopped on, z3 (10 s an order, from the order the sandbox stopped in to 7) \
finds a model for {missed} and gives up on {unknown}",
        stopped.len().min(8)
    );
}

/// `-- finder_textbook`: the textbook cases (smallest countermodels of orders 6
/// and 7 known from mathematics): the sandbox on orders 1..7 at the default budgets, z3 order
/// by order from 2 until `sat` (its start-up subtracted); both must find the
/// known order.
pub fn textbook_figures(invoke: Invoke) {
    let Some(start_up) = z3_start_up() else { return };
    let search = |input: Value| output(invoke, input);
    for (what, hypotheses, target, order) in textbook() {
        let laws: Vec<String> = hypotheses.iter().map(law_text).collect();
        let input = json!({"hypotheses": laws, "target": law_text(&target), "min_order": 1, "max_order": 7});
        let (mut ours, mut found) = (Vec::new(), None);
        for _ in 0..3 {
            let start = Instant::now();
            found = search(input.clone())["order"].as_u64();
            ours.push(start.elapsed().as_secs_f64() * 1e3);
        }
        assert_eq!(found, Some(order as u64), "{what}: the sandbox's smallest countermodel");
        let mut theirs = Duration::ZERO;
        for n in 2..=order {
            let (answer, t) = run_z3(&countermodel_smt(&hypotheses, &target, n), Duration::from_secs(120));
            theirs += t.saturating_sub(start_up);
            assert_eq!(answer, Some(n == order), "{what}: z3 at order {n}");
        }
        let ours = median(ours);
        let theirs = theirs.as_secs_f64() * 1e3;
        println!(
            "finder: textbook, order {order}: {what}: sandbox {ours:.1} ms (median of 3, orders 1..7), z3 {theirs:.1} ms \
(orders 2..{order}); z3/sandbox {:.1}x",
            theirs / ours
        );
    }
}

/// The wall time of a z3 process answering an empty problem (the least of
/// five), or `None` when z3 is not installed.
fn z3_start_up() -> Option<Duration> {
    if std::process::Command::new("z3").arg("--version").output().is_err() {
        println!("finder: z3 is not installed (scripts/test.sh installs it); skipping the comparison");
        return None;
    }
    (0..5).map(|_| run_z3("(check-sat)\n", Duration::from_secs(10)).1).min()
}

/// The smallest `n` in `2..=max` for which `x = rhs` holds in a linear magma
/// `x*y = a·x + b·y` over Z_n: a cheap filter for laws with no small model of
/// that kind (written here, apart from the capability's affine stage).
fn smallest_linear_model(rhs: &Term, max: u64) -> Option<u64> {
    fn coefficients(t: &Term, a: u64, b: u64, n: u64) -> [u64; 5] {
        match t {
            Term::Var(i) => std::array::from_fn(|v| u64::from(v == *i)),
            Term::Op(l, r) => {
                let (l, r) = (coefficients(l, a, b, n), coefficients(r, a, b, n));
                std::array::from_fn(|v| (a * l[v] + b * r[v]) % n)
            }
        }
    }
    (2..=max).find(|&n| {
        (0..n * n).any(|ab| {
            let c = coefficients(rhs, ab / n, ab % n, n);
            c[0] == 1 && c[1..].iter().all(|&k| k == 0)
        })
    })
}

/// The second corpus, for orders 6 and 7: 20,000 seeded laws `x = t` over
/// 2..5 variables (depth at most 4), kept when their smallest linear model
/// over Z_n has order 7 (so none of order 2..5 is linear), then searched in
/// the sandbox on orders 2..7 with the default budgets. z3 gets 60 s a law in
/// all (orders 2.. until `sat`); a capped law gives a lower bound.
pub fn larger_orders(invoke: Invoke) {
    let Some(start_up) = z3_start_up() else { return };
    let mut seed = 0x5eed_1234_u64;
    let (mut drawn, mut seen) = (0, std::collections::HashSet::new());
    // By the order found: laws with every smaller order exhausted, and laws whose model was
    // found by an affine magma after the search stopped at a smaller order.
    let (mut groups, mut past_stop, mut stopped) = (vec![Vec::new(); 8], Vec::new(), 0);
    while drawn < 20_000 {
        let vars = 2 + drawn % 4;
        let rhs = Term::random(&mut seed, vars, 4);
        let text = rhs.text();
        if rhs.ops() < 3 || !NAMES[1..vars].iter().all(|name| text.contains(name)) {
            continue;
        }
        drawn += 1;
        if smallest_linear_model(&rhs, 7) != Some(7) || !seen.insert(text.clone()) {
            continue;
        }
        let law = format!("x = {text}");
        let start = Instant::now();
        let output = output(invoke, json!({"hypotheses": [law], "target": "x = y", "min_order": 2, "max_order": 7}));
        let ours = start.elapsed();
        match (output["order"].as_u64(), output["budget_exhausted"] == true) {
            (Some(order), false) => groups[order as usize].push((law, rhs, ours)),
            (Some(order), true) => past_stop.push((law, rhs, output["stopped_at_order"].as_u64(), order)),
            (None, _) => stopped += 1,
        }
    }
    let smaller: Vec<String> = (2..6).map(|order| format!("{} of order {order}", groups[order].len())).collect();
    println!(
        "finder, orders 6 and 7: 20,000 seeded laws x = t over 2..5 variables, depth <= 4; the {} distinct ones whose \
smallest linear model x*y = a*x + b*y over Z_n has order 7 were searched in the sandbox (orders 2..7, default \
budgets). With every smaller order exhausted: {}, {} of order 6, {} of order 7. {} found by an affine magma after the \
search stopped at a smaller order; {stopped} stopped with no model. z3 gets 60 s a law (orders from 2 until sat).",
        seen.len(),
        smaller.join(", "),
        groups[6].len(),
        groups[7].len(),
        past_stop.len()
    );
    // z3 on x = rhs for the orders `orders` until it answers sat, within a minute in all:
    // (the order it found a model at, whether it answered every order it was asked, its time).
    let z3_until = |rhs: &Term, orders: std::ops::RangeInclusive<usize>| {
        let cap = Duration::from_secs(60);
        let mut total = Duration::ZERO;
        for n in orders {
            let (answer, t) = z3(rhs, n, cap.saturating_sub(total).max(Duration::from_secs(1)));
            total += t.saturating_sub(start_up);
            match answer {
                Some(false) => continue,
                Some(true) => return (Some(n), true, total),
                None => return (None, false, total),
            }
        }
        (None, true, total)
    };
    for (order, group) in groups.iter().enumerate().skip(6) {
        let (mut ours, mut theirs, mut capped) = (Vec::new(), Vec::new(), 0);
        for (law, rhs, time) in group.iter().take(12) {
            let (found, answered, total) = z3_until(rhs, 2..=order);
            if answered {
                assert_eq!(found, Some(order), "{law}: z3's smallest model order");
            }
            capped += usize::from(!answered);
            let (t_ours, t_theirs) = (time.as_secs_f64() * 1e3, total.as_secs_f64() * 1e3);
            println!(
                "  order {order}: {law}: sandbox {t_ours:.0} ms; z3 {}{t_theirs:.0} ms",
                if answered { "" } else { "gave up after " }
            );
            ours.push(t_ours);
            theirs.push(t_theirs);
        }
        if ours.is_empty() {
            continue;
        }
        let within = ours.iter().filter(|&&t| t <= 1e3).count();
        let (m_ours, m_theirs) = (median(ours.clone()), median(theirs));
        println!(
            "  order {order}: {} laws, {within} found within 1 s in the sandbox; median sandbox {m_ours:.1} ms (max \
{:.1}); median z3 {}{m_theirs:.0} ms ({capped} gave up at the minute); z3/sandbox {}{:.0}x",
            ours.len(),
            ours.iter().copied().fold(0.0, f64::max),
            if capped > 0 { ">= " } else { "" },
            if capped > 0 { ">= " } else { "" },
            m_theirs / m_ours
        );
    }
    // Whether the search missed a smaller model where it stopped: z3 from the order it stopped in.
    for (law, rhs, stopped_at, order) in past_stop.iter().take(4) {
        let from = stopped_at.map_or(2, |o| o as usize);
        let (found, answered, total) = z3_until(rhs, from..=*order as usize - 1);
        let verdict = match (found, answered) {
            (Some(n), _) => format!("finds a model of order {n}"),
            (None, true) => format!("finds none of order {from}..{}", order - 1),
            (None, false) => "gives up".to_owned(),
        };
        println!(
            "  stopped at order {from}, affine model of order {order}: {law}: z3 {verdict} ({:.0} ms)",
            total.as_secs_f64() * 1e3
        );
    }
}

/// Larger tables through the independent checker: non-abelian groups (a
/// quasigroup with an identity that is associative, not commutative).
fn checker_figures(invoke: Invoke) {
    for order in [8, 12, 16] {
        let start = Instant::now();
        let found = invoke(
            SEARCH,
            json!({"hypotheses": ["associative", "has_identity", "quasigroup"], "target": "commutative",
                   "min_order": order, "max_order": order}),
        );
        let searched = start.elapsed();
        let output = found.output.as_ref().expect("output");
        assert_eq!(output["order"], order, "{output}");
        let certificate = found.check_with.and_then(|c| c.certificate_artifact).expect("a certificate");
        let start = Instant::now();
        let verified = invoke("universal_algebra.countermodel.verify", json!({"countermodel": certificate}));
        let checked = start.elapsed();
        assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified);
        println!(
            "finder: a non-abelian group of order {order}: found in {:.1} ms ({} decisions, fuel {}); checked by \
universal_algebra.countermodel.verify in {:.1} ms (fuel {})",
            searched.as_secs_f64() * 1e3,
            output["nodes"],
            found.fuel_consumed,
            checked.as_secs_f64() * 1e3,
            verified.fuel_consumed
        );
    }
}
