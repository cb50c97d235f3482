//! Discovery by an artifact held, declared fields checked at install, budget presets shown and binding.

use super::*;

/// Holding an artifact, an agent finds what takes it (and in which field)
/// before what makes it; CONTRACT says where inputs come from and where
/// outputs go.
#[tokio::test(flavor = "multi_thread")]
async fn discovery_by_an_artifact_held_finds_its_consumers_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let matches = |page: &Value| -> Vec<(String, String, String)> {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let m = &r["artifact_match"];
                let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
                (text(&r["capability_id"]), text(&m["relation"]), text(&m["field"]))
            })
            .collect()
    };
    let cnf = describe(&client, json!({"artifact_type": "jacobian:sat/cnf@1", "limit": 20})).await;
    let expected = [
        ("sat.certificate.construct", "ACCEPTS", "cnf"),
        ("sat.certificate.plain.verify", "ACCEPTS", "cnf"),
        ("sat.certificate.verify", "ACCEPTS", "cnf"),
        ("sat.solve", "ACCEPTS", "cnf"),
        ("sat.cnf.construct", "PRODUCES", ""),
    ];
    let expected: Vec<(String, String, String)> =
        expected.iter().map(|(a, b, c)| ((*a).into(), (*b).into(), (*c).into())).collect();
    assert_eq!(matches(&cnf), expected, "{cnf}");
    let graph = describe(&client, json!({"artifact_type": "jacobian:graph/simple@1", "limit": 20})).await;
    let found = matches(&graph);
    assert_eq!(found[0], ("graph.induced_tree.maximum".into(), "ACCEPTS".into(), "graph".into()), "{graph}");
    assert!(found.contains(&("graph.construct.explicit".into(), "PRODUCES".into(), String::new())), "{graph}");
    // A certificate is taken by its checker and by the router.
    let lrat = describe(&client, json!({"artifact_type": "jacobian:sat/lrat@1", "limit": 20})).await;
    let takers: Vec<String> = matches(&lrat)
        .into_iter()
        .filter(|(_, r, _)| r == "ACCEPTS")
        .map(|(id, _, field)| format!("{id}.{field}"))
        .collect();
    let expected = [
        "certificate.verify.certificate",
        "sat.certificate.plain.verify.certificate",
        "sat.certificate.verify.certificate",
    ];
    assert_eq!(takers, expected, "{lrat}");

    let (contract, _) =
        call(&client, "capability.describe", json!({"capability_id": "sat.solve", "view": "CONTRACT"})).await;
    let related = contract["related_operations"].as_array().expect("related operations").clone();
    let has = |id: &str, relation: &str, field: &str| {
        related.iter().any(|r| {
            r["capability_id"] == id && r["relation"] == relation && r["field"].as_str().unwrap_or("") == field
        })
    };
    assert!(has("sat.cnf.construct", "INPUT_FROM", "cnf"), "{related:?}");
    assert!(has("sat.certificate.verify", "OUTPUT_TO", "certificate"), "{related:?}");
    assert!(has("certificate.verify", "OUTPUT_TO", "certificate"), "{related:?}");
    assert!(has("sat.certificate.verify", "CHECKED_BY", ""), "{related:?}");
    assert_eq!(contract["accepts"], json!([{"field": "cnf", "schema_uri": "jacobian:sat/cnf@1"}]));
    // The inventory says as much per entry, without a describe per capability.
    let inventory: Value = serde_json::from_str(&read(&client, "capability://catalog").await).unwrap();
    let solve = inventory["capabilities"].as_array().unwrap().iter().find(|c| c["capability_id"] == "sat.solve");
    let solve = solve.expect("sat.solve on the first page");
    assert_eq!(solve["accepts"], contract["accepts"]);
    assert_eq!(solve["input_schema"], contract["input_schema"], "the same compact schema as CONTRACT");
    assert_eq!(solve["component_digest"], contract["provider"]["digest"]);
    assert!(solve["provider"].is_string() && solve["provider_version"].is_string(), "{solve}");
    assert_eq!(inventory["total"].as_u64(), Some(inventory["capabilities"].as_array().unwrap().len() as u64));
    client.cancel().await.expect("shutdown");
}

/// A declared artifact field must be a field of the input schema.
#[test]
fn an_accepted_field_outside_the_input_schema_is_refused_at_install() {
    let seed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/descriptor/checker.json")).unwrap();
    let mut descriptor: Value = serde_json::from_slice(&seed[1..]).unwrap();
    descriptor["checkers"][0]["accepts"] = json!([{"field": "nope", "schema_uri": "jacobian:sat/cnf@1"}]);
    let error = jacobian::descriptor::validate(
        descriptor.to_string().as_bytes(),
        jacobian_guest::protocol::BundleKind::Checker,
        &Default::default(),
    )
    .expect_err("refused");
    assert_eq!(
        error.to_string(),
        "descriptor field checkers.0.accepts.0.field: \"nope\" is not a field of the input schema"
    );
}

/// A budget preset is a share of the operator's fuel, shown in CONTRACT with
/// its typical seconds, and a call under it stops at that fuel.
#[tokio::test(flavor = "multi_thread")]
async fn budget_presets_are_shown_in_contract_and_bound_a_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let id = "graph.enumerate.nonisomorphic";
    let (contract, _) = call(&client, "capability.describe", json!({"capability_id": id, "view": "CONTRACT"})).await;
    let presets = contract["runtime"]["budget_presets"].as_array().expect("presets").clone();
    let names: Vec<&str> = presets.iter().filter_map(|p| p["preset"].as_str()).collect();
    assert_eq!(names, ["QUICK", "STANDARD", "DEEP"]);
    let quick = presets[0]["fuel"].as_u64().unwrap();
    assert_eq!(presets[2]["fuel"].as_u64().unwrap(), quick * 100, "{presets:?}");
    assert!(presets.iter().all(|p| p["typical_seconds"].as_f64().is_some_and(|s| s > 0.0)), "{presets:?}");
    // Each capability's seconds are reckoned at its own measured rate, or the portfolio's.
    for (capability, measured) in
        [(id, true), ("universal_algebra.search.countermodel", true), ("claim.proposition.construct", false)]
    {
        let (contract, _) =
            call(&client, "capability.describe", json!({"capability_id": capability, "view": "CONTRACT"})).await;
        let deep = &contract["runtime"]["budget_presets"][2];
        let rate = jacobian::budgets::fuel_per_second(capability);
        assert_eq!(deep["rate_measured"], measured, "{deep}");
        assert_eq!(deep["fuel_per_second"].as_u64(), Some(rate), "{deep}");
        let seconds = deep["fuel"].as_f64().unwrap() / rate as f64;
        assert!((deep["typical_seconds"].as_f64().unwrap() - seconds).abs() < 0.001, "{deep}");
    }
    assert_ne!(
        jacobian::budgets::fuel_per_second(id),
        jacobian::budgets::fuel_per_second("universal_algebra.search.countermodel")
    );
    // The connected graphs on 9 vertices: about a second of guest work, far more than a QUICK budget.
    let input = json!({"order": 9, "family": "connected"});
    let (stopped, is_error) =
        call(&client, "capability.invoke", json!({"capability_id": id, "input": input, "budget": {"preset": "QUICK"}}))
            .await;
    assert!(is_error, "{stopped}");
    assert_eq!(stopped["diagnostic"]["code"], "FUEL_EXHAUSTED", "{stopped}");
    assert_eq!(stopped["provenance"]["budgets"]["fuel"].as_u64(), Some(quick), "{stopped}");
    client.cancel().await.expect("shutdown");
}
