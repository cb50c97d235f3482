//! Claims as formal propositional structures: `claim.proposition.construct`
//! parses a formula in a declared syntax into the registered v1
//! PROPOSITIONAL_STRUCTURE artifact; `claim.conjunction.split` and
//! `claim.implication.obligations` return only the root's immediate, ordered
//! subtrees with source-bound reconstruction data. Grouping is preserved:
//! `p ∧ q ∧ r` has three conjuncts, `(p ∧ q) ∧ r` has two. Nothing here proves
//! anything (assurance COMPUTED).

use jacobian_guest::{
    Capability, InputKind, Produced, Qualifier, Recipe, Refusal, Scope, artifact_of, export_capabilities,
    read_input_artifact,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use jacobian_claim_core::syntax::{Node, OUTSIDE, SYNTAX, collect_atoms, parse, rebase, slice};

const SCHEMA: &str = "jacobian:claim/propositional-structure@1";

/// A formula in the declared syntax.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConstructInput {
    /// The formula: atoms (identifiers), true/false/⊤/⊥, ¬ (not, ~, !), ∧ (and, &), ∨ (or, |), → (implies, ->),
    /// ↔ (iff, <->) and parentheses; → associates to the right.
    #[schemars(length(min = 1, max = 16384))]
    pub formula: String,
}

/// The stored structure's summary.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConstructOutput {
    /// The root's operator (AND, OR, NOT, IMPLIES, IFF, ATOM, TRUE, FALSE).
    pub root: String,
    /// Distinct atoms, in order of first appearance.
    pub atoms: Vec<String>,
}

pub struct ConstructProposition;

impl Capability for ConstructProposition {
    const ID: &'static str = "claim.proposition.construct";
    const TITLE: &'static str = "Build a propositional structure from a formula";
    const OUTCOME: &'static str =
        "the registered v1 PROPOSITIONAL_STRUCTURE artifact of a formula in the declared propositional syntax";
    const DESCRIPTION: &'static str = "Parses a formula of the declared syntax (atoms, ¬ ∧ ∨ → ↔, parentheses) into a \
tree with character spans into the source. Chains of one operator without parentheses form one node; parentheses \
are kept as grouping. Raw natural language and printed Lean expressions are refused.";
    const TAGS: &'static [&'static str] =
        &["claim", "proposition", "formula", "logic", "construct", "propositional_structure"];
    const INPUT_KIND: InputKind = InputKind::FormalProposition;
    const ARTIFACT_TYPES: &'static [&'static str] = &[SCHEMA];
    type Input = ConstructInput;
    type Output = ConstructOutput;

    fn examples() -> Vec<(&'static str, ConstructInput)> {
        vec![("a conjunction with a grouped implication", ConstructInput { formula: "p ∧ (q → r)".into() })]
    }

    fn run(input: ConstructInput) -> Result<Produced<ConstructOutput>, Refusal> {
        let root = parse(&input.formula).map_err(|e| Refusal::at("formula", e))?;
        let mut atoms = Vec::new();
        collect_atoms(&root, &mut atoms);
        let output = ConstructOutput { root: root.kind.clone(), atoms };
        let content = json!({"syntax": SYNTAX, "source": input.formula, "root": root});
        Ok(Produced::computed(output, Scope::exhaustive("exactly the supplied formula text"))
            .qualifiers(&[Qualifier::Exact, Qualifier::Deterministic])
            .artifact("proposition", SCHEMA, &content))
    }
}

/// A stored proposition.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimInput {
    /// URI of a `jacobian:claim/propositional-structure@1` artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub claim: String,
}

/// The immediate subtrees and how to put them back together.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PartsOutput {
    /// The root operator split.
    pub operator: String,
    /// The immediate subtrees in source order: role, text, span, and the URI of each as its own structure.
    pub parts: Vec<Value>,
    /// Source-bound reconstruction: concatenating `pieces` (literal text and part references) gives the source exactly.
    pub reconstruction: Value,
}

fn read_claim(uri: &str) -> Result<(String, Node), Refusal> {
    let envelope = read_input_artifact("claim", uri, SCHEMA)
        .map_err(|r| Refusal::at("claim", format!("{}; {OUTSIDE}", r.message)))?;
    let source = envelope.content["source"].as_str().unwrap_or_default().to_owned();
    let root: Node =
        serde_json::from_value(envelope.content["root"].clone()).map_err(|e| Refusal::at("claim", e.to_string()))?;
    Ok((source, root))
}

fn parts(source: &str, root: &Node, roles: &[&str], capability: &str) -> Produced<PartsOutput> {
    let mut produced_parts = Vec::new();
    let mut pieces = Vec::new();
    let mut cursor = 0;
    let mut artifacts = Vec::new();
    for (i, child) in root.children.iter().enumerate() {
        if child.span[0] > cursor {
            pieces.push(json!({"text": slice(source, [cursor, child.span[0]])}));
        }
        pieces.push(json!({"part": i}));
        cursor = child.span[1];
        let text = slice(source, child.span);
        let role = roles.get(i).copied().unwrap_or(roles[roles.len() - 1]);
        produced_parts.push(json!({"index": i, "role": role, "text": text, "span": child.span, "kind": child.kind, "parenthesized": child.parenthesized}));
        artifacts.push((
            format!("part-{i}"),
            json!({"syntax": SYNTAX, "source": text, "root": rebase(child, child.span[0])}),
        ));
    }
    if cursor < source.chars().count() {
        pieces.push(json!({"text": slice(source, [cursor, source.chars().count()])}));
    }
    let output = PartsOutput {
        operator: root.kind.clone(),
        parts: produced_parts,
        reconstruction: json!({"source_chars": source.chars().count(), "pieces": pieces}),
    };
    let scope = Scope::exhaustive(format!(
        "a syntactic decomposition of exactly this formula by {capability}; nothing is proved"
    ));
    let mut produced = Produced::computed(output, scope).qualifiers(&[Qualifier::Exact, Qualifier::Deterministic]);
    for (role, content) in artifacts {
        produced = produced.artifact(&role, SCHEMA, &content);
    }
    produced
}

pub struct SplitConjunction;

impl Capability for SplitConjunction {
    const ID: &'static str = "claim.conjunction.split";
    const TITLE: &'static str = "Split a conjunction into its immediate conjuncts";
    const OUTCOME: &'static str =
        "the root conjunction's immediate, ordered conjuncts with source-bound reconstruction data";
    const DESCRIPTION: &'static str = "For a PROPOSITIONAL_STRUCTURE whose root is ∧, returns only the immediate \
conjuncts in source order (grouping preserved: (p ∧ q) ∧ r gives two), each also as its own structure artifact, and \
the pieces that reconstruct the source exactly. A syntactic step: assurance COMPUTED, never proof verification.";
    const TAGS: &'static [&'static str] =
        &["claim", "conjunction", "split", "decomposition", "propositional_structure"];
    const INPUT_KIND: InputKind = InputKind::TypedArtifact;
    const ARTIFACT_TYPES: &'static [&'static str] = &[SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("claim", SCHEMA)];
    type Input = ClaimInput;
    type Output = PartsOutput;

    fn recipes() -> Vec<Recipe<ClaimInput>> {
        vec![
            Recipe::new("p ∧ (q → r) has two conjuncts, the second an implication")
                .step(ConstructProposition::ID, ConstructInput { formula: "p ∧ (q → r)".into() })
                .then(ClaimInput { claim: artifact_of(0, "proposition") }),
        ]
    }

    fn run(input: ClaimInput) -> Result<Produced<PartsOutput>, Refusal> {
        let (source, root) = read_claim(&input.claim)?;
        if root.kind != "AND" {
            return Err(Refusal::at("claim", format!("the root is {}, not a conjunction", root.kind)));
        }
        Ok(parts(&source, &root, &["conjunct"], Self::ID))
    }
}

pub struct ImplicationObligations;

impl Capability for ImplicationObligations {
    const ID: &'static str = "claim.implication.obligations";
    const TITLE: &'static str = "The obligations of an implication";
    const OUTCOME: &'static str = "the root implication's antecedent (to assume) and consequent (to prove), with source-bound reconstruction data";
    const DESCRIPTION: &'static str = "For a PROPOSITIONAL_STRUCTURE whose root is →, returns its two immediate \
subtrees in order — the antecedent, which may be assumed, and the consequent, which is the obligation — each as its \
own structure artifact, with the pieces that reconstruct the source. Syntactic only: assurance COMPUTED.";
    const TAGS: &'static [&'static str] =
        &["claim", "implication", "obligations", "decomposition", "propositional_structure"];
    const INPUT_KIND: InputKind = InputKind::TypedArtifact;
    const ARTIFACT_TYPES: &'static [&'static str] = &[SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("claim", SCHEMA)];
    type Input = ClaimInput;
    type Output = PartsOutput;

    fn recipes() -> Vec<Recipe<ClaimInput>> {
        vec![
            Recipe::new("the second conjunct of p ∧ (q → r): assume q, prove r")
                .step(ConstructProposition::ID, ConstructInput { formula: "p ∧ (q → r)".into() })
                .step(SplitConjunction::ID, ClaimInput { claim: artifact_of(0, "proposition") })
                .then(ClaimInput { claim: artifact_of(1, "part-1") }),
        ]
    }

    fn run(input: ClaimInput) -> Result<Produced<PartsOutput>, Refusal> {
        let (source, root) = read_claim(&input.claim)?;
        if root.kind != "IMPLIES" {
            return Err(Refusal::at("claim", format!("the root is {}, not an implication", root.kind)));
        }
        Ok(parts(&source, &root, &["antecedent", "consequent"], Self::ID)
            .obligation("prove the consequent under the antecedent as a hypothesis"))
    }
}

export_capabilities!(ConstructProposition, SplitConjunction, ImplicationObligations);
