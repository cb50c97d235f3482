use serde_json::json;

use super::*;

#[test]
fn json_pointers_become_dot_paths() {
    assert_eq!(dot_path("input", ""), "input");
    assert_eq!(dot_path("input", "/hypotheses/1"), "input.hypotheses.1");
    assert_eq!(dot_path("input", "/a~1b/c~0d"), "input.a/b.c~d");
}

#[test]
fn artifact_references_are_found_at_any_depth_with_their_paths() {
    let input = json!({
        "countermodel": "artifact://sha256/aa",
        "nested": {"list": ["plain", "artifact://other"]},
        "number": 3,
    });
    let found = artifact_references(&input, "input");
    assert_eq!(
        found,
        vec![
            ("input.countermodel".to_owned(), "artifact://sha256/aa".to_owned()),
            ("input.nested.list.1".to_owned(), "artifact://other".to_owned()),
        ]
    );
}

#[test]
fn budgets_may_be_lowered_but_never_raised() {
    let policy = Policy::default();
    let lowered = resolve_budgets(&policy, Some(BudgetRequest { fuel: Some(5), ..Default::default() }))
        .expect("lower is fine");
    assert_eq!(lowered.fuel, 5);
    assert_eq!(lowered.memory_bytes, policy.budgets.memory_bytes);
    for request in [
        BudgetRequest { fuel: Some(policy.budgets.fuel + 1), ..Default::default() },
        BudgetRequest { memory_bytes: Some(0), ..Default::default() },
        BudgetRequest { output_bytes: Some(u64::MAX), ..Default::default() },
    ] {
        let diagnostic = resolve_budgets(&policy, Some(request)).expect_err("refused");
        assert_eq!(diagnostic.code, Code::BudgetExceedsPolicy);
        assert!(diagnostic.details["path"].as_str().is_some_and(|p| p.starts_with("budget.")));
    }
}
