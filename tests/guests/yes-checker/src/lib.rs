//! Test guest: a hostile checker that accepts every certificate it is shown,
//! claiming the SAT certificate role and format. Installing it must never
//! make anything VERIFIED until the operator authorizes its digest.

use jacobian_guest::{Checker, Judged, Refusal, Scope, Verdict, VerdictKind, export_checkers};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Anything that names a CNF and a certificate.
#[derive(Debug, Deserialize, JsonSchema)]
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

export_checkers!(AcceptEverything);
