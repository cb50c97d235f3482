//! Gröbner bases: the textbook cases and seeded random ideals, computed and checked.

use crate::*;

/// The monomial order a Gröbner case names.
/// The component's default budgets.
pub(crate) const GROEBNER_BUDGET: jacobian_polynomial_core::buchberger::Budget =
    jacobian_polynomial_core::buchberger::Budget { max_pairs: 20_000, max_work: 50_000_000 };

pub(crate) fn order_of(case: &serde_json::Value) -> poly::Order {
    match case["order"].as_str() {
        Some("lex") => poly::Order::Lex,
        Some("grlex") => poly::Order::Grlex,
        _ => poly::Order::Grevlex,
    }
}

/// Twelve seeded random ideals in two or three variables, over the three orders.
pub(crate) fn random_ideals() -> Vec<serde_json::Value> {
    let mut cases = Vec::new();
    let mut seed = 0x0067_726f_6562_6e65_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for i in 0..12 {
        let vars: Vec<&str> = ["x", "y", "z"][..2 + (i % 2)].to_vec();
        let generators: Vec<String> = (0..2 + next(2))
            .map(|_| {
                (0..2 + next(2))
                    .map(|_| {
                        let c = next(5) as i64 - 2;
                        let m: Vec<String> = vars.iter().map(|v| format!("{v}^{}", next(3))).collect();
                        format!("({})*{}", if c == 0 { 1 } else { c }, m.join("*"))
                    })
                    .collect::<Vec<_>>()
                    .join(" + ")
            })
            .collect();
        let order = ["lex", "grlex", "grevlex"][i % 3];
        cases.push(json!({"generators": generators, "vars": vars, "order": order}));
    }
    cases
}

/// Gröbner bases: the textbook cases and a seeded random set, compute and check.
pub(crate) fn groebner_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let oracle: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/oracles/groebner.json"),
        )
        .expect("groebner.json"),
    )
    .expect("json");
    let mut cases: Vec<serde_json::Value> = oracle["cases"].as_array().expect("cases").clone();
    let textbook = cases.len();
    cases.extend(random_ideals());
    let mut times = [(Duration::ZERO, Duration::ZERO); 2];
    let mut native = [Duration::ZERO; 2];
    for (i, case) in cases.iter().enumerate() {
        let vars: Vec<String> =
            case["vars"].as_array().expect("vars").iter().map(|v| v.as_str().expect("var").to_owned()).collect();
        let order = order_of(case);
        let start = Instant::now();
        let generators: Vec<poly::Poly> = case["generators"]
            .as_array()
            .expect("generators")
            .iter()
            .map(|g| poly::parse(g.as_str().expect("text"), &vars, order, 10).expect("parses"))
            .collect();
        std::hint::black_box(groebner::reduced_basis(&generators, vars.len(), order, GROEBNER_BUDGET).is_ok());
        native[usize::from(i >= textbook)] += start.elapsed();
        let input = json!({"generators": case["generators"], "vars": case["vars"], "order": case["order"]});
        let start = Instant::now();
        let result = call(&runtime, "polynomial.compute.groebner_basis", input);
        let compute = start.elapsed();
        let certificate = result.check_with.and_then(|c| c.certificate_artifact).expect("certificate");
        let start = Instant::now();
        let verified = call(&runtime, "polynomial.groebner_basis.verify", json!({"certificate": certificate}));
        let check = start.elapsed();
        assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified);
        let slot = usize::from(i >= textbook);
        times[slot].0 += compute;
        times[slot].1 += check;
    }
    for (name, count, (compute, check), same) in
        [("textbook", textbook, times[0], native[0]), ("seeded random", cases.len() - textbook, times[1], native[1])]
    {
        println!(
            "Gröbner bases, {name} ({count} ideals): compute with certificate {:.1} ms, independent check {:.1} ms \
(sandboxed, whole calls); the same parser and Buchberger compiled natively {:.1} ms (sandbox/native {:.2})",
            compute.as_secs_f64() * 1e3,
            check.as_secs_f64() * 1e3,
            same.as_secs_f64() * 1e3,
            compute.as_secs_f64() / same.as_secs_f64()
        );
    }
}
