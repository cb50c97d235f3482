//! `sat.certificate.plain.verify`: a second checker of the `sat.certificate`
//! role, written apart from `sat.certificate.verify` (its checking lives in
//! `jacobian-lrat-plain-core`, which shares no code with `jacobian-lrat-core`),
//! so that an operator's policy can require both to accept before a SAT
//! certificate is `VERIFIED` (a quorum). It reads LRAT proofs, inline or
//! uploaded, text or binary, and models; not DRAT.

use jacobian_guest::{Checker, Recipe, Refusal, Verdict, VerdictKind, export_checkers};
use jacobian_lrat_plain_core::{Failure, model_satisfies, refutes};
use jacobian_sat_contract::{CNF_SCHEMA, Evidence, LRAT_FILE_SCHEMA, LRAT_SCHEMA, MODEL_SCHEMA, VerifyInput, read};

pub struct PlainSatCertificate;

impl Checker for PlainSatCertificate {
    const ROLE: &'static str = "sat.certificate";
    const CAPABILITY_ID: &'static str = "sat.certificate.plain.verify";
    const TITLE: &'static str = "Check a SAT certificate a second way (LRAT proof or model)";
    const OUTCOME: &'static str = "whether a model satisfies every clause, or an LRAT proof refutes the exact CNF \
artifact, judged by a checker that shares no checking code with sat.certificate.verify";
    const DESCRIPTION: &'static str = "A second checker of the sat.certificate role, written apart from \
sat.certificate.verify so that a policy can require both to accept (a quorum). Plain on purpose: the clauses in an \
ordered map as sets of literals, each lemma judged from the LRAT definitions (RUP over its hints in order, or RAT on \
its first literal with a hint group for every clause holding the pivot's negation), deletions of active clauses only, \
strictly increasing ids, the empty clause. Models by evaluating every clause. Reads LRAT inline or as an uploaded \
file, text or binary; not DRAT.";
    const TAGS: &'static [&'static str] = &["sat", "lrat", "proof", "certificate", "verification", "checker", "cnf"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["lrat", "model"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[CNF_SCHEMA, LRAT_SCHEMA, MODEL_SCHEMA, LRAT_FILE_SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[
        ("cnf", CNF_SCHEMA),
        ("certificate", LRAT_SCHEMA),
        ("certificate", MODEL_SCHEMA),
        ("proof_file", LRAT_FILE_SCHEMA),
    ];

    type Input = VerifyInput;

    fn recipes() -> Vec<Recipe<VerifyInput>> {
        jacobian_sat_contract::recipes()
    }

    fn check(input: VerifyInput) -> Result<Verdict, Refusal> {
        let mut reading = match read(&input)? {
            Ok(reading) => reading,
            Err(rejected) => return Ok(rejected),
        };
        let whence = reading.evidence.whence();
        let judged = match std::mem::replace(&mut reading.evidence, Evidence::Inline(String::new())) {
            Evidence::Model(assignment) => model_satisfies(reading.variables, &reading.clauses, &assignment)
                .map(|()| format!("every one of the {} clauses has a true literal", reading.clauses.len())),
            _ if reading.format != "lrat" => {
                let reason = format!("this checker reads LRAT proofs and models, not {}", reading.format);
                return Ok(reading.verdict(VerdictKind::Unsupported, reason, Vec::new()));
            }
            Evidence::Inline(proof) => refutes(&reading.clauses, proof.as_bytes()).map(|a| said(a, &whence)),
            Evidence::File(file) => refutes(&reading.clauses, file).map(|a| said(a, &whence)),
        };
        match judged {
            Err(Failure::Unreadable(e)) => Err(Refusal::at("proof_file", e.to_string())),
            Err(wrong) => Ok(reading.verdict(VerdictKind::Rejected, wrong.to_string(), Vec::new())),
            Ok(said) => {
                let reason = format!("the {} certificate checks", reading.format);
                Ok(reading.verdict(VerdictKind::Accepted, reason, vec![said]))
            }
        }
    }
}

fn said(accepted: jacobian_lrat_plain_core::Accepted, whence: &str) -> String {
    format!(
        "{} lemmas judged ({} as RAT), {} clauses deleted, the empty clause is {} ({whence})",
        accepted.lemmas, accepted.rat, accepted.deleted, accepted.empty_clause
    )
}

export_checkers!(PlainSatCertificate);
