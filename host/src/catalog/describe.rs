//! `capability.describe`: one capability's exact projection (SUMMARY,
//! CONTRACT or FULL), or a search or browse of the catalog (`search.rs`).

use serde_json::Value;

use super::answer::{
    ContractView, DescribeAnswer, FieldSummary, FullView, PresetView, Projection, ProviderView, Related, Relation,
    RuntimeNotes,
};
use super::{Binding, Catalog, CatalogEntry, DescribeError, EntryKind};
use crate::contract::{DESCRIBE_CONTRACT, DescribeRequest, SCOPE_RULE, View};

/// Answer `capability.describe`.
pub fn describe(
    catalog: &Catalog,
    binding: &Binding,
    request: &DescribeRequest,
) -> Result<DescribeAnswer, DescribeError> {
    match &request.capability_id {
        Some(id) => {
            // A capability the policy hides is absent, not forbidden, here.
            let entry = catalog.get(id).filter(|e| binding.visible(e)).ok_or_else(|| DescribeError {
                path: "capability_id",
                message: format!("no installed capability {id:?}"),
                not_found: true,
            })?;
            Ok(DescribeAnswer::Capability(Box::new(project(catalog, binding, entry, request.view.unwrap_or_default()))))
        }
        None => super::search::search(catalog, binding, request).map(|page| DescribeAnswer::Page(Box::new(page))),
    }
}

fn project(catalog: &Catalog, binding: &Binding, e: &CatalogEntry, view: View) -> Projection {
    let full = view == View::Full;
    let contract_view = (view != View::Summary).then(|| ContractView {
        input_schema: strip_annotations(&e.input_schema),
        examples: e.examples.clone(),
        artifact_types: e.artifact_types.clone(),
        accepts: e.accepts.clone(),
        produces: e.produces.clone(),
        certificate_formats: e.certificate_formats.clone(),
        related_operations: related(catalog, binding, e),
        runtime: RuntimeNotes {
            modes: binding.modes(e).to_vec(),
            sandbox: "one fresh WebAssembly instance per call; no filesystem, network, environment or host clock",
            budgets: "fuel, memory and output budgets from the operator policy; a request may lower them (budget)",
            deterministic: "same input, component digest and budgets give byte-identical results",
            assurance: match e.kind {
                EntryKind::Producer => "at most COMPUTED; follow check_with in the result to verify",
                EntryKind::Verifier => "VERIFIED only when this checker is operator-authorized and accepts",
                EntryKind::Router => "the routed checker's verdict: VERIFIED only from an operator-authorized checker",
            },
            budget_presets: presets(&binding.budgets, e),
        },
    });
    Projection {
        contract: DESCRIBE_CONTRACT,
        view,
        capability_id: e.id.clone(),
        kind: e.kind,
        title: e.title.clone(),
        outcome: e.outcome.clone(),
        description: e.description.clone(),
        modes: binding.modes(e).to_vec(),
        tags: e.tags.clone(),
        input_kind: e.input_kind,
        availability: binding.availability(e),
        provider: ProviderView {
            name: e.provider.name.clone(),
            version: e.provider.version.clone(),
            digest: e.component,
            install_tier: e.tier,
            licence: full.then(|| e.provider.licence.clone()),
            features: full.then(|| e.provider.features.clone()),
            digest_kind: full.then_some("sha256"),
            platform: full.then_some(crate::registry::PLATFORM),
        },
        input_fields: field_summary(&e.input_schema),
        output_fields: e.output_schema.as_ref().map(field_summary),
        examples_available: !e.examples.is_empty(),
        checker_roles: e.checker_roles.clone(),
        catalog_digest: catalog.digest(),
        policy_digest: binding.policy_digest,
        contract_view,
        full_view: full.then(|| FullView { output_schema: e.output_schema.clone(), audit: e.audit.clone() }),
        scope_rule: SCOPE_RULE,
    }
}

/// Producers whose results name a role this verifier fills, or verifiers
/// for the roles this producer names; then, by artifact type, the
/// capabilities that make what this one takes (INPUT_FROM) and that take
/// what this one makes (OUTPUT_TO).
fn related(catalog: &Catalog, binding: &Binding, e: &CatalogEntry) -> Vec<Related> {
    // Only what the policy shows: a hidden capability is absent here too.
    let visible = || catalog.entries().filter(|other| other.id != e.id && binding.visible(other));
    let mut related: Vec<Related> = visible()
        .filter(|other| other.kind != e.kind)
        .filter(|other| other.checker_roles.iter().any(|r| e.checker_roles.contains(r)))
        .map(|other| Related {
            capability_id: other.id.clone(),
            relation: match (e.kind, other.kind) {
                (_, EntryKind::Router) => Relation::RoutedBy,
                (EntryKind::Router, _) => Relation::RoutesTo,
                (EntryKind::Producer, _) => Relation::CheckedBy,
                (EntryKind::Verifier, _) => Relation::ChecksResultsOf,
            },
            schema_uri: None,
            field: None,
        })
        .collect();
    let field = |f: &str| (!f.is_empty()).then(|| f.to_owned());
    for other in visible() {
        for accepted in &e.accepts {
            if other.produces.contains(&accepted.schema_uri) {
                related.push(Related {
                    capability_id: other.id.clone(),
                    relation: Relation::InputFrom,
                    schema_uri: Some(accepted.schema_uri.clone()),
                    field: field(&accepted.field),
                });
            }
        }
        for made in &e.produces {
            if let Some(taken_by) = other.accepts_type(made) {
                related.push(Related {
                    capability_id: other.id.clone(),
                    relation: Relation::OutputTo,
                    schema_uri: Some(made.clone()),
                    field: field(taken_by),
                });
            }
        }
    }
    related
}

/// What each budget preset comes to under the operator's budgets, and how
/// long it lasts for the capability.
fn presets(budgets: &crate::policy::Budgets, e: &CatalogEntry) -> Vec<PresetView> {
    use strum::IntoEnumIterator;
    // The table measured the bundled components: another component with the same id is not them.
    let (fuel_per_second, rate_measured) = match e.tier {
        crate::registry::Tier::Bundled => crate::budgets::rate(&e.id),
        crate::registry::Tier::Operator => (crate::budgets::FUEL_PER_SECOND, false),
    };
    crate::budgets::BudgetPreset::iter()
        .map(|preset| {
            let fuel = preset.fuel(budgets.fuel);
            PresetView {
                preset,
                fuel,
                memory_bytes: budgets.memory_bytes,
                output_bytes: budgets.output_bytes,
                // Milliseconds, as a number of seconds.
                typical_seconds: (fuel as f64 * 1000.0 / fuel_per_second as f64).round() / 1000.0,
                fuel_per_second,
                rate_measured,
            }
        })
        .collect()
}

/// Top-level fields of an object schema: name, type, required, description.
fn field_summary(schema: &Value) -> Vec<FieldSummary> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| FieldSummary {
                    name: name.clone(),
                    json_type: prop.get("type").cloned().unwrap_or(Value::Null),
                    required: required.contains(&name.as_str()),
                    description: prop.get("description").cloned().unwrap_or(Value::Null),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The validation-equivalent schema: annotations, defaults and examples removed.
pub(super) fn strip_annotations(schema: &Value) -> Value {
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
