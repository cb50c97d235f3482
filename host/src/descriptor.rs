//! Descriptor validation: what a component's `describe()` answer must be
//! before it is installed. Pure (no sandbox), so it is fuzzed directly.

use std::collections::{BTreeMap, BTreeSet};

use jacobian_guest::protocol::{
    BundleDescriptor, BundleKind, DeclaredCheck, Example, Outcome, PROTOCOL_VERSION, VerificationRoute,
    parse_step_reference,
};
use serde_json::Value;

use crate::digest::Digest;

/// Why a descriptor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    /// A field is wrong (`path` names it; empty for the document as a whole).
    #[error("descriptor field {path}: {message}")]
    Invalid { path: String, message: String },
    /// An id another installed component already provides.
    #[error("capability id {id} is already provided by component {existing}")]
    DuplicateId { id: String, existing: Digest },
}

/// Ids the host answers itself, which no component may provide: the
/// certificate router and the MCP tools.
pub const RESERVED_IDS: &[&str] = &[
    "certificate.verify",
    "capability.describe",
    "capability.invoke",
    "workspace.open",
    "workspace.write",
    "workspace.query",
];

/// Parse and check a descriptor for a bundle of `kind`, given the ids other
/// components already provide.
pub fn validate(
    bytes: &[u8],
    kind: BundleKind,
    taken: &BTreeMap<String, Digest>,
) -> Result<BundleDescriptor, DescriptorError> {
    let bad = |path: &str, message: String| DescriptorError::Invalid { path: path.to_owned(), message };
    let descriptor: BundleDescriptor = serde_json::from_slice(bytes)
        .map_err(|e| bad("", format!("not a valid descriptor: {}", crate::limits::bounded_text(e))))?;
    if descriptor.protocol != PROTOCOL_VERSION {
        return Err(bad("protocol", format!("is {:?}, this host speaks {PROTOCOL_VERSION}", descriptor.protocol)));
    }
    if descriptor.kind != kind {
        return Err(bad("kind", format!("is {:?} but the component's exports make it {kind:?}", descriptor.kind)));
    }
    match kind {
        BundleKind::Capability if descriptor.capabilities.is_empty() || !descriptor.checkers.is_empty() => {
            return Err(bad(
                "capabilities",
                "a capability bundle lists one or more capabilities and no checkers".into(),
            ));
        }
        BundleKind::Checker if descriptor.checkers.is_empty() || !descriptor.capabilities.is_empty() => {
            return Err(bad("checkers", "a checker bundle lists one or more checkers and no capabilities".into()));
        }
        _ => {}
    }
    let mut seen = BTreeSet::new();
    let mut claim = |path: String, id: &str| -> Result<(), DescriptorError> {
        if !valid_id(id) {
            return Err(bad(&path, format!("{id:?} is not a namespaced id (domain.verb.object, lowercase)")));
        }
        if RESERVED_IDS.contains(&id) {
            return Err(bad(&path, format!("{id} is reserved by the host")));
        }
        if let Some(existing) = taken.get(id) {
            return Err(DescriptorError::DuplicateId { id: id.to_owned(), existing: *existing });
        }
        if !seen.insert(id.to_owned()) {
            return Err(bad(&path, format!("{id} appears twice")));
        }
        Ok(())
    };
    // Every example runs at install, each step a call: their number is bounded.
    let calls: usize = (descriptor.capabilities.iter().map(|c| &c.examples))
        .chain(descriptor.checkers.iter().map(|k| &k.examples))
        .flat_map(|examples| examples.iter().map(|e| e.steps.len() + 1))
        .sum();
    if calls > MAX_EXAMPLE_CALLS {
        return Err(bad("", format!("its examples make {calls} calls at install, at most {MAX_EXAMPLE_CALLS}")));
    }
    for (i, c) in descriptor.capabilities.iter().enumerate() {
        claim(format!("capabilities.{i}.id"), &c.id)?;
        if c.modes.is_empty() {
            return Err(bad(&format!("capabilities.{i}.modes"), "lists no mode".into()));
        }
        let validator =
            compile_schema(&c.input_schema).map_err(|e| bad(&format!("capabilities.{i}.input_schema"), e))?;
        compile_schema(&c.output_schema).map_err(|e| bad(&format!("capabilities.{i}.output_schema"), e))?;
        for (field, schema) in [("input_schema", &c.input_schema), ("output_schema", &c.output_schema)] {
            of_objects(schema).map_err(|m| bad(&format!("capabilities.{i}.{field}"), m))?;
        }
        for (j, check) in c.checks.iter().enumerate() {
            let path = |field: &str| format!("capabilities.{i}.checks.{j}.{field}");
            if !c.checker_roles.contains(&check.checker_role) {
                return Err(bad(&path("checker_role"), format!("{} is not among checker_roles", check.checker_role)));
            }
            if !valid_id(&check.verify_capability_id) {
                let message = format!("{:?} is not a namespaced id", check.verify_capability_id);
                return Err(bad(&path("verify_capability_id"), message));
            }
            if check.certificate_formats.is_empty() || check.certificate_formats.iter().any(String::is_empty) {
                return Err(bad(&path("certificate_formats"), "names no format, or an empty one".into()));
            }
        }
        if !c.checks.is_empty()
            && let Some(role) = c.checker_roles.iter().find(|r| !c.checks.iter().any(|k| &k.checker_role == *r))
        {
            return Err(bad(&format!("capabilities.{i}.checker_roles"), format!("{role} has no declared check")));
        }
        check_accepts(&c.accepts, &c.input_schema, &format!("capabilities.{i}.accepts"))
            .map_err(|(p, m)| bad(&p, m))?;
        check_examples(&c.examples, &validator, &format!("capabilities.{i}.examples")).map_err(|(p, m)| bad(&p, m))?;
    }
    for (i, k) in descriptor.checkers.iter().enumerate() {
        claim(format!("checkers.{i}.capability_id"), &k.capability_id)?;
        let validator = compile_schema(&k.input_schema).map_err(|e| bad(&format!("checkers.{i}.input_schema"), e))?;
        of_objects(&k.input_schema).map_err(|m| bad(&format!("checkers.{i}.input_schema"), m))?;
        if k.role.is_empty() {
            return Err(bad(&format!("checkers.{i}.role"), "is empty".into()));
        }
        // A check call names the role it needs, and the component answers
        // with its checker of that role: two would leave one never run.
        if let Some(j) = descriptor.checkers[..i].iter().position(|other| other.role == k.role) {
            return Err(bad(
                &format!("checkers.{i}.role"),
                format!("{} is checkers.{j}'s role too: a component has one checker per role", k.role),
            ));
        }
        check_accepts(&k.accepts, &k.input_schema, &format!("checkers.{i}.accepts")).map_err(|(p, m)| bad(&p, m))?;
        check_examples(&k.examples, &validator, &format!("checkers.{i}.examples")).map_err(|(p, m)| bad(&p, m))?;
    }
    Ok(descriptor)
}

/// The schema of a free-form JSON object (a field typed `Value` that always
/// holds one), so published schemas say what such a field is.
pub fn object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object"})
}

/// A free-form JSON object, or null.
pub fn optional_object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["object", "null"]})
}

/// An input and an output are JSON objects: their schemas say so at the top
/// (`"type": "object"`), which is also what the tools' published schemas promise.
fn of_objects(schema: &Value) -> Result<(), String> {
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        other => Err(format!(
            "must describe a JSON object (\"type\": \"object\" at the top), not {}",
            other.map_or_else(|| "a schema without a type".to_owned(), |t| format!("\"type\": {t}"))
        )),
    }
}

/// Most examples one capability or checker may publish: each runs at install.
pub const MAX_EXAMPLES: usize = 8;
/// Most steps before the call in one recipe.
pub const MAX_RECIPE_STEPS: usize = 8;
/// Most calls all of a bundle's examples make at install (steps included).
pub const MAX_EXAMPLE_CALLS: usize = 128;

/// Each example's steps name ids and refer only to steps before them, and its
/// input validates against the input schema once its references stand for
/// artifact URIs: (path, message) of the first that does not.
fn check_examples(examples: &[Example], validator: &jsonschema::Validator, path: &str) -> Result<(), (String, String)> {
    if examples.len() > MAX_EXAMPLES {
        return Err((path.to_owned(), format!("lists {} examples, at most {MAX_EXAMPLES}", examples.len())));
    }
    // What a reference becomes for schema validation: a well-formed URI.
    let placeholder = |_: usize, _: &str| Ok(format!("artifact://sha256/{}", "0".repeat(64)));
    for (j, example) in examples.iter().enumerate() {
        let here = format!("{path}.{j}");
        if example.steps.len() > MAX_RECIPE_STEPS {
            let message = format!("has {} steps, at most {MAX_RECIPE_STEPS}", example.steps.len());
            return Err((format!("{here}.steps"), message));
        }
        for (n, step) in example.steps.iter().enumerate() {
            if !valid_id(&step.capability_id) || RESERVED_IDS.contains(&step.capability_id.as_str()) {
                let message = format!(
                    "{:?} is not the namespaced id of a component's capability",
                    crate::limits::clip(&step.capability_id, 64)
                );
                return Err((format!("{here}.steps.{n}.capability_id"), message));
            }
            resolve_step_references(&step.input, n, &format!("{here}.steps.{n}.input"), &placeholder)?;
        }
        let input =
            resolve_step_references(&example.input, example.steps.len(), &format!("{here}.input"), &placeholder)?;
        if let Some(error) = validator.iter_errors(&input).next() {
            let message = format!("does not validate against the input schema: {}", crate::limits::bounded_text(error));
            return Err((format!("{here}.input"), message));
        }
    }
    Ok(())
}

/// `value` with every step reference (`$steps.N.artifacts.ROLE`, `N` below
/// `steps_before`) replaced by what `artifact` says step `N`'s artifact with
/// that role is; (path, message) of the first reference that is malformed,
/// points ahead, or names no artifact. The path is spelt only on an error
/// (keys clipped), so deep input costs no memory per level beyond a segment.
pub fn resolve_step_references(
    value: &Value,
    steps_before: usize,
    path: &str,
    artifact: &dyn Fn(usize, &str) -> Result<String, String>,
) -> Result<Value, (String, String)> {
    let mut at = Vec::new();
    resolve_at(value, steps_before, &mut at, artifact).map_err(|message| {
        let spelt: String = at.iter().map(|segment: &String| format!(".{segment}")).collect();
        (format!("{path}{spelt}"), message)
    })
}

fn resolve_at(
    value: &Value,
    steps_before: usize,
    at: &mut Vec<String>,
    artifact: &dyn Fn(usize, &str) -> Result<String, String>,
) -> Result<Value, String> {
    let mut descend = |segment: String, item: &Value| {
        at.push(segment);
        let resolved = resolve_at(item, steps_before, at, artifact)?;
        at.pop();
        Ok::<_, String>(resolved)
    };
    Ok(match value {
        Value::String(text) => match parse_step_reference(text) {
            None => value.clone(),
            Some(Err(message)) => return Err(crate::limits::clip(&message, 256).into_owned()),
            Some(Ok((step, _))) if step >= steps_before => {
                return Err(format!("refers to step {step}, but only steps before {steps_before} have run"));
            }
            Some(Ok((step, role))) => Value::String(artifact(step, role)?),
        },
        Value::Array(items) => Value::Array(
            items.iter().enumerate().map(|(i, item)| descend(i.to_string(), item)).collect::<Result<_, _>>()?,
        ),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, item)| Ok((key.clone(), descend(crate::limits::clip(key, 64).into_owned(), item)?)))
                .collect::<Result<_, String>>()?,
        ),
        _ => value.clone(),
    })
}

/// What a producer's descriptor declares that each of its outcomes must keep to.
pub struct Declared<'a> {
    /// Artifact types its results may carry.
    pub artifact_types: &'a [String],
    /// Checker roles its routes may name.
    pub checker_roles: &'a [String],
    /// Its declared checks (empty in descriptors from before they were declared).
    pub checks: &'a [DeclaredCheck],
}

/// Whether an outcome keeps to its descriptor: every artifact of a declared
/// type, and a route (if any) to a declared check, in a format the
/// certificate's own content agrees with.
pub fn outcome_keeps_to(outcome: &Outcome, declared: &Declared<'_>) -> Result<(), String> {
    if let Some(undeclared) = outcome.artifacts.iter().find(|a| !declared.artifact_types.contains(&a.schema_uri)) {
        return Err(format!("artifact type {} is not declared in the descriptor", undeclared.schema_uri));
    }
    let Some(route) = &outcome.verification else { return Ok(()) };
    route_declared(declared, route)?;
    let written = outcome
        .artifacts
        .iter()
        .find(|a| a.role == route.certificate_artifact_role)
        .and_then(|a| a.content.get("format"))
        .and_then(Value::as_str);
    match written {
        Some(format) if format != route.certificate_format => Err(format!(
            "its route names certificate format {} but the certificate artifact says {format}",
            route.certificate_format
        )),
        _ => Ok(()),
    }
}

/// Whether a producer's route names a check its descriptor declares: the
/// role always (`checker_roles`), and the checker and format too when the
/// descriptor declares its checks (every bundle built with the current SDK).
pub fn route_declared(declared: &Declared<'_>, route: &VerificationRoute) -> Result<(), String> {
    let role = &route.checker_role;
    if !declared.checker_roles.contains(role) {
        return Err(format!("its route names checker role {role}, which its descriptor does not declare"));
    }
    if declared.checks.is_empty() {
        return Ok(());
    }
    let checks: Vec<&DeclaredCheck> = declared.checks.iter().filter(|c| &c.checker_role == role).collect();
    if !checks.iter().any(|c| c.verify_capability_id == route.verify_capability_id) {
        return Err(format!(
            "its route names checker {} for role {role}, which its descriptor does not declare",
            route.verify_capability_id
        ));
    }
    if !checks.iter().any(|c| {
        c.verify_capability_id == route.verify_capability_id
            && c.certificate_formats.contains(&route.certificate_format)
    }) {
        return Err(format!(
            "its route names certificate format {} for role {role}, which its descriptor does not declare",
            route.certificate_format
        ));
    }
    Ok(())
}

/// Each accepted field is a top-level property of the input schema, and
/// names a type: (path, message) of the first that is not.
fn check_accepts(
    accepts: &[jacobian_guest::protocol::Accepted],
    input_schema: &serde_json::Value,
    path: &str,
) -> Result<(), (String, String)> {
    for (j, accepted) in accepts.iter().enumerate() {
        if input_schema
            .pointer(&format!("/properties/{}", accepted.field.replace('~', "~0").replace('/', "~1")))
            .is_none()
        {
            let message = format!("{:?} is not a field of the input schema", crate::limits::clip(&accepted.field, 64));
            return Err((format!("{path}.{j}.field"), message));
        }
        if accepted.schema_uri.is_empty() || accepted.schema_uri.len() > crate::limits::MAX_ID_BYTES {
            return Err((format!("{path}.{j}.schema_uri"), "is empty or longer than 128 bytes".into()));
        }
    }
    Ok(())
}

/// A published (tool) schema with only JSON Schema's own `format`s: schemars
/// writes `uint64`, `double`, … (the `minimum` it writes beside them says
/// what `uint` does), which clients' validators (the MCP Inspector's) warn
/// about on every `tools/list`. A type list (`["string", "null"]`, how
/// schemars writes an optional field) becomes `anyOf` branches of one type
/// each, which clients that map schemas onto a one-type dialect can read;
/// the other keywords stay beside it (each applies to its own type only, so
/// the schema accepts exactly what it did).
pub fn published_schema(schema: &serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
    const STANDARD: [&str; 19] = [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ];
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.get("format").and_then(Value::as_str).is_some_and(|f| !STANDARD.contains(&f)) {
                    map.remove("format");
                }
                if !map.contains_key("anyOf")
                    && let Some(Value::Array(types)) = map.get("type")
                    && types.iter().all(Value::is_string)
                {
                    let branches = types.iter().map(|t| serde_json::json!({"type": t})).collect();
                    map.remove("type");
                    map.insert("anyOf".into(), Value::Array(branches));
                }
                // Keywords whose values are data, not schemas, are left as they are.
                let data = ["const", "enum", "default", "examples"];
                map.iter_mut().filter(|(key, _)| !data.contains(&key.as_str())).for_each(|(_, v)| strip(v));
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = Value::Object(schema.clone());
    strip(&mut value);
    match value {
        Value::Object(map) => map,
        _ => schema.clone(),
    }
}

/// Compile a JSON Schema (draft 2020-12 as schemars emits it).
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| format!("not a usable JSON Schema: {e}"))
}

/// `domain.verb.object`: at least two dot-separated lowercase segments.
fn valid_id(id: &str) -> bool {
    let segments: Vec<&str> = id.split('.').collect();
    id.len() <= 128
        && segments.len() >= 2
        && segments.iter().all(|s| {
            !s.is_empty()
                && s.starts_with(|c: char| c.is_ascii_lowercase())
                && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn published_schemas_keep_what_they_accept_and_leave_data_alone() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "type": {"type": "string", "format": "uri"},
                "fixed": {"const": {"type": ["a", "b"], "format": "uint8"}},
            },
        });
        let published = super::published_schema(schema.as_object().unwrap());
        let n = &published["properties"]["n"];
        assert_eq!(n, &json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "minimum": 0}));
        assert_eq!(published["properties"]["type"], json!({"type": "string", "format": "uri"}));
        assert_eq!(published["properties"]["fixed"], schema["properties"]["fixed"], "a const is data");
    }

    #[test]
    fn inputs_and_outputs_are_objects() {
        let descriptor = |input: serde_json::Value, output: serde_json::Value| {
            json!({
                "protocol": "jacobian.component/1", "kind": "CAPABILITY",
                "provider": {"name": "t", "version": "1", "licence": "MIT"},
                "capabilities": [{
                    "id": "test.shape.check", "title": "t", "outcome": "o", "description": "d", "tags": [],
                    "modes": ["EXPLORE"], "input_kind": "STRUCTURED_REQUEST",
                    "input_schema": input, "output_schema": output,
                    "examples": [{"title": "e", "input": {}}], "checker_roles": [], "artifact_types": []
                }]
            })
            .to_string()
        };
        let validate = |text: String| {
            super::validate(text.as_bytes(), jacobian_guest::protocol::BundleKind::Capability, &Default::default())
        };
        assert!(validate(descriptor(json!({"type": "object"}), json!({"type": "object"}))).is_ok());
        let array = validate(descriptor(json!({"type": "object"}), json!({"type": "array"}))).expect_err("an array");
        assert!(array.to_string().contains("capabilities.0.output_schema"), "{array}");
        let untyped = validate(descriptor(json!({}), json!({"type": "object"}))).expect_err("no type");
        assert!(untyped.to_string().contains("capabilities.0.input_schema: must describe a JSON object"), "{untyped}");
    }

    /// A check names the role it needs and the component answers with its
    /// checker of that role: a second checker of the same role would never run.
    #[test]
    fn a_component_has_one_checker_per_role() {
        let checker = |id: &str, role: &str| {
            json!({"role": role, "capability_id": id, "title": "t", "outcome": "o", "description": "d", "tags": [],
                   "input_kind": "STRUCTURED_REQUEST", "input_schema": {"type": "object"},
                   "certificate_formats": ["f"], "artifact_types": []})
        };
        let validate = |checkers: Vec<serde_json::Value>| {
            let text = json!({"protocol": "jacobian.component/1", "kind": "CHECKER",
                              "provider": {"name": "t", "version": "1", "licence": "MIT"}, "checkers": checkers});
            super::validate(
                text.to_string().as_bytes(),
                jacobian_guest::protocol::BundleKind::Checker,
                &Default::default(),
            )
        };
        assert!(validate(vec![checker("a.one.verify", "a.role"), checker("a.two.verify", "b.role")]).is_ok());
        let twice = validate(vec![checker("a.one.verify", "a.role"), checker("a.two.verify", "a.role")]);
        let error = twice.expect_err("two checkers of one role");
        assert!(
            error.to_string().contains("checkers.1.role") && error.to_string().contains("checkers.0's role"),
            "{error}"
        );
    }
}
