//! `universal_algebra.enumerate.models`: every magma of one order satisfying
//! given laws, once per isomorphism class (or per class up to isomorphism and
//! anti-isomorphism), by the core's propagating search run to the end and
//! canonical forms (`enumerate`).

use jacobian_guest::{Capability, Check, Produced, Qualifier, Refusal, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use jacobian_universal_algebra_core::enumerate::{self, Enumeration, Limit, UpTo};
use jacobian_universal_algebra_core::laws::{self, Law, Table};

use crate::{default_nodes, default_work, parse_hypotheses, within_max_work};

/// Schema of the listing artifact (read by the independent checker).
pub const MODELS_SCHEMA: &str = "jacobian:universal_algebra/models@1";
/// The independent check that a listing holds every class once.
const MODELS_CHECK: Check = Check {
    role: "universal_algebra.models.complete",
    verifier: "universal_algebra.models.verify",
    formats: &["magma-models/1"],
};
/// Tables shown in the output itself; the artifact holds them all.
const SHOWN: usize = 32;

/// Which tables count as one model.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UpToName {
    /// Relabelling the elements.
    #[default]
    Isomorphism,
    /// Relabelling, or reading `a*b` as `b*a` (the laws' opposite models must be models too).
    IsomorphismOrAnti,
}

/// The models to enumerate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnumerateInput {
    /// Laws every model satisfies (same syntax as the countermodel search's
    /// hypotheses); none for every magma.
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub hypotheses: Vec<String>,
    /// Number of elements.
    #[schemars(range(min = 1, max = 6))]
    pub order: u8,
    /// `isomorphism` (default) or `isomorphism_or_anti`.
    #[serde(default)]
    pub up_to: UpToName,
    /// Decisions allowed before the enumeration stops with a partial scope.
    #[serde(default = "default_nodes")]
    #[schemars(range(min = 1, max = 1_000_000_000))]
    pub max_nodes: u64,
    /// Work units allowed (as for the countermodel search, plus one per cell
    /// of every relabelling tried for canonical forms); the largest value fits
    /// in the default fuel budget.
    #[serde(default = "default_work")]
    #[schemars(range(min = 1, max = 500_000_000))]
    pub max_work: u64,
}

/// What the enumeration found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EnumerateOutput {
    pub order: u8,
    pub up_to: UpToName,
    /// Classes found (all of them when `complete`).
    pub count: usize,
    /// Whether the enumeration ran to the end.
    pub complete: bool,
    /// The first 32 canonical tables, `table[a][b] = a*b`; the artifact lists all.
    pub models: Vec<Vec<Vec<u8>>>,
    /// Which budget ended it early: `max_nodes` or `max_work`.
    pub stop_reason: Option<String>,
    /// Decisions made.
    pub nodes: u64,
    /// Work units spent.
    pub work: u64,
}

/// The listing artifact: the laws, the order, and one row-major digit string per class.
#[derive(Serialize)]
struct Listing<'a> {
    format: &'static str,
    claim: Claim<'a>,
    count: usize,
    models: &'a [String],
}

#[derive(Serialize)]
struct Claim<'a> {
    statement: String,
    hypotheses: &'a [String],
    order: u8,
    up_to: UpToName,
    semantics: &'static str,
}

const SEMANTICS: &str = "a magma of order n is {0,...,n-1} with a*b = the digit at position a*n+b of the row-major \
string; it is a model when every hypothesis holds for every assignment of its variables; two models are one class \
when a relabelling of the elements (or, up to anti-isomorphism, also reading a*b as b*a) turns one into the other";

pub struct EnumerateModels;

impl Capability for EnumerateModels {
    const ID: &'static str = "universal_algebra.enumerate.models";
    const TITLE: &'static str = "Enumerate the magmas of order n satisfying laws, up to isomorphism";
    const OUTCOME: &'static str =
        "one canonical Cayley table per isomorphism class of the models of the laws on n elements, with their number";
    const DESCRIPTION: &'static str = "Runs the countermodel search's propagating engine (most-constrained cell first, \
ground instances propagated, least number heuristic) to the end at one order (1..=6), reduces every table found to its \
canonical form (the least relabelling, of the table or its opposite when up_to is isomorphism_or_anti) and keeps each \
once. With no hypotheses it counts all magmas (OEIS A001329), with commutative A001425, with associative A027851's \
values, with associative and commutative A001426. Budgets as for the search (max_nodes, max_work; about 60-90 fuel a \
unit; semigroups of order 5 take 3.8*10^8 units). A complete listing is an artifact for \
universal_algebra.models.verify, which recomputes canonical forms and stabilizers with its own code and recounts the \
labelled models independently.";
    const TAGS: &'static [&'static str] = &[
        "universal_algebra",
        "magma",
        "semigroup",
        "enumeration",
        "isomorphism",
        "canonical_form",
        "cayley_table",
        "finite_model",
    ];
    const CHECKS: &'static [Check] = &[MODELS_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[MODELS_SCHEMA];

    type Input = EnumerateInput;
    type Output = EnumerateOutput;

    fn examples() -> Vec<(&'static str, EnumerateInput)> {
        vec![(
            "the 12 commutative semigroups of order 3",
            EnumerateInput {
                hypotheses: vec!["associative".into(), "commutative".into()],
                order: 3,
                up_to: UpToName::Isomorphism,
                max_nodes: default_nodes(),
                max_work: default_work(),
            },
        )]
    }

    fn run(input: EnumerateInput) -> Result<Produced<EnumerateOutput>, Refusal> {
        let hypotheses = parse_hypotheses(&input.hypotheses)?;
        if input.order == 0 || input.order > enumerate::MAX_ORDER {
            return Err(Refusal::at("order", format!("must be between 1 and {}", enumerate::MAX_ORDER)));
        }
        within_max_work(input.max_work)?;
        let up_to = match input.up_to {
            UpToName::Isomorphism => UpTo::Isomorphism,
            UpToName::IsomorphismOrAnti => UpTo::IsomorphismOrAnti,
        };
        let found = enumerate::models(&hypotheses, input.order, up_to, input.max_nodes, input.max_work);
        if up_to == UpTo::IsomorphismOrAnti {
            opposites_are_models(&input, &hypotheses, &found)?;
        }
        Ok(produce(&input, found))
    }
}

/// Up to anti-isomorphism, a class holds a model and its opposite: both must satisfy the laws.
fn opposites_are_models(input: &EnumerateInput, hypotheses: &[Law], found: &Enumeration) -> Result<(), Refusal> {
    let n = usize::from(input.order);
    for model in &found.models {
        let opposite: Vec<u8> = (0..n * n).map(|i| model[(i % n) * n + i / n]).collect();
        for cells in [model, &opposite] {
            let table = Table { n, cells: cells.iter().copied().map(Some).collect() };
            if let Some((i, _)) = hypotheses.iter().enumerate().find(|(_, law)| laws::violation(law, &table).is_some())
            {
                return Err(Refusal::at(
                    "up_to",
                    format!(
                        "isomorphism_or_anti needs laws whose models' opposites are models, but the opposite of a \
                         model violates hypotheses.{i} ({})",
                        input.hypotheses[i]
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn produce(input: &EnumerateInput, found: Enumeration) -> Produced<EnumerateOutput> {
    let n = usize::from(input.order);
    let rows = |cells: &Vec<u8>| cells.chunks(n).map(<[u8]>::to_vec).collect::<Vec<_>>();
    let output = EnumerateOutput {
        order: input.order,
        up_to: input.up_to,
        count: found.models.len(),
        complete: found.stopped.is_none(),
        models: found.models.iter().take(SHOWN).map(rows).collect(),
        stop_reason: found.stopped.map(|limit| {
            match limit {
                Limit::Nodes => "max_nodes",
                Limit::Work => "max_work",
            }
            .to_owned()
        }),
        nodes: found.nodes,
        work: found.work,
    };
    let laws = if input.hypotheses.is_empty() { "no laws".to_owned() } else { input.hypotheses.join(", ") };
    let classes = match input.up_to {
        UpToName::Isomorphism => "isomorphism",
        UpToName::IsomorphismOrAnti => "isomorphism and anti-isomorphism",
    };
    let statement = format!("the magmas of order {n} satisfying [{laws}], one per class up to {classes}");
    if let Some(limit) = found.stopped {
        let budget = match limit {
            Limit::Nodes => format!("max_nodes = {}", input.max_nodes),
            Limit::Work => format!("max_work = {}", input.max_work),
        };
        let scope = Scope::partial(format!(
            "the budget ({budget}) ran out: {} classes of {statement} were found, others may exist",
            output.count
        ));
        return Produced::computed(output, scope).qualifiers(&[Qualifier::Bounded, Qualifier::Deterministic]);
    }
    let digits: Vec<String> =
        found.models.iter().map(|cells| cells.iter().map(|&v| char::from(b'0' + v)).collect()).collect();
    let listing = Listing {
        format: "magma-models/1",
        claim: Claim {
            statement: statement.clone(),
            hypotheses: &input.hypotheses,
            order: input.order,
            up_to: input.up_to,
            semantics: SEMANTICS,
        },
        count: digits.len(),
        models: &digits,
    };
    let scope = Scope::exhaustive(format!("every class of {statement}: {} in all", output.count));
    Produced::computed(output, scope)
        .qualifiers(&[Qualifier::Exact, Qualifier::Exhaustive, Qualifier::Deterministic])
        .artifact("models", MODELS_SCHEMA, &listing)
        .obligation("an independent check that the tables are models, pairwise in different classes, and every class")
        .verify_with(MODELS_CHECK.route("magma-models/1", "models"))
}
