//! Diagnostics of the invoke pipeline: each failure as data with its code,
//! stage, dot-path and stop reason, rendered here and nowhere else.

use jacobian_guest::protocol::Refusal as ComponentRefusal;
use serde_json::{Value, json};

use crate::contract::{CallBudgets, Code, Diagnostic, Stage};
use crate::engine::CallFailure;
use crate::experiments::StopReason;
use crate::limits::bounded_text;

/// A failure of a component call: the diagnostic, and how the invocation
/// ended (a trap is FAILED and replayable; no slot or a cancellation is not).
pub(super) fn diagnose(
    failure: &CallFailure,
    id: &str,
    budgets: &CallBudgets,
    console: &str,
) -> (Diagnostic, StopReason) {
    let console = (!console.is_empty()).then(|| console.to_owned());
    let failed = |d| (d, StopReason::Failed);
    match failure {
        CallFailure::FuelExhausted => failed(
            Diagnostic::new(
                Code::FuelExhausted,
                Stage::Execution,
                format!("{id} ran out of fuel ({} units)", budgets.fuel),
                "no conclusion was reached; narrow the input, or raise budget.fuel up to the operator's limit",
            )
            .with("fuel", budgets.fuel),
        ),
        CallFailure::MemoryLimit { limit } => failed(
            Diagnostic::new(
                Code::MemoryLimit,
                Stage::Execution,
                format!("{id} tried to grow its memory past {limit} bytes"),
                "narrow the input, or raise budget.memory_bytes up to the operator's limit",
            )
            .with("memory_bytes", limit),
        ),
        CallFailure::StackOverflow => failed(Diagnostic::new(
            Code::StackOverflow,
            Stage::Execution,
            format!("{id} overflowed its stack"),
            "the input nests too deeply for this component; simplify it",
        )),
        CallFailure::Trap { message } => failed(
            Diagnostic::new(
                Code::GuestTrap,
                Stage::Execution,
                format!("{id} trapped: {message}"),
                "the component failed on this input; nothing was concluded or stored",
            )
            .with("console", console),
        ),
        CallFailure::OutputTooLarge { bytes, limit } => failed(
            Diagnostic::new(
                Code::OutputTooLarge,
                Stage::Output,
                format!("{id} answered with {bytes} bytes, above the output budget of {limit}"),
                "narrow the input, or raise budget.output_bytes up to the operator's limit",
            )
            .with("output_bytes", limit)
            .with("answer_bytes", bytes),
        ),
        CallFailure::Refused { message } => {
            let refusal: ComponentRefusal =
                serde_json::from_str(message).unwrap_or_else(|_| ComponentRefusal::at("", message.clone()));
            let path = if refusal.path.is_empty() { "input".to_owned() } else { format!("input.{}", refusal.path) };
            failed(
                Diagnostic::new(
                    Code::InvalidInput,
                    Stage::Validation,
                    format!("{id} refused the input: {}", refusal.message),
                    "fix the named field; read capability.describe with view CONTRACT for the rules",
                )
                .with("path", path),
            )
        }
        CallFailure::Cancelled => (
            Diagnostic::new(
                Code::Cancelled,
                Stage::Execution,
                format!("{id} was cancelled by the caller"),
                "nothing was concluded or stored; invoke again to rerun",
            ),
            StopReason::Cancelled,
        ),
        CallFailure::DeadlineExceeded { limit_ms } => (
            Diagnostic::new(
                Code::DeadlineExceeded,
                Stage::Execution,
                format!("{id} ran past the wall-clock ceiling of {limit_ms} ms and was stopped"),
                "nothing was concluded or stored, and a call stopped by time is not replayable; narrow the input, or \
                 ask the operator about budgets.wall_ms",
            )
            .with("wall_ms", limit_ms),
            StopReason::Cancelled,
        ),
        CallFailure::Overloaded { running, queued } => (
            Diagnostic::new(
                Code::Overloaded,
                Stage::Instantiation,
                format!(
                    "{id} did not start: all {running} sandbox slots are busy and {queued} calls are already waiting"
                ),
                "retry after a short delay; the operator sets the limits with serve --max-concurrent-calls and \
                 --max-queued-calls",
            )
            .with("running", running)
            .with("queued", queued),
            StopReason::Unavailable,
        ),
        CallFailure::FileUnavailable { message, corrupt: true } => failed(Diagnostic::new(
            Code::ArtifactNotFound,
            Stage::Execution,
            format!("{id} was stopped: {message}"),
            "the stored file no longer has its digest; upload it again (jacobian artifact put, or PUT \
             /artifacts/sha256/<hex>)",
        )),
        CallFailure::FileUnavailable { message, corrupt: false } => {
            (storage_failed_text(format!("{id} was stopped: {message}")), StopReason::Unavailable)
        }
        CallFailure::Instantiation { message } => (
            Diagnostic::new(
                Code::ComponentUnavailable,
                Stage::Instantiation,
                format!("{id} could not be instantiated: {message}"),
                "retry shortly; every sandbox slot may be busy",
            ),
            StopReason::Unavailable,
        ),
    }
}

/// A component's answer that breaks the protocol or its own descriptor.
pub(super) fn malformed(id: &str, message: String) -> Diagnostic {
    Diagnostic::new(
        Code::MalformedOutput,
        Stage::Output,
        format!("component of {id} returned a malformed answer: {message}"),
        "report this to the provider; the answer was discarded and nothing was stored",
    )
}

/// A store that failed while the call was recorded or its artifacts stored,
/// said with its causes ([`crate::errors::render`]).
pub(super) fn storage_failed(error: impl std::error::Error + 'static) -> Diagnostic {
    Diagnostic::new(Code::StorageFailed, Stage::Storage, crate::errors::render(&error), "retry the call")
}

/// The same, for a failure already said in words.
pub(super) fn storage_failed_text(message: String) -> Diagnostic {
    Diagnostic::new(Code::StorageFailed, Stage::Storage, message, "retry the call")
}

/// Every violation of an input schema (up to 20), the first one's path as `path`.
pub(super) fn schema_violations(id: &str, errors: Vec<Value>) -> Diagnostic {
    let first = errors.first().map(|e| e["path"].clone()).unwrap_or(Value::Null);
    Diagnostic::new(
        Code::InvalidInput,
        Stage::Validation,
        format!("input does not satisfy the input schema of {id}"),
        "read capability.describe with view CONTRACT for the exact input schema",
    )
    .with("path", first)
    .with("errors", errors)
}

/// One schema error as `{path, message}`.
pub(super) fn violation(error: &jsonschema::ValidationError<'_>) -> Value {
    serde_json::json!({"path": error_path(error), "message": bounded_text(error)})
}

/// The dot-path of the field a schema error is about: the offending
/// property itself for `required` and `additionalProperties` errors.
pub(super) fn error_path(error: &jsonschema::ValidationError<'_>) -> String {
    let path = dot_path("input", &error.instance_path().to_string());
    match error.kind() {
        jsonschema::error::ValidationErrorKind::Required { property } => {
            format!("{path}.{}", property.as_str().unwrap_or_default())
        }
        jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => match unexpected.first() {
            Some(name) => format!("{path}.{name}"),
            None => path,
        },
        _ => path,
    }
}

/// The dot-path of the tool argument a schema error is about (`budget.fuel`,
/// `experiment`): [`error_path`] of its [`telling`] error, without a root.
pub fn argument_path(error: &jsonschema::ValidationError<'_>) -> String {
    let path = match telling(error) {
        Some(inner) => return argument_path(inner),
        None => error_path(error),
    };
    path.strip_prefix("input").unwrap_or_default().trim_start_matches('.').to_owned()
}

/// The error inside an `anyOf`/`oneOf` that says what is wrong, if any: the
/// deepest error of the branches whose tag (a `const`) matched. An optional
/// field is `anyOf [schema, null]`; a workspace entry is a `oneOf` of
/// variants told apart by a `type` const, and a finding without its title is
/// `entries.1.title`, not "no variant fits" at `entries.1.type`.
fn telling<'e>(error: &'e jsonschema::ValidationError<'_>) -> Option<&'e jsonschema::ValidationError<'static>> {
    use jsonschema::error::ValidationErrorKind::{AnyOf, Constant, OneOfNotValid};
    let (AnyOf { context } | OneOfNotValid { context }) = error.kind() else { return None };
    let tagged: Vec<_> =
        context.iter().filter(|branch| !branch.iter().any(|e| matches!(e.kind(), Constant { .. }))).collect();
    let narrowed = !tagged.is_empty() && tagged.len() < context.len();
    let branches = if tagged.is_empty() { context.iter().collect() } else { tagged };
    let depth = |e: &jsonschema::ValidationError<'_>| e.instance_path().to_string().len();
    let inner = branches.into_iter().flatten().max_by_key(|e| depth(e))?;
    (narrowed || depth(inner) > depth(error)).then_some(inner)
}

/// What a schema error says, from its [`telling`] error.
fn argument_message(error: &jsonschema::ValidationError<'_>) -> String {
    match telling(error) {
        Some(inner) => argument_message(inner),
        None => crate::limits::clip(&error.to_string(), 512).into_owned(),
    }
}

/// A tool's arguments (or a CLI request file) read as a `P`, or the
/// diagnostic of [`argument_error`]. Arguments that do not fit are tried once
/// more [`decoded`], and kept only if they then fit.
pub fn read_arguments<P: serde::de::DeserializeOwned + schemars::JsonSchema>(
    arguments: &Value,
) -> Result<P, Diagnostic> {
    // Read from the arguments in place: no copy of a large input.
    P::deserialize(arguments).or_else(|e| {
        decoded(arguments)
            .and_then(|decoded| P::deserialize(&decoded).ok())
            .ok_or_else(|| argument_error::<P>(arguments, &e))
    })
}

/// Arguments that did not fit with every top-level string that holds a JSON
/// object or array read as that value, if there is one: some clients (the MCP
/// Inspector's `--tool-arg input={…}`) send an object argument JSON-encoded.
/// Tried only once the arguments as sent were refused, and kept only if they
/// then fit; otherwise the refusal is about the arguments as sent.
fn decoded(arguments: &Value) -> Option<Value> {
    let mut changed = false;
    let mut decoded = arguments.as_object()?.clone();
    for value in decoded.values_mut() {
        if let Value::String(text) = value
            && text.trim_start().starts_with(['{', '['])
            && let Ok(inner @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(text)
        {
            *value = inner;
            changed = true;
        }
    }
    changed.then_some(Value::Object(decoded))
}

/// Why `arguments` (a tool's, or a CLI request file's) are not a `P`: the violations of `P`'s schema, with their
/// paths; else the deserializer's reason (a rule the schema does not state).
pub fn argument_error<P: schemars::JsonSchema>(arguments: &Value, error: &serde_json::Error) -> Diagnostic {
    let schema = crate::json::value(&schemars::schema_for!(P));
    let mut errors: Vec<Value> = crate::descriptor::compile_schema(&schema)
        .map(|validator| {
            validator
                .iter_errors(arguments)
                .take(20)
                .map(|e| json!({"path": argument_path(&e), "message": argument_message(&e)}))
                .collect()
        })
        .unwrap_or_default();
    if errors.is_empty() {
        let reason = error.to_string();
        // serde names the field of an unknown or missing one: `field`.
        let path = reason.split('`').nth(1).filter(|_| reason.contains(" field `")).unwrap_or("");
        errors.push(json!({"path": path, "message": crate::limits::clip(&reason, 512)}));
    }
    let first = errors[0].clone();
    Diagnostic::new(
        Code::InvalidRequest,
        Stage::Request,
        format!("the tool arguments do not fit the tool's input schema: {}", first["message"].as_str().unwrap_or("")),
        "read the tool's input schema (tools/list) and send only the fields it names",
    )
    .with("path", first["path"].clone())
    .with("errors", errors)
}

/// `/a/0/b` under `root` → `root.a.0.b`.
pub(super) fn dot_path(root: &str, pointer: &str) -> String {
    let mut path = root.to_owned();
    for segment in pointer.split('/').filter(|s| !s.is_empty()) {
        path.push('.');
        path.push_str(&segment.replace("~1", "/").replace("~0", "~"));
    }
    path
}

/// Whether any string in `value` is an artifact URI ([`artifact_references`] without the paths).
pub(super) fn names_an_artifact(value: &Value) -> bool {
    match value {
        Value::String(s) => s.starts_with("artifact://"),
        Value::Array(items) => items.iter().any(names_an_artifact),
        Value::Object(map) => map.values().any(names_an_artifact),
        _ => false,
    }
}

/// How many strings in `value` name an artifact (counted without building their paths).
pub(super) fn count_artifact_references(value: &Value) -> usize {
    match value {
        Value::String(s) => usize::from(s.starts_with("artifact://")),
        Value::Array(items) => items.iter().map(count_artifact_references).sum(),
        Value::Object(map) => map.values().map(count_artifact_references).sum(),
        _ => 0,
    }
}

/// Every string in `value` that names an artifact, with its dot-path.
/// The artifacts an artifact (its canonical envelope) names in its content,
/// as a certificate names its CNF: whole `artifact://` strings, in order.
pub(crate) fn named_in_content(envelope: &[u8]) -> Vec<String> {
    let envelope: Value = serde_json::from_slice(envelope).unwrap_or_default();
    artifact_references(&envelope["content"], "").into_iter().map(|(_, uri)| uri).collect()
}

pub(crate) fn artifact_references(value: &Value, path: &str) -> Vec<(String, String)> {
    match value {
        Value::String(s) if s.starts_with("artifact://") => vec![(path.to_owned(), s.clone())],
        Value::Array(items) => {
            items.iter().enumerate().flat_map(|(i, v)| artifact_references(v, &format!("{path}.{i}"))).collect()
        }
        Value::Object(map) => map.iter().flat_map(|(k, v)| artifact_references(v, &format!("{path}.{k}"))).collect(),
        _ => Vec::new(),
    }
}
