//! The core alone, natively: the smallest counterexamples of the oracle
//! (outside truth), counts of labelled magmas by law that follow from the
//! definitions, and on random law sets, countermodels that are what they
//! claim to be.

use proptest::prelude::*;

use crate::laws::{self, Law, NAMED_LAWS, Table};
use crate::search::{Budget, find, find_with};

fn law(text: &str) -> Law {
    laws::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn complete(table: &[Vec<u8>]) -> Table {
    let n = table.len();
    Table { n, cells: table.iter().flatten().map(|&v| Some(v)).collect() }
}

/// Every table of order `n`, in order.
fn all_tables(n: usize) -> impl Iterator<Item = Table> {
    let cells = n * n;
    (0..(n as u64).pow(cells as u32)).map(move |mut code| {
        let values = (0..cells)
            .map(|_| {
                let v = (code % n as u64) as u8;
                code /= n as u64;
                Some(v)
            })
            .collect();
        Table { n, cells: values }
    })
}

fn nodes(max_nodes: u64) -> Budget {
    Budget { max_nodes, max_work: u64::MAX }
}

fn holds(law: &Law, table: &Table) -> bool {
    laws::violation(law, table).is_none()
}

#[test]
fn the_oracles_smallest_counterexamples_are_found_at_their_orders() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/oracles/magmas.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("outside truth {}: {e}", path.display()));
    let oracle: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = oracle["cases"].as_array().unwrap();
    // "every commutative magma is associative": smallest counterexample of order 2, e.g. NAND.
    assert_eq!(cases[0]["smallest_counterexample_order"], 2);
    let outcome = find(&[law("commutative")], &law("associative"), 1, 4, nodes(1_000_000));
    assert_eq!(outcome.orders_exhausted, vec![1]);
    assert_eq!(outcome.found.as_ref().map(|c| c.order), Some(2));
    let nand: Vec<Vec<u8>> = serde_json::from_value(cases[0]["example"]["table"].clone()).unwrap();
    assert!(holds(&law("commutative"), &complete(&nand)) && !holds(&law("associative"), &complete(&nand)));
    // "every commutative quasigroup is associative": order 3, x*y = -x-y mod 3.
    assert_eq!(cases[1]["smallest_counterexample_order"], 3);
    let outcome = find(&[law("commutative"), law("quasigroup")], &law("associative"), 1, 4, nodes(1_000_000));
    assert_eq!(outcome.orders_exhausted, vec![1, 2]);
    assert_eq!(outcome.found.as_ref().map(|c| c.order), Some(3));
    let rule: Vec<Vec<u8>> = (0..3).map(|x| (0..3).map(|y| ((6 - x - y) % 3) as u8).collect()).collect();
    assert!(holds(&law("quasigroup"), &complete(&rule)) && !holds(&law("associative"), &complete(&rule)));
    // "every magma of order 1 is associative".
    assert_eq!(cases[2]["holds"], true);
    let outcome = find(&[], &law("associative"), 1, 1, nodes(1_000));
    assert_eq!((outcome.found, outcome.orders_exhausted), (None, vec![1]));
}

#[test]
fn labelled_magmas_are_counted_as_the_definitions_say() {
    // Of the n^(n^2) tables, the commutative ones choose n(n+1)/2 cells freely (2^3, 3^6), the
    // idempotent ones fix the n diagonal cells (2^2), and the quasigroups are the Latin squares
    // (2 of order 2, 12 of order 3).
    let count = |law: &Law, n: usize| all_tables(n).filter(|t| holds(law, t)).count();
    assert_eq!(count(&law("commutative"), 2), 8);
    assert_eq!(count(&law("commutative"), 3), 729);
    assert_eq!(count(&law("idempotent"), 2), 4);
    assert_eq!(count(&law("quasigroup"), 2), 2);
    assert_eq!(count(&law("quasigroup"), 3), 12);
    // Associative binary operations on 2 labelled elements: 8 of the 16.
    assert_eq!(count(&law("associative"), 2), 8);
    // An equation and its named law agree on every table.
    for t in all_tables(2) {
        assert_eq!(holds(&law("x*(y*z) = (x*y)*z"), &t), holds(&law("associative"), &t));
    }
}

#[test]
fn bad_laws_are_refused_with_what_is_wrong() {
    let chain = format!("x = {}", vec!["x"; 258].join("*"));
    for (text, expected) in [
        ("x*(y", "x*(y"),
        ("x = y = z", "exactly one '='"),
        ("commutativ", "unknown law"),
        (chain.as_str(), "more than 256 products"),
    ] {
        let error = laws::parse(text).expect_err(text);
        assert!(error.contains(expected), "{text}: {error}");
    }
    // `*` associates to the left: x*y*z is (x*y)*z.
    let left = law("x*y*z = (x*y)*z");
    assert!(all_tables(2).all(|t| holds(&left, &t)));
}

#[test]
fn the_oracle_defines_every_named_law() {
    let named: Vec<&str> = NAMED_LAWS.iter().map(|(name, _)| *name).collect();
    assert_eq!(named, jacobian_test_law_definitions::LAWS);
}

fn named_law() -> impl Strategy<Value = &'static str> {
    prop::sample::select(NAMED_LAWS.iter().map(|(name, _)| *name).collect::<Vec<_>>())
}

/// A named law, judged from its definition on a complete table (the shared
/// oracle, apart from the evaluator the search uses).
fn by_definition(law: &str, table: &Table) -> bool {
    let n = table.n;
    jacobian_test_law_definitions::holds(law, n, &|a, b| table.cells[a * n + b].expect("a complete table") as usize)
}

fn table() -> impl Strategy<Value = Table> {
    (1usize..=4).prop_flat_map(|n| {
        prop::collection::vec(0..n as u8, n * n)
            .prop_map(move |cells| Table { n, cells: cells.into_iter().map(Some).collect() })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    #[test]
    fn named_laws_are_evaluated_as_their_definitions_say(table in table(), name in named_law()) {
        prop_assert_eq!(holds(&law(name), &table), by_definition(name, &table));
    }

    #[test]
    fn a_countermodel_satisfies_every_hypothesis_and_violates_the_target(
        hypotheses in prop::collection::vec(named_law(), 0..3),
        target in named_law(),
    ) {
        let laws: Vec<Law> = hypotheses.iter().map(|h| law(h)).collect();
        let outcome = find(&laws, &law(target), 1, 3, nodes(200_000));
        let countermodel = |t: &Table| hypotheses.iter().all(|h| by_definition(h, t)) && !by_definition(target, t);
        if let Some(found) = &outcome.found {
            prop_assert!(countermodel(&complete(&found.table)));
        } else if outcome.stopped.is_none() {
            // Exhausted: no table of those orders is a countermodel.
            for n in 1..=3 {
                prop_assert!(!all_tables(n).any(|t| countermodel(&t)), "a countermodel of order {} was missed", n);
            }
        }
    }
}

/// A random term over `vars` variables, at most `depth` operations deep.
fn term(vars: usize, depth: u32) -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(["x", "y", "z", "w"][..vars].to_vec()).prop_map(str::to_owned);
    leaf.prop_recursive(depth, 16, 2, |inner| (inner.clone(), inner).prop_map(|(l, r)| format!("({l}*{r})")))
}

fn equation(vars: usize) -> impl Strategy<Value = String> {
    (term(vars, 3), term(vars, 3)).prop_map(|(l, r)| format!("{l} = {r}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random equations: the search finds a countermodel exactly when the
    /// brute force over every table finds one, at the same smallest order.
    #[test]
    fn random_laws_agree_with_brute_force(
        hypothesis in equation(3),
        target in prop_oneof![equation(2), Just("x = y".to_owned())],
        quasigroup in any::<bool>(),
        identity in any::<bool>(),
    ) {
        let mut hypotheses = vec![law(&hypothesis)];
        if quasigroup { hypotheses.push(Law::Quasigroup); }
        if identity { hypotheses.push(Law::HasIdentity); }
        let target = law(&target);
        let countermodel = |t: &Table| hypotheses.iter().all(|h| holds(h, t)) && !holds(&target, t);
        let smallest = (1..=3).find(|&n| all_tables(n).any(|t| countermodel(&t)));
        // With the affine magmas tried first, and by the search alone.
        for affine_first in [true, false] {
            let outcome = find_with(&hypotheses, &target, (1, 3), nodes(u64::MAX), affine_first);
            prop_assert!(outcome.stopped.is_none());
            prop_assert_eq!(outcome.found.as_ref().map(|c| usize::from(c.order)), smallest);
            if let Some(found) = &outcome.found {
                prop_assert!(countermodel(&complete(&found.table)));
                prop_assert!(affine_first || found.affine.is_none());
            }
            let exhausted: Vec<u8> = (1..=smallest.unwrap_or(4) as u8 - 1).collect();
            prop_assert_eq!(outcome.orders_exhausted, exhausted);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The affine stage's linear forms against tables: at orders 2..=5 it
    /// answers exactly when some affine magma over Z_n (built cell by cell and
    /// judged by the evaluator) satisfies the hypotheses and violates the target.
    #[test]
    fn affine_forms_agree_with_the_tables_they_stand_for(
        hypothesis in equation(3),
        named in prop::option::of(named_law()),
        target in prop_oneof![equation(2), named_law().prop_map(str::to_owned)],
        n in 2usize..=5,
    ) {
        let mut hypotheses = vec![law(&hypothesis)];
        hypotheses.extend(named.map(law));
        let target = law(&target);
        let mut meter = crate::engine::Meter { nodes: 0, work: 0, max_nodes: u64::MAX, max_work: u64::MAX };
        let found = match crate::affine::find(&hypotheses, &target, n, &mut meter) {
            crate::affine::Tried::Found(found) => Some(found),
            crate::affine::Tried::None => None,
            crate::affine::Tried::OutOfWork => unreachable!("no budget"),
        };
        let countermodel = |t: &Table| hypotheses.iter().all(|h| holds(h, t)) && !holds(&target, t);
        let any = (0..n * n * n).any(|abc| {
            let (a, b, c) = (abc / (n * n), abc / n % n, abc % n);
            let cells = (0..n * n).map(|i| Some(((a * (i / n) + b * (i % n) + c) % n) as u8)).collect();
            countermodel(&Table { n, cells })
        });
        if let Some(found) = &found {
            let table = Table { n, cells: found.cells.iter().map(|&v| Some(v)).collect() };
            prop_assert!(countermodel(&table), "{}", found.rule);
            // The witness, found from the forms, is a violation the table shows.
            if let (Law::Equation { vars, .. }, Some(at)) = (&target, found.witness["assignment"].as_object()) {
                let a: Vec<u8> = vars.iter().map(|v| at[v].as_u64().expect("a value") as u8).collect();
                prop_assert_eq!(laws::violation_at(&target, &table, &a), Some(found.witness.clone()));
            }
        }
        // Z_n comes first; at order 4, GF(4) may answer where Z_4 has none.
        prop_assert!(found.is_some() == any || (n == 4 && found.is_some()));
    }
}

#[test]
fn the_smallest_nontrivial_model_of_a_hard_law_is_found_at_order_five() {
    // Outside truth: z3 (a ground encoding over a finite sort) finds no model of this law of
    // order 2..4 and one of order 5 (tests/it/countermodels.rs runs z3 itself on a corpus).
    // The search alone (the law has an affine model of order 5 too).
    let outcome = find_with(&[law("x = y*(x*((y*x)*y))")], &law("x = y"), (2, 8), nodes(10_000_000), false);
    assert_eq!(outcome.orders_exhausted, vec![2, 3, 4]);
    let found = outcome.found.expect("a model of order 5");
    assert_eq!((found.order, found.affine), (5, None));
    assert!(holds(&law("x = y*(x*((y*x)*y))"), &complete(&found.table)));
}

#[test]
fn budgets_stop_the_search_and_say_where() {
    // The search alone: its budgets and where it stopped.
    let hard = [law("x = y*(x*((y*x)*y))")];
    let find = |hypotheses: &[Law], target: &Law, min: u8, max: u8, budget: Budget| {
        find_with(hypotheses, target, (min, max), budget, false)
    };
    let outcome = find(&hard, &law("x = y"), 2, 8, Budget { max_nodes: u64::MAX, max_work: 2_000 });
    assert_eq!(outcome.found, None);
    let (order, stop) = outcome.stopped.expect("stopped");
    assert_eq!(stop, crate::search::Stop::Work);
    assert_eq!(outcome.orders_exhausted, (2..order).collect::<Vec<_>>());
    let outcome = find(&hard, &law("x = y"), 2, 8, nodes(3));
    assert_eq!(outcome.stopped.map(|s| s.1), Some(crate::search::Stop::Nodes));
    // An order whose ground instances would not fit is a stop, not a refusal.
    // (Its only affine magma of order 13 is x*y = y, which satisfies the target.)
    let six = [law("x*(y*(z*(w*(u*v)))) = v")];
    let outcome = find(&six, &law("x*y = y"), 13, 14, nodes(u64::MAX));
    assert!(matches!(outcome.stopped, Some((13, crate::search::Stop::Instances(_)))), "{:?}", outcome.stopped);
    // An order with a million instances (16^5) stops close to a budget far below its set-up's cost
    // (evaluating every instance alone would spend more than 4·10^7).
    let five = [law("x*(y*(z*(w*u))) = u")];
    for max_work in [1_000_000, 20_000_000] {
        let outcome = find(&five, &law("x*y = y"), 16, 16, Budget { max_nodes: u64::MAX, max_work });
        assert_eq!(outcome.stopped, Some((16, crate::search::Stop::Work)));
        assert!(outcome.work <= max_work + 100_000, "{} spent of {max_work}", outcome.work);
    }
}

#[test]
fn an_affine_model_is_found_where_the_search_and_z3_stall() {
    // z3 (the ground encoding of tests/it/random_laws.rs) gives up on order 5 after two
    // minutes; the search alone spends its budget there. The affine magmas of order 5 are
    // tried before the search, after orders 2..4 were exhausted.
    let hard = law("x = ((((y*x)*y)*((x*x)*y))*((y*(y*y))*(x*(x*y))))");
    let outcome = find(std::slice::from_ref(&hard), &law("x = y"), 2, 7, nodes(u64::MAX));
    assert_eq!(outcome.orders_exhausted, vec![2, 3, 4]);
    let found = outcome.found.expect("a model of order 5");
    assert_eq!((found.order, outcome.stopped), (5, None));
    assert!(found.affine.as_deref().is_some_and(|rule| rule.ends_with("over Z_5")), "{:?}", found.affine);
    assert!(holds(&hard, &complete(&found.table)));
}

#[test]
fn after_a_stop_the_affine_magmas_of_the_later_orders_are_tried() {
    // One decision allowed: the search stops at order 2; an affine model of a later order
    // is still found, and the order it stopped in is not claimed exhausted.
    let hypotheses = [law("x = y*(x*((y*x)*y))")];
    let outcome = find(&hypotheses, &law("x = y"), 2, 8, Budget { max_nodes: 1, max_work: u64::MAX });
    assert_eq!(outcome.stopped.map(|s| s.1), Some(crate::search::Stop::Nodes));
    let (stopped_at, _) = outcome.stopped.expect("stopped");
    let found = outcome.found.expect("an affine model after the stop");
    assert!(found.order > stopped_at && found.affine.is_some());
    assert!(holds(&hypotheses[0], &complete(&found.table)));
    assert!(outcome.orders_exhausted.iter().all(|&o| o < stopped_at), "{:?}", outcome.orders_exhausted);
    // The orders between were tried by their affine magmas alone.
    assert_eq!(outcome.affine_after_stop, (stopped_at + 1..found.order).collect::<Vec<_>>());
}

#[test]
fn the_affine_rings_are_commutative_rings_and_the_fields_fields() {
    for n in 1..=16 {
        for ring in crate::affine::Ring::of_order(n) {
            assert!(ring.is_commutative_ring(), "{}", ring.name);
            if ring.name.starts_with("GF") {
                assert!((1..n as u8).all(|x| (1..n as u8).any(|y| ring.product(x, y) == 1)), "{}", ring.name);
            }
        }
    }
}

/// OEIS values, read in place (outside truth).
fn oeis(id: &str, order: usize) -> usize {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/oracles/sequences.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("outside truth {}: {e}", path.display()));
    let sequences: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(sequences[id]["offset"], 0, "{id} starts at order 0");
    sequences[id]["values"][order].as_u64().unwrap_or_else(|| panic!("{id} has no value for order {order}")) as usize
}

#[test]
fn models_up_to_isomorphism_are_counted_as_the_oeis_counts_them() {
    use crate::enumerate::{UpTo, models};
    let count = |laws: &[&str], order: u8, up_to: UpTo| {
        let laws: Vec<Law> = laws.iter().map(|l| law(l)).collect();
        let found = models(&laws, order, up_to, u64::MAX, u64::MAX);
        assert_eq!(found.stopped, None);
        found.models.len()
    };
    for order in 1..=3u8 {
        let n = usize::from(order);
        assert_eq!(count(&[], order, UpTo::Isomorphism), oeis("A001329", n), "all magmas of order {n}");
        assert_eq!(count(&["commutative"], order, UpTo::Isomorphism), oeis("A001425", n), "commutative, {n}");
    }
    for order in 1..=5u8 {
        let n = usize::from(order);
        let semigroup = ["associative", "commutative"];
        assert_eq!(count(&semigroup, order, UpTo::Isomorphism), oeis("A001426", n), "commutative semigroups, {n}");
        // A027851's values (1, 1, 5, 24, 188, 1915, ...) count semigroups up to isomorphism alone,
        // whatever the title beside them says (up to anti-isomorphism too is A001423: 1, 1, 4, 18, ...).
        assert_eq!(count(&["associative"], order, UpTo::Isomorphism), oeis("A027851", n), "semigroups, {n}");
        let up_to_anti = count(&["associative"], order, UpTo::IsomorphismOrAnti);
        assert!(up_to_anti < oeis("A027851", n) || n < 2, "left- and right-zero semigroups are anti-isomorphic");
    } // A budget ends an enumeration early and says so; what it kept is a subset.
    let partial = models(&[], 3, UpTo::Isomorphism, u64::MAX, 20_000);
    assert_eq!(partial.stopped, Some(crate::engine::Limit::Work));
    assert!(partial.models.len() < oeis("A001329", 3));
}

/// Whether every row (or column) of a complete table is a permutation.
fn lines_permute(table: &Table, rows: bool) -> bool {
    let n = table.n;
    (0..n).all(|i| {
        let mut seen = 0u32;
        for j in 0..n {
            let cell = if rows { i * n + j } else { j * n + i };
            seen |= 1 << table.cells[cell].expect("complete");
        }
        seen.count_ones() as usize == n
    })
}

#[test]
fn the_lines_a_law_makes_permutations_are_read_from_its_path_to_the_variable() {
    use crate::engine::Lines;
    let lines = |text: &str| Lines::implied(&law(text));
    let (rows, columns, both) = (
        Lines { rows: true, columns: false },
        Lines { rows: false, columns: true },
        Lines { rows: true, columns: true },
    );
    // Higman and Neumann's division axiom: rows at its root, columns at `(… * y) * z`.
    assert_eq!(lines("x*((((x*x)*y)*z)*(((x*x)*x)*z)) = y"), both);
    assert_eq!(lines("x = y*(x*((y*x)*y))"), rows);
    assert_eq!(lines("(x*y)*z = x"), columns);
    assert_eq!(lines("(y*(x*z))*u = x"), both);
    assert_eq!(lines("x*(y*z) = y"), both);
    assert_eq!(lines("quasigroup"), both);
    // The variable on both sides of a product, absent, or no variable side: nothing.
    for text in ["x = (x*y)*x", "x = y*z", "x*y = y*x", "associative", "has_identity"] {
        assert_eq!(lines(text), Lines::default(), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every table of order up to 3 satisfying a random law `v = t` has the
    /// permutation rows and columns the engine assumes of its models.
    #[test]
    fn the_lines_a_law_implies_are_permutations_in_every_model(
        var in prop::sample::select(vec!["x", "y", "z"]),
        t in term(3, 4),
        swap in any::<bool>(),
    ) {
        let text = if swap { format!("{t} = {var}") } else { format!("{var} = {t}") };
        let hypothesis = law(&text);
        let lines = crate::engine::Lines::implied(&hypothesis);
        prop_assume!(lines.rows || lines.columns);
        for n in 1..=3 {
            for table in all_tables(n).filter(|t| holds(&hypothesis, t)) {
                prop_assert!(!lines.rows || lines_permute(&table, true), "{}: rows of {:?}", text, table.cells);
                prop_assert!(!lines.columns || lines_permute(&table, false), "{}: columns of {:?}", text, table.cells);
            }
        }
    }
}

#[test]
fn models_of_laws_that_make_lines_permutations_are_all_kept() {
    use crate::enumerate::{UpTo, models};
    // Groups written with division are the models of Higman and Neumann's axiom (rows and columns
    // permutations): as many up to isomorphism as there are groups, OEIS A000001: 1, 1, 1, 2, 1, 2.
    let division = [law("x*((((x*x)*y)*z)*(((x*x)*x)*z)) = y")];
    let groups: Vec<usize> =
        (1..=6u8).map(|n| models(&division, n, UpTo::Isomorphism, u64::MAX, u64::MAX).models.len()).collect();
    assert_eq!(groups, [1, 1, 1, 2, 1, 2]);
    // Rows alone (`x = y*(y*x)`) and columns alone (`x = (x*y)*y`): the classes of the models
    // among every table of order up to 3, against those the search keeps.
    for text in ["x = y*(y*x)", "x = (x*y)*y"] {
        let laws = [law(text)];
        for n in 1..=3usize {
            let perms = crate::enumerate::permutations(n);
            let classes: std::collections::BTreeSet<Vec<u8>> = all_tables(n)
                .filter(|t| holds(&laws[0], t))
                .map(|t| {
                    let cells: Vec<u8> = t.cells.iter().map(|c| c.expect("complete")).collect();
                    crate::enumerate::canonical(n, &cells, &perms, UpTo::Isomorphism)
                })
                .collect();
            let found = models(&laws, n as u8, UpTo::Isomorphism, u64::MAX, u64::MAX);
            assert_eq!(found.models.len(), classes.len(), "{text}, order {n}");
        }
    }
}

/// Blanks separate tokens: `x y` is two operands side by side, refused, never the one name `xy`.
#[test]
fn blanks_separate_names() {
    assert!(crate::laws::parse("x y = x").is_err());
    assert!(crate::laws::parse(" x * ( y*z ) = ( x * y ) * z ").is_ok());
}
