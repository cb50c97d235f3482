//! `universal_algebra.countermodel.verify`: an independent check of a finite
//! magma countermodel. It shares no code with the search: laws are compiled to
//! postfix programs by its own shunting-yard parser, every hypothesis is
//! re-evaluated on the whole table, and the target's violation is recomputed
//! at the stated witness (`jacobian-universal-algebra-checker-core`). And
//! `universal_algebra.models.verify` (`models`): a listing of models is
//! every class once.

mod models;

pub use models::ModelsComplete;

use std::collections::BTreeMap;

use jacobian_guest::{
    Checker, Judged, Recipe, Refusal, Scope, Verdict, VerdictKind, artifact_of, export_checkers, read_input_artifact,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use jacobian_universal_algebra_checker_core::judge;

const COUNTERMODEL_SCHEMA: &str = "jacobian:universal_algebra/countermodel@1";
/// Largest table the checker evaluates (every hypothesis is checked on all tuples).
const MAX_ORDER: usize = 16;

/// The countermodel to check.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    /// URI of a stored countermodel artifact (`artifact://sha256/<hex>`).
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub countermodel: String,
}

#[derive(Debug, Deserialize)]
struct Countermodel {
    claim: Claim,
    order: usize,
    table: Vec<Vec<u64>>,
    witness: Value,
}

#[derive(Debug, Deserialize)]
struct Claim {
    hypotheses: Vec<String>,
    target: String,
    semantics: String,
    #[serde(flatten)]
    _rest: BTreeMap<String, Value>,
}

pub struct CountermodelWitness;

impl Checker for CountermodelWitness {
    const ROLE: &'static str = "universal_algebra.countermodel.witness";
    const CAPABILITY_ID: &'static str = "universal_algebra.countermodel.verify";
    const TITLE: &'static str = "Check a finite magma countermodel";
    const OUTCOME: &'static str =
        "whether a stored Cayley table satisfies every hypothesis law and violates the target law at its witness";
    const DESCRIPTION: &'static str = "Re-evaluates every hypothesis on every tuple of the table and recomputes the \
target's failure at the witness, with its own law parser (orders up to 16). It checks the single table it is given: \
acceptance refutes the stated implication and says nothing else.";
    const TAGS: &'static [&'static str] = &["universal_algebra", "magma", "countermodel", "verification", "checker"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["cayley-table-witness/1"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[COUNTERMODEL_SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("countermodel", COUNTERMODEL_SCHEMA)];

    type Input = VerifyInput;

    fn recipes() -> Vec<Recipe<VerifyInput>> {
        vec![
            Recipe::new("a semigroup that is not commutative, found on two elements")
                .step(
                    "universal_algebra.search.countermodel",
                    json!({"hypotheses": ["associative"], "target": "commutative", "max_order": 3}),
                )
                .then(VerifyInput { countermodel: artifact_of(0, "countermodel") }),
        ]
    }

    fn check(input: VerifyInput) -> Result<Verdict, Refusal> {
        let envelope = read_input_artifact("countermodel", &input.countermodel, COUNTERMODEL_SCHEMA)?;
        let model: Countermodel = serde_json::from_value(envelope.content.clone())
            .map_err(|e| Refusal::at("countermodel", format!("malformed countermodel: {e}")))?;
        let claim = json!({
            "hypotheses": model.claim.hypotheses,
            "target": model.claim.target,
            "lineage": envelope.lineage,
        });
        let semantics = json!({
            "stated": model.claim.semantics,
            "checked": "laws are evaluated on every tuple over {0,...,n-1} with a*b = table[a][b]",
        });
        let candidate = json!({"order": model.order, "table": model.table, "witness": model.witness});
        let scope = Scope::exhaustive(format!(
            "the single magma of order {} given by the table; it refutes the implication, nothing more",
            model.order
        ));
        let about = Judged { claim, semantics, candidate };
        let verdict = |kind, reason: String, checked| about.verdict(kind, reason, checked, scope.clone());
        if model.order > MAX_ORDER {
            return Ok(verdict(
                VerdictKind::Unsupported,
                format!("order {} exceeds this checker's bound of {MAX_ORDER}", model.order),
                Vec::new(),
            ));
        }
        let Countermodel { claim: Claim { hypotheses, target, .. }, order, table, witness } = &model;
        match judge(*order, table, hypotheses, target, witness) {
            Ok(checked) => Ok(verdict(
                VerdictKind::Accepted,
                "every hypothesis holds on the whole table and the target fails at the witness".into(),
                checked,
            )),
            Err(reason) => Ok(verdict(VerdictKind::Rejected, reason, Vec::new())),
        }
    }
}

export_checkers!(CountermodelWitness, ModelsComplete);
