//! SAT: DIMACS CNF artifacts, a CDCL solver whose UNSAT answers carry LRAT
//! proofs and whose SAT answers carry models, and LRAT or DRAT certificates
//! from other tools bound to a CNF artifact. The parsing and the solver are
//! `jacobian-sat-core`; this crate is the component around them.

use jacobian_guest::{
    ArtifactEnvelope, Capability, Check, InputKind, Produced, Qualifier, Recipe, Refusal, Scope, artifact_of,
    export_capabilities, read_artifact_json, read_input_artifact,
};
use jacobian_sat_core::{dimacs, solver};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const CNF_SCHEMA: &str = "jacobian:sat/cnf@1";
const LRAT_SCHEMA: &str = "jacobian:sat/lrat@1";
const DRAT_SCHEMA: &str = "jacobian:sat/drat@1";
const MODEL_SCHEMA: &str = "jacobian:sat/model@1";
/// An uploaded LRAT proof file, text or binary (`jacobian artifact put FILE --schema jacobian:sat/lrat-file@1`).
const LRAT_FILE_SCHEMA: &str = "jacobian:sat/lrat-file@1";
/// An uploaded DRAT proof file, text or binary (CaDiCaL's output as it is).
const DRAT_FILE_SCHEMA: &str = "jacobian:sat/drat-file@1";
/// Three pigeons in two holes (variable 2(i-1)+j: pigeon i in hole j): unsatisfiable.
pub const PIGEONHOLE_3_2: &str =
    "p cnf 6 9\n1 2 0\n3 4 0\n5 6 0\n-1 -3 0\n-1 -5 0\n-3 -5 0\n-2 -4 0\n-2 -6 0\n-4 -6 0\n";
/// A DRAT proof for [`PIGEONHOLE_3_2`], written by hand: pigeon 1 is not in
/// hole 1 (RUP: pigeons 2 and 3 would share hole 2); then propagation puts
/// pigeon 1 in hole 2, and pigeons 2 and 3 both in hole 1.
pub const PIGEONHOLE_3_2_DRAT: &str = "-1 0\n0\n";
/// x1 and not x1, with the one-line LRAT proof of the empty clause from both.
pub const CONTRADICTION: (&str, &str) = ("p cnf 1 2\n1 0\n-1 0\n", "3 0 1 2 0\n");

/// The SAT checker, for an outside proof.
const PROOF_CHECK: Check =
    Check { role: "sat.certificate", verifier: "sat.certificate.verify", formats: &["lrat", "drat"] };
/// The SAT checker, for either answer of the solver.
const ANSWER_CHECK: Check = Check { formats: &["lrat", "model"], ..PROOF_CHECK };

/// DIMACS CNF text.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConstructInput {
    /// The formula in DIMACS CNF (`p cnf VARIABLES CLAUSES`, clauses ended by 0; at most
    /// 100000 variables and 1000000 clauses).
    #[schemars(length(max = 16_000_000))]
    pub dimacs: String,
}

/// The stored formula.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConstructOutput {
    /// Declared variables.
    pub variables: u32,
    /// Clauses (clause i has LRAT id i + 1).
    pub clauses: usize,
}

pub struct ConstructCnf;

impl Capability for ConstructCnf {
    const ID: &'static str = "sat.cnf.construct";
    const TITLE: &'static str = "Store a CNF formula from DIMACS text";
    const OUTCOME: &'static str = "a validated CNF artifact that SAT capabilities and checkers accept";
    const DESCRIPTION: &'static str = "Parses DIMACS CNF (a % line ends the formula, as in SATLIB), checks the header \
against the clauses and every literal against the variable count, and stores the clauses in order (clause i has \
LRAT id i + 1). Bounds: 100000 variables, 1000000 clauses.";
    const TAGS: &'static [&'static str] = &["sat", "cnf", "dimacs", "formula", "construct"];
    const INPUT_KIND: InputKind = InputKind::FormalProposition;
    const ARTIFACT_TYPES: &'static [&'static str] = &[CNF_SCHEMA];
    type Input = ConstructInput;
    type Output = ConstructOutput;

    fn examples() -> Vec<(&'static str, ConstructInput)> {
        vec![("x1 or x2, and not x1", ConstructInput { dimacs: "p cnf 2 2\n1 2 0\n-1 0\n".into() })]
    }

    fn run(input: ConstructInput) -> Result<Produced<ConstructOutput>, Refusal> {
        let cnf = dimacs::parse(&input.dimacs).map_err(|e| Refusal::at("dimacs", e))?;
        let output = ConstructOutput { variables: cnf.variables, clauses: cnf.clauses.len() };
        let content = json!({"variables": cnf.variables, "clauses": cnf.clauses});
        Ok(Produced::computed(output, Scope::exhaustive("exactly the supplied DIMACS text"))
            .qualifiers(&[Qualifier::Exact, Qualifier::Deterministic])
            .artifact("cnf", CNF_SCHEMA, &content))
    }
}

/// An LRAT or DRAT proof from any tool, for a stored CNF: inline or uploaded, exactly one.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["lrat"]}, {"required": ["drat"]}, {"required": ["proof"]}]))]
pub struct CertificateInput {
    /// URI of the CNF artifact the proof is about.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub cnf: String,
    /// LRAT proof text (up to the input limit). Give one of `lrat`, `drat`, `proof`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64_000_000))]
    pub lrat: Option<String>,
    /// DRAT proof text (up to the input limit): `literals 0` lemmas, `d literals 0` deletions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64_000_000))]
    pub drat: Option<String>,
    /// URI of an uploaded proof file of any size up to the operator's upload bound: `jacobian:sat/lrat-file@1`
    /// (LRAT) or `jacobian:sat/drat-file@1` (DRAT, as CaDiCaL writes it), text or binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub proof: Option<String>,
}

/// The stored certificate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CertificateOutput {
    /// `lrat` or `drat`.
    pub format: String,
    /// Lemma lines (LRAT text given inline; DRAT and uploaded files are not read here).
    pub lemmas: Option<u64>,
    /// Deletion lines (likewise).
    pub deletions: Option<u64>,
    /// The proof's length in bytes.
    pub bytes: u64,
}

pub struct ConstructCertificate;

impl Capability for ConstructCertificate {
    const ID: &'static str = "sat.certificate.construct";
    const TITLE: &'static str = "Store an LRAT or DRAT proof for a CNF artifact";
    const OUTCOME: &'static str =
        "an LRAT or DRAT certificate artifact bound to one CNF artifact, ready for the independent checker";
    const DESCRIPTION: &'static str = "Binds an outside proof to the CNF artifact: LRAT text given inline (`lrat`, its \
syntax checked: every line `id literals 0 hints 0` or `id d ids 0`), DRAT text given inline (`drat`), or an uploaded \
proof file (`proof`: LRAT or DRAT, text or binary, of hundreds of megabytes, not read here). Whether the proof is \
valid is decided by sat.certificate.verify, never here.";
    const TAGS: &'static [&'static str] = &["sat", "lrat", "drat", "proof", "certificate", "construct"];
    const INPUT_KIND: InputKind = InputKind::TypedArtifact;
    const CHECKS: &'static [Check] = &[PROOF_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[LRAT_SCHEMA, DRAT_SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] =
        &[("cnf", CNF_SCHEMA), ("proof", LRAT_FILE_SCHEMA), ("proof", DRAT_FILE_SCHEMA)];
    type Input = CertificateInput;
    type Output = CertificateOutput;

    fn recipes() -> Vec<Recipe<CertificateInput>> {
        let (dimacs, lrat) = CONTRADICTION;
        vec![
            Recipe::new("an outside LRAT proof that x1 and not x1 contradict")
                .step(ConstructCnf::ID, ConstructInput { dimacs: dimacs.into() })
                .then(CertificateInput {
                    cnf: artifact_of(0, "cnf"),
                    lrat: Some(lrat.into()),
                    drat: None,
                    proof: None,
                }),
            Recipe::new("an outside DRAT proof that three pigeons do not fit in two holes")
                .step(ConstructCnf::ID, ConstructInput { dimacs: PIGEONHOLE_3_2.into() })
                .then(CertificateInput {
                    cnf: artifact_of(0, "cnf"),
                    lrat: None,
                    drat: Some(PIGEONHOLE_3_2_DRAT.into()),
                    proof: None,
                }),
        ]
    }

    fn run(input: CertificateInput) -> Result<Produced<CertificateOutput>, Refusal> {
        read_input_artifact("cnf", &input.cnf, CNF_SCHEMA)?;
        let stored = |format: &str, bytes: usize, lines: Option<(u64, u64)>| CertificateOutput {
            format: format.into(),
            lemmas: lines.map(|l| l.0),
            deletions: lines.map(|l| l.1),
            bytes: bytes as u64,
        };
        let (output, content) = match (input.lrat, input.drat, input.proof) {
            (Some(lrat), None, None) => {
                let lines = dimacs::lrat_syntax(&lrat).map_err(|e| Refusal::at("lrat", e))?;
                (stored("lrat", lrat.len(), Some(lines)), json!({"cnf": input.cnf, "format": "lrat", "proof": lrat}))
            }
            (None, Some(drat), None) => {
                (stored("drat", drat.len(), None), json!({"cnf": input.cnf, "format": "drat", "proof": drat}))
            }
            (None, None, Some(proof)) => {
                let upload: ArtifactEnvelope<Value> =
                    read_artifact_json(&proof).map_err(|e| Refusal::at("proof", e))?;
                let format = match upload.schema_uri.as_str() {
                    LRAT_FILE_SCHEMA => "lrat",
                    DRAT_FILE_SCHEMA => "drat",
                    other => {
                        return Err(Refusal::at(
                            "proof",
                            format!("artifact has schema {other}, expected {LRAT_FILE_SCHEMA} or {DRAT_FILE_SCHEMA}"),
                        ));
                    }
                };
                let bytes =
                    upload.content["bytes"].as_u64().ok_or_else(|| Refusal::at("proof", "not an uploaded file"))?;
                let output = CertificateOutput { format: format.into(), lemmas: None, deletions: None, bytes };
                (output, json!({"cnf": input.cnf, "format": format, "proof_file": proof}))
            }
            _ => {
                return Err(Refusal::at(
                    "proof",
                    "give the proof exactly one way: inline LRAT (lrat), inline DRAT (drat), or an uploaded file (proof)",
                ));
            }
        };
        let schema = if output.format == "drat" { DRAT_SCHEMA } else { LRAT_SCHEMA };
        let route = PROOF_CHECK.route(&output.format, "certificate");
        Ok(Produced::proposed(output, Scope::exhaustive("exactly the supplied proof"))
            .artifact("certificate", schema, &content)
            .obligation("an independent check that the proof refutes this CNF")
            .verify_with(route))
    }
}

/// A CNF artifact to solve.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SolveInput {
    /// URI of the CNF artifact (`jacobian:sat/cnf@1`).
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub cnf: String,
    /// Conflicts allowed before answering UNKNOWN.
    #[serde(default = "default_conflicts")]
    #[schemars(range(min = 1, max = 100_000_000))]
    pub max_conflicts: u64,
}

fn default_conflicts() -> u64 {
    1_000_000
}

/// The answer and the search's counters.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SolveOutput {
    /// SAT, UNSAT, or UNKNOWN (budget exhausted; nothing is claimed).
    pub status: String,
    /// Conflicts.
    pub conflicts: u64,
    /// Decisions.
    pub decisions: u64,
    /// Propagations.
    pub propagations: u64,
    /// Learned clauses.
    pub learned: u64,
    /// Restarts.
    pub restarts: u64,
    /// Lines of the LRAT proof (UNSAT).
    pub proof_lines: Option<usize>,
}

pub struct Solve;

impl Capability for Solve {
    const ID: &'static str = "sat.solve";
    const TITLE: &'static str = "Decide satisfiability of a CNF formula (CDCL, with certificates)";
    const OUTCOME: &'static str = "SAT with a model, or UNSAT with an LRAT proof emitted by the solver, or an honest UNKNOWN when the budget ends";
    const DESCRIPTION: &'static str = "A CDCL solver (two watched literals, first-UIP learning, VSIDS, Luby restarts, \
LBD clause deletion) written for this project. UNSAT answers carry an LRAT proof whose hints come from conflict \
analysis; SAT answers carry the model. Both are COMPUTED until sat.certificate.verify accepts the certificate. When \
max_conflicts runs out the answer is UNKNOWN, never a guess.";
    const TAGS: &'static [&'static str] = &["sat", "cnf", "solver", "cdcl", "lrat", "unsat", "satisfiability"];
    const INPUT_KIND: InputKind = InputKind::TypedArtifact;
    const CHECKS: &'static [Check] = &[ANSWER_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[LRAT_SCHEMA, MODEL_SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("cnf", CNF_SCHEMA)];
    type Input = SolveInput;
    type Output = SolveOutput;

    fn recipes() -> Vec<Recipe<SolveInput>> {
        let solve = |max_conflicts| SolveInput { cnf: artifact_of(0, "cnf"), max_conflicts };
        vec![
            Recipe::new("three pigeons do not fit in two holes (UNSAT, with an LRAT proof)")
                .step(ConstructCnf::ID, ConstructInput { dimacs: PIGEONHOLE_3_2.into() })
                .then(solve(1000)),
            Recipe::new("x1 or x2, and not x1 (SAT, with a model)")
                .step(ConstructCnf::ID, ConstructInput { dimacs: "p cnf 2 2\n1 2 0\n-1 0\n".into() })
                .then(solve(1000)),
        ]
    }

    fn run(input: SolveInput) -> Result<Produced<SolveOutput>, Refusal> {
        #[derive(Deserialize)]
        struct Cnf {
            variables: u32,
            clauses: Vec<Vec<i32>>,
        }
        let envelope = read_input_artifact("cnf", &input.cnf, CNF_SCHEMA)?;
        let cnf: Cnf = serde_json::from_value(envelope.content).map_err(|e| Refusal::at("cnf", e.to_string()))?;
        let (mut solver, early) = solver::Solver::new(cnf.variables, &cnf.clauses);
        let answer = match early {
            Some(answer) => answer,
            None => solver.solve(input.max_conflicts),
        };
        let s = solver.stats;
        let mut output = SolveOutput {
            status: String::new(),
            conflicts: s.conflicts,
            decisions: s.decisions,
            propagations: s.propagations,
            learned: s.learned,
            restarts: s.restarts,
            proof_lines: None,
        };
        let qualifiers = [Qualifier::Exact, Qualifier::Deterministic];
        Ok(match answer {
            solver::Answer::Sat(model) => {
                output.status = "SAT".into();
                let content = json!({"cnf": input.cnf, "format": "model", "assignment": model});
                Produced::computed(output, Scope::exhaustive("exactly the CNF artifact named by the input"))
                    .qualifiers(&qualifiers)
                    .artifact("certificate", MODEL_SCHEMA, &content)
                    .obligation("an independent check that the model satisfies every clause")
                    .verify_with(ANSWER_CHECK.route("model", "certificate"))
            }
            solver::Answer::Unsat => {
                output.status = "UNSAT".into();
                output.proof_lines = Some(solver.proof.lines().count());
                let content = json!({"cnf": input.cnf, "format": "lrat", "proof": solver.proof});
                Produced::computed(output, Scope::exhaustive("exactly the CNF artifact named by the input"))
                    .qualifiers(&qualifiers)
                    .artifact("certificate", LRAT_SCHEMA, &content)
                    .obligation("an independent check of the LRAT proof against this CNF")
                    .verify_with(ANSWER_CHECK.route("lrat", "certificate"))
            }
            solver::Answer::Unknown => {
                output.status = "UNKNOWN".into();
                Produced::computed(
                    output,
                    Scope::partial(format!(
                        "the conflict budget ({}) ran out; nothing is claimed",
                        input.max_conflicts
                    )),
                )
                .qualifiers(&[Qualifier::Deterministic])
            }
        })
    }
}

export_capabilities!(ConstructCnf, ConstructCertificate, Solve);
