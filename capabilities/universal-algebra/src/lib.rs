//! `universal_algebra.search.countermodel`: find a finite magma that satisfies
//! hypothesis laws and violates a target law, among the affine magmas of
//! each order (the core's `affine`) and by a propagating search over Cayley
//! tables in the style of Mace4 (the core's `engine`); and
//! `universal_algebra.enumerate.models` (`models`): every model of laws at one
//! order, up to isomorphism.

mod models;

pub use models::{EnumerateInput, EnumerateModels, EnumerateOutput};

use jacobian_guest::{Capability, Check, Produced, Qualifier, Refusal, Scope, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use jacobian_universal_algebra_core::laws::{self, Law};
use jacobian_universal_algebra_core::search::{self, Budget, Countermodel, Stop};

/// Schema of the countermodel artifact (read by the independent checker).
pub const COUNTERMODEL_SCHEMA: &str = "jacobian:universal_algebra/countermodel@1";
/// The independent witness check of a countermodel.
const WITNESS_CHECK: Check = Check {
    role: "universal_algebra.countermodel.witness",
    verifier: "universal_algebra.countermodel.verify",
    formats: &["cayley-table-witness/1"],
};
const MAX_ORDER: u8 = 16;
/// The largest `max_work`: at the most fuel a work unit was measured to cost
/// (62-86, tests/it/countermodels.rs), it needs under two thirds of the
/// default fuel budget, so the search's own budget speaks before fuel runs out.
pub const MAX_WORK: u64 = 500_000_000;

/// A search for a finite magma satisfying every hypothesis and violating the target.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// Laws every countermodel must satisfy: a name (associative, commutative,
    /// idempotent, left_alternative, right_alternative, flexible, has_identity,
    /// quasigroup) or an equation over `*` such as "x*(y*z) = (x*y)*z" (at most
    /// 6 variables, parentheses nested at most 32 deep, 256 products a side).
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub hypotheses: Vec<String>,
    /// The law the countermodel must violate (same syntax).
    pub target: String,
    /// Smallest order tried.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 16))]
    pub min_order: u8,
    /// Largest order tried (at most 16).
    #[schemars(range(min = 1, max = 16))]
    pub max_order: u8,
    /// Decisions (cells given a value by choice) allowed before the search
    /// stops with a partial scope.
    #[serde(default = "default_nodes")]
    #[schemars(range(min = 1, max = 1_000_000_000))]
    pub max_nodes: u64,
    /// Work units allowed before the search stops with a partial scope: one
    /// per cell scanned when choosing, per term symbol evaluated (and a few
    /// per instance evaluation). A unit costs about 55-70 fuel (the default,
    /// 10^8, runs in about 0.4 s on a 2-core machine); the largest value
    /// fits in the default fuel budget. A sixteenth of it is held back from
    /// the search for the affine magmas of the orders after one a budget
    /// stopped the search in.
    #[serde(default = "default_work")]
    #[schemars(range(min = 1, max = 500_000_000))]
    pub max_work: u64,
}

fn one() -> u8 {
    1
}

/// The hypothesis laws, or a refusal naming the first that does not parse.
pub(crate) fn parse_hypotheses(texts: &[String]) -> Result<Vec<Law>, Refusal> {
    texts
        .iter()
        .enumerate()
        .map(|(i, h)| laws::parse(h).map_err(|e| Refusal::at(format!("hypotheses.{i}"), e)))
        .collect()
}

/// Refuse a `max_work` above [`MAX_WORK`].
pub(crate) fn within_max_work(max_work: u64) -> Result<(), Refusal> {
    if max_work > MAX_WORK {
        return Err(Refusal::at("max_work", format!("must be at most {MAX_WORK}")));
    }
    Ok(())
}

pub(crate) fn default_nodes() -> u64 {
    100_000_000
}

pub(crate) fn default_work() -> u64 {
    100_000_000
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
    /// How it was found: `search`, or the affine rule that made it
    /// (`x*y = a·x + b·y + c over R`, tried at each order before the search
    /// and, after a budget stopped the search, at the orders left).
    pub found_by: Option<String>,
    /// Orders whose every magma was examined without finding a countermodel.
    pub orders_exhausted: Vec<u8>,
    /// Whether a budget (`max_nodes`, `max_work`, or the ground instances one
    /// order may hold) ended the search before it finished.
    pub budget_exhausted: bool,
    /// The order the search was in when a budget ended it.
    pub stopped_at_order: Option<u8>,
    /// Which budget ended it: `max_nodes`, `max_work` or `instances`.
    pub stop_reason: Option<String>,
    /// Decisions made.
    pub nodes: u64,
    /// Work units spent.
    pub work: u64,
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
    const DESCRIPTION: &'static str = "Searches the magmas of each order from min_order to max_order (at most 16): \
first the affine magmas x*y = a*x + b*y + c over Z_n (and the fields of order 4, 8, 9, 16), judged by linear forms \
(one pass over the terms per a, b), then every magma in the style of Mace4: cells are assigned most-constrained first, every assignment is propagated through the ground \
instances of the laws (forcing cells and removing values), rows or columns a law makes permutations (x = y*t, say) \
are kept as a quasigroup's, and the least number heuristic skips isomorphic copies. \
Returns the first countermodel found with a witness tuple, or reports every order it exhausted. Two budgets: \
max_nodes (decisions) and max_work (about 55-70 fuel a unit, so the default 10^8 is about 0.4 s; the largest \
allowed fits the default fuel, so the search stops on its own budget and reports the orders exhausted and the order \
it was in; a sixteenth of max_work is held back from the search for the affine magmas of the orders after that one, \
and a model found there is reported with the orders in between not exhausted). found_by says which found the model. An order needing more than \
2,097,152 ground instances (order^variables summed over the hypotheses) stops the search there. Finite evidence \
only: a countermodel refutes the implication; exhausting orders up to max_order says nothing about larger orders. \
Assurance COMPUTED; check the countermodel with universal_algebra.countermodel.verify.";
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
                max_work: default_work(),
            },
        )]
    }

    fn run(input: SearchInput) -> Result<Produced<SearchOutput>, Refusal> {
        let hypotheses = parse_hypotheses(&input.hypotheses)?;
        let target = laws::parse(&input.target).map_err(|e| Refusal::at("target", e))?;
        within_max_work(input.max_work)?;
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
    let budget = Budget { max_nodes: input.max_nodes, max_work: input.max_work };
    let outcome = search::find(hypotheses, target, input.min_order, input.max_order, budget);
    let mut output = SearchOutput {
        found: false,
        order: None,
        table: None,
        witness: None,
        found_by: None,
        orders_exhausted: outcome.orders_exhausted,
        budget_exhausted: outcome.stopped.is_some(),
        stopped_at_order: outcome.stopped.map(|(order, _)| order),
        stop_reason: None,
        nodes: outcome.nodes,
        work: outcome.work,
    };
    let implication = format!("every magma satisfying [{}] satisfies {}", input.hypotheses.join(", "), input.target);
    let why = outcome.stopped.map(|(at, stop)| (at, stop, stopped_because(input, stop)));
    if let Some(Countermodel { order, table, witness, affine }) = outcome.found {
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
        let made = affine.as_ref().map_or(String::new(), |rule| format!(" (the affine magma {rule})"));
        output.found_by = Some(affine.map_or_else(|| "search".to_owned(), |rule| format!("affine: {rule}")));
        let earlier = match &why {
            Some((at, stop, why)) => {
                output.stop_reason = Some(stop_name(*stop).to_owned());
                format!(
                    "; {why} at order {at}, so orders {at}..{} were not exhausted and a smaller countermodel may exist",
                    order - 1
                )
            }
            None if order > input.min_order => {
                format!("; every magma of order {}..{} was examined first", input.min_order, order - 1)
            }
            None => String::new(),
        };
        let scope =
            Scope::witness_only(format!("refutes \"{implication}\" by one magma of order {order}{made}{earlier}"));
        return Produced::computed(output, scope)
            .qualifiers(&[Qualifier::Exact, Qualifier::Bounded, Qualifier::Deterministic])
            .artifact("countermodel", COUNTERMODEL_SCHEMA, &artifact)
            .obligation(
                "independent check that the table satisfies every hypothesis and violates the target at the witness",
            )
            .verify_with(WITNESS_CHECK.route("cayley-table-witness/1", "countermodel"));
    }
    if let Some((at, stop, why)) = why {
        output.stop_reason = Some(stop_name(stop).to_owned());
        let affine = match (outcome.affine_after_stop.first(), outcome.affine_after_stop.last()) {
            (Some(first), Some(last)) => format!(" (nor among the affine magmas of orders {first}..{last})"),
            _ => String::new(),
        };
        let scope = Scope::partial(format!(
            "{why} at order {at}; no countermodel among the tables examined{affine}; orders {:?} were exhausted",
            output.orders_exhausted
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

/// Why a budget stopped the search, in words.
fn stopped_because(input: &SearchInput, stop: Stop) -> String {
    match stop {
        Stop::Nodes => format!("the decision budget (max_nodes = {}) ran out", input.max_nodes),
        Stop::Work => format!("the work budget (max_work = {}) ran out", input.max_work),
        Stop::Instances(needed) => {
            format!(
                "this order needs {needed} ground instances, more than the {} one search holds",
                search::MAX_INSTANCES
            )
        }
    }
}

/// The budget's name in `stop_reason`.
fn stop_name(stop: Stop) -> &'static str {
    match stop {
        Stop::Nodes => "max_nodes",
        Stop::Work => "max_work",
        Stop::Instances(_) => "instances",
    }
}

export_capabilities!(SearchCountermodel, EnumerateModels);
