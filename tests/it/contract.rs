//! The capability contract over MCP: discovery signals, routing, paging and
//! the response bound, policy visibility, vocabularies in the exported
//! schema, text projections against episodes, resources and prompts.

use std::collections::BTreeSet;
use std::path::Path;

use jacobian::contract::{Assurance, Code, ResultView, Stage, Status, VerificationStatus};
use jacobian_guest::protocol::{Completeness, InputKind, Mode, Qualifier, VerdictKind};
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::RunningService;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use strum::IntoEnumIterator;

use crate::support::{self, SEARCH, VERIFY, call, cli, serve};

mod discovery;

fn install_test_guests(dir: &Path, guests: &[&str]) {
    let root = Path::new(jacobian::bundled::TEST_GUESTS_DIR);
    for guest in guests {
        let file = root.join(format!("jacobian_test_{guest}.wasm"));
        let out = cli(dir, &["install", file.to_str().expect("utf-8")]);
        assert!(out.starts_with("installed"), "{out}");
    }
}

async fn describe(client: &RunningService<RoleClient, ()>, args: Value) -> Value {
    call(client, "capability.describe", args).await.0
}

async fn read(client: &RunningService<RoleClient, ()>, uri: &str) -> String {
    crate::support::read_resource(client, uri).await
}

fn write_policy(dir: &Path, text: &str) {
    // A fresh modification time on every write, even on coarse clocks.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(dir.join("policy.toml"), text).expect("policy");
}

#[tokio::test(flavor = "multi_thread")]
async fn search_reports_lexical_signals_and_fit_deterministically() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let request = json!({"query": "find a counterexample to associativity", "domain": "universal_algebra", "mode": "EXPLORE", "limit": 5});
    let first = describe(&client, request.clone()).await;
    let second = describe(&client, request).await;
    assert_eq!(serde_json::to_string(&first).unwrap(), serde_json::to_string(&second).unwrap());
    assert_eq!(first["form"], "SEARCH");
    assert_eq!(first["portfolio_fit"], "STRONG_CANDIDATES");
    assert_eq!(first["routing_status"], "UNCONSTRAINED");
    let top = &first["results"][0];
    assert_eq!(top["capability_id"], SEARCH);
    assert_eq!(top["lexical_fit"], "STRONG_LEXICAL_MATCH");
    assert_eq!(top["query_coverage_milli"], 1000, "{top}");
    assert!(top["matched_on"].as_array().unwrap().contains(&json!("tags")), "{top}");
    assert!(first["catalog_digest"].as_str().unwrap().starts_with("sha256:"));
    assert!(first["policy_digest"].as_str().unwrap().starts_with("sha256:"));

    let weak = describe(&client, json!({"query": "heuristic zebra"})).await;
    assert_eq!(weak["portfolio_fit"], "ONLY_WEAK_LEXICAL_MATCHES", "{weak}");
    assert!(weak["results"].as_array().unwrap().iter().all(|r| r["lexical_fit"] == "WEAK_LEXICAL_MATCH"));
    assert_eq!(first["routing_basis"]["reason"], "NO_INPUT_KIND");
    let (stop_words, is_error) = call(&client, "capability.describe", json!({"query": "the of and"})).await;
    assert!(is_error, "a query of stop words is not silently a browse: {stop_words}");
    assert_eq!(stop_words["diagnostic"]["details"]["path"], "query", "{stop_words}");
    let none = describe(&client, json!({"query": "zebra giraffe"})).await;
    assert_eq!(none["portfolio_fit"], "NO_LEXICAL_MATCHES");
    assert_eq!(none["results"], json!([]));
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn natural_language_proof_has_no_route_whether_declared_or_phrased() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let declared = describe(&client, json!({"input_kind": "NATURAL_LANGUAGE_PROOF"})).await;
    assert_eq!(declared["routing_status"], "NO_ROUTE", "{declared}");
    assert_eq!(declared["routing_basis"]["reason"], "DECLARED_INPUT_KIND");
    assert_eq!(declared["results"], json!([]));
    let phrased = describe(&client, json!({"query": "check my informal proof that every magma is associative"})).await;
    assert_eq!(phrased["routing_status"], "NO_ROUTE");
    assert_eq!(phrased["routing_basis"]["reason"], "UNAMBIGUOUS_PHRASE");
    assert_eq!(phrased["routing_basis"]["phrase"], "informal proof");
    // Routing is separate from lexical fit: the words still match the magma capabilities.
    assert_ne!(phrased["portfolio_fit"], "NO_LEXICAL_MATCHES");
    let typed = describe(&client, json!({"input_kind": "TYPED_ARTIFACT", "limit": 20})).await;
    assert_eq!(typed["routing_status"], "ROUTE_AVAILABLE", "{typed}");
    assert_eq!(typed["routing_basis"]["reason"], "DECLARED_INPUT_KIND");
    assert_eq!(typed["routing_basis"]["input_kind"], "TYPED_ARTIFACT");
    assert!(typed["routing_basis"]["providers"].as_array().unwrap().contains(&json!(VERIFY)), "{typed}");
    let typed: Vec<&Value> = typed["results"].as_array().unwrap().iter().collect();
    assert!(typed.iter().all(|r| r["input_kind"] == "TYPED_ARTIFACT"));
    assert!(typed.iter().any(|r| r["capability_id"] == VERIFY));
    let by_schema = describe(&client, json!({"artifact_type": "jacobian:universal_algebra/countermodel@1"})).await;
    let ids: Vec<&str> =
        by_schema["results"].as_array().unwrap().iter().filter_map(|r| r["capability_id"].as_str()).collect();
    assert_eq!(ids, vec!["certificate.verify", VERIFY, SEARCH], "the router, the checker and the producer");
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn browse_pages_stay_under_16_kib_and_cursors_continue_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    install_test_guests(dir.path(), &["catalog"]);
    let client = serve(dir.path()).await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    let mut cut_short = false;
    let mut largest = 0;
    let mut total = None;
    loop {
        let mut args = json!({"limit": 20});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = describe(&client, args).await;
        let bytes = serde_json::to_vec(&page).unwrap().len();
        assert!(bytes <= 16 * 1024, "page of {bytes} bytes");
        largest = largest.max(bytes);
        let this_total = page["total"].as_u64().unwrap() as usize;
        assert_eq!(*total.get_or_insert(this_total), this_total, "the total is stable across pages");
        for r in page["results"].as_array().unwrap() {
            seen.push(r["capability_id"].as_str().unwrap().to_owned());
        }
        pages += 1;
        let listed = page["results"].as_array().unwrap().len();
        cut_short |= listed < 20 && page["next_cursor"].is_string();
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    let total = total.unwrap();
    assert!(total >= 42, "the 40 test capabilities and the bundled ones");
    assert!(cut_short, "the bound, not the limit, cut some pages ({pages} pages)");
    assert!(largest > 14 * 1024, "pages are filled up to the bound ({largest} bytes)");
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(seen, sorted, "browse is in stable id order, without repeats");
    assert_eq!(seen.len(), total, "every capability exactly once");

    // A cursor is bound to its filters and limit.
    let first = describe(&client, json!({"limit": 3})).await;
    let cursor = first["next_cursor"].as_str().unwrap();
    let wrong_limit = describe(&client, json!({"limit": 4, "cursor": cursor})).await;
    assert_eq!(wrong_limit["diagnostic"]["details"]["path"], "cursor");
    let forged = describe(&client, json!({"limit": 3, "cursor": "c1.0000000000000000.3"})).await;
    assert_eq!(forged["diagnostic"]["code"], "INVALID_REQUEST");
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn policy_hides_capabilities_by_id_domain_tag_mode_and_profile() {
    let dir = tempfile::tempdir().expect("temp dir");
    install_test_guests(dir.path(), &["catalog"]);
    let client = serve(dir.path()).await;
    let visible = |page: Value| -> BTreeSet<String> {
        page["results"].as_array().unwrap().iter().map(|r| r["capability_id"].as_str().unwrap().to_owned()).collect()
    };
    let all = visible(describe(&client, json!({"domain": "universal_algebra", "limit": 20})).await);
    assert_eq!(all.len(), 4, "the countermodel search, the model enumeration and their checkers: {all:?}");
    let before = describe(&client, json!({"limit": 1})).await["policy_digest"].clone();

    let cases: &[(&str, &str, &str)] = &[
        ("[capabilities]\ndeny_ids = [\"universal_algebra.search.countermodel\"]\n", SEARCH, "capability_id"),
        ("[capabilities]\ndeny_domains = [\"universal_algebra\"]\n", SEARCH, "capability_id"),
        ("[capabilities]\ndeny_tags = [\"checker\"]\n", VERIFY, "capability_id"),
        ("[capabilities]\ndeny_modes = [\"VERIFY\"]\n", VERIFY, "capability_id"),
        ("profile = \"COMPUTE_VERIFY_NO_RETRIEVAL\"\n", "stress.cap_00", "capability_id"),
    ];
    for (policy, hidden, path) in cases {
        write_policy(dir.path(), policy);
        let browse = describe(&client, json!({"limit": 20})).await;
        assert_ne!(browse["policy_digest"], before, "{policy}: the response binds the new policy");
        let mut ids = visible(browse.clone());
        let mut cursor = browse["next_cursor"].as_str().map(str::to_owned);
        while let Some(c) = cursor {
            let page = describe(&client, json!({"limit": 20, "cursor": c})).await;
            ids.extend(visible(page.clone()));
            cursor = page["next_cursor"].as_str().map(str::to_owned);
        }
        assert!(!ids.contains(*hidden), "{policy}: {hidden} still listed");
        let by_id = describe(&client, json!({"capability_id": hidden})).await;
        assert_eq!(by_id["diagnostic"]["code"], "CAPABILITY_NOT_FOUND", "{policy}");
        let mut page = Some("capability://catalog".to_owned());
        let mut listed = 0;
        while let Some(uri) = page {
            let catalog: Value = serde_json::from_str(&read(&client, &uri).await).unwrap();
            let entries = catalog["capabilities"].as_array().unwrap();
            assert!(!entries.iter().any(|c| c["capability_id"] == *hidden), "{policy}: {hidden} in the inventory");
            assert!(uri.len() + serde_json::to_vec(&catalog).unwrap().len() <= 64 * 1024 + 64, "{uri}: bounded");
            listed += entries.len();
            page = catalog["next"].as_str().map(str::to_owned);
            assert_eq!(page.is_some(), listed < catalog["total"].as_u64().unwrap() as usize);
        }
        assert!(listed > 35, "{policy}: every page read");
        let (result, is_error) =
            call(&client, "capability.invoke", json!({"capability_id": hidden, "input": {}})).await;
        assert!(is_error);
        assert_eq!(result["diagnostic"]["code"], "CAPABILITY_POLICY_DENIED", "{policy}: {result}");
        assert_eq!(result["diagnostic"]["stage"], "POLICY");
        assert_eq!(result["diagnostic"]["details"]["path"], *path);
    }
    // The profile hides only retrieval-tagged capabilities.
    let profile = describe(&client, json!({"domain": "stress", "limit": 20})).await;
    assert_eq!(profile["policy_profile"], "COMPUTE_VERIFY_NO_RETRIEVAL");
    assert_eq!(profile["total"], 35);
    // Policy changes availability only: with the default policy back, the checker verifies again.
    write_policy(dir.path(), "");
    let (found, _) = call(&client, "capability.invoke", json!({"capability_id": SEARCH, "input": {"hypotheses": ["commutative"], "target": "associative", "max_order": 2}})).await;
    let uri = found["check_with"]["certificate_artifact"].clone();
    let (verified, _) = call(
        &client,
        "capability.invoke",
        json!({"capability_id": VERIFY, "mode": "VERIFY", "input": {"countermodel": uri}}),
    )
    .await;
    assert_eq!(verified["assurance"], "VERIFIED");
    client.cancel().await.expect("shutdown");
}

/// Every string that appears as an `enum` member or `const` anywhere in a schema.
fn schema_vocabulary(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("enum", Value::Array(items)) => {
                        out.extend(items.iter().filter_map(|v| v.as_str().map(str::to_owned)))
                    }
                    ("const", Value::String(s)) => {
                        out.insert(s.clone());
                    }
                    _ => schema_vocabulary(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| schema_vocabulary(v, out)),
        _ => {}
    }
}

fn names<T: IntoEnumIterator + serde::Serialize>() -> Vec<String> {
    T::iter().map(|v| serde_json::to_value(v).unwrap().as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_registered_vocabulary_member_is_in_the_exported_schemas() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let tools = client.list_all_tools().await.expect("tools");
    let invoke = tools.iter().find(|t| t.name == "capability.invoke").expect("invoke tool");
    let describe_tool = tools.iter().find(|t| t.name == "capability.describe").expect("describe tool");
    let output =
        serde_json::to_value(invoke.output_schema.as_ref().expect("invoke declares its output schema")).unwrap();
    let mut exported = BTreeSet::new();
    schema_vocabulary(&output, &mut exported);
    schema_vocabulary(&serde_json::to_value(invoke.input_schema.as_ref()).unwrap(), &mut exported);
    schema_vocabulary(&serde_json::to_value(describe_tool.input_schema.as_ref()).unwrap(), &mut exported);
    let describe_output = describe_tool.output_schema.as_ref().expect("describe declares its output schema");
    schema_vocabulary(&serde_json::to_value(describe_output.as_ref()).unwrap(), &mut exported);
    for name in ["workspace.open", "workspace.write", "workspace.query"] {
        let tool = tools.iter().find(|t| t.name == name).expect("workspace tool");
        schema_vocabulary(&serde_json::to_value(tool.input_schema.as_ref()).unwrap(), &mut exported);
    }
    use jacobian::catalog::answer;
    use jacobian::workspace::wire::{AttemptOutcome, FindingKind, MarkKind, QueryView};
    let registries: Vec<(&str, Vec<String>)> = vec![
        ("budget preset", names::<jacobian::budgets::BudgetPreset>()),
        ("finding kind", names::<FindingKind>()),
        ("attempt outcome", names::<AttemptOutcome>()),
        ("mark", names::<MarkKind>()),
        ("query view", names::<QueryView>()),
        ("status", names::<Status>()),
        ("assurance", names::<Assurance>()),
        ("qualifier", names::<Qualifier>()),
        ("completeness", names::<Completeness>()),
        ("diagnostic code", names::<Code>()),
        ("stage", names::<Stage>()),
        ("verification status", names::<VerificationStatus>()),
        ("mode", names::<Mode>()),
        ("result view", names::<ResultView>()),
        ("input kind", names::<InputKind>()),
        ("stop reason", names::<jacobian::experiments::StopReason>()),
        ("entry kind", names::<jacobian::catalog::EntryKind>()),
        ("install tier", names::<jacobian::registry::Tier>()),
        ("availability", names::<answer::Availability>()),
        ("relation", names::<answer::Relation>()),
        ("form", names::<answer::Form>()),
        ("portfolio fit", names::<answer::PortfolioFit>()),
        ("routing status", names::<answer::RoutingStatus>()),
        ("artifact relation", names::<answer::ArtifactRelation>()),
        ("lexical fit", names::<answer::LexicalFit>()),
        ("describe view", names::<jacobian::contract::View>()),
    ];
    for (registry, members) in registries {
        assert!(!members.is_empty());
        for member in members {
            assert!(exported.contains(&member), "{registry} member {member} is missing from the exported schemas");
        }
    }
    // Checker verdicts surface in results as verification statuses.
    assert_eq!(names::<VerdictKind>().len() + 1, names::<VerificationStatus>().len());
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_describe_answer_fits_the_published_output_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let tools = client.list_all_tools().await.expect("tools");
    let tool = tools.iter().find(|t| t.name == "capability.describe").expect("describe tool");
    let schema = serde_json::to_value(tool.output_schema.as_ref().expect("an output schema").as_ref()).unwrap();
    assert_eq!(schema["type"], "object", "MCP clients expect an object at the root");
    let validator = jsonschema::validator_for(&schema).expect("a usable schema");
    let mut asked = vec![
        json!({}),
        json!({"limit": 20}),
        json!({"query": "countermodel magma law"}),
        json!({"query": "solve a boolean formula", "mode": "EXPLORE"}),
        json!({"query": "zebra"}),
        json!({"input_kind": "NATURAL_LANGUAGE_PROOF", "query": "prove my lemma"}),
        json!({"artifact_type": "jacobian:sat/cnf@1", "limit": 20}),
        json!({"domain": "graph", "limit": 3}),
    ];
    let inventory: Value = serde_json::from_str(&read(&client, "capability://catalog").await).unwrap();
    for entry in inventory["capabilities"].as_array().unwrap() {
        for view in ["SUMMARY", "CONTRACT", "FULL"] {
            asked.push(json!({"capability_id": entry["capability_id"], "view": view}));
        }
    }
    assert!(asked.len() > 40, "{}", asked.len());
    // A refused request's diagnostic fits it too.
    for args in [json!({"capability_id": "no.such.capability"}), json!({"cursor": "not-a-cursor"})] {
        let (answer, is_error) = call(&client, "capability.describe", args.clone()).await;
        assert!(is_error && answer["diagnostic"]["code"].is_string(), "{args}: {answer}");
        assert!(validator.is_valid(&answer), "{args}: {answer}");
    }
    for args in asked {
        let (answer, is_error) = call(&client, "capability.describe", args.clone()).await;
        assert!(!is_error, "{args}: {answer}");
        assert!(answer.get("diagnostic").is_none(), "{args}: {answer}");
        let errors: Vec<String> =
            validator.iter_errors(&answer).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{args}: {errors:?}");
    }
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn large_outputs_are_projected_with_digests_that_match_the_episode() {
    let dir = tempfile::tempdir().expect("temp dir");
    install_test_guests(dir.path(), &["hostile"]);
    let client = serve(dir.path()).await;
    let args = json!({"capability_id": "test.hostile.attack", "input": {"attack": "output", "argument": "100000"}});
    let result = client
        .call_tool(CallToolRequestParams::new("capability.invoke").with_arguments(args.as_object().cloned().unwrap()))
        .await
        .expect("call");
    let structured = result.structured_content.clone().expect("structured");
    assert_eq!(structured["output"]["result"].as_str().unwrap().len(), 100_000, "structured content is complete");
    let text = match &result.content[0] {
        rmcp::model::ContentBlock::Text(t) => t.text.clone(),
        other => panic!("{other:?}"),
    };
    let projected: Value = serde_json::from_str(&text).expect("text is JSON");
    let omitted = &projected["output"]["result"]["omitted"];
    assert_eq!(omitted["path"], "output.result");
    assert_eq!(omitted["type"], "string");
    let transport = &structured["transport"];
    assert_eq!(transport["output_complete_in_text"], false);
    assert_eq!(transport["model_visible_bytes"], text.len());
    assert!(text.len() < 8 * 1024, "the text stays small");
    assert_eq!(projected["mcp_projection"]["full_result_episode_uri"], transport["full_result_episode_uri"]);

    let episode_text = read(&client, transport["full_result_episode_uri"].as_str().unwrap()).await;
    assert_eq!(transport["logical_bytes"], episode_text.len());
    assert_eq!(
        format!("sha256:{}", hex::encode(Sha256::digest(episode_text.as_bytes()))),
        transport["full_result_digest"].as_str().unwrap()
    );
    let episode: Value = serde_json::from_str(&episode_text).unwrap();
    let field = serde_json_canonicalizer::to_vec(&episode["output"]["result"]).unwrap();
    assert_eq!(omitted["bytes"], field.len());
    assert_eq!(omitted["sha256"], hex::encode(Sha256::digest(&field)));

    // SUMMARY omits the output; FULL carries it.
    for (view, complete) in [("SUMMARY", false), ("FULL", true)] {
        let mut args = args.clone();
        args["view"] = json!(view);
        let (structured, _) = call(&client, "capability.invoke", args).await;
        assert_eq!(structured["transport"]["view"], view);
        assert_eq!(structured["transport"]["output_complete_in_text"], complete, "{view}");
    }
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_invoke_twice_gives_identical_bytes_apart_from_accounting() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let args = json!({"capability_id": SEARCH, "input": {"hypotheses": ["commutative", "quasigroup"], "target": "associative", "max_order": 3}});
    let mut seen = Vec::new();
    for _ in 0..2 {
        let result = client
            .call_tool(
                CallToolRequestParams::new("capability.invoke").with_arguments(args.as_object().cloned().unwrap()),
            )
            .await
            .expect("call");
        let mut structured = result.structured_content.clone().unwrap();
        structured.as_object_mut().unwrap().remove("accounting");
        let text = serde_json::to_string(&result.content).unwrap();
        seen.push((serde_json::to_string(&structured).unwrap(), text));
    }
    assert_eq!(seen[0], seen[1]);
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn verdict_bindings_differ_for_different_evidence() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let mut bindings = BTreeSet::new();
    for (hypotheses, order) in [(json!(["commutative"]), 2), (json!(["commutative", "quasigroup"]), 3)] {
        let (found, _) = call(&client, "capability.invoke", json!({"capability_id": SEARCH, "input": {"hypotheses": hypotheses, "target": "associative", "max_order": order}})).await;
        let uri = found["check_with"]["certificate_artifact"].clone();
        let (verified, _) = call(
            &client,
            "capability.invoke",
            json!({"capability_id": VERIFY, "mode": "VERIFY", "input": {"countermodel": uri}}),
        )
        .await;
        let record = &verified["verification"];
        for field in ["claim_digest", "semantics_digest", "candidate_digest", "scope_digest", "binding_digest"] {
            assert!(record[field].as_str().is_some_and(|d| d.starts_with("sha256:")), "{field}: {record}");
        }
        bindings.insert(record["binding_digest"].as_str().unwrap().to_owned());
    }
    assert_eq!(bindings.len(), 2);
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_prompts_and_instructions_are_served() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let info = client.peer_info().expect("server info");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("capability.describe") && instructions.contains("jacobian://instructions"));

    let resources: Vec<String> =
        client.list_all_resources().await.unwrap().into_iter().map(|r| r.uri.clone()).collect();
    assert_eq!(resources, vec!["jacobian://instructions", "capability://catalog", "reference://catalog"]);
    let templates: Vec<String> =
        client.list_all_resource_templates().await.unwrap().into_iter().map(|t| t.uri_template.clone()).collect();
    assert_eq!(
        templates,
        vec![
            "capability://{id}",
            "artifact://sha256/{digest}",
            "episode://sha256/{digest}",
            "experiment://{id}",
            "experiment://{id}/accounting",
            "experiment://{id}/scope",
            "experiment://{id}/archive"
        ]
    );
    let operating_model = read(&client, "jacobian://instructions").await;
    for topic in ["Discovery", "Invocation", "Verification boundaries", "Artifacts", "Workspace", "Scope rule"] {
        assert!(operating_model.contains(topic), "instructions lack {topic}");
    }
    let (found, _) = call(&client, "capability.invoke", json!({"capability_id": SEARCH, "input": {"hypotheses": ["commutative"], "target": "associative", "max_order": 2}})).await;
    let artifact: Value =
        serde_json::from_str(&read(&client, found["artifacts"][0]["uri"].as_str().unwrap()).await).unwrap();
    assert_eq!(artifact["schema_uri"], "jacobian:universal_algebra/countermodel@1");
    let pack: Value = serde_json::from_str(&read(&client, "reference://catalog").await).unwrap();
    assert!(pack["passages"].as_array().is_some_and(|p| p.len() >= 10));
    assert!(
        client.read_resource(ReadResourceRequestParams::new("reference://nothing")).await.is_err(),
        "unknown URIs are errors"
    );
    let contract: Value = serde_json::from_str(&read(&client, &format!("capability://{SEARCH}")).await).unwrap();
    assert_eq!((contract["capability_id"].as_str(), contract["view"].as_str()), (Some(SEARCH), Some("CONTRACT")));
    assert!(client.read_resource(ReadResourceRequestParams::new("capability://no.such")).await.is_err());

    // Completions: experiment ids by prefix, `_` a character and not a wildcard.
    for experiment in ["a_b", "axb", "b"] {
        let input = json!({"hypotheses": ["commutative"], "target": "associative", "max_order": 2});
        let (answer, _) = call(
            &client,
            "capability.invoke",
            json!({"capability_id": SEARCH, "experiment": experiment, "input": input}),
        )
        .await;
        assert_eq!(answer["accounting"]["experiment"], experiment);
    }
    let ids = |prefix: &'static str| client.complete_resource_simple("experiment://{id}/scope", "id", prefix);
    assert_eq!(ids("a").await.unwrap(), ["a_b", "axb"]);
    assert_eq!(ids("a_").await.unwrap(), ["a_b"]);
    assert_eq!(ids("").await.unwrap().len(), 4, "with this session's own experiment");
    assert!(ids("a%").await.unwrap().is_empty() && ids("a b").await.unwrap().is_empty(), "no key starts so");
    let long = client.complete_resource_simple("experiment://{id}", "id", "a".repeat(100_000)).await.unwrap();
    assert!(long.is_empty(), "a value no key can start with is not looked up");
    let capabilities = client.complete_resource_simple("capability://{id}", "id", "universal_algebra.s").await.unwrap();
    assert_eq!(capabilities, [SEARCH]);
    let unknown = client.complete_prompt_simple("no-such-prompt", "x", "").await.unwrap();
    assert!(unknown.is_empty(), "an unknown prompt completes to nothing");

    let prompts: Vec<String> = client.list_all_prompts().await.unwrap().into_iter().map(|p| p.name).collect();
    assert_eq!(prompts, vec!["jacobian-discover", "jacobian-check-evidence"]);
    let params = GetPromptRequestParams::new("jacobian-discover")
        .with_arguments(json!({"task": "is every commutative magma associative?"}).as_object().cloned().unwrap());
    let prompt = client.get_prompt(params).await.expect("prompt");
    let text = serde_json::to_string(&prompt.messages).unwrap();
    assert!(text.contains("capability.describe") && text.contains("remain your decisions"), "{text}");
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn underscore_tool_names_serve_the_same_tools() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = crate::support::serve_with_args(dir.path(), &["--underscore-tool-names"]).await;
    let mut names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        vec!["capability_describe", "capability_invoke", "workspace_open", "workspace_query", "workspace_write"]
    );
    let (page, _) = call(&client, "capability_describe", json!({"query": "magma"})).await;
    assert_eq!(page["form"], "SEARCH");
    client.cancel().await.expect("shutdown");
}

#[test]
fn a_route_to_a_role_checker_or_format_the_producer_did_not_declare_is_malformed_output() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).expect("install");
    let runtime = support::open(dir.path().to_path_buf());
    let attack = |name: &str| support::invoke(&runtime, "test.hostile.attack", Mode::Explore, json!({"attack": name}));
    // Built from the declared check: passed on as it is.
    let declared = attack("route_declared");
    assert_eq!(declared.status, jacobian::contract::Status::Completed, "{:?}", declared.diagnostic);
    let route = declared.check_with.expect("routed");
    assert_eq!(
        (route.checker_role.as_str(), route.verify_capability_id.as_str(), route.certificate_format.as_str()),
        ("test.hostile.route", "test.hostile.verify", "hostile/1")
    );
    let prefix = "component of test.hostile.attack returned a malformed answer: its route names";
    for (name, rest) in [
        ("route_role", "checker role test.other.role, which its descriptor does not declare"),
        (
            "route_checker",
            "checker test.other.verify for role test.hostile.route, which its descriptor does not declare",
        ),
        (
            "route_format",
            "certificate format other/9 for role test.hostile.route, which its descriptor does not declare",
        ),
    ] {
        let result = attack(name);
        let d = result.diagnostic.expect("refused");
        assert_eq!(d.code, jacobian::contract::Code::MalformedOutput, "{name}");
        assert_eq!(d.message, format!("{prefix} {rest}"), "{name}");
        assert!(result.check_with.is_none() && result.artifacts.is_empty(), "{name}: nothing of it is kept");
    }
    // The descriptor publishes the declared check.
    let described = runtime
        .describe(&jacobian::contract::DescribeRequest {
            capability_id: Some("test.hostile.attack".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(json!(described)["checker_roles"], json!(["test.hostile.route", "acme.lint"]));
}
