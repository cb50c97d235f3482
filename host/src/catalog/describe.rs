//! `capability.describe`: one capability's exact projection (SUMMARY,
//! CONTRACT or FULL), or a search or browse of the catalog (`search.rs`).

use serde_json::{Map, Value, json};

use crate::contract::{DescribeRequest, SCOPE_RULE, View};

use super::{Binding, Catalog, CatalogEntry, DescribeError, EntryKind};

/// Answer `capability.describe`.
pub fn describe(catalog: &Catalog, binding: &Binding, request: &DescribeRequest) -> Result<Value, DescribeError> {
    match &request.capability_id {
        Some(id) => {
            // A capability the policy hides is absent, not forbidden, here.
            let entry = catalog.get(id).filter(|e| binding.visible(e)).ok_or_else(|| DescribeError {
                path: "capability_id",
                message: format!("no installed capability {id:?}"),
                not_found: true,
            })?;
            Ok(project(catalog, binding, entry, request.view.unwrap_or_default()))
        }
        None => super::search::search(catalog, binding, request),
    }
}

fn project(catalog: &Catalog, binding: &Binding, e: &CatalogEntry, view: View) -> Value {
    let mut out = Map::new();
    out.insert("contract".into(), json!(crate::contract::DESCRIBE_CONTRACT));
    out.insert("view".into(), json!(view));
    out.insert("capability_id".into(), json!(e.id));
    out.insert("kind".into(), json!(e.kind));
    out.insert("title".into(), json!(e.title));
    out.insert("outcome".into(), json!(e.outcome));
    out.insert("description".into(), json!(e.description));
    out.insert("modes".into(), json!(binding.modes(e)));
    out.insert("tags".into(), json!(e.tags));
    out.insert("input_kind".into(), json!(e.input_kind));
    out.insert("availability".into(), json!(binding.availability(e)));
    out.insert(
        "provider".into(),
        json!({"name": e.provider.name, "version": e.provider.version, "digest": e.component.to_string(), "install_tier": e.tier}),
    );
    out.insert("input_fields".into(), field_summary(&e.input_schema));
    if let Some(schema) = &e.output_schema {
        out.insert("output_fields".into(), field_summary(schema));
    }
    out.insert("examples_available".into(), json!(!e.examples.is_empty()));
    out.insert("checker_roles".into(), json!(e.checker_roles));
    out.insert("catalog_digest".into(), json!(catalog.digest().to_string()));
    out.insert("policy_digest".into(), json!(binding.policy_digest.to_string()));
    if view != View::Summary {
        out.insert("input_schema".into(), strip_annotations(&e.input_schema));
        out.insert("examples".into(), json!(e.examples));
        out.insert("artifact_types".into(), json!(e.artifact_types));
        out.insert("certificate_formats".into(), json!(e.certificate_formats));
        out.insert("related_operations".into(), json!(related(catalog, e)));
        out.insert(
            "runtime".into(),
            json!({
                "modes": binding.modes(e),
                "sandbox": "one fresh WebAssembly instance per call; no filesystem, network, environment or host clock",
                "budgets": "fuel, memory and output budgets from the operator policy; a request may lower them (budget)",
                "deterministic": "same input, component digest and budgets give byte-identical results",
                "assurance": match e.kind {
                    EntryKind::Producer => "at most COMPUTED; follow check_with in the result to verify",
                    EntryKind::Verifier => "VERIFIED only when this checker is operator-authorized and accepts",
                    EntryKind::Router => "the routed checker's verdict: VERIFIED only from an operator-authorized checker",
                },
            }),
        );
    }
    if view == View::Full {
        out.insert("output_schema".into(), json!(e.output_schema));
        out.insert("audit".into(), e.audit.clone());
        out.insert(
            "provider".into(),
            json!({
                "name": e.provider.name, "version": e.provider.version, "licence": e.provider.licence,
                "features": e.provider.features, "digest_kind": "sha256", "digest": e.component.to_string(),
                "install_tier": e.tier, "platform": crate::registry::PLATFORM,
            }),
        );
    }
    out.insert("scope_rule".into(), json!(SCOPE_RULE));
    Value::Object(out)
}

/// Producers whose results name a role this verifier fills, or verifiers
/// for the roles this producer names.
fn related(catalog: &Catalog, e: &CatalogEntry) -> Vec<Value> {
    catalog
        .entries()
        .filter(|other| other.id != e.id && other.kind != e.kind)
        .filter(|other| other.checker_roles.iter().any(|r| e.checker_roles.contains(r)))
        .map(|other| {
            let relation = match (e.kind, other.kind) {
                (_, EntryKind::Router) => "ROUTED_BY",
                (EntryKind::Router, _) => "ROUTES_TO",
                (EntryKind::Producer, _) => "CHECKED_BY",
                (EntryKind::Verifier, _) => "CHECKS_RESULTS_OF",
            };
            json!({"capability_id": other.id, "relation": relation})
        })
        .collect()
}

/// Top-level fields of an object schema: name, type, required, description.
fn field_summary(schema: &Value) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| {
                    json!({
                        "name": name,
                        "type": prop.get("type").cloned().unwrap_or(Value::Null),
                        "required": required.contains(&name.as_str()),
                        "description": prop.get("description").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Value::Array(fields)
}

/// The validation-equivalent schema: annotations, defaults and examples removed.
fn strip_annotations(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "title"
                            | "description"
                            | "default"
                            | "examples"
                            | "$comment"
                            | "discriminator"
                            | "deprecated"
                            | "readOnly"
                            | "writeOnly"
                    )
                })
                .map(|(k, v)| {
                    // Property names are data, not annotations: keep them all.
                    if k == "properties" || k == "$defs" {
                        let inner = v
                            .as_object()
                            .map(|m| m.iter().map(|(n, s)| (n.clone(), strip_annotations(s))).collect())
                            .unwrap_or_default();
                        (k.clone(), Value::Object(inner))
                    } else {
                        (k.clone(), strip_annotations(v))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_annotations).collect()),
        other => other.clone(),
    }
}
