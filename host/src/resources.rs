//! MCP resources and prompts, transport-agnostic (the MCP edge and the CLI
//! both call these).

use serde_json::json;

use crate::contract::{Code, Diagnostic, EPISODE_URI_PREFIX, Stage};
use crate::digest::Digest;
use crate::runtime::Runtime;

/// The complete operating model (`jacobian://instructions`).
pub const INSTRUCTIONS: &str = include_str!("instructions.md");

/// A fixed resource or a resource template.
pub struct ResourceInfo {
    /// URI or URI template.
    pub uri: &'static str,
    /// Short name.
    pub name: &'static str,
    /// What it holds.
    pub description: &'static str,
    /// MIME type.
    pub mime_type: &'static str,
}

/// Fixed resources.
pub const RESOURCES: &[ResourceInfo] = &[
    ResourceInfo {
        uri: "jacobian://instructions",
        name: "instructions",
        description: "The complete operating model: discovery, contracts, invocation, verification boundaries, artifacts.",
        mime_type: "text/markdown",
    },
    ResourceInfo {
        uri: "capability://catalog",
        name: "capability catalog",
        description: "The installed, policy-visible capability inventory with catalog and policy digests: per \
capability its kind, modes, provider name, version and component digest, compact input schema, and the artifact types \
it takes (by field) and produces. Pages of at most 64 KiB (at least one entry each); read next for the rest.",
        mime_type: "application/json",
    },
];

/// The reference pack, advertised only while `knowledge.catalog` is installed and visible.
pub const REFERENCE_CATALOG: ResourceInfo = ResourceInfo {
    uri: "reference://catalog",
    name: "reference catalog",
    description: "The bundled reference pack: every passage with its stable id, title, source and text.",
    mime_type: "application/json",
};

/// The capability behind `reference://catalog`.
const REFERENCE_CAPABILITY: &str = "knowledge.catalog";

/// The fixed resources this runtime serves now (policy applied).
pub fn available(runtime: &Runtime) -> Vec<&'static ResourceInfo> {
    let mut out: Vec<&'static ResourceInfo> = RESOURCES.iter().collect();
    let binding = runtime.binding();
    if runtime.catalog().get(REFERENCE_CAPABILITY).is_some_and(|e| binding.visible(e)) {
        out.push(&REFERENCE_CATALOG);
    }
    out
}

/// Resource templates (only those this runtime implements).
pub const TEMPLATES: &[ResourceInfo] = &[
    ResourceInfo {
        uri: "capability://{id}",
        name: "capability contract",
        description: "One installed capability's CONTRACT view (input schema, validated examples, outcome, scope \
rule), as capability.describe with view CONTRACT answers it.",
        mime_type: "application/json",
    },
    ResourceInfo {
        uri: "artifact://sha256/{digest}",
        name: "artifact",
        description: "A stored artifact envelope (schema_uri, role, lineage, content) as canonical JSON.",
        mime_type: "application/json",
    },
    ResourceInfo {
        uri: "episode://sha256/{digest}",
        name: "episode",
        description: "The complete result of one invocation (its full_result_episode_uri) as canonical JSON.",
        mime_type: "application/json",
    },
    ResourceInfo {
        uri: "experiment://{id}",
        name: "experiment",
        description: "One experiment: its invocations in order (capability, stop reason, episode URI) and budgets. Its \
id is in every result's accounting.experiment.",
        mime_type: "application/json",
    },
    ResourceInfo {
        uri: "experiment://{id}/accounting",
        name: "experiment accounting",
        description: "Invocations per capability and stop reason, fuel, wall time, and logical / model-visible / wire \
bytes counted separately.",
        mime_type: "application/json",
    },
    ResourceInfo {
        uri: "experiment://{id}/scope",
        name: "experiment scope",
        description: "What the experiment ran under: profile, catalog and policy digests, budgets, contract versions, \
components.",
        mime_type: "application/json",
    },
    ResourceInfo {
        uri: "experiment://{id}/archive",
        name: "experiment archive",
        description: "The self-contained pack (episodes, artifacts, components, policy, contract versions) with its \
pack_hash; `jacobian replay` and `jacobian verify` re-check it offline.",
        mime_type: "application/json",
    },
];

/// The contents of a resource.
pub struct ResourceText {
    /// MIME type.
    pub mime_type: &'static str,
    /// Text.
    pub text: String,
}

fn not_found(uri: &str, message: String) -> Diagnostic {
    Diagnostic::new(
        Code::ResourceNotFound,
        Stage::Request,
        message,
        "list resources and resource templates, or use a URI returned in a result",
    )
    .with("path", "uri")
    .with("uri", uri.chars().take(200).collect::<String>())
}

/// Read a resource as the operator.
pub fn read(runtime: &Runtime, uri: &str) -> Result<ResourceText, Diagnostic> {
    read_as(runtime, uri, None)
}

/// Read a resource for `tenant` (`None`: the operator): an experiment is
/// the tenant's own of that id, an artifact or episode one it may read
/// (see `runtime/grants.rs`), or not found.
pub fn read_as(runtime: &Runtime, uri: &str, tenant: Option<&str>) -> Result<ResourceText, Diagnostic> {
    let json_text = |bytes: Vec<u8>| ResourceText {
        mime_type: "application/json",
        text: String::from_utf8_lossy(&bytes).into_owned(),
    };
    match uri {
        "jacobian://instructions" => Ok(ResourceText { mime_type: "text/markdown", text: INSTRUCTIONS.to_owned() }),
        _ if uri == CATALOG_URI || uri.starts_with(CATALOG_PAGE_PREFIX) => {
            let start = match uri.strip_prefix(CATALOG_PAGE_PREFIX) {
                None => 0,
                Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                    not_found(uri, "a catalog page is capability://catalog?cursor=<n>, from a page's next".into())
                })?,
            };
            let inventory = runtime.catalog().inventory(&runtime.binding(), start);
            Ok(ResourceText { mime_type: "application/json", text: json!(inventory).to_string() })
        }
        _ if uri.starts_with(CAPABILITY_URI_PREFIX) => {
            let request = crate::contract::DescribeRequest {
                capability_id: Some(uri[CAPABILITY_URI_PREFIX.len()..].to_owned()),
                view: Some(crate::contract::View::Contract),
                ..Default::default()
            };
            let answer = runtime.describe(&request).map_err(|diagnostic| not_found(uri, diagnostic.message))?;
            Ok(ResourceText { mime_type: "application/json", text: json!(answer).to_string() })
        }
        "reference://catalog" => {
            let request = crate::contract::InvokeRequest {
                capability_id: REFERENCE_CAPABILITY.into(),
                input: json!({}),
                tenant: tenant.map(str::to_owned),
                ..Default::default()
            };
            let result = runtime.run_unrecorded(&request);
            match (result.output, result.diagnostic) {
                (Some(output), None) => Ok(ResourceText { mime_type: "application/json", text: output.to_string() }),
                // A tenant over its quota is told so (which quota, when to retry), not "not found".
                (_, Some(diagnostic)) if diagnostic.code == Code::QuotaExceeded => Err(diagnostic),
                (_, Some(diagnostic)) => Err(not_found(uri, diagnostic.message)),
                _ => Err(not_found(uri, "the reference pack is not available".into())),
            }
        }
        _ if uri.starts_with("artifact://") => {
            let digest = Digest::from_artifact_uri(uri).map_err(|e| not_found(uri, e.to_string()))?;
            runtime.read_artifact_as(tenant, &digest).map(json_text).map_err(|e| {
                if e.is_unavailable() {
                    Diagnostic::new(Code::StorageFailed, Stage::Storage, crate::errors::render(&e), "retry the read")
                        .with("uri", uri.chars().take(200).collect::<String>())
                } else {
                    not_found(uri, crate::errors::render(&e))
                }
            })
        }
        _ if uri.starts_with("episode://") => {
            let digest = uri
                .strip_prefix(EPISODE_URI_PREFIX)
                .ok_or_else(|| not_found(uri, "episode URIs are episode://sha256/<hex>".into()))
                .and_then(|hex| Digest::from_hex(hex).map_err(|e| not_found(uri, e.to_string())))?;
            match runtime.episode_as(tenant, &digest) {
                Ok(Some(bytes)) => Ok(json_text(bytes)),
                Ok(None) => Err(not_found(uri, format!("no episode {digest}"))),
                Err(e) => Err(not_found(uri, crate::errors::render(&e))),
            }
        }
        _ if uri.starts_with(EXPERIMENT_URI_PREFIX) => experiment(runtime, uri, tenant),
        _ => Err(not_found(uri, format!("no resource {:?}", uri.chars().take(200).collect::<String>()))),
    }
}

/// The inventory's first page.
const CATALOG_URI: &str = "capability://catalog";
/// A later page of the inventory: `capability://catalog?cursor=<n>`.
const CATALOG_PAGE_PREFIX: &str = "capability://catalog?cursor=";

/// The URI prefix of one capability's contract (after the catalog's own URIs).
const CAPABILITY_URI_PREFIX: &str = "capability://";

/// The URI scheme prefix of experiments.
pub const EXPERIMENT_URI_PREFIX: &str = "experiment://";

/// The most bytes an archive read over MCP may carry (episodes, artifacts and
/// components, before base64); a larger pack is refused with `OVERSIZED`.
pub const MAX_MCP_ARCHIVE_BYTES: u64 = 16 << 20;

fn experiment(runtime: &Runtime, uri: &str, tenant: Option<&str>) -> Result<ResourceText, Diagnostic> {
    let rest = &uri[EXPERIMENT_URI_PREFIX.len()..];
    let (id, view) = rest.split_once('/').unwrap_or((rest, ""));
    let Some(key) = crate::experiments::key_named(id, tenant) else {
        return Err(not_found(uri, "experiment ids are 1-64 characters of A-Z a-z 0-9 . _ -".into()));
    };
    // Another tenant's experiment is not found, exactly as one never made.
    let records = runtime.experiments().invocations(&key).map_err(|e| not_found(uri, crate::errors::render(&e)))?;
    if records.is_empty() {
        return Err(not_found(uri, format!("no invocations are recorded for experiment {id}")));
    }
    let policy = runtime.policy();
    let views: Vec<String> =
        ["accounting", "scope", "archive"].map(|v| format!("{EXPERIMENT_URI_PREFIX}{id}/{v}")).into();
    let value = match view {
        "" => json!({
            "experiment": id,
            "invocations": records.iter().map(|r| json!({
                "ordinal": r.ordinal,
                "capability_id": r.capability_id,
                "stop_reason": r.stop_reason,
                "episode_uri": r.episode
                    .map(|d| crate::contract::episode_uri(&d)),
            })).collect::<Vec<_>>(),
            "budgets": policy.experiments,
            "resources": views,
        }),
        "accounting" => crate::experiments::accounting(id, &records),
        "scope" => {
            let episodes: Vec<serde_json::Value> = records
                .iter()
                .filter_map(|record| record.episode.map(|d| runtime.episode(&d)))
                .filter_map(|read| read.ok().flatten())
                .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
                .collect();
            let components = runtime.components_for(&episodes);
            json!({
                "experiment": id,
                "profile": policy.profile,
                "catalog_digest": runtime.catalog().digest(),
                "policy_digest": policy.digest(),
                "call_budgets": crate::engine::CallBudgets::from(policy.budgets),
                "experiment_budgets": policy.experiments,
                "contracts": crate::contract::contracts(),
                "components": components,
            })
        }
        "archive" => {
            let archive = crate::archive::Archive::build_within(runtime, &key, MAX_MCP_ARCHIVE_BYTES).map_err(|e| {
                if e.kind == crate::archive::ArchiveErrorKind::TooLarge {
                    Diagnostic::new(
                        Code::Oversized,
                        Stage::Request,
                        format!("{uri}: {e}"),
                        format!("run `jacobian archive {key} FILE` on the host, which writes the pack as it goes"),
                    )
                    .with("limit", MAX_MCP_ARCHIVE_BYTES)
                } else {
                    not_found(uri, e.to_string())
                }
            })?;
            crate::json::value(&archive)
        }
        other => return Err(not_found(uri, format!("experiments have no view {other:?}"))),
    };
    Ok(ResourceText { mime_type: "application/json", text: value.to_string() })
}

/// A prompt and its arguments.
pub struct PromptInfo {
    /// Name.
    pub name: &'static str,
    /// What it is for.
    pub description: &'static str,
    /// Arguments: (name, description, required).
    pub arguments: &'static [(&'static str, &'static str, bool)],
}

/// The prompts.
pub const PROMPTS: &[PromptInfo] = &[
    PromptInfo {
        name: "jacobian-discover",
        description: "Turn a mathematical task into discovery and exact-contract steps; strategy stays with you.",
        arguments: &[("task", "the mathematical task, in your own words", true)],
    },
    PromptInfo {
        name: "jacobian-check-evidence",
        description: "How to find a compatible independent checker for a result without treating computed evidence as verified.",
        arguments: &[(
            "result",
            "a result's full_result_episode_uri, an artifact URI, or a description of the evidence",
            false,
        )],
    },
];

/// Render a prompt.
pub fn prompt(name: &str, arguments: &serde_json::Map<String, serde_json::Value>) -> Result<String, Diagnostic> {
    let arg = |key: &str| arguments.get(key).and_then(|v| v.as_str()).unwrap_or("").to_owned();
    match name {
        "jacobian-discover" => {
            let task = arg("task");
            if task.is_empty() {
                return Err(Diagnostic::new(
                    Code::InvalidRequest,
                    Stage::Request,
                    "jacobian-discover needs the argument task",
                    "pass the task in your own words",
                )
                .with("path", "arguments.task"));
            }
            Ok(format!(
                "Task: {task}\n\n\
                 1. Decide for yourself which parts of this task are finite, exactly stated computations or searches.\n\
                 2. For each, call capability.describe with a short query (and domain/mode/input_kind if you know them). \
                 Read matched_on, lexical_fit and portfolio_fit: they are retrieval signals, not advice. If routing_status \
                 is NO_ROUTE, no installed capability accepts that kind of input.\n\
                 3. For the one or two strongest candidates, call capability.describe with capability_id and view CONTRACT; \
                 check the input schema, the outcome and the scope rule against what you need.\n\
                 4. Invoke the producer that fits with an input matching the schema. Its result is at most COMPUTED.\n\
                 5. Follow its check_with fields to an independent checker and invoke that in VERIFY mode if you need \
                 VERIFIED.\n\
                 Decomposition, strategy, iteration and when to stop remain your decisions. See jacobian://instructions."
            ))
        }
        "jacobian-check-evidence" => {
            let evidence = arg("result");
            let subject = if evidence.is_empty() { "the evidence you hold".to_owned() } else { evidence };
            Ok(format!(
                "Evidence: {subject}\n\n\
                 - Read the producing result (its episode resource if you have only the URI). Its assurance is at most \
                 COMPUTED: search, generation and computation never certify themselves.\n\
                 - Use its check_with fields: checker_role, verify_capability_id, certificate_format and \
                 certificate_artifact. Do not assume a generic verifier accepts an artifact.\n\
                 - Call capability.describe with the verify capability id and view CONTRACT, then capability.invoke in \
                 VERIFY mode with the certificate artifact.\n\
                 - Only assurance VERIFIED with verification.status VERIFIED counts, and only for the bound claim, \
                 semantics, candidate and scope recorded by digest. NOT_CONCLUDED, REJECTED and UNSUPPORTED are not \
                 verification; their obligations remain open.\n\
                 - Bounded evidence stays bounded: a check covers exactly its input."
            ))
        }
        other => Err(Diagnostic::new(
            Code::InvalidRequest,
            Stage::Request,
            format!("no prompt {other:?}"),
            "list prompts to see jacobian-discover and jacobian-check-evidence",
        )
        .with("path", "name")),
    }
}

/// Every resource URI and template, as JSON (for the CLI).
pub fn listing() -> serde_json::Value {
    let item = |r: &ResourceInfo| json!({"uri": r.uri, "name": r.name, "description": r.description, "mime_type": r.mime_type});
    json!({
        "resources": RESOURCES.iter().chain(std::iter::once(&REFERENCE_CATALOG)).map(item).collect::<Vec<_>>(),
        "resource_templates": TEMPLATES.iter().map(item).collect::<Vec<_>>(),
        "prompts": PROMPTS.iter().map(|p| json!({"name": p.name, "description": p.description})).collect::<Vec<_>>(),
    })
}

/// The most values one completion answers with (MCP's own bound).
pub const MAX_COMPLETIONS: usize = 100;

/// What a completion request completes: a resource template's variable or a
/// prompt's argument.
pub enum Completing<'a> {
    /// A variable of the resource template with this URI.
    Template(&'a str),
    /// An argument of the prompt with this name.
    Prompt(&'a str),
}

/// Values for what a client is typing, each starting with `value`, at most
/// [`MAX_COMPLETIONS`], and whether there are more. Experiment ids are the
/// caller's own (`tenant`), capability ids those the policy shows, and a
/// result for `jacobian-check-evidence` is an episode URI of `experiment`
/// (the session's), newest first. Anything else completes to nothing (a hint,
/// not a lookup: an unknown template, prompt or argument is no error).
pub fn complete(
    runtime: &Runtime,
    completing: Completing<'_>,
    argument: &str,
    value: &str,
    tenant: Option<&str>,
    experiment: &str,
) -> Result<(Vec<String>, bool), Diagnostic> {
    let unavailable = |e: &(dyn std::error::Error + 'static)| {
        Diagnostic::new(Code::StorageFailed, Stage::Storage, crate::errors::render(e), "retry the completion")
    };
    let mut values: Vec<String> = match (completing, argument) {
        (Completing::Template(uri), "id") if uri.starts_with("experiment://{id}") => {
            // Only what can start a key is looked up (ids are 1-64 of A-Z a-z 0-9 . _ -).
            let plausible =
                value.len() <= 81 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b));
            if !plausible {
                return Ok((Vec::new(), false));
            }
            runtime.experiments().ids(value, tenant, MAX_COMPLETIONS + 1).map_err(|e| unavailable(&e))?
        }
        (Completing::Template("capability://{id}"), "id") => {
            let binding = runtime.binding();
            let mut ids: Vec<String> = runtime
                .catalog()
                .entries()
                .filter(|entry| entry.id.starts_with(value) && binding.visible(entry))
                .map(|entry| entry.id.clone())
                .collect();
            ids.sort();
            ids
        }
        (Completing::Prompt("jacobian-check-evidence"), "result") => {
            let Some(key) = crate::experiments::key_named(experiment, tenant) else { return Ok((Vec::new(), false)) };
            let records = runtime.experiments().invocations(&key).map_err(|e| unavailable(&e))?;
            records
                .iter()
                .rev()
                .filter_map(|record| record.episode.map(|d| crate::contract::episode_uri(&d)))
                .filter(|uri| uri.starts_with(value))
                .collect()
        }
        _ => Vec::new(),
    };
    let more = values.len() > MAX_COMPLETIONS;
    values.truncate(MAX_COMPLETIONS);
    Ok((values, more))
}
