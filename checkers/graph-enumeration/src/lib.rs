//! `graph.enumerate.nonisomorphic.verify`: checks an enumeration of graphs up
//! to isomorphism. Every listed graph must parse, have the stated order and
//! belong to the family; no two may share this checker's own canonical form
//! (so they are pairwise non-isomorphic); and their number must equal the
//! number of isomorphism classes given by formulas that never look at a graph
//! (Burnside's lemma, its inverse Euler transform for connected graphs,
//! Otter's formula for trees). Pairwise non-isomorphic and as many as there
//! are classes means every class is listed. Shares no code with the producer.
//! The checking is `jacobian-graph-enumeration-checker-core`.

use jacobian_graph_enumeration_checker_core::{Family, Judgement, judge};
use jacobian_guest::{
    Checker, Judged, Recipe, Refusal, Scope, Verdict, VerdictKind, artifact_of, export_checkers, read_input_artifact,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const SCHEMA: &str = "jacobian:graph/enumeration@1";

/// The enumeration to check.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    /// URI of a `jacobian:graph/enumeration@1` artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub enumeration: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Enumeration {
    format: String,
    family: String,
    order: usize,
    count: usize,
    graphs: Vec<String>,
}

pub struct NonisomorphicEnumeration;

impl Checker for NonisomorphicEnumeration {
    const ROLE: &'static str = "graph.enumerate.nonisomorphic";
    const CAPABILITY_ID: &'static str = "graph.enumerate.nonisomorphic.verify";
    const TITLE: &'static str = "Check that a list of graphs is every isomorphism class exactly once";
    const OUTCOME: &'static str =
        "whether the listed graphs are pairwise non-isomorphic, all of the family, and as many as there are classes";
    const DESCRIPTION: &'static str = "Parses every graph6 string, checks its order and family (connected; tree: \
connected with n - 1 edges), computes its own canonical form (colour refinement and individualization, twins pruned) \
and rejects any two with the same form. The number of graphs must equal the number of classes from Burnside's lemma \
(all graphs), its inverse Euler transform (connected graphs) or Otter's formula (trees). Orders up to 9 for all and \
connected graphs, 16 for trees; larger orders are UNSUPPORTED.";
    const TAGS: &'static [&'static str] =
        &["graph", "enumeration", "isomorphism", "canonical_form", "burnside", "verification", "checker"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["graph-enumeration/1"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("enumeration", SCHEMA)];
    type Input = VerifyInput;

    fn recipes() -> Vec<Recipe<VerifyInput>> {
        vec![
            Recipe::new("the 21 connected graphs on five vertices, each once up to isomorphism")
                .step("graph.enumerate.nonisomorphic", json!({"order": 5, "family": "connected"}))
                .then(VerifyInput { enumeration: artifact_of(0, "enumeration") }),
        ]
    }

    fn check(input: VerifyInput) -> Result<Verdict, Refusal> {
        let envelope = read_input_artifact("enumeration", &input.enumeration, SCHEMA)?;
        let lineage = envelope.lineage.clone();
        let listed: Enumeration =
            serde_json::from_value(envelope.content).map_err(|e| Refusal::at("enumeration", e.to_string()))?;
        let (n, family) = (listed.order, listed.family.as_str());
        let claim = json!({
            "statement": "the listed graphs are every isomorphism class of the family on this many vertices, each once",
            "family": family, "order": n, "count": listed.count,
        });
        let semantics = json!({
            "graph": "simple, undirected, unlabeled (up to isomorphism)",
            "connected": "one component", "tree": "connected with n - 1 edges",
            "encoding": "graph6",
        });
        let candidate = json!({"enumeration": input.enumeration, "lineage": lineage});
        let about = Judged { claim, semantics, candidate };
        if listed.format != "graph-enumeration/1" {
            return Err(Refusal::at("enumeration.format", format!("unknown format {:?}", listed.format)));
        }
        let Some(kind) = Family::named(family) else {
            return Err(Refusal::at("enumeration.family", format!("unknown family {family:?}")));
        };
        let scope = Scope::exhaustive(format!("every isomorphism class of {family} graphs on {n} vertices"));
        match judge(kind, n, listed.count, &listed.graphs) {
            Judgement::Unsupported(reason) => {
                let partial = Scope::partial(format!("{reason}; nothing was checked"));
                Ok(about.verdict(VerdictKind::Unsupported, reason, Vec::new(), partial))
            }
            Judgement::Rejected(reason) => Ok(about.verdict(VerdictKind::Rejected, reason, Vec::new(), scope)),
            Judgement::Accepted { classes, formula } => Ok(about.verdict(
                VerdictKind::Accepted,
                format!("all {classes} isomorphism classes are listed, each once"),
                vec![
                    format!("{} graph6 strings parse as {family} graphs on {n} vertices", listed.graphs.len()),
                    "no two share a canonical form (recomputed here), so they are pairwise non-isomorphic".into(),
                    format!("{formula} gives {classes} classes, the number listed"),
                ],
                scope,
            )),
        }
    }
}

export_checkers!(NonisomorphicEnumeration);
