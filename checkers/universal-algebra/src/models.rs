//! `universal_algebra.models.verify`: checks that a listing holds every
//! model of the laws at one order once per class
//! (`jacobian_universal_algebra_checker_core::models`).

use jacobian_guest::{Checker, Judged, Recipe, Refusal, Scope, Verdict, VerdictKind, artifact_of, read_input_artifact};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use jacobian_universal_algebra_checker_core::models::{Classes, Judgement, MAX_ORDER, judge};

const SCHEMA: &str = "jacobian:universal_algebra/models@1";
/// Work units the labelled recount may spend: a unit is one branch tried or
/// one term symbol evaluated (tests/it/models.rs measures the fuel a unit
/// costs; this many fits the default fuel budget).
pub const RECOUNT_WORK: u64 = 600_000_000;

/// The listing to check.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    /// URI of a `jacobian:universal_algebra/models@1` artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub models: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Listing {
    format: String,
    claim: Claim,
    count: usize,
    models: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Claim {
    /// The producer's wording; the verdict restates the claim from the fields below.
    #[serde(rename = "statement")]
    _statement: String,
    hypotheses: Vec<String>,
    order: usize,
    up_to: String,
    #[serde(rename = "semantics")]
    _semantics: String,
}

pub struct ModelsComplete;

impl Checker for ModelsComplete {
    const ROLE: &'static str = "universal_algebra.models.complete";
    const CAPABILITY_ID: &'static str = "universal_algebra.models.verify";
    const TITLE: &'static str = "Check that a list of magmas is every model of laws, once per isomorphism class";
    const OUTCOME: &'static str = "whether the listed tables are models of the laws, pairwise in different classes, \
and together every class";
    const DESCRIPTION: &'static str = "Re-evaluates every law on every listed table with its own parser, computes \
each table's own canonical form (the greatest column-major code over every relabelling, of the table and, up to \
anti-isomorphism, of its opposite) and stabilizer, and rejects two tables of one class. Completeness: the classes' \
sizes (group order over stabilizer) must add up to the number of labelled models, which it recounts with a search of \
its own (cells in row-major order, ground instances watched and propagated). Orders 1..=6; a recount needing more than \
6*10^8 work units (semigroups, monoids and commutative semigroups of order 6) is UNSUPPORTED.";
    const TAGS: &'static [&'static str] =
        &["universal_algebra", "magma", "enumeration", "isomorphism", "canonical_form", "verification", "checker"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["magma-models/1"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("models", SCHEMA)];
    type Input = VerifyInput;

    fn recipes() -> Vec<Recipe<VerifyInput>> {
        vec![
            Recipe::new("the 12 commutative semigroups of order 3, each class once")
                .step(
                    "universal_algebra.enumerate.models",
                    json!({"hypotheses": ["associative", "commutative"], "order": 3}),
                )
                .then(VerifyInput { models: artifact_of(0, "models") }),
        ]
    }

    fn check(input: VerifyInput) -> Result<Verdict, Refusal> {
        let envelope = read_input_artifact("models", &input.models, SCHEMA)?;
        let lineage = envelope.lineage.clone();
        let listing: Listing =
            serde_json::from_value(envelope.content).map_err(|e| Refusal::at("models", e.to_string()))?;
        if listing.format != "magma-models/1" {
            return Err(Refusal::at("models.format", format!("unknown format {:?}", listing.format)));
        }
        let classes = match listing.claim.up_to.as_str() {
            "isomorphism" => Classes::Isomorphism,
            "isomorphism_or_anti" => Classes::IsomorphismOrAnti,
            other => return Err(Refusal::at("models.claim.up_to", format!("unknown classes {other:?}"))),
        };
        let (n, hypotheses) = (listing.claim.order, &listing.claim.hypotheses);
        let claim = json!({
            "statement": "the listed tables are every model of the hypotheses on this many elements, one per class",
            "hypotheses": hypotheses, "order": n, "up_to": listing.claim.up_to, "count": listing.count,
            "lineage": lineage,
        });
        let semantics = json!({
            "model": "a*b = the digit at position a*n+b; every equation holds for every assignment of its \
                      variables, has_identity has a two-sided identity, quasigroup has every row and column a \
                      permutation",
            "classes": "relabellings of the elements (and, up to anti-isomorphism, a*b read as b*a)",
        });
        let candidate = json!({"models": input.models});
        let about = Judged { claim, semantics, candidate };
        let scope = Scope::exhaustive(format!(
            "every model of order {n} of [{}], up to {}",
            hypotheses.join(", "),
            listing.claim.up_to
        ));
        if n == 0 || n > MAX_ORDER {
            let partial = Scope::partial(format!("order {n} is outside 1..={MAX_ORDER}; nothing was checked"));
            return Ok(about.verdict(
                VerdictKind::Unsupported,
                format!("order {n} is outside 1..={MAX_ORDER}"),
                Vec::new(),
                partial,
            ));
        }
        if listing.count != listing.models.len() {
            let reason = format!("count says {} but {} tables are listed", listing.count, listing.models.len());
            return Ok(about.verdict(VerdictKind::Rejected, reason, Vec::new(), scope));
        }
        Ok(match judge(n, hypotheses, classes, &listing.models, RECOUNT_WORK) {
            Judgement::Complete(checked, work) => about.verdict(
                VerdictKind::Accepted,
                format!(
                    "all {} classes are listed, each once; the labelled recount spent {work} of its \
                     {RECOUNT_WORK} work units",
                    listing.count
                ),
                checked,
                scope,
            ),
            Judgement::Flawed(reason) => about.verdict(VerdictKind::Rejected, reason, Vec::new(), scope),
            Judgement::TooLarge(reason) => about.verdict(
                VerdictKind::Unsupported,
                reason,
                Vec::new(),
                Scope::partial("completeness was not decided: the labelled recount exceeded this checker's budget"),
            ),
        })
    }
}
