//! `jacobian new capability|checker NAME`: a ready Cargo project for a
//! plugin author (the SDK dependency, one example, a native unit test, build
//! instructions) that builds with `cargo build --target wasm32-wasip2
//! --release` and installs as it is.

use std::path::{Path, PathBuf};

use crate::cli::error::{Context, refuse};

use crate::cli::args::{NewArgs, NewKind};

/// The guest SDK of the source tree this binary was built from.
const SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../guest-sdk");

/// `jacobian new`.
pub fn new(args: NewArgs) -> crate::cli::error::Result<()> {
    let NewArgs { kind, name, dir, sdk } = args;
    let valid = name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        refuse!(
            "NAME {name:?}: 1-40 characters of a-z, 0-9 and _, starting with a letter (it names the crate and ids)"
        );
    }
    let dir = dir.unwrap_or_else(|| PathBuf::from(&name));
    if dir.exists() {
        refuse!("{}: already exists; choose another NAME or --dir", dir.display());
    }
    let sdk = match sdk {
        Some(path) => path,
        None if Path::new(SDK).join("Cargo.toml").is_file() => PathBuf::from(SDK),
        None => refuse!("the guest SDK of this build ({SDK}) is not here: pass --sdk PATH to the guest-sdk directory"),
    };
    let sdk = sdk.canonicalize().with_context(|| format!("--sdk {}", sdk.display()))?;
    let feature = match kind {
        NewKind::Capability => "capability",
        NewKind::Checker => "checker",
    };
    let source = match kind {
        NewKind::Capability => CAPABILITY,
        NewKind::Checker => CHECKER,
    };
    let files = [
        ("Cargo.toml", MANIFEST.replace("{feature}", feature).replace("{sdk}", &sdk.display().to_string())),
        ("src/lib.rs", source.to_owned()),
        ("README.md", README.to_owned()),
        (".gitignore", "/target\n".to_owned()),
    ];
    std::fs::create_dir_all(dir.join("src")).with_context(|| format!("creating {}", dir.display()))?;
    for (path, text) in files {
        let text = text.replace("{name}", &name);
        std::fs::write(dir.join(path), text).with_context(|| format!("writing {}", dir.join(path).display()))?;
    }
    println!(
        "created {} ({feature} `{name}`): cd {0} && cargo test && cargo build --target wasm32-wasip2 --release",
        dir.display()
    );
    Ok(())
}

const MANIFEST: &str = r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

# A component is a cdylib; the rlib lets `cargo test` run the mathematics natively.
[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
jacobian-guest = { path = "{sdk}", features = ["{feature}"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1"

[profile.release]
opt-level = 3
lto = true
codegen-units = 1

# Not part of any enclosing workspace.
[workspace]
"#;

const README: &str = r#"# {name}

A Jacobian plugin written with the guest SDK.

```sh
cargo test                                         # the mathematics, natively
rustup target add wasm32-wasip2                    # once
cargo build --target wasm32-wasip2 --release       # the component
jacobian check target/wasm32-wasip2/release/{name}.wasm     # every install check, examples twice
jacobian install target/wasm32-wasip2/release/{name}.wasm
```

The component gets nothing from its host but its input and the artifacts its input names: no
filesystem, clock, network or environment. Every published example runs at install and must
succeed; keep them quick (all of one install's examples share one call's fuel and 30 s).
"#;

const CAPABILITY: &str = r#"//! `{name}`: the number of steps the Collatz map (n -> n/2 if even, 3n + 1 if odd) takes from n to 1.
//! Replace it with your own mathematics: keep it in plain functions that `cargo test` can run.

use jacobian_guest::{Capability, Produced, Qualifier, Refusal, Scope, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A positive integer.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Where to start (1 to 10^15).
    #[schemars(range(min = 1, max = 1_000_000_000_000_000u64))]
    pub n: u64,
}

/// The total stopping time.
#[derive(Serialize, JsonSchema)]
pub struct Output {
    /// Steps from n to 1.
    pub steps: u32,
    /// The largest value on the way.
    pub peak: u64,
}

/// Steps from `n` to 1 and the peak on the way (`None` past u64).
pub fn collatz(mut n: u64) -> Option<(u32, u64)> {
    let (mut steps, mut peak) = (0, n);
    while n != 1 {
        n = if n % 2 == 0 { n / 2 } else { n.checked_mul(3)?.checked_add(1)? };
        peak = peak.max(n);
        steps += 1;
    }
    Some((steps, peak))
}

pub struct StoppingTime;

impl Capability for StoppingTime {
    const ID: &'static str = "{name}.compute.collatz_steps";
    const TITLE: &'static str = "Collatz total stopping time";
    const OUTCOME: &'static str = "the number of steps from n to 1, and the peak";
    const DESCRIPTION: &'static str = "Iterates the Collatz map from n until it reaches 1.";
    const TAGS: &'static [&'static str] = &["number theory", "collatz", "{name}"];
    type Input = Input;
    type Output = Output;

    fn examples() -> Vec<(&'static str, Input)> {
        vec![("27 takes 111 steps", Input { n: 27 })]
    }

    fn run(input: Input) -> Result<Produced<Output>, Refusal> {
        let (steps, peak) = collatz(input.n).ok_or_else(|| Refusal::at("n", "the orbit leaves u64"))?;
        let scope = Scope::exhaustive(format!("exactly n = {}", input.n));
        Ok(Produced::computed(Output { steps, peak }, scope).qualifiers(&[Qualifier::Exact, Qualifier::Deterministic]))
    }
}

export_capabilities!(StoppingTime);

#[cfg(test)]
mod tests {
    use super::collatz;

    #[test]
    fn stopping_times_are_oeis_a006577() {
        // A006577: 0, 1, 7, 2, 5, 8, 16, 3, 19, 6 for n = 1..10; 111 for n = 27.
        let steps: Vec<u32> = (1..=10).map(|n| collatz(n).unwrap().0).collect();
        assert_eq!(steps, [0, 1, 7, 2, 5, 8, 16, 3, 19, 6]);
        assert_eq!(collatz(27), Some((111, 9232)));
    }
}
"#;

const CHECKER: &str = r#"//! `{name}`: a checker that a claimed factorization of n multiplies out to n with every factor
//! above 1. Replace it with your own check: keep it in plain functions that `cargo test` can run.

use jacobian_guest::{Checker, Judged, Refusal, Scope, Verdict, VerdictKind, export_checkers};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A number and its claimed factors.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The number.
    pub n: u64,
    /// The claimed factors, each above 1.
    #[schemars(length(min = 1, max = 64))]
    pub factors: Vec<u64>,
}

/// Why the factors are not a factorization of `n`, if they are not.
pub fn flaw(n: u64, factors: &[u64]) -> Option<String> {
    if let Some(f) = factors.iter().find(|&&f| f < 2) {
        return Some(format!("factor {f} is not above 1"));
    }
    let product = factors.iter().try_fold(1u64, |p, &f| p.checked_mul(f));
    (product != Some(n)).then(|| format!("the factors multiply to {product:?}, not {n}"))
}

pub struct Factorization;

impl Checker for Factorization {
    const ROLE: &'static str = "{name}.factorization";
    const CAPABILITY_ID: &'static str = "{name}.factorization.verify";
    const TITLE: &'static str = "Check a factorization";
    const OUTCOME: &'static str = "ACCEPTED when the factors multiply to n, each above 1";
    const DESCRIPTION: &'static str = "Multiplies the claimed factors; says nothing about their primality.";
    const TAGS: &'static [&'static str] = &["number theory", "factorization", "{name}"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["factor-list"];
    type Input = Input;

    fn examples() -> Vec<(&'static str, Input)> {
        vec![("360 = 2·2·2·3·3·5", Input { n: 360, factors: vec![2, 2, 2, 3, 3, 5] })]
    }

    fn check(input: Input) -> Result<Verdict, Refusal> {
        let about = Judged { claim: json!({"n": input.n}), semantics: json!({}), candidate: json!({"factors": input.factors}) };
        let scope = Scope::exhaustive(format!("exactly this factor list of {}", input.n));
        let checked = vec!["every factor is above 1".to_owned(), "the product equals n".to_owned()];
        Ok(match flaw(input.n, &input.factors) {
            None => about.verdict(VerdictKind::Accepted, "the factors multiply to n", checked, scope),
            Some(why) => about.verdict(VerdictKind::Rejected, why, checked, scope),
        })
    }
}

export_checkers!(Factorization);

#[cfg(test)]
mod tests {
    use super::flaw;

    #[test]
    fn products_are_checked() {
        assert_eq!(flaw(360, &[2, 2, 2, 3, 3, 5]), None);
        assert!(flaw(360, &[2, 180, 1]).is_some());
        assert!(flaw(12, &[2, 5]).is_some());
        assert!(flaw(u64::MAX, &[u64::MAX, 2]).is_some());
    }
}
"#;
