//! `polynomial.compute.groebner_basis`: the reduced Gröbner basis of an ideal
//! of ℚ[vars] under lex, grlex or grevlex, in exact arithmetic, with a
//! certificate that an independent checker verifies by polynomial arithmetic.
//! The mathematics is `jacobian-polynomial-core`; this crate validates the
//! request and shapes the answer and its certificate.

use jacobian_guest::{Capability, Check, InputKind, Produced, Qualifier, Refusal, Scope, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use jacobian_polynomial_core::groebner;
use jacobian_polynomial_core::poly::{self, Order, Poly};

/// The arithmetic check of a Gröbner certificate.
const CERTIFICATE_CHECK: Check = Check {
    role: "polynomial.groebner.certificate",
    verifier: "polynomial.groebner_basis.verify",
    formats: &["groebner-certificate/1"],
};

const CERTIFICATE_SCHEMA: &str = "jacobian:polynomial/groebner-certificate@1";
const MAX_VARS: usize = 6;
const MAX_GENERATORS: usize = 12;
const MAX_DEGREE: u32 = 10;

/// Monomial orders.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MonomialOrder {
    /// Lexicographic, variables in the given order.
    Lex,
    /// Graded lexicographic.
    Grlex,
    /// Graded reverse lexicographic.
    Grevlex,
}

/// An ideal to compute a reduced Gröbner basis of.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroebnerInput {
    /// Generators over ℚ, e.g. "x^3 - 2*x*y" or "1/2*y^2 - (x + 1)*z" (at most 12, total degree at most 10,
    /// integer literals of at most 64 digits).
    #[schemars(length(min = 1, max = 12))]
    pub generators: Vec<String>,
    /// Variables, largest first (at most 6 identifiers).
    #[schemars(length(min = 1, max = 6))]
    pub vars: Vec<String>,
    /// Monomial order.
    pub order: MonomialOrder,
    /// S-polynomial reductions allowed before the computation stops without an answer.
    #[serde(default = "default_steps")]
    #[schemars(range(min = 1, max = 100_000))]
    pub max_steps: u64,
}

fn default_steps() -> u64 {
    5_000
}

/// The reduced basis.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GroebnerOutput {
    /// Whether the computation finished within max_steps.
    pub complete: bool,
    /// The reduced Gröbner basis, monic, sorted by decreasing leading monomial.
    pub basis: Vec<String>,
    /// S-polynomial reductions performed.
    pub steps: u64,
}

pub struct GroebnerBasis;

impl Capability for GroebnerBasis {
    const ID: &'static str = "polynomial.compute.groebner_basis";
    const TITLE: &'static str = "Reduced Gröbner basis over the rationals";
    const OUTCOME: &'static str =
        "the reduced Gröbner basis of an ideal of Q[vars] under lex, grlex or grevlex, with a checkable certificate";
    const DESCRIPTION: &'static str = "Buchberger's algorithm in exact rational arithmetic, then minimization and \
interreduction. The certificate gives every basis element as a combination of the generators, every generator's \
reduction to zero by the basis, and a standard representation of every S-polynomial of the basis, so that \
polynomial.groebner_basis.verify can establish, by arithmetic alone, that the basis is the reduced Gröbner basis of \
the same ideal. Bounds: 6 variables, 12 generators, total degree 10, 64-digit integer literals; max_steps limits \
the work, and an unfinished computation claims nothing.";
    const TAGS: &'static [&'static str] =
        &["polynomial", "groebner", "gröbner", "ideal", "commutative_algebra", "buchberger", "exact", "rational"];
    const INPUT_KIND: InputKind = InputKind::FormalProposition;
    const CHECKS: &'static [Check] = &[CERTIFICATE_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[CERTIFICATE_SCHEMA];
    type Input = GroebnerInput;
    type Output = GroebnerOutput;

    fn examples() -> Vec<(&'static str, GroebnerInput)> {
        vec![(
            "the twisted cubic, lex",
            GroebnerInput {
                generators: vec!["y - x^2".into(), "z - x^3".into()],
                vars: vec!["x".into(), "y".into(), "z".into()],
                order: MonomialOrder::Lex,
                max_steps: default_steps(),
            },
        )]
    }

    fn run(input: GroebnerInput) -> Result<Produced<GroebnerOutput>, Refusal> {
        if input.vars.is_empty() || input.vars.len() > MAX_VARS {
            return Err(Refusal::at("vars", format!("between 1 and {MAX_VARS} variables")));
        }
        for (i, v) in input.vars.iter().enumerate() {
            let valid = v.len() <= 16
                && v.starts_with(|c: char| c.is_ascii_alphabetic())
                && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid || input.vars[..i].contains(v) {
                return Err(Refusal::at(
                    format!("vars.{i}"),
                    "variables are distinct identifiers of at most 16 ASCII characters",
                ));
            }
        }
        if input.generators.is_empty() || input.generators.len() > MAX_GENERATORS {
            return Err(Refusal::at("generators", format!("between 1 and {MAX_GENERATORS} generators")));
        }
        let order = match input.order {
            MonomialOrder::Lex => Order::Lex,
            MonomialOrder::Grlex => Order::Grlex,
            MonomialOrder::Grevlex => Order::Grevlex,
        };
        let generators = input
            .generators
            .iter()
            .enumerate()
            .map(|(i, text)| {
                poly::parse(text, &input.vars, order, MAX_DEGREE).map_err(|e| Refusal::at(format!("generators.{i}"), e))
            })
            .collect::<Result<Vec<Poly>, _>>()?;
        let show = |p: &Poly| p.show(&input.vars);
        let order_name = serde_json::to_value(input.order).unwrap_or_default();
        let Some(result) = groebner::reduced_basis(&generators, input.vars.len(), order, input.max_steps) else {
            let output = GroebnerOutput { complete: false, basis: Vec::new(), steps: input.max_steps };
            return Ok(Produced::computed(
                output,
                Scope::partial(format!(
                    "max_steps ({}) ran out before the basis was complete; nothing is claimed",
                    input.max_steps
                )),
            ));
        };
        let certificate = json!({
            "format": "groebner-certificate/1",
            "vars": input.vars,
            "order": order_name,
            "generators": generators.iter().map(show).collect::<Vec<_>>(),
            "basis": result.basis.iter().map(show).collect::<Vec<_>>(),
            "cofactors": result.cofactors.iter().map(|row| row.iter().map(show).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "reductions": result.reductions.iter().map(|row| row.iter().map(show).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "spolys": result.spolys.iter().map(|((i, k), q)| json!({"pair": [i, k], "quotients": q.iter().map(show).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        });
        let output =
            GroebnerOutput { complete: true, basis: result.basis.iter().map(show).collect(), steps: result.steps };
        Ok(Produced::computed(output, Scope::exhaustive("exactly the ideal generated by the supplied polynomials, under the stated order"))
            .qualifiers(&[Qualifier::Exact, Qualifier::Deterministic])
            .artifact("certificate", CERTIFICATE_SCHEMA, &certificate)
            .obligation("an independent check of the cofactors, the reductions to zero, the S-polynomial representations and reducedness")
            .verify_with(CERTIFICATE_CHECK.route("groebner-certificate/1", "certificate")))
    }
}

export_capabilities!(GroebnerBasis);
