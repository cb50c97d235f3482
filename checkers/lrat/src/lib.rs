//! `sat.certificate.verify`: checks a SAT certificate against the exact CNF
//! artifact it names — a model by evaluating every clause, an LRAT proof of
//! unsatisfiability by hinted unit propagation and RAT groups, a DRAT proof
//! by unit propagation of its own, forward. It shares no code with the
//! solver (the checking lives in `jacobian-lrat-core`).

use jacobian_guest::{Checker, Recipe, Refusal, Verdict, VerdictKind, export_checkers};
use jacobian_lrat_core::{
    DratSummary, Formula, ProofError, ProofSummary, check_drat, check_drat_from, check_lrat, check_lrat_from,
    check_model,
};
use jacobian_sat_contract::{
    CNF_SCHEMA, DRAT_FILE_SCHEMA, DRAT_SCHEMA, Evidence, LRAT_FILE_SCHEMA, LRAT_SCHEMA, MODEL_SCHEMA, VerifyInput, read,
};

pub struct SatCertificate;

impl Checker for SatCertificate {
    const ROLE: &'static str = "sat.certificate";
    const CAPABILITY_ID: &'static str = "sat.certificate.verify";
    const TITLE: &'static str = "Check a SAT certificate (LRAT or DRAT proof, or model)";
    const OUTCOME: &'static str = "whether a model satisfies every clause, or an LRAT or DRAT proof refutes the exact \
CNF artifact";
    const DESCRIPTION: &'static str = "Checks a model by evaluating every clause, and an LRAT proof step by step: \
each added clause by unit propagation over its hints in order (RUP), or by its RAT candidate groups; deletions; \
strictly increasing ids; the proof must end in the empty clause. A DRAT proof forward: each lemma by unit \
propagation over the active clauses (RUP) or as RAT on its first literal, deletions matched as sets of literals \
(those of clauses that are reasons for top-level units, or not active, are ignored, as drat-trim does), accepted once \
propagation conflicts. The certificate must name the same CNF artifact. Accepts LRAT and DRAT from any tool, inline or \
as an uploaded file in text or binary form (streamed: only the active clauses are held). Shares no code with the \
solver.";
    const TAGS: &'static [&'static str] =
        &["sat", "lrat", "drat", "proof", "certificate", "verification", "checker", "cnf"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["lrat", "drat", "model"];
    const ARTIFACT_TYPES: &'static [&'static str] =
        &[CNF_SCHEMA, LRAT_SCHEMA, DRAT_SCHEMA, MODEL_SCHEMA, LRAT_FILE_SCHEMA, DRAT_FILE_SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[
        ("cnf", CNF_SCHEMA),
        ("certificate", LRAT_SCHEMA),
        ("certificate", DRAT_SCHEMA),
        ("certificate", MODEL_SCHEMA),
        ("proof_file", LRAT_FILE_SCHEMA),
        ("proof_file", DRAT_FILE_SCHEMA),
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
        let formula = Formula { variables: reading.variables, clauses: reading.clauses.clone() };
        let (format, lrat) = (reading.format, reading.format == "lrat");
        let outcome = match std::mem::replace(&mut reading.evidence, Evidence::Inline(String::new())) {
            Evidence::Model(assignment) => check_model(&formula, &assignment)
                .map(|()| vec![format!("all {} clauses have a true literal", formula.clauses.len())]),
            Evidence::Inline(proof) if lrat => check_lrat(&formula, &proof).map(|s| vec![lrat_said(&s, &whence)]),
            Evidence::Inline(proof) => check_drat(&formula, &proof).map(|s| vec![drat_said(&s, &whence)]),
            Evidence::File(file) => {
                let checked = if lrat {
                    check_lrat_from(&formula, file).map(|s| lrat_said(&s, &whence))
                } else {
                    check_drat_from(&formula, file).map(|s| drat_said(&s, &whence))
                };
                match checked {
                    Err(ProofError::Unreadable(e)) => return Err(Refusal::at("proof_file", e.to_string())),
                    Err(ProofError::Rejected(r)) => Err(r),
                    Ok(said) => Ok(vec![said]),
                }
            }
        };
        Ok(match outcome {
            Ok(checked) => reading.verdict(VerdictKind::Accepted, format!("the {format} certificate checks"), checked),
            Err(rejection) => reading.verdict(VerdictKind::Rejected, rejection.to_string(), Vec::new()),
        })
    }
}

fn lrat_said(s: &ProofSummary, whence: &str) -> String {
    format!(
        "{} lemmas checked ({} by RAT), {} deletions, empty clause {} derived ({whence})",
        s.lemmas, s.rat_lemmas, s.deletions, s.empty_clause_id
    )
}

fn drat_said(s: &DratSummary, whence: &str) -> String {
    let (form, at) = if s.binary { ("binary", "step") } else { ("text", "line") };
    let refuted = match s.refuted_at {
        0 => "the formula alone is refuted by unit propagation".to_owned(),
        at_ => format!("propagation conflicts after the lemma at {at} {at_}"),
    };
    format!(
        "{} lemmas checked forward ({} by RAT), {} deletions, {} deletions of unit clauses and {} of absent clauses \
         ignored; {refuted} ({form} DRAT, {whence})",
        s.lemmas, s.rat_lemmas, s.deletions, s.ignored_unit_deletions, s.ignored_absent_deletions
    )
}

export_checkers!(SatCertificate);
