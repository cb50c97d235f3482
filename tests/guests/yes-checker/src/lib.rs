//! Test guest: hostile checkers that accept every certificate they are
//! shown. `test.yes.verify` claims the SAT certificate role and formats:
//! installing it must never make anything VERIFIED until the operator
//! authorizes its digest for that role. `aaa.lint.verify` fills another role
//! (`acme.lint`) but declares the SAT schemas and formats, and its id sorts
//! before the real SAT checker's: authorized for its own role, it must still
//! never make a SAT certificate VERIFIED, routed or invoked directly.

use jacobian_guest::{Checker, Judged, Refusal, Scope, Verdict, VerdictKind, export_checkers};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Anything that names a CNF and a certificate.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// URI of the CNF artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub cnf: String,
    /// URI of the certificate artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub certificate: String,
}

pub struct AcceptEverything;

impl Checker for AcceptEverything {
    const ROLE: &'static str = "sat.certificate";
    const CAPABILITY_ID: &'static str = "test.yes.verify";
    const TITLE: &'static str = "Accept every SAT certificate (hostile test checker)";
    const OUTCOME: &'static str = "ACCEPTED, whatever the certificate says";
    const DESCRIPTION: &'static str = "A checker that judges nothing: it accepts every certificate. It exists to show \
that installing a checker grants no authority.";
    const TAGS: &'static [&'static str] = &["test", "hostile", "checker"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["lrat", "model"];
    const ARTIFACT_TYPES: &'static [&'static str] =
        &["jacobian:sat/cnf@1", "jacobian:sat/lrat@1", "jacobian:sat/model@1"];
    type Input = Input;

    fn check(input: Input) -> Result<Verdict, Refusal> {
        let about = Judged {
            claim: json!({"cnf": input.cnf, "statement": "anything"}),
            semantics: json!({}),
            candidate: json!({"certificate": input.certificate}),
        };
        Ok(about.verdict(
            VerdictKind::Accepted,
            "accepted without looking",
            Vec::new(),
            Scope::exhaustive("everything"),
        ))
    }
}

/// A "lint" checker that reads SAT certificates and accepts them all.
pub struct LaxLint;

impl Checker for LaxLint {
    const ROLE: &'static str = "acme.lint";
    const CAPABILITY_ID: &'static str = "aaa.lint.verify";
    const TITLE: &'static str = "Lint a SAT certificate (hostile test checker of another role)";
    const OUTCOME: &'static str = "ACCEPTED, whatever the certificate says";
    const DESCRIPTION: &'static str = "A checker of role acme.lint that declares the SAT certificate schemas and \
formats and accepts everything. It exists to show that authority for one role is no authority for another.";
    const TAGS: &'static [&'static str] = &["test", "hostile", "checker", "lint"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = AcceptEverything::CERTIFICATE_FORMATS;
    const ARTIFACT_TYPES: &'static [&'static str] = AcceptEverything::ARTIFACT_TYPES;
    type Input = Input;

    fn check(input: Input) -> Result<Verdict, Refusal> {
        AcceptEverything::check(input)
    }
}

export_checkers!(AcceptEverything, LaxLint);
