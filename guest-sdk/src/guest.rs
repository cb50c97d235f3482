//! The author-facing traits and the glue behind the export macros.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Check;
use crate::protocol::{
    Accepted, ArtifactDraft, BundleDescriptor, BundleKind, CapabilityDescriptor, CheckRequest, CheckerDescriptor,
    Example, InputKind, InvokeRequest, Mode, Outcome, PROTOCOL_VERSION, ProducerAssurance, Provider, Qualifier,
    Refusal, Scope, Verdict, VerificationRoute,
};

pub use schemars;

/// A producer: one mathematical outcome with typed input and output.
///
/// The host validates `input` against the schema generated from
/// [`Capability::Input`] before calling [`Capability::run`]; `run` performs
/// the cross-field checks a schema cannot express and returns a [`Refusal`]
/// naming the field when they fail.
pub trait Capability {
    /// Namespaced id, `domain.verb.object`.
    const ID: &'static str;
    /// Short title.
    const TITLE: &'static str;
    /// The one-line mathematical outcome.
    const OUTCOME: &'static str;
    /// What it does, its bounds, and what it does not claim.
    const DESCRIPTION: &'static str;
    /// Retrieval tags.
    const TAGS: &'static [&'static str];
    /// Supported modes (producers explore).
    const MODES: &'static [Mode] = &[Mode::Explore];
    /// Declared input kind.
    const INPUT_KIND: InputKind = InputKind::StructuredRequest;
    /// The checkers this capability's results are routed to (build each
    /// result's route with [`Check::route`]). Their roles are the
    /// descriptor's checker roles.
    const CHECKS: &'static [Check] = &[];
    /// Artifact types (`schema_uri`s) it produces.
    const ARTIFACT_TYPES: &'static [&'static str] = &[];
    /// The input fields that take artifacts, as `(field, schema_uri)`: how
    /// an agent holding an artifact finds this capability, and which earlier
    /// capability's output feeds it.
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[];

    /// The typed request.
    type Input: DeserializeOwned + Serialize + schemars::JsonSchema;
    /// The typed operation output.
    type Output: Serialize + schemars::JsonSchema;

    /// Published examples: each is validated against the input schema and
    /// run at install.
    fn examples() -> Vec<(&'static str, Self::Input)> {
        Vec::new()
    }

    /// Published recipes, for inputs that take artifacts: the steps that make
    /// them and the input that refers to them (see [`crate::Recipe`]). Each is
    /// run, steps first, at install.
    fn recipes() -> Vec<crate::Recipe<Self::Input>> {
        Vec::new()
    }

    /// Run the capability on a validated input.
    fn run(input: Self::Input) -> Result<Produced<Self::Output>, Refusal>;
}

/// An independent checker role, invoked by agents as a `VERIFY` capability.
///
/// A checker reads the evidence (usually stored artifacts, through
/// [`read_artifact_json`]) and judges it on its own: it must share no search
/// or solving code with the producer whose results it checks.
pub trait Checker {
    /// The role it fills.
    const ROLE: &'static str;
    /// The capability id agents invoke in `VERIFY` mode.
    const CAPABILITY_ID: &'static str;
    /// Short title.
    const TITLE: &'static str;
    /// The one-line outcome.
    const OUTCOME: &'static str;
    /// What it checks and what it does not.
    const DESCRIPTION: &'static str;
    /// Retrieval tags.
    const TAGS: &'static [&'static str];
    /// Certificate formats it accepts.
    const CERTIFICATE_FORMATS: &'static [&'static str];
    /// Artifact types (`schema_uri`s) it reads.
    const ARTIFACT_TYPES: &'static [&'static str] = &[];
    /// The input fields that take artifacts, as `(field, schema_uri)` (a
    /// field may take several types).
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[];
    /// Declared input kind.
    const INPUT_KIND: InputKind = InputKind::TypedArtifact;

    /// The typed request.
    type Input: DeserializeOwned + Serialize + schemars::JsonSchema;

    /// Published examples of plain inputs (a checker's inputs usually name
    /// artifacts: publish [`Checker::recipes`] instead).
    fn examples() -> Vec<(&'static str, Self::Input)> {
        Vec::new()
    }

    /// Published recipes: the producer calls that make the evidence, then
    /// this checker's input referring to it (see [`crate::Recipe`]). Each is
    /// run, steps first, at install.
    fn recipes() -> Vec<crate::Recipe<Self::Input>> {
        Vec::new()
    }

    /// Judge the evidence named by `input`.
    fn check(input: Self::Input) -> Result<Verdict, Refusal>;
}

/// A producer's result: output plus scope, qualifiers, assurance, artifacts,
/// open obligations and the route to its checker.
#[derive(Debug, Clone)]
pub struct Produced<T> {
    output: T,
    scope: Scope,
    assurance: ProducerAssurance,
    qualifiers: Vec<Qualifier>,
    artifacts: Vec<ArtifactDraft>,
    obligations: Vec<String>,
    verification: Option<VerificationRoute>,
}

impl<T: Serialize> Produced<T> {
    /// Evidence computed by a deterministic procedure (assurance `COMPUTED`).
    pub fn computed(output: T, scope: Scope) -> Self {
        Self::with_assurance(output, scope, ProducerAssurance::Computed)
    }

    /// Evidence with no completeness or soundness guarantee (`HEURISTIC`).
    pub fn heuristic(output: T, scope: Scope) -> Self {
        Self::with_assurance(output, scope, ProducerAssurance::Heuristic)
    }

    /// A candidate that has not been evaluated (`PROPOSED`).
    pub fn proposed(output: T, scope: Scope) -> Self {
        Self::with_assurance(output, scope, ProducerAssurance::Proposed)
    }

    fn with_assurance(output: T, scope: Scope, assurance: ProducerAssurance) -> Self {
        Produced {
            output,
            scope,
            assurance,
            qualifiers: Vec::new(),
            artifacts: Vec::new(),
            obligations: Vec::new(),
            verification: None,
        }
    }

    /// Add qualifiers (exact, bounded, exhaustive, deterministic, ...).
    pub fn qualifiers(mut self, qualifiers: &[Qualifier]) -> Self {
        self.qualifiers.extend_from_slice(qualifiers);
        self
    }

    /// Attach an artifact; the host stores it and returns its URI.
    pub fn artifact(mut self, role: &str, schema_uri: &str, content: &impl Serialize) -> Self {
        let content = serde_json::to_value(content).unwrap_or(Value::Null);
        self.artifacts.push(ArtifactDraft { role: role.to_owned(), schema_uri: schema_uri.to_owned(), content });
        self
    }

    /// Record a proof obligation that remains open.
    pub fn obligation(mut self, obligation: impl Into<String>) -> Self {
        self.obligations.push(obligation.into());
        self
    }

    /// Name the checker that can judge this result: a route built by
    /// [`Check::route`] from one of the capability's [`Capability::CHECKS`].
    pub fn verify_with(mut self, route: VerificationRoute) -> Self {
        self.verification = Some(route);
        self
    }

    fn into_outcome(self) -> Result<Outcome, String> {
        let output = serde_json::to_value(self.output).map_err(|e| e.to_string())?;
        Ok(Outcome {
            output,
            artifacts: self.artifacts,
            scope: self.scope,
            qualifiers: self.qualifiers,
            assurance: self.assurance,
            obligations: self.obligations,
            verification: self.verification,
        })
    }
}

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Detailed tracing.
    Trace,
    /// Debugging detail.
    Debug,
    /// Progress worth noting.
    Info,
    /// Something unexpected but handled.
    Warn,
    /// A failure.
    Error,
}

/// Append a line to this call's bounded log (kept by the host, never printed
/// to its stdout).
pub fn log(level: LogLevel, message: &str) {
    __private::host_log(level, message);
}

/// Read an artifact named by the current request, by URI
/// (`artifact://sha256/<hex>`) or bare hex digest.
pub fn read_artifact(uri_or_digest: &str) -> Result<Vec<u8>, String> {
    let digest = uri_or_digest.strip_prefix("artifact://sha256/").unwrap_or(uri_or_digest);
    __private::host_read_artifact(digest)
}

/// Read an artifact and deserialize its JSON; the error names the URI.
pub fn read_artifact_json<T: DeserializeOwned>(uri_or_digest: &str) -> Result<T, String> {
    let bytes = read_artifact(uri_or_digest)?;
    serde_json::from_slice(&bytes).map_err(|e| format!("artifact {uri_or_digest}: {e}"))
}

/// The file an upload artifact carries (one brought in by `jacobian artifact
/// put` or `PUT /artifacts/sha256/…`, above the input limit), read in
/// ranges through [`std::io::Read`]: a proof of hundreds of megabytes is
/// streamed, never held whole. The artifact must be named by the request.
pub struct ArtifactFile {
    digest: String,
    offset: u64,
    len: u64,
}

impl ArtifactFile {
    /// Open the file the upload artifact `uri_or_digest` carries.
    pub fn open(uri_or_digest: &str) -> Result<Self, String> {
        let digest = uri_or_digest.strip_prefix("artifact://sha256/").unwrap_or(uri_or_digest).to_owned();
        let len = __private::host_file_size(&digest)?;
        Ok(ArtifactFile { digest, offset: 0, len })
    }

    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::io::Read for ArtifactFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.offset >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let want = buf.len().min(4 << 20) as u32;
        let bytes = __private::host_read_file(&self.digest, self.offset, want).map_err(std::io::Error::other)?;
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        self.offset += n as u64;
        Ok(n)
    }
}

/// Read the artifact at `uri`, named by the input field `field`, and check that
/// it has `schema`; every failure is a [`Refusal`] naming the field.
pub fn read_input_artifact(field: &str, uri: &str, schema: &str) -> Result<crate::ArtifactEnvelope<Value>, Refusal> {
    let envelope: crate::ArtifactEnvelope<Value> = read_artifact_json(uri).map_err(|e| Refusal::at(field, e))?;
    if envelope.schema_uri != schema {
        return Err(Refusal::at(field, format!("artifact has schema {}, expected {schema}", envelope.schema_uri)));
    }
    Ok(envelope)
}

/// Export a capability bundle made of the listed [`Capability`] types.
/// The provider name, version and licence come from the calling crate's
/// `Cargo.toml`.
#[cfg(feature = "capability")]
#[macro_export]
macro_rules! export_capabilities {
    ($($cap:ty),+ $(,)?) => {
        struct __JacobianBundle;

        impl $crate::__private::capability_bindings::Guest for __JacobianBundle {
            fn describe() -> ::std::vec::Vec<u8> {
                $crate::__private::describe_capabilities(
                    $crate::__private::provider(
                        env!("CARGO_PKG_NAME"),
                        env!("CARGO_PKG_VERSION"),
                        env!("CARGO_PKG_LICENSE"),
                    ),
                    ::std::vec![$($crate::__private::capability_descriptor::<$cap>()),+],
                )
            }

            fn invoke(request: ::std::vec::Vec<u8>) -> ::std::result::Result<::std::vec::Vec<u8>, ::std::string::String> {
                $crate::__private::invoke(
                    &request,
                    &[$((<$cap as $crate::Capability>::ID, $crate::__private::run_capability::<$cap>)),+],
                )
            }
        }

        $crate::__private::capability_bindings::export!(
            __JacobianBundle with_types_in $crate::__private::capability_bindings
        );
    };
}

/// Export a checker bundle made of the listed [`Checker`] types.
#[cfg(feature = "checker")]
#[macro_export]
macro_rules! export_checkers {
    ($($checker:ty),+ $(,)?) => {
        struct __JacobianBundle;

        impl $crate::__private::checker_bindings::Guest for __JacobianBundle {
            fn describe() -> ::std::vec::Vec<u8> {
                $crate::__private::describe_checkers(
                    $crate::__private::provider(
                        env!("CARGO_PKG_NAME"),
                        env!("CARGO_PKG_VERSION"),
                        env!("CARGO_PKG_LICENSE"),
                    ),
                    ::std::vec![$($crate::__private::checker_descriptor::<$checker>()),+],
                )
            }

            fn check(request: ::std::vec::Vec<u8>) -> ::std::result::Result<::std::vec::Vec<u8>, ::std::string::String> {
                $crate::__private::check(
                    &request,
                    &[$((<$checker as $crate::Checker>::ROLE, $crate::__private::run_checker::<$checker>)),+],
                )
            }
        }

        $crate::__private::checker_bindings::export!(
            __JacobianBundle with_types_in $crate::__private::checker_bindings
        );
    };
}

/// Glue used by the export macros; not part of the public API.
#[doc(hidden)]
pub mod __private {
    use super::*;

    pub use wit_bindgen;

    #[cfg(feature = "capability")]
    #[allow(missing_docs, unsafe_op_in_unsafe_fn, clippy::all)]
    pub mod capability_bindings {
        wit_bindgen::generate!({
            path: "../wit",
            world: "capability",
            pub_export_macro: true,
            export_macro_name: "export",
            runtime_path: "::jacobian_guest::__private::wit_bindgen::rt",
        });
    }

    #[cfg(feature = "checker")]
    #[allow(missing_docs, unsafe_op_in_unsafe_fn, clippy::all)]
    pub mod checker_bindings {
        wit_bindgen::generate!({
            path: "../wit",
            world: "checker",
            pub_export_macro: true,
            export_macro_name: "export",
            runtime_path: "::jacobian_guest::__private::wit_bindgen::rt",
        });
    }

    #[cfg(feature = "capability")]
    use capability_bindings::jacobian::runtime::host as host_bindings;
    #[cfg(all(feature = "checker", not(feature = "capability")))]
    use checker_bindings::jacobian::runtime::host as host_bindings;

    pub fn host_log(level: LogLevel, message: &str) {
        use host_bindings::Level;
        let level = match level {
            LogLevel::Trace => Level::Trace,
            LogLevel::Debug => Level::Debug,
            LogLevel::Info => Level::Info,
            LogLevel::Warn => Level::Warn,
            LogLevel::Error => Level::Error,
        };
        host_bindings::log(level, message);
    }

    pub fn host_read_artifact(digest: &str) -> Result<Vec<u8>, String> {
        host_bindings::read_artifact(digest)
    }

    pub fn host_file_size(digest: &str) -> Result<u64, String> {
        host_bindings::file_size(digest)
    }

    pub fn host_read_file(digest: &str, offset: u64, length: u32) -> Result<Vec<u8>, String> {
        host_bindings::read_file(digest, offset, length)
    }

    pub fn provider(name: &str, version: &str, licence: &str) -> Provider {
        Provider {
            name: name.to_owned(),
            version: version.to_owned(),
            licence: licence.to_owned(),
            features: Vec::new(),
        }
    }

    fn schema_of<T: schemars::JsonSchema>() -> Value {
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn examples<I: Serialize>(plain: Vec<(&'static str, I)>, recipes: Vec<crate::Recipe<I>>) -> Vec<Example> {
        plain
            .into_iter()
            .map(|(title, input)| crate::Recipe::new(title).then(input))
            .chain(recipes)
            .map(crate::Recipe::into_example)
            .collect()
    }

    pub fn capability_descriptor<C: Capability>() -> CapabilityDescriptor {
        let examples = examples(C::examples(), C::recipes());
        CapabilityDescriptor {
            id: C::ID.to_owned(),
            title: C::TITLE.to_owned(),
            outcome: C::OUTCOME.to_owned(),
            description: C::DESCRIPTION.to_owned(),
            tags: strings(C::TAGS),
            modes: C::MODES.to_vec(),
            input_kind: C::INPUT_KIND,
            input_schema: schema_of::<C::Input>(),
            output_schema: schema_of::<C::Output>(),
            examples,
            checker_roles: C::CHECKS.iter().map(|check| check.role.to_owned()).collect(),
            artifact_types: strings(C::ARTIFACT_TYPES),
            accepts: accepted(C::ACCEPTS),
            checks: C::CHECKS.iter().map(Check::declared).collect(),
        }
    }

    pub fn checker_descriptor<K: Checker>() -> CheckerDescriptor {
        CheckerDescriptor {
            role: K::ROLE.to_owned(),
            capability_id: K::CAPABILITY_ID.to_owned(),
            title: K::TITLE.to_owned(),
            outcome: K::OUTCOME.to_owned(),
            description: K::DESCRIPTION.to_owned(),
            tags: strings(K::TAGS),
            input_kind: K::INPUT_KIND,
            input_schema: schema_of::<K::Input>(),
            certificate_formats: strings(K::CERTIFICATE_FORMATS),
            artifact_types: strings(K::ARTIFACT_TYPES),
            accepts: accepted(K::ACCEPTS),
            examples: examples(K::examples(), K::recipes()),
        }
    }

    fn accepted(pairs: &[(&str, &str)]) -> Vec<Accepted> {
        pairs
            .iter()
            .map(|(field, schema_uri)| Accepted { field: (*field).into(), schema_uri: (*schema_uri).into() })
            .collect()
    }

    fn encode(value: &impl Serialize) -> Vec<u8> {
        serde_json::to_vec(value).unwrap_or_default()
    }

    fn refusal(path: &str, message: impl Into<String>) -> String {
        String::from_utf8(encode(&Refusal::at(path, message))).unwrap_or_default()
    }

    pub fn describe_capabilities(provider: Provider, capabilities: Vec<CapabilityDescriptor>) -> Vec<u8> {
        encode(&BundleDescriptor {
            protocol: PROTOCOL_VERSION.to_owned(),
            kind: BundleKind::Capability,
            provider,
            capabilities,
            checkers: Vec::new(),
        })
    }

    pub fn describe_checkers(provider: Provider, checkers: Vec<CheckerDescriptor>) -> Vec<u8> {
        encode(&BundleDescriptor {
            protocol: PROTOCOL_VERSION.to_owned(),
            kind: BundleKind::Checker,
            provider,
            capabilities: Vec::new(),
            checkers,
        })
    }

    pub type RunFn = fn(Value) -> Result<Outcome, String>;

    pub fn run_capability<C: Capability>(input: Value) -> Result<Outcome, String> {
        let input: C::Input =
            serde_json::from_value(input).map_err(|e| refusal("", format!("input does not match the schema: {e}")))?;
        let produced = C::run(input).map_err(|r| String::from_utf8(encode(&r)).unwrap_or_default())?;
        produced.into_outcome()
    }

    pub fn invoke(request: &[u8], table: &[(&str, RunFn)]) -> Result<Vec<u8>, String> {
        let request: InvokeRequest =
            serde_json::from_slice(request).map_err(|e| refusal("", format!("malformed invoke request: {e}")))?;
        let Some((_, run)) = table.iter().find(|(id, _)| *id == request.capability_id) else {
            return Err(refusal("capability_id", format!("this bundle has no capability {}", request.capability_id)));
        };
        run(request.input).map(|outcome| encode(&outcome))
    }

    pub type CheckFn = fn(Value) -> Result<Verdict, String>;

    pub fn run_checker<K: Checker>(input: Value) -> Result<Verdict, String> {
        let input: K::Input =
            serde_json::from_value(input).map_err(|e| refusal("", format!("input does not match the schema: {e}")))?;
        K::check(input).map_err(|r| String::from_utf8(encode(&r)).unwrap_or_default())
    }

    pub fn check(request: &[u8], table: &[(&str, CheckFn)]) -> Result<Vec<u8>, String> {
        let request: CheckRequest =
            serde_json::from_slice(request).map_err(|e| refusal("", format!("malformed check request: {e}")))?;
        let Some((_, check)) = table.iter().find(|(role, _)| *role == request.role) else {
            return Err(refusal("role", format!("this bundle has no checker role {}", request.role)));
        };
        check(request.input).map(|verdict| encode(&verdict))
    }
}
