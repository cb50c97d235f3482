//! Test guest: a capability whose published recipe refers to an artifact
//! role its step does not make (`sat.cnf.construct` makes `cnf`, the recipe
//! asks for `formula`). Installing it must be refused by the health probe,
//! naming the example and the path, with nothing recorded.

use jacobian_guest::{Capability, Produced, Recipe, Refusal, Scope, artifact_of, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A CNF artifact.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Its URI.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub cnf: String,
}

/// Nothing.
#[derive(Serialize, JsonSchema)]
pub struct Output {}

pub struct Broken;

impl Capability for Broken {
    const ID: &'static str = "test.recipe.broken";
    const TITLE: &'static str = "A recipe that names the wrong artifact";
    const OUTCOME: &'static str = "nothing";
    const DESCRIPTION: &'static str = "Its recipe refers to an artifact role its step does not make.";
    const TAGS: &'static [&'static str] = &["test"];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("cnf", "jacobian:sat/cnf@1")];
    type Input = Input;
    type Output = Output;

    fn recipes() -> Vec<Recipe<Input>> {
        vec![
            Recipe::new("a formula, by the wrong name")
                .step("sat.cnf.construct", json!({"dimacs": "p cnf 1 1\n1 0\n"}))
                .then(Input { cnf: artifact_of(0, "formula") }),
        ]
    }

    fn run(_input: Input) -> Result<Produced<Output>, Refusal> {
        Ok(Produced::computed(Output {}, Scope::exhaustive("nothing")))
    }
}

export_capabilities!(Broken);
