//! Published examples: every capability's CONTRACT shows at least one, each
//! runs as an agent would run it (a recipe's steps first, each
//! `$steps.N.artifacts.ROLE` replaced by that step's artifact URI), and the
//! health probe that runs them at install refuses what would not run.

use std::collections::BTreeMap;

use jacobian::bundled::BUNDLED;
use jacobian::contract::{Assurance, DescribeRequest, Status, View};
use jacobian::registry::InstallError;
use jacobian::runtime::{GivenComponent, Portfolio, Runtime, RuntimeConfig};
use jacobian_guest::protocol::{BundleKind, Mode};
use serde_json::{Value, json};

use crate::support::{self, invoke};

/// `value` with each step reference replaced from `made` (step → role → URI),
/// read the way the instructions tell an agent to read it.
fn substitute(value: &Value, made: &[BTreeMap<String, String>]) -> Value {
    match value {
        Value::String(text) if text.starts_with("$steps.") => {
            let parts: Vec<&str> = text.splitn(4, '.').collect();
            assert_eq!(parts.len(), 4, "{text}");
            assert_eq!(parts[2], "artifacts", "{text}");
            let step: usize = parts[1].parse().expect("a step number");
            let uri = made[step].get(parts[3]).unwrap_or_else(|| panic!("step {step} made no {}: {made:?}", parts[3]));
            Value::String(uri.clone())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, made)).collect()),
        Value::Object(fields) => Value::Object(fields.iter().map(|(k, v)| (k.clone(), substitute(v, made))).collect()),
        other => other.clone(),
    }
}

#[test]
fn every_contract_publishes_an_example_and_each_runs_as_published() {
    let (runtime, _dir) = support::runtime();
    let ids: Vec<String> = runtime.catalog().entries().map(|e| e.id.clone()).collect();
    assert!(ids.len() >= 14, "the bundled portfolio and the router: {ids:?}");
    let mut recipes = 0;
    for id in &ids {
        let request =
            DescribeRequest { capability_id: Some(id.clone()), view: Some(View::Contract), ..Default::default() };
        let contract = serde_json::to_value(runtime.describe(&request).expect("describe")).expect("json");
        let examples = contract["examples"].as_array().cloned().unwrap_or_default();
        assert!(!examples.is_empty(), "{id}'s CONTRACT publishes no example: {contract}");
        let mode = match contract["modes"][0].as_str() {
            Some("VERIFY") => Mode::Verify,
            _ => Mode::Explore,
        };
        for example in examples {
            let title = example["title"].as_str().unwrap_or_default().to_owned();
            let mut made: Vec<BTreeMap<String, String>> = Vec::new();
            let steps = example["steps"].as_array().cloned().unwrap_or_default();
            recipes += usize::from(!steps.is_empty());
            for (n, step) in steps.iter().enumerate() {
                let step_id = step["capability_id"].as_str().expect("a step names its capability");
                let result = invoke(&runtime, step_id, Mode::Explore, substitute(&step["input"], &made));
                assert_eq!(result.status, Status::Completed, "{id} \"{title}\" step {n}: {:?}", result.diagnostic);
                made.push(result.artifacts.iter().map(|a| (a.role.clone(), a.uri.clone())).collect());
            }
            let result = invoke(&runtime, id, mode, substitute(&example["input"], &made));
            assert_eq!(result.status, Status::Completed, "{id} \"{title}\": {:?}", result.diagnostic);
            if mode == Mode::Verify {
                // A checker's example shows evidence it accepts: the authorized checker verifies it.
                assert_eq!(result.assurance, Assurance::Verified, "{id} \"{title}\": {:?}", result.verification);
            }
        }
    }
    // Every capability whose input takes an artifact shows where it comes from.
    assert!(recipes >= 11, "recipes run: {recipes}");
}

#[test]
fn a_recipe_that_names_an_artifact_its_step_does_not_make_is_refused_at_install() {
    let (runtime, dir) = support::runtime();
    let error = runtime.install(&support::test_guest("recipe"), None).expect_err("the probe refuses it");
    match &error {
        InstallError::Example(failure) => {
            assert_eq!(failure.capability_id, "test.recipe.broken");
            assert_eq!(failure.title, "a formula, by the wrong name");
            assert_eq!(failure.path, "input.cnf");
            let message = &failure.message;
            assert!(message.contains("\"formula\"") && message.contains("[\"cnf\"]"), "{message}");
        }
        other => panic!("expected an example failure, got {other}"),
    }
    drop(runtime);
    let reopened = support::open(dir.path().to_path_buf());
    assert!(reopened.catalog().get("test.recipe.broken").is_none(), "nothing was recorded");
}

fn bundled(package: &str) -> GivenComponent {
    let component = BUNDLED.iter().find(|c| c.package == package).expect("bundled package");
    GivenComponent { name: package.into(), bytes: component.bytes.to_vec(), trusted: true }
}

fn open_given(dir: &std::path::Path, given: Vec<GivenComponent>) -> Runtime {
    let config = RuntimeConfig { portfolio: Portfolio::Given(given), ..RuntimeConfig::new(dir.to_path_buf()) };
    Runtime::open(config).expect("runtime opens")
}

fn health(runtime: &Runtime, id: &str) -> Value {
    let entry = runtime.catalog().get(id).expect("installed");
    entry.audit["health"].clone()
}

#[test]
fn a_checker_given_before_its_producer_waits_for_it_and_without_it_skips_its_examples() {
    // Checker first: its recipes run once the producer is in.
    let dir = tempfile::tempdir().expect("temp dir");
    let both = open_given(dir.path(), vec![bundled("jacobian-sat-checker"), bundled("jacobian-sat")]);
    let checker = health(&both, "sat.certificate.verify");
    assert_eq!(checker["examples_run"], json!(2), "{checker}");
    assert!(checker.get("examples_skipped").is_none(), "{checker}");

    // A replay's portfolio with the checker alone: installed, examples skipped and counted.
    let dir = tempfile::tempdir().expect("temp dir");
    let alone = open_given(dir.path(), vec![bundled("jacobian-sat-checker")]);
    let checker = health(&alone, "sat.certificate.verify");
    assert_eq!((checker["examples_run"].clone(), checker["examples_skipped"].clone()), (json!(0), json!(2)));

    // An operator installing it there is told to install the producer first, and nothing is recorded.
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = open_given(dir.path(), vec![bundled("jacobian-claim")]);
    let bytes = bundled("jacobian-sat-checker").bytes;
    match empty.install(&bytes, None).expect_err("refused") {
        InstallError::StepProviderMissing { capability_id, step, step_capability, .. } => {
            assert_eq!(
                (capability_id.as_str(), step, step_capability.as_str()),
                ("sat.certificate.verify", 0, "sat.cnf.construct")
            );
        }
        other => panic!("expected a missing step provider, got {other}"),
    }
    drop(empty);
    let reopened = open_given(dir.path(), vec![bundled("jacobian-claim")]);
    assert!(reopened.catalog().get("sat.certificate.verify").is_none());
}

#[test]
fn a_recipe_is_checked_for_its_references_before_anything_runs() {
    let descriptor = |steps: Value, input: Value| {
        json!({
            "protocol": "jacobian.component/1", "kind": "CAPABILITY",
            "provider": {"name": "t", "version": "1", "licence": "MIT"},
            "capabilities": [{
                "id": "test.recipe.check", "title": "t", "outcome": "o", "description": "d", "tags": [],
                "modes": ["EXPLORE"], "input_kind": "TYPED_ARTIFACT",
                "input_schema": {"type": "object", "properties": {"cnf": {"type": "string", "pattern": "^artifact://"}},
                                 "required": ["cnf"], "additionalProperties": false},
                "output_schema": {"type": "object"},
                "examples": [{"title": "e", "steps": steps, "input": input}],
                "checker_roles": [], "artifact_types": []
            }]
        })
        .to_string()
    };
    let validate =
        |bytes: String| jacobian::descriptor::validate(bytes.as_bytes(), BundleKind::Capability, &Default::default());
    let step = json!([{"capability_id": "sat.cnf.construct", "input": {"dimacs": "p cnf 0 0\n"}}]);
    assert!(validate(descriptor(step.clone(), json!({"cnf": "$steps.0.artifacts.cnf"}))).is_ok());
    let refused = |steps: Value, input: Value| validate(descriptor(steps, input)).expect_err("refused").to_string();
    // A reference to a step that has not run.
    let ahead = refused(step.clone(), json!({"cnf": "$steps.1.artifacts.cnf"}));
    assert!(ahead.contains("capabilities.0.examples.0.input.cnf") && ahead.contains("step 1"), "{ahead}");
    // A step referring to itself.
    let own = refused(json!([{"capability_id": "a.b", "input": {"x": "$steps.0.artifacts.cnf"}}]), json!({"cnf": "x"}));
    assert!(own.contains("examples.0.steps.0.input.x"), "{own}");
    // A malformed reference.
    let malformed = refused(step.clone(), json!({"cnf": "$steps.zero.artifacts.cnf"}));
    assert!(malformed.contains("$steps.N.artifacts.ROLE"), "{malformed}");
    // A step that names no capability id.
    let bad_id =
        refused(json!([{"capability_id": "Not An Id", "input": {}}]), json!({"cnf": "$steps.0.artifacts.cnf"}));
    assert!(bad_id.contains("examples.0.steps.0.capability_id"), "{bad_id}");
    // The input, references aside, must still fit the schema.
    let unfit = refused(step, json!({"cnf": "$steps.0.artifacts.cnf", "extra": 1}));
    assert!(unfit.contains("examples.0.input") && unfit.contains("input schema"), "{unfit}");
}
