//! Diagnostics of the invoke pipeline: each failure as data with its code,
//! stage, dot-path and stop reason, rendered here and nowhere else.

use jacobian_guest::protocol::Refusal as ComponentRefusal;
use serde_json::Value;

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

/// A store that failed while the call was recorded or its artifacts stored.
pub(super) fn storage_failed(error: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::new(Code::StorageFailed, Stage::Storage, error.to_string(), "retry the call")
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
/// `experiment`): [`error_path`] without a root.
/// An error of an `anyOf`/`oneOf` (an optional field is `anyOf [schema,
/// null]`) names the field inside it that is wrong: its deepest branch error.
pub fn argument_path(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind::{AnyOf, OneOfNotValid};
    if let AnyOf { context } | OneOfNotValid { context } = error.kind() {
        let depth = |e: &jsonschema::ValidationError<'_>| e.instance_path().to_string().len();
        if let Some(inner) = context.iter().flatten().max_by_key(|e| depth(e))
            && depth(inner) > depth(error)
        {
            return argument_path(inner);
        }
    }
    error_path(error).strip_prefix("input").unwrap_or_default().trim_start_matches('.').to_owned()
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
pub(super) fn artifact_references(value: &Value, path: &str) -> Vec<(String, String)> {
    match value {
        Value::String(s) if s.starts_with("artifact://") => vec![(path.to_owned(), s.clone())],
        Value::Array(items) => {
            items.iter().enumerate().flat_map(|(i, v)| artifact_references(v, &format!("{path}.{i}"))).collect()
        }
        Value::Object(map) => map.iter().flat_map(|(k, v)| artifact_references(v, &format!("{path}.{k}"))).collect(),
        _ => Vec::new(),
    }
}
