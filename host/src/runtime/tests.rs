use std::borrow::Cow;
use std::sync::Arc;

use jacobian_guest::protocol::{InputKind, Provider};
use serde_json::json;

use super::diagnostics::{artifact_references, dot_path};
use super::execute::GuestRequest;
use super::stages::{Call, Prepared, Unrouted, Validated, Work};
use super::validate::resolve_budgets;
use super::verification_binding;
use crate::catalog::{CatalogEntry, EntryKind};
use crate::contract::{BudgetRequest, CallBudgets, Code, InvokeRequest, VerificationRecord, VerificationStatus};
use crate::digest::Digest;
use crate::engine::ArtifactAccess;
use crate::policy::Policy;
use crate::registry::Tier;
use crate::store::CertificateRecord;
use jacobian_guest::protocol::Mode;

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
    let lowered =
        resolve_budgets(&policy, Some(BudgetRequest { fuel: Some(5), ..Default::default() })).expect("lower is fine");
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

#[test]
fn budget_presets_are_shares_of_the_operator_fuel_and_explicit_fields_win() {
    use crate::budgets::BudgetPreset;
    let policy = Policy::default();
    let fuel = |request: BudgetRequest| resolve_budgets(&policy, Some(request)).expect("within the policy").fuel;
    let preset = |p| BudgetRequest { preset: Some(p), ..Default::default() };
    assert_eq!(fuel(preset(BudgetPreset::Quick)), policy.budgets.fuel / 100);
    assert_eq!(fuel(preset(BudgetPreset::Standard)), policy.budgets.fuel / 10);
    assert_eq!(fuel(preset(BudgetPreset::Deep)), policy.budgets.fuel);
    assert_eq!(fuel(BudgetRequest { fuel: Some(7), ..preset(BudgetPreset::Deep) }), 7, "an explicit field wins");
    let memory = resolve_budgets(&policy, Some(preset(BudgetPreset::Quick))).unwrap().memory_bytes;
    assert_eq!(memory, policy.budgets.memory_bytes, "memory stays the operator's");
}

#[test]
fn the_verification_binding_changes_when_any_bound_part_changes() {
    let record = VerificationRecord {
        status: VerificationStatus::Verified,
        reason: String::new(),
        checker_role: "role".into(),
        checker_digest: Digest::of(b"checker"),
        checker_version: "1.0.0".into(),
        checker_authorized: true,
        certificate_format: "cayley-table-witness/1".into(),
        certificate_artifacts: Vec::new(),
        claim_digest: Some(Digest::of(b"claim")),
        candidate_digest: Some(Digest::of(b"candidate")),
        semantics_digest: Some(Digest::of(b"semantics")),
        scope_digest: Some(Digest::of(b"scope")),
        binding_digest: None,
        checked: Vec::new(),
        remaining_obligations: Vec::new(),
        recall: None,
        quorum: None,
    };
    let base = verification_binding(&record).expect("complete record");
    let other = || Some(Digest::of(b"other"));
    type Change = Box<dyn Fn(&mut VerificationRecord)>;
    let variants: Vec<(&str, Change)> = vec![
        ("claim", Box::new(move |r| r.claim_digest = other())),
        ("semantics", Box::new(move |r| r.semantics_digest = other())),
        ("candidate", Box::new(move |r| r.candidate_digest = other())),
        ("scope", Box::new(move |r| r.scope_digest = other())),
        ("certificate format", Box::new(|r| r.certificate_format = "lrat".into())),
        ("checker version", Box::new(|r| r.checker_version = "1.0.1".into())),
        ("checker digest", Box::new(|r| r.checker_digest = Digest::of(b"x"))),
    ];
    for (part, change) in variants {
        let mut changed = record.clone();
        change(&mut changed);
        assert_ne!(verification_binding(&changed), Some(base), "changing the {part} must change the binding");
    }
    let mut incomplete = record;
    incomplete.semantics_digest = None;
    assert_eq!(verification_binding(&incomplete), None, "no binding without every part");
}

#[test]
fn a_producer_is_given_the_bytes_of_the_object_its_request_once_was() {
    // Fuel is spent on these bytes: an archived episode replays to the same figure only if they stay.
    let input = json!({"z": [1, 2.5, -0.0, 1e300, null], "a\u{7f}\"\\\n\u{1}": "é𝔸/", "nested": {"b": true, "a": {}}});
    for mode in [Mode::Explore, Mode::Verify] {
        let typed = serde_json::to_vec(&GuestRequest { capability_id: "test.echo.message", input: &input, mode })
            .expect("serializes");
        let object = json!({"capability_id": "test.echo.message", "mode": mode, "input": &input}).to_string();
        assert_eq!(String::from_utf8(typed).expect("utf-8"), object);
    }
}

/// A catalog entry of a fake component: any input object, nothing declared.
pub(super) fn catalog_entry(id: &str, kind: EntryKind, modes: &[Mode]) -> CatalogEntry {
    let schema = json!({"type": "object"});
    CatalogEntry {
        id: id.into(),
        kind,
        title: String::new(),
        outcome: String::new(),
        description: String::new(),
        tags: vec!["algebra".into()],
        modes: modes.to_vec(),
        input_kind: InputKind::StructuredRequest,
        input_validator: Arc::new(crate::registry::compile_schema(&schema).unwrap()),
        input_schema: schema,
        output_schema: None,
        examples: Vec::new(),
        checker_roles: Vec::new(),
        checks: Vec::new(),
        artifact_types: Vec::new(),
        accepts: Vec::new(),
        produces: Vec::new(),
        certificate_formats: Vec::new(),
        component: Digest::of(id.as_bytes()),
        tier: Tier::Bundled,
        provider: Provider {
            name: "fake".into(),
            version: "0".into(),
            licence: "Apache-2.0".into(),
            features: Vec::new(),
        },
        audit: json!({}),
        output_validator: None,
    }
}

/// An installed component as the stages read it: its install tier only
/// (nothing runs it; the sandbox is behind a trait).
pub(super) struct Stand(pub Tier);

impl super::execute::Program for Stand {
    fn tier(&self) -> Tier {
        self.0
    }
}

/// A call of `entry`'s stand-in (an operator's install) for tenant `alice`,
/// on an empty input that names `references`.
pub(super) fn prepared(entry: &CatalogEntry, mode: Mode, references: Vec<String>) -> Prepared<'_, Stand> {
    let call = Call { entry, installed: Stand(Tier::Operator), mode, input: Cow::Owned(json!({})), routed: None };
    Prepared {
        call,
        budgets: CallBudgets { fuel: 1_000_000, memory_bytes: 1 << 24, output_bytes: 1 << 20 },
        wall: std::time::Duration::from_secs(1),
        access: ArtifactAccess::default(),
        references,
        input_digest: Digest::of_json(&json!({})),
        input_bytes: 2,
        tenant: Some("alice"),
    }
}

/// A validated request of experiment `e` with nothing to run (a certificate
/// of role `sat` no checker is routed to), under `policy`.
pub(super) fn unrouted(request: &InvokeRequest, policy: Policy) -> Validated<'_> {
    let record = CertificateRecord {
        checker_role: "sat".into(),
        certificate_format: "lrat".into(),
        verify_capability_id: String::new(),
        capability_id: String::new(),
        producer: Digest::of(b""),
    };
    let unrouted = Unrouted { certificate: String::new(), schema_uri: String::new(), record };
    Validated { request, experiment: "e".into(), policy: Arc::new(policy), work: Work::Unrouted(unrouted) }
}

/// What a fake was asked, in order.
#[derive(Default)]
pub(super) struct Asked(std::sync::Mutex<Vec<String>>);

impl Asked {
    pub fn push(&self, what: String) {
        self.0.lock().unwrap().push(what);
    }

    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A call that answered `bytes`, spending `fuel`, with nothing logged.
pub(super) fn answered(bytes: Vec<u8>, fuel: u64) -> crate::engine::CallReport {
    crate::engine::CallReport {
        result: Ok(bytes),
        fuel_consumed: fuel,
        log: Vec::new(),
        log_dropped: 0,
        console: String::new(),
    }
}
