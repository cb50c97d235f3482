//! Tenants' own experiments and quotas, and the per-minute invocation bucket.

use super::*;

/// `capability.invoke` as the tenant `tenant` would send it over authenticated HTTP.
fn invoke_as(runtime: &Runtime, tenant: Option<&str>, experiment: &str, n: u32) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: "sat.cnf.construct".into(),
        input: json!({"dimacs": format!("p cnf {n} 1\n1 0\n")}),
        experiment: Some(experiment.into()),
        tenant: tenant.map(str::to_owned),
        ..Default::default()
    })
}

fn quota_refusal(result: &CapabilityResult) -> &jacobian::contract::Diagnostic {
    let d = result.diagnostic.as_ref().unwrap_or_else(|| panic!("not refused: {:?}", result.status));
    assert_eq!(d.code, Code::QuotaExceeded, "{}", d.message);
    assert_eq!(result.fuel_consumed, 0, "it did not run");
    assert!(!result.transport.as_ref().unwrap().stored && result.accounting.ordinal.is_none(), "nothing stored");
    d
}

#[test]
fn tenants_have_their_own_experiments_and_quotas_that_survive_a_restart() {
    let (runtime, dir) = support::runtime();
    drop(runtime);
    write_policy_section(
        dir.path(),
        "\n[quotas.default]\nfuel_per_day = 1\n\n[quotas.tenants.archivist]\nstored_bytes = 1\n",
    );
    let runtime = support::open(dir.path().to_path_buf());
    // The same experiment id names a different experiment per tenant.
    let first = invoke_as(&runtime, Some("acme"), "shared", 1);
    assert_eq!(first.status, Status::Completed, "{:?}", first.diagnostic);
    assert_eq!(first.accounting.experiment.as_deref(), Some("shared"), "shown as the tenant named it");
    assert!(jacobian::resources::read_as(&runtime, "experiment://shared", Some("beta")).is_err());
    assert!(jacobian::resources::read(&runtime, "experiment://shared").is_err(), "not the operator's 'shared'");
    let key = format!("shared@{}", jacobian::tenants::tenant_tag("acme"));
    let mine = jacobian::resources::read_as(&runtime, "experiment://shared/accounting", Some("acme")).unwrap();
    let theirs = jacobian::resources::read(&runtime, &format!("experiment://{key}/accounting")).unwrap();
    assert_eq!(mine.text.replace(&key, "shared"), theirs.text.replace(&key, "shared"), "the operator reaches it");
    // A tenant's archive carries no quota, so no other tenant's name.
    let archive = jacobian::resources::read_as(&runtime, "experiment://shared/archive", Some("acme")).unwrap().text;
    assert!(!archive.contains("quotas") && !archive.contains("archivist"), "{archive}");
    for forged in [key.as_str(), "shared@0000000000000000"] {
        let refused = invoke_as(&runtime, Some("beta"), forged, 1);
        assert_eq!(refused.diagnostic.map(|d| d.code), Some(Code::InvalidRequest), "a tenant cannot name a key");
        assert!(jacobian::resources::read_as(&runtime, &format!("experiment://{forged}"), Some("beta")).is_err());
    }

    // Fuel per day: the first call crossed the line, the next waits for tomorrow.
    let refused = invoke_as(&runtime, Some("acme"), "shared", 2);
    let d = quota_refusal(&refused);
    assert_eq!((d.details["quota"].as_str(), d.details["limit"].as_u64()), (Some("fuel_per_day"), Some(1)));
    let retry = d.details["retry_after"].as_u64().unwrap();
    assert!((1..=86_400).contains(&retry), "{retry}");
    // Another tenant and the operator are not charged for it.
    assert_eq!(invoke_as(&runtime, Some("beta"), "shared", 2).status, Status::Completed);
    assert_eq!(invoke_as(&runtime, None, "shared", 2).status, Status::Completed);
    let summary = resource(&runtime, &format!("experiment://{key}"));
    assert_eq!(summary["invocations"].as_array().unwrap().len(), 1, "the refused call left no line");

    // Stored bytes: a tenant's own quota, whole (no fuel limit), which waiting does not restore.
    assert_eq!(invoke_as(&runtime, Some("archivist"), "a", 3).status, Status::Completed);
    let refused = invoke_as(&runtime, Some("archivist"), "a", 4);
    let d = quota_refusal(&refused);
    assert_eq!(d.details["quota"], "stored_bytes");
    assert!(d.details.get("retry_after").is_none(), "{:?}", d.details);
    let open: jacobian::workspace::wire::OpenRequest =
        serde_json::from_value(json!({"idempotency_key": "k", "title": "t", "statement": "s"})).unwrap();
    let refused = runtime.open_workspace_as(Some("archivist"), &open).unwrap_err();
    assert_eq!((refused.code, &refused.details["quota"]), (Code::QuotaExceeded, &json!("stored_bytes")));
    runtime.open_workspace_as(Some("acme"), &open).expect("acme has no stored-bytes quota");

    // The day's fuel and the stored bytes are kept in the database.
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    assert_eq!(quota_refusal(&invoke_as(&runtime, Some("acme"), "shared", 5)).details["quota"], "fuel_per_day");
    assert_eq!(quota_refusal(&invoke_as(&runtime, Some("archivist"), "a", 5)).details["quota"], "stored_bytes");
    assert_eq!(invoke_as(&runtime, Some("gamma"), "shared", 6).status, Status::Completed, "a tenant not seen yet");
    assert!(invoke_as(&runtime, Some("beta"), "shared", 6).diagnostic.is_some_and(|d| d.code == Code::QuotaExceeded));
}

#[test]
fn a_bucket_of_n_invocations_per_minute_admits_exactly_n() {
    let (runtime, dir) = support::runtime();
    drop(runtime);
    write_policy_section(dir.path(), "\n[quotas.default]\ninvocations_per_minute = 3\nconcurrent_calls = 1\n");
    let runtime = support::open(dir.path().to_path_buf());
    let results: Vec<CapabilityResult> = (0..6).map(|n| invoke_as(&runtime, Some("acme"), "burst", n + 1)).collect();
    let admitted = results.iter().filter(|r| r.status == Status::Completed).count();
    // One call at a time: a place not given back would refuse the second call as concurrent_calls.
    assert_eq!(admitted, 3, "a full bucket of 3, refilled at one per 20 s");
    for refused in results.iter().filter(|r| r.status != Status::Completed) {
        let d = quota_refusal(refused);
        assert_eq!(d.details["quota"], "invocations_per_minute");
        assert!((1..=20).contains(&d.details["retry_after"].as_u64().unwrap()), "{:?}", d.details);
    }
    let metrics = runtime.metrics().render();
    assert!(metrics.contains("jacobian_quota_refusals_total{quota=\"invocations_per_minute\"} 3"), "{metrics}");
    assert_eq!(invoke_as(&runtime, Some("other"), "burst", 1).status, Status::Completed, "another tenant's bucket");
}
