//! The `sat.certificate` role's contract, shared by every checker of the
//! role that this project ships: the input, how the CNF and the certificate
//! are read, and what a verdict is about (claim, semantics, candidate,
//! scope). Two checkers of the role must bind their verdicts to the same
//! claim for a quorum to count them together, so they read it here. Nothing
//! here judges a certificate: each checker does that with its own code.

use jacobian_guest::{
    ArtifactEnvelope, ArtifactFile, Judged, Recipe, Refusal, Scope, Verdict, VerdictKind, artifact_of,
    read_artifact_json, read_input_artifact,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub const CNF_SCHEMA: &str = "jacobian:sat/cnf@1";
pub const LRAT_SCHEMA: &str = "jacobian:sat/lrat@1";
pub const MODEL_SCHEMA: &str = "jacobian:sat/model@1";
pub const LRAT_FILE_SCHEMA: &str = "jacobian:sat/lrat-file@1";
pub const DRAT_SCHEMA: &str = "jacobian:sat/drat@1";
pub const DRAT_FILE_SCHEMA: &str = "jacobian:sat/drat-file@1";

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

/// What a certificate offers as evidence.
pub enum Evidence {
    /// An assignment (a model).
    Model(Vec<i32>),
    /// A proof inline in the certificate.
    Inline(String),
    /// A proof in an uploaded file, to be streamed.
    File(ArtifactFile),
}

impl Evidence {
    /// Where a proof was read from, for the verdict's `checked`.
    pub fn whence(&self) -> String {
        match self {
            Evidence::File(file) => format!("streamed from a {}-byte file", file.len()),
            _ => "inline".into(),
        }
    }
}

/// A certificate read against its CNF, ready to be judged.
pub struct Reading {
    /// The formula's declared variables.
    pub variables: u32,
    /// Its clauses, clause `i` with id `i + 1`.
    pub clauses: Vec<Vec<i32>>,
    /// `lrat`, `drat` or `model`.
    pub format: &'static str,
    /// What the certificate offers.
    pub evidence: Evidence,
    about: Judged,
}

impl Reading {
    /// The verdict, bound to this claim, candidate and scope.
    pub fn verdict(&self, kind: VerdictKind, reason: impl Into<String>, checked: Vec<String>) -> Verdict {
        self.about.verdict(kind, reason, checked, scope())
    }
}

fn scope() -> Scope {
    Scope::exhaustive("exactly the CNF artifact named by the request; nothing about any other formula")
}

/// Read the CNF and the certificate the input names. `Ok(Err(verdict))`: a
/// certificate for another CNF, rejected without judging it.
pub fn read(input: &VerifyInput) -> Result<Result<Reading, Verdict>, Refusal> {
    let cnf = read_input_artifact("cnf", &input.cnf, CNF_SCHEMA)?;
    let formula: Cnf =
        serde_json::from_value(cnf.content).map_err(|e| Refusal::at("cnf", format!("malformed CNF: {e}")))?;
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
    let about = Judged { claim, semantics, candidate };
    if named_cnf != input.cnf {
        let reason = format!("the certificate is for {named_cnf}, not for the CNF {}", input.cnf);
        return Ok(Err(about.verdict(VerdictKind::Rejected, reason, Vec::new(), scope())));
    }
    let evidence = if format == "model" {
        let assignment = certificate
            .content
            .get("assignment")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .ok_or_else(|| Refusal::at("certificate", "the model has no assignment"))?;
        Evidence::Model(assignment)
    } else {
        match certificate.content.get("proof_file").and_then(Value::as_str) {
            Some(named) => {
                if input.proof_file.as_deref() != Some(named) {
                    return Err(Refusal::at(
                        "proof_file",
                        format!("the certificate's proof is the uploaded file {named}: name it as proof_file"),
                    ));
                }
                Evidence::File(ArtifactFile::open(named).map_err(|e| Refusal::at("proof_file", e))?)
            }
            None => Evidence::Inline(
                certificate.content.get("proof").and_then(Value::as_str).unwrap_or_default().to_owned(),
            ),
        }
    };
    Ok(Ok(Reading { variables: formula.variables, clauses: formula.clauses, format, evidence, about }))
}

/// The examples every checker of the role publishes: the solver's LRAT
/// proof and one written elsewhere, for the same unsatisfiable formula.
pub fn recipes() -> Vec<Recipe<VerifyInput>> {
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
