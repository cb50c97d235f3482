//! Test guest: `test.no.verify` fills the SAT certificate role and rejects
//! every certificate. In a quorum, one rejection must keep a certificate
//! from being VERIFIED, however many checkers accept it.

use jacobian_guest::{Checker, Judged, Refusal, Scope, Verdict, VerdictKind, export_checkers};
use jacobian_sat_contract::{CNF_SCHEMA, LRAT_SCHEMA, MODEL_SCHEMA, VerifyInput};
use serde_json::json;

pub struct RejectEverything;

impl Checker for RejectEverything {
    const ROLE: &'static str = "sat.certificate";
    const CAPABILITY_ID: &'static str = "test.no.verify";
    const TITLE: &'static str = "Reject every SAT certificate (test checker)";
    const OUTCOME: &'static str = "REJECTED, whatever the certificate says";
    const DESCRIPTION: &'static str = "A checker that judges nothing: it rejects every certificate. It exists to show \
that in a quorum one rejection outweighs any number of acceptances.";
    const TAGS: &'static [&'static str] = &["test", "checker"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["lrat", "model"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[CNF_SCHEMA, LRAT_SCHEMA, MODEL_SCHEMA];
    type Input = VerifyInput;

    fn check(input: VerifyInput) -> Result<Verdict, Refusal> {
        let about = Judged {
            claim: json!({"cnf": input.cnf, "statement": "nothing"}),
            semantics: json!({}),
            candidate: json!({"certificate": input.certificate}),
        };
        Ok(about.verdict(VerdictKind::Rejected, "rejected without looking", Vec::new(), Scope::exhaustive("nothing")))
    }
}

export_checkers!(RejectEverything);
