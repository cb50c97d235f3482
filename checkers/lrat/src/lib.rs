//! `sat.certificate.verify`: checks a SAT certificate against the exact CNF
//! artifact it names — a model by evaluating every clause, an LRAT proof of
//! unsatisfiability by hinted unit propagation and RAT groups. It shares no
//! code with the solver (the checking lives in `jacobian-lrat-core`).

use jacobian_guest::{
    ArtifactEnvelope, ArtifactFile, Checker, Judged, Recipe, Refusal, Scope, Verdict, VerdictKind, artifact_of,
    export_checkers, read_artifact_json, read_input_artifact,
};
use jacobian_lrat_core::{Formula, ProofError, check_lrat, check_lrat_from, check_model};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const CNF_SCHEMA: &str = "jacobian:sat/cnf@1";
const LRAT_SCHEMA: &str = "jacobian:sat/lrat@1";
const MODEL_SCHEMA: &str = "jacobian:sat/model@1";
const LRAT_FILE_SCHEMA: &str = "jacobian:sat/lrat-file@1";

/// The certificate to check and the formula it is about.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    /// URI of the CNF artifact (`jacobian:sat/cnf@1`).
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub cnf: String,
    /// URI of the certificate artifact: an LRAT proof (`jacobian:sat/lrat@1`) or a model (`jacobian:sat/model@1`).
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub certificate: String,
    /// URI of the uploaded proof file (`jacobian:sat/lrat-file@1`) when the certificate's proof is one; it is read
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
    const TITLE: &'static str = "Check a SAT certificate (LRAT proof or model)";
    const OUTCOME: &'static str =
        "whether a model satisfies every clause, or an LRAT proof derives the empty clause, for the exact CNF artifact";
    const DESCRIPTION: &'static str = "Checks a model by evaluating every clause, and an LRAT proof step by step: \
each added clause by unit propagation over its hints in order (RUP), or by its RAT candidate groups; deletions; \
strictly increasing ids; the proof must end in the empty clause. The certificate must name the same CNF artifact. \
Accepts LRAT from any tool, inline or as an uploaded file in text or binary form (streamed: only the active clauses \
are held). Shares no code with the solver.";
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
            MODEL_SCHEMA => ("model", "SATISFIABLE"),
            other => {
                return Err(Refusal::at("certificate", format!("{other} is not a SAT certificate schema")));
            }
        };
        let claim = json!({"cnf": input.cnf, "statement": claim_text,
                           "variables": formula.variables, "clauses": formula.clauses.len()});
        let semantics = json!({
            "cnf": "DIMACS semantics: a clause is a disjunction of literals, the formula their conjunction",
            "certificate": if format == "lrat" {
                "LRAT: every added clause follows by RUP or RAT from the active clauses; the empty clause ends the proof"
            } else {
                "a total or partial assignment under which every clause has a true literal"
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
            "lrat" => {
                let checked = match certificate.content.get("proof_file").and_then(Value::as_str) {
                    Some(named) => {
                        if input.proof_file.as_deref() != Some(named) {
                            return Err(Refusal::at(
                                "proof_file",
                                format!("the certificate's proof is the uploaded file {named}: name it as proof_file"),
                            ));
                        }
                        let file = ArtifactFile::open(named).map_err(|e| Refusal::at("proof_file", e))?;
                        let bytes = file.len();
                        match check_lrat_from(&formula, file) {
                            Err(ProofError::Unreadable(e)) => return Err(Refusal::at("proof_file", e.to_string())),
                            Err(ProofError::Rejected(r)) => Err(r),
                            Ok(s) => Ok((s, format!("streamed from a {bytes}-byte file"))),
                        }
                    }
                    None => {
                        let proof = certificate.content.get("proof").and_then(Value::as_str).unwrap_or_default();
                        check_lrat(&formula, proof).map(|s| (s, "inline".to_owned()))
                    }
                };
                checked.map(|(s, whence)| {
                    vec![format!(
                        "{} lemmas checked ({} by RAT), {} deletions, empty clause {} derived ({whence})",
                        s.lemmas, s.rat_lemmas, s.deletions, s.empty_clause_id
                    )]
                })
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

export_checkers!(SatCertificate);
