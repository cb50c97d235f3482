//! Test guest: the smallest useful capability, written only against the SDK.
//! Used by the benchmarks (instantiate + call overhead) and as the SDK's
//! size yardstick: the author code below is well under 50 lines.

use jacobian_guest::{Capability, Produced, Qualifier, Refusal, Scope, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Text to echo back.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The text.
    #[schemars(length(max = 1024))]
    pub message: String,
}

/// The same text.
#[derive(Serialize, JsonSchema)]
pub struct Output {
    /// The text, unchanged.
    pub message: String,
}

pub struct Echo;

impl Capability for Echo {
    const ID: &'static str = "test.echo.message";
    const TITLE: &'static str = "Echo a message";
    const OUTCOME: &'static str = "the message, unchanged";
    const DESCRIPTION: &'static str = "Returns its input; measures the runtime's per-call overhead.";
    const TAGS: &'static [&'static str] = &["test", "echo"];
    type Input = Input;
    type Output = Output;

    fn examples() -> Vec<(&'static str, Input)> {
        vec![("echo hello", Input { message: "hello".into() })]
    }

    fn run(input: Input) -> Result<Produced<Output>, Refusal> {
        let output = Output { message: input.message };
        Ok(Produced::computed(output, Scope::exhaustive("exactly the supplied message"))
            .qualifiers(&[Qualifier::Exact, Qualifier::Deterministic]))
    }
}

export_capabilities!(Echo);
