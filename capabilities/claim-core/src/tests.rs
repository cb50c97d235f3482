//! The syntax alone: precedence, associativity and grouping; refusals that
//! name the position; and on random formulas, the shape they were built
//! with and spans that slice the source into exactly each subformula.

use proptest::prelude::*;

use crate::syntax::{Node, collect_atoms, parse, rebase, slice};

/// The shape of a structure: kinds, names and children, without spans.
fn shape(node: &Node) -> String {
    match node.kind.as_str() {
        "ATOM" => node.name.clone().unwrap_or_default(),
        kind => format!("{kind}({})", node.children.iter().map(shape).collect::<Vec<_>>().join(", ")),
    }
}

#[test]
fn precedence_associativity_and_grouping_are_the_declared_ones() {
    for (formula, expected) in [
        ("p -> q -> r", "IMPLIES(p, IMPLIES(q, r))"),
        ("p ∧ q ∧ r", "AND(p, q, r)"),
        ("(p ∧ q) ∧ r", "AND(AND(p, q), r)"),
        ("p | q & r", "OR(p, AND(q, r))"),
        ("¬p ∧ q <-> r", "IFF(AND(NOT(p), q), r)"),
        ("not (p or q) implies false", "IMPLIES(NOT(OR(p, q)), FALSE())"),
    ] {
        assert_eq!(shape(&parse(formula).unwrap()), expected, "{formula}");
    }
    let atoms = {
        let mut atoms = Vec::new();
        collect_atoms(&parse("q ∧ p ∧ q").unwrap(), &mut atoms);
        atoms
    };
    assert_eq!(atoms, ["q", "p"]);
}

#[test]
fn prose_and_printed_lean_are_refused_at_their_position() {
    for (formula, position) in [
        ("every magma is associative", "position 6"),
        ("∀ x, p x", "position 0"),
        ("p ∧", "position 3"),
        ("(p ∨ q", "position 6"),
        ("p <-> q <-> r", "position 8"),
    ] {
        let error = parse(formula).expect_err(formula);
        assert!(error.starts_with(position), "{formula}: {error}");
        assert!(error.contains("outside this contract"), "{error}");
    }
}

/// A random formula, printed with random spacing, parentheses and spellings,
/// with the shape it must parse to (built alongside, not by the parser).
fn formula() -> impl Strategy<Value = (String, String)> {
    let atom = prop::sample::select(vec!["p", "q", "r", "x1", "y_2"]).prop_map(|a| (a.to_owned(), a.to_owned()));
    atom.prop_recursive(5, 40, 3, |inner| {
        let binary = |spellings: Vec<&'static str>, kind: &'static str| {
            (inner.clone(), prop::sample::select(spellings), inner.clone())
                .prop_map(move |((a, sa), op, (b, sb))| (format!("({a}){op}({b})"), format!("{kind}({sa}, {sb})")))
        };
        prop_oneof![
            (prop::sample::select(vec!["¬", "~", "not "]), inner.clone())
                .prop_map(|(op, (f, sf))| (format!("{op}({f})"), format!("NOT({sf})"))),
            binary(vec![" ∧ ", " & ", " and "], "AND"),
            binary(vec![" ∨ ", "|", " or "], "OR"),
            binary(vec![" → ", "->", " implies "], "IMPLIES"),
            binary(vec![" ↔ ", "<->", " iff "], "IFF"),
        ]
    })
}

/// Every node's span slices the source into text that parses to the same shape.
fn spans_are_exact(source: &str, node: &Node) -> Result<(), TestCaseError> {
    let text = slice(source, node.span);
    let again = parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
    prop_assert_eq!(shape(&again), shape(node), "{:?}", text);
    prop_assert_eq!(again.parenthesized, node.parenthesized);
    prop_assert_eq!(rebase(node, node.span[0]).span, [0, text.chars().count()]);
    for child in &node.children {
        prop_assert!(node.span[0] <= child.span[0] && child.span[1] <= node.span[1]);
        spans_are_exact(source, child)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn formulas_parse_to_their_shape_and_spans_slice_the_source_into_each_subformula(
        (source, expected) in formula(),
    ) {
        let root = parse(&source).map_err(|e| TestCaseError::fail(format!("{source:?}: {e}")))?;
        prop_assert_eq!(shape(&root), expected, "{:?}", source);
        spans_are_exact(&source, &root)?;
    }
}
