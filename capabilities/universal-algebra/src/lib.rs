//! `universal_algebra.search.countermodel`: find a finite magma that satisfies
//! hypothesis laws and violates a target law, by exhaustive backtracking over
//! Cayley tables in lexicographic order.

use jacobian_guest::{Capability, Check, Produced, Qualifier, Refusal, Scope, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use jacobian_universal_algebra_core::laws::{self, Law};
use jacobian_universal_algebra_core::search::{self, Countermodel};

/// Schema of the countermodel artifact (read by the independent checker).
pub const COUNTERMODEL_SCHEMA: &str = "jacobian:universal_algebra/countermodel@1";
/// The independent witness check of a countermodel.
const WITNESS_CHECK: Check = Check {
    role: "universal_algebra.countermodel.witness",
    verifier: "universal_algebra.countermodel.verify",
    formats: &["cayley-table-witness/1"],
};
const MAX_ORDER: u8 = 8;

/// A search for a finite magma satisfying every hypothesis and violating the target.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// Laws every countermodel must satisfy: a name (associative, commutative,
    /// idempotent, left_alternative, right_alternative, flexible, has_identity,
    /// quasigroup) or an equation over `*` such as "x*(y*z) = (x*y)*z".
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub hypotheses: Vec<String>,
    /// The law the countermodel must violate (same syntax).
    pub target: String,
    /// Smallest order tried.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 8))]
    pub min_order: u8,
    /// Largest order tried (at most 8).
    #[schemars(range(min = 1, max = 8))]
    pub max_order: u8,
    /// Search nodes allowed before the search stops with a partial scope.
    #[serde(default = "default_nodes")]
    #[schemars(range(min = 1, max = 50_000_000))]
    pub max_nodes: u64,
}

fn one() -> u8 {
    1
}

fn default_nodes() -> u64 {
    2_000_000
}

/// What the search found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchOutput {
    /// Whether a countermodel was found.
    pub found: bool,
    /// Its order.
    pub order: Option<u8>,
    /// Its Cayley table: `table[a][b] = a*b` on `{0, ..., order-1}`.
    pub table: Option<Vec<Vec<u8>>>,
    /// Where the target fails in it.
    pub witness: Option<serde_json::Value>,
    /// Orders whose every magma was examined without finding a countermodel.
    pub orders_exhausted: Vec<u8>,
    /// Whether `max_nodes` ran out before the search finished.
    pub budget_exhausted: bool,
    /// Search nodes visited.
    pub nodes: u64,
}

/// The countermodel artifact: the claim it refutes and the candidate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CountermodelArtifact {
    format: String,
    claim: Claim,
    order: u8,
    table: Vec<Vec<u8>>,
    witness: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Claim {
    statement: String,
    hypotheses: Vec<String>,
    target: String,
    semantics: String,
}

const SEMANTICS: &str = "a magma of order n is {0,...,n-1} with the binary operation a*b = table[a][b]; \
an equation holds when it holds for every assignment of its variables";

pub struct SearchCountermodel;

impl Capability for SearchCountermodel {
    const ID: &'static str = "universal_algebra.search.countermodel";
    const TITLE: &'static str = "Find a finite countermodel (magma) to a law";
    const OUTCOME: &'static str = "a finite magma satisfying the hypothesis laws and violating the target law, with its Cayley table and a witness";
    const DESCRIPTION: &'static str = "Searches all magmas of each order from min_order to max_order (at most 8) in \
lexicographic table order, pruning partial tables that already violate a hypothesis. Returns the first countermodel \
found with a witness tuple, or reports every order it exhausted. Finite evidence only: a countermodel refutes the \
implication; exhausting orders up to max_order says nothing about larger orders. Assurance COMPUTED; check the \
countermodel with universal_algebra.countermodel.verify.";
    const TAGS: &'static [&'static str] = &[
        "universal_algebra",
        "magma",
        "counterexample",
        "countermodel",
        "cayley_table",
        "associativity",
        "commutativity",
        "finite_model",
    ];
    const CHECKS: &'static [Check] = &[WITNESS_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[COUNTERMODEL_SCHEMA];

    type Input = SearchInput;
    type Output = SearchOutput;

    fn examples() -> Vec<(&'static str, SearchInput)> {
        vec![(
            "a commutative magma that is not associative",
            SearchInput {
                hypotheses: vec!["commutative".into()],
                target: "associative".into(),
                min_order: 1,
                max_order: 3,
                max_nodes: default_nodes(),
            },
        )]
    }

    fn run(input: SearchInput) -> Result<Produced<SearchOutput>, Refusal> {
        let hypotheses = input
            .hypotheses
            .iter()
            .enumerate()
            .map(|(i, h)| laws::parse(h).map_err(|e| Refusal::at(format!("hypotheses.{i}"), e)))
            .collect::<Result<Vec<_>, _>>()?;
        let target = laws::parse(&input.target).map_err(|e| Refusal::at("target", e))?;
        if input.max_order > MAX_ORDER {
            return Err(Refusal::at("max_order", format!("must be at most {MAX_ORDER}")));
        }
        if input.min_order == 0 || input.min_order > input.max_order {
            return Err(Refusal::at("min_order", "must be between 1 and max_order"));
        }
        Ok(search(&input, &hypotheses, &target))
    }
}

fn search(input: &SearchInput, hypotheses: &[Law], target: &Law) -> Produced<SearchOutput> {
    let outcome = search::find(hypotheses, target, input.min_order, input.max_order, input.max_nodes);
    let mut output = SearchOutput {
        found: false,
        order: None,
        table: None,
        witness: None,
        orders_exhausted: outcome.orders_exhausted,
        budget_exhausted: outcome.budget_exhausted,
        nodes: outcome.nodes,
    };
    let implication = format!("every magma satisfying [{}] satisfies {}", input.hypotheses.join(", "), input.target);
    if let Some(Countermodel { order, table, witness }) = outcome.found {
        let artifact = CountermodelArtifact {
            format: "cayley-table-witness/1".into(),
            claim: Claim {
                statement: implication.clone(),
                hypotheses: input.hypotheses.clone(),
                target: input.target.clone(),
                semantics: SEMANTICS.into(),
            },
            order,
            table: table.clone(),
            witness: witness.clone(),
        };
        output.found = true;
        output.order = Some(order);
        output.table = Some(table);
        output.witness = Some(witness);
        let earlier = if order > input.min_order {
            format!("; every magma of order {}..{} was examined first", input.min_order, order - 1)
        } else {
            String::new()
        };
        let scope = Scope::witness_only(format!("refutes \"{implication}\" by one magma of order {order}{earlier}"));
        return Produced::computed(output, scope)
            .qualifiers(&[Qualifier::Exact, Qualifier::Bounded, Qualifier::Deterministic])
            .artifact("countermodel", COUNTERMODEL_SCHEMA, &artifact)
            .obligation(
                "independent check that the table satisfies every hypothesis and violates the target at the witness",
            )
            .verify_with(WITNESS_CHECK.route("cayley-table-witness/1", "countermodel"));
    }
    if output.budget_exhausted {
        let at = output.orders_exhausted.last().map_or(input.min_order, |o| o + 1);
        let scope = Scope::partial(format!(
            "the node budget ({}) ran out at order {at}; no countermodel among the tables examined; \
             orders {:?} were exhausted",
            input.max_nodes, output.orders_exhausted
        ));
        return Produced::computed(output, scope).qualifiers(&[Qualifier::Bounded, Qualifier::Deterministic]);
    }
    let scope = Scope::exhaustive(format!(
        "no magma of order {}..{} satisfies every hypothesis while violating the target; \
         this is bounded evidence for \"{implication}\", not a proof for all orders",
        input.min_order, input.max_order
    ));
    Produced::computed(output, scope).qualifiers(&[
        Qualifier::Exact,
        Qualifier::Bounded,
        Qualifier::Exhaustive,
        Qualifier::Deterministic,
    ])
}

export_capabilities!(SearchCountermodel);
