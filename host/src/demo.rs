//! `jacobian demo`: walk discover → contract → invoke → verify → revoke in a
//! fresh data directory, printing exactly what an agent would receive from
//! the MCP tools.

use std::sync::Arc;

use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::contract::{DescribeRequest, InvokeRequest, View};
use crate::digest::Digest;
use crate::runtime::Runtime;

/// Why the walkthrough stopped: an answer without what the next step needs,
/// or the policy could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// An answer lacks what the next step reads.
    #[error("the demo's step {step}: the answer has no {missing}")]
    Missing { step: u8, missing: &'static str },
    /// A value could not be shown as JSON.
    #[error("showing the demo's values")]
    Json(#[from] serde_json::Error),
    /// Revoking or authorizing the checker failed.
    #[error("changing the policy")]
    Policy(#[from] crate::runtime::OpenError),
}

/// Run the walkthrough, printing to stdout.
pub fn run(runtime: Arc<Runtime>) -> Result<(), DemoError> {
    println!("Jacobian demo — data directory {}", runtime.data().path().display());
    println!("Installed components:");
    for record in runtime.components() {
        println!(
            "  {} {} {:?} {:?} ({} bytes)",
            record.digest, record.provider.name, record.kind, record.tier, record.size_bytes
        );
    }

    step("1. capability.describe — search the catalog");
    let search = DescribeRequest {
        query: Some("counterexample to associativity in a commutative magma".into()),
        limit: Some(3),
        ..Default::default()
    };
    show("arguments", &serde_json::to_value(&search)?);
    show("result", &describe_value(&runtime, &search));

    step("2. capability.describe — read the contract before invoking");
    let contract = DescribeRequest {
        capability_id: Some("universal_algebra.search.countermodel".into()),
        view: Some(View::Contract),
        ..Default::default()
    };
    let value = describe_value(&runtime, &contract);
    show("input_fields", &value["input_fields"]);
    show("examples", &value["examples"]);
    show("related_operations", &value["related_operations"]);

    step("3. capability.invoke (EXPLORE) — is every commutative magma associative?");
    let explore = InvokeRequest {
        capability_id: "universal_algebra.search.countermodel".into(),
        mode: Some(Mode::Explore),
        input: json!({"hypotheses": ["commutative"], "target": "associative", "max_order": 3}),
        budget: None,
        view: None,
        experiment: None,
        tenant: None,
    };
    show("arguments", &serde_json::to_value(&explore)?);
    let found = runtime.invoke(&explore);
    let found_value = serde_json::to_value(&found)?;
    for field in ["status", "output", "artifacts", "scope", "assurance", "obligations", "check_with", "transport"] {
        show(field, &found_value[field]);
    }
    let route = found.check_with.clone().ok_or(DemoError::Missing { step: 3, missing: "check_with route" })?;
    let certificate =
        route.certificate_artifact.clone().ok_or(DemoError::Missing { step: 3, missing: "certificate artifact" })?;

    step("4. capability.invoke (VERIFY) — the independent checker judges the countermodel");
    let verify = InvokeRequest {
        capability_id: route.verify_capability_id.clone(),
        mode: Some(Mode::Verify),
        input: json!({"countermodel": certificate}),
        budget: None,
        view: None,
        experiment: None,
        tenant: None,
    };
    show("arguments", &serde_json::to_value(&verify)?);
    let verified = serde_json::to_value(runtime.invoke(&verify))?;
    show("assurance", &verified["assurance"]);
    show("verification", &verified["verification"]);

    step("5. the operator revokes the checker — the same call can no longer verify");
    let checker: Digest = verified["verification"]["checker_digest"]
        .as_str()
        .and_then(|digest| digest.parse().ok())
        .ok_or(DemoError::Missing { step: 4, missing: "verification.checker_digest" })?;
    runtime.update_policy(|p| p.revoke(checker))?;
    let unverified = serde_json::to_value(runtime.invoke(&verify))?;
    show("assurance", &unverified["assurance"]);
    show("verification.status", &unverified["verification"]["status"]);
    show("obligations", &unverified["obligations"]);
    let role = route.checker_role.clone();
    runtime.update_policy(|p| p.authorize(&role, checker))?;
    println!("\n(the checker was authorized again; `jacobian checkers revoke|authorize` does the same)");
    Ok(())
}

/// What `capability.describe` returns to an agent.
fn describe_value(runtime: &Runtime, request: &DescribeRequest) -> Value {
    runtime.describe(request).map_or_else(|diagnostic| json!({"diagnostic": diagnostic}), |answer| json!(answer))
}

fn step(title: &str) {
    println!("\n== {title} ==");
}

fn show(label: &str, value: &Value) {
    let text = crate::json::pretty_text(&value);
    println!("{label}: {text}");
}
