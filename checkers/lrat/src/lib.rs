//! `sat.certificate.verify`: checks a SAT certificate against the exact CNF
//! artifact it names — a model by evaluating every clause, an LRAT proof of
//! unsatisfiability by hinted unit propagation and RAT groups, a DRAT proof
//! by unit propagation of its own, forward. It shares no code with the
//! solver (the checking lives in `jacobian-lrat-core`).

use jacobian_guest::{
    ArtifactEnvelope, ArtifactFile, Checker, Judged, Recipe, Refusal, Scope, Verdict, VerdictKind, artifact_of,
    export_checkers, read_artifact_json, read_input_artifact,
};
use jacobian_lrat_core::{
    DratSummary, Formula, ProofError, ProofSummary, check_drat, check_drat_from, check_lrat, check_lrat_from,
    check_model,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const CNF_SCHEMA: &str = "jacobian:sat/cnf@1";
const LRAT_SCHEMA: &str = "jacobian:sat/lrat@1";
const MODEL_SCHEMA: &str = "jacobian:sat/model@1";
const LRAT_FILE_SCHEMA: &str = "jacobian:sat/lrat-file@1";
const DRAT_SCHEMA: &str = "jacobian:sat/drat@1";
const DRAT_FILE_SCHEMA: &str = "jacobian:sat/drat-file@1";

/// The certificate to check and the formula it is about.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    /// URI of the CNF artifact (`jacobian:sat/cnf@1`).
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub cnf: String,
    /// URI of the certificate artifact: an LRAT proof (`jacobian:sat/lrat@1`), a DRAT proof (`jacobian:sat/drat@1`)
    /// or a model (`jacobian:sat/model@1`).
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub certificate: String,
    /// URI of the uploaded proof file (`jacobian:sat/lrat-file@1` or `jacobian:sat/drat-file@1`) when the
    /// certificate's proof is one; it is read
    /// in ranges, never whole. `certificate.verify` fills it from the certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub proof_file: Option<String>,
}

#[derive(Deserialize)]
struct Cnf {
    variables: u32,
    clauses: Vec<Vec<i32>>,
}

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
        // Every clause over two variables: unsatisfiable. The outside proof
        // derives (x2) from clauses 1 and 2, then the empty clause.
        let every_clause = json!({"dimacs": "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n"});
        let check = |step| VerifyInput {
            cnf: artifact_of(0, "cnf"),
            certificate: artifact_of(step, "certificate"),
            proof_file: None,
        };
        vec![
            Recipe::new("the solver's LRAT proof that all four clauses over two variables are unsatisfiable")
                .step("sat.cnf.construct", &every_clause)
                .step("sat.solve", json!({"cnf": artifact_of(0, "cnf")}))
                .then(check(1)),
            Recipe::new("an LRAT proof written elsewhere, for the same formula")
                .step("sat.cnf.construct", &every_clause)
                .step(
                    "sat.certificate.construct",
                    json!({"cnf": artifact_of(0, "cnf"), "lrat": "5 2 0 1 2 0\n6 0 5 3 4 0\n"}),
                )
                .then(check(1)),
        ]
    }

    fn check(input: VerifyInput) -> Result<Verdict, Refusal> {
        let cnf = read_input_artifact("cnf", &input.cnf, CNF_SCHEMA)?;
        let formula: Cnf =
            serde_json::from_value(cnf.content).map_err(|e| Refusal::at("cnf", format!("malformed CNF: {e}")))?;
        let formula = Formula { variables: formula.variables, clauses: formula.clauses };
        let certificate: ArtifactEnvelope<Value> =
            read_artifact_json(&input.certificate).map_err(|e| Refusal::at("certificate", e))?;
        let named_cnf = certificate.content.get("cnf").and_then(Value::as_str).unwrap_or_default().to_owned();
        let (format, claim_text) = match certificate.schema_uri.as_str() {
            LRAT_SCHEMA => ("lrat", "UNSATISFIABLE"),
            DRAT_SCHEMA => ("drat", "UNSATISFIABLE"),
            MODEL_SCHEMA => ("model", "SATISFIABLE"),
            other => {
                return Err(Refusal::at("certificate", format!("{other} is not a SAT certificate schema")));
            }
        };
        let claim = json!({"cnf": input.cnf, "statement": claim_text,
                           "variables": formula.variables, "clauses": formula.clauses.len()});
        let semantics = json!({
            "cnf": "DIMACS semantics: a clause is a disjunction of literals, the formula their conjunction",
            "certificate": match format {
                "lrat" => "LRAT: every added clause follows by RUP or RAT from the active clauses; the empty clause ends the proof",
                "drat" => "DRAT: every added clause follows by RUP or RAT on its first literal from the active clauses; unit propagation over the formula and the lemmas ends in a conflict",
                _ => "a total or partial assignment under which every clause has a true literal",
            },
        });
        let candidate = json!({"certificate": input.certificate, "format": format, "lineage": certificate.lineage});
        let scope = Scope::exhaustive("exactly the CNF artifact named by the request; nothing about any other formula");
        let about = Judged { claim, semantics, candidate };
        let verdict = |kind, reason: String, checked| about.verdict(kind, reason, checked, scope.clone());
        if named_cnf != input.cnf {
            return Ok(verdict(
                VerdictKind::Rejected,
                format!("the certificate is for {named_cnf}, not for the CNF {}", input.cnf),
                Vec::new(),
            ));
        }
        let outcome = match format {
            "lrat" | "drat" => {
                let checked = match certificate.content.get("proof_file").and_then(Value::as_str) {
                    Some(named) => {
                        if input.proof_file.as_deref() != Some(named) {
                            return Err(Refusal::at(
                                "proof_file",
                                format!("the certificate's proof is the uploaded file {named}: name it as proof_file"),
                            ));
                        }
                        let file = ArtifactFile::open(named).map_err(|e| Refusal::at("proof_file", e))?;
                        let whence = format!("streamed from a {}-byte file", file.len());
                        let checked = if format == "lrat" {
                            check_lrat_from(&formula, file).map(|s| lrat_said(&s, &whence))
                        } else {
                            check_drat_from(&formula, file).map(|s| drat_said(&s, &whence))
                        };
                        match checked {
                            Err(ProofError::Unreadable(e)) => return Err(Refusal::at("proof_file", e.to_string())),
                            Err(ProofError::Rejected(r)) => Err(r),
                            Ok(said) => Ok(said),
                        }
                    }
                    None => {
                        let proof = certificate.content.get("proof").and_then(Value::as_str).unwrap_or_default();
                        if format == "lrat" {
                            check_lrat(&formula, proof).map(|s| lrat_said(&s, "inline"))
                        } else {
                            check_drat(&formula, proof).map(|s| drat_said(&s, "inline"))
                        }
                    }
                };
                checked.map(|said| vec![said])
            }
            _ => {
                let assignment: Vec<i32> = certificate
                    .content
                    .get("assignment")
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .ok_or_else(|| Refusal::at("certificate", "the model has no assignment"))?;
                check_model(&formula, &assignment)
                    .map(|()| vec![format!("all {} clauses have a true literal", formula.clauses.len())])
            }
        };
        Ok(match outcome {
            Ok(checked) => verdict(VerdictKind::Accepted, format!("the {format} certificate checks"), checked),
            Err(rejection) => verdict(VerdictKind::Rejected, rejection.to_string(), Vec::new()),
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
