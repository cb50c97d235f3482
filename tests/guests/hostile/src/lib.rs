//! Test guest: a deliberately hostile capability bundle. Each `attack` tries
//! to break the host in one way; the host must turn every one into a typed
//! diagnostic and keep serving.

use std::hint::black_box;

use jacobian_guest::__private::{self, capability_bindings};
use jacobian_guest::{Capability, Check, Produced, Refusal, Scope, VerificationRoute};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which attack to run.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// none, loop, memory, grow_storm, recursion, panic, output, log_flood,
    /// host_time, bulk_fill, subscribe_storm, sleep, read_artifact, ambient, claim_verified,
    /// malformed, off_schema, route_declared, route_role, route_checker,
    /// route_format, relabel, format_mismatch.
    pub attack: String,
    /// Bytes of output for `output`; digest for `read_artifact`; `then_spin`
    /// for `grow_storm`; `forever` for `host_time`; rounds for `bulk_fill` and
    /// `subscribe_storm`;
    /// `cnf=<uri>;certificate=<uri>` for `relabel`.
    #[serde(default)]
    pub argument: Option<String>,
}

/// What a harmless call returns.
#[derive(Serialize, JsonSchema)]
pub struct Output {
    /// What happened.
    pub result: String,
}

pub struct Hostile;

/// The one check its results may be routed to.
const ROUTE_CHECK: Check =
    Check { role: "test.hostile.route", verifier: "test.hostile.verify", formats: &["hostile/1"] };
/// A check of another role (the lax `acme.lint` checker of the yes-checker
/// bundle), whose certificates the `relabel` attack wraps around a SAT one.
const LINT_CHECK: Check = Check { role: "acme.lint", verifier: "aaa.lint.verify", formats: &["lrat"] };
/// The SAT proof schema, which the lint checker reads.
const LRAT_SCHEMA: &str = "jacobian:sat/lrat@1";

impl Capability for Hostile {
    const ID: &'static str = "test.hostile.attack";
    const TITLE: &'static str = "Attack the host";
    const OUTCOME: &'static str = "a typed diagnostic for each attack";
    const DESCRIPTION: &'static str = "Test guest that misbehaves on request.";
    const TAGS: &'static [&'static str] = &["test"];
    const CHECKS: &'static [Check] = &[ROUTE_CHECK, LINT_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[LRAT_SCHEMA];
    type Input = Input;
    type Output = Output;

    fn examples() -> Vec<(&'static str, Input)> {
        vec![("a harmless call", Input { attack: "none".into(), argument: None })]
    }

    fn run(input: Input) -> Result<Produced<Output>, Refusal> {
        let result = match input.attack.as_str() {
            "none" => "ok".to_owned(),
            "loop" => {
                let mut x = 0u64;
                loop {
                    x = black_box(x.wrapping_add(1));
                }
            }
            "memory" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(black_box(vec![1u8; 1 << 20]));
                }
            }
            "grow_storm" => {
                // One page at a time, and keep asking after the first refusal.
                let (mut grown, mut refused) = (0u64, 0u64);
                for _ in 0..200_000 {
                    if core::arch::wasm32::memory_grow(0, 1) == usize::MAX {
                        refused += 1;
                    } else {
                        grown += 1;
                    }
                }
                if input.argument.as_deref() == Some("then_spin") {
                    // Having coped with the refusals, run until the fuel is gone.
                    let mut x = grown;
                    loop {
                        x = black_box(x.wrapping_add(refused));
                    }
                }
                format!("grew {grown} pages, refused {refused}")
            }
            "recursion" => recurse(black_box(u64::MAX)).to_string(),
            "panic" => panic!("hostile guest panics on purpose"),
            "output" => {
                let bytes: usize = input.argument.and_then(|a| a.parse().ok()).unwrap_or(1 << 24);
                "x".repeat(bytes)
            }
            "log_flood" => {
                for i in 0..100_000 {
                    jacobian_guest::log(jacobian_guest::LogLevel::Info, &format!("line {i}"));
                }
                "flooded".to_owned()
            }
            "host_time" => {
                // Host work that costs almost no fuel: the same 64 KiB line
                // sent to the host's log again and again (the host copies and
                // checks every byte of it each time, then drops it).
                // `forever`: a 16 MiB line, each call milliseconds of host work.
                let (bytes, rounds) = if input.argument.as_deref() == Some("forever") {
                    (16 << 20, u64::MAX)
                } else {
                    (64 << 10, 20_000)
                };
                let line = "x".repeat(bytes);
                for _ in 0..rounds {
                    jacobian_guest::log(jacobian_guest::LogLevel::Info, &line);
                }
                "logged".to_owned()
            }
            "subscribe_storm" => {
                // Host resources never dropped: a pollable per round, each a
                // place in the host's resource table, forever unless rounds
                // are given.
                let rounds: u64 = input.argument.and_then(|a| a.parse().ok()).unwrap_or(u64::MAX);
                for _ in 0..rounds {
                    // SAFETY: the import takes a duration and returns a new pollable's handle.
                    black_box(unsafe { subscribe_duration(1_000_000_000) });
                }
                format!("{rounds} pollables held")
            }
            "bulk_fill" => {
                // Bulk memory work for almost no code: one 16 MiB fill (a
                // `memory.fill`) per round, forever unless rounds are given.
                let rounds: u64 = input.argument.and_then(|a| a.parse().ok()).unwrap_or(u64::MAX);
                let mut buffer = vec![0u8; 16 << 20];
                for round in 0..rounds {
                    black_box(&mut buffer[..]).fill(round as u8);
                }
                format!("filled {rounds} times")
            }
            "sleep" => {
                // An hour on the host's clock, were WASI's sleeps left to it.
                std::thread::sleep(std::time::Duration::from_secs(3600));
                "slept".to_owned()
            }
            "read_artifact" => {
                let digest = input.argument.unwrap_or_default();
                match jacobian_guest::read_artifact(&digest) {
                    Ok(bytes) => format!("read {} bytes", bytes.len()),
                    Err(e) => return Err(Refusal::at("argument", e)),
                }
            }
            "ambient" => {
                // Everything ambient a component might try to read.
                let env: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
                let args: Vec<String> = std::env::args().collect();
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(u64::MAX);
                let root = std::fs::read_dir("/").map(|d| d.count()).map_err(|e| e.kind().to_string());
                let etc = std::fs::read("/etc/passwd").map(|b| b.len()).map_err(|e| e.kind().to_string());
                let cwd = std::env::current_dir().map(|p| p.display().to_string()).map_err(|e| e.kind().to_string());
                serde_json::json!({"env": env, "args": args, "unix_seconds": now,
                                   "read_dir_root": format!("{root:?}"), "read_etc_passwd": format!("{etc:?}"),
                                   "cwd": format!("{cwd:?}")})
                .to_string()
            }
            "route_declared" | "route_role" | "route_checker" | "route_format" => {
                // A route built from the declared check, or one that strays from it.
                let mut route = ROUTE_CHECK.route("hostile/1", "certificate");
                match input.attack.as_str() {
                    "route_role" => route.checker_role = "test.other.role".into(),
                    "route_checker" => route.verify_capability_id = "test.other.verify".into(),
                    "route_format" => route.certificate_format = "other/9".into(),
                    _ => {}
                }
                return Ok(routed(route));
            }
            "relabel" | "format_mismatch" => {
                // A certificate of role acme.lint whose content names a SAT
                // certificate as its `certificate`, hoping the router fills the
                // lint checker's input from it; or (format_mismatch) routed as
                // lrat while its content says model.
                let argument = input.argument.unwrap_or_default();
                let field = |name: &str| {
                    argument.split(';').find_map(|kv| kv.strip_prefix(&format!("{name}="))).unwrap_or("").to_owned()
                };
                let format = if input.attack == "relabel" { "lrat" } else { "model" };
                let content =
                    serde_json::json!({"format": format, "cnf": field("cnf"), "certificate": field("certificate")});
                return Ok(Produced::proposed(Output { result: "relabelled".into() }, Scope::exhaustive("nothing"))
                    .artifact("certificate", LRAT_SCHEMA, &content)
                    .verify_with(LINT_CHECK.route("lrat", "certificate")));
            }
            other => return Err(Refusal::at("attack", format!("unknown attack {other}"))),
        };
        Ok(Produced::computed(Output { result }, Scope::exhaustive("nothing")))
    }
}

/// A harmless answer routed by `route`.
fn routed(route: VerificationRoute) -> Produced<Output> {
    Produced::computed(Output { result: "routed".into() }, Scope::exhaustive("nothing")).verify_with(route)
}

#[link(wasm_import_module = "wasi:clocks/monotonic-clock@0.2.0")]
unsafe extern "C" {
    /// A pollable ready after the given nanoseconds (its handle, never dropped here).
    #[link_name = "subscribe-duration"]
    fn subscribe_duration(nanoseconds: u64) -> u32;
}

#[inline(never)]
fn recurse(n: u64) -> u64 {
    if n == 0 { 0 } else { black_box(recurse(black_box(n - 1))).wrapping_add(1) }
}

struct Bundle;

impl capability_bindings::Guest for Bundle {
    fn describe() -> Vec<u8> {
        __private::describe_capabilities(
            __private::provider("jacobian-test-hostile", "0.1.0", "Apache-2.0"),
            vec![__private::capability_descriptor::<Hostile>()],
        )
    }

    fn invoke(request: Vec<u8>) -> Result<Vec<u8>, String> {
        let text = String::from_utf8_lossy(&request);
        if text.contains("\"claim_verified\"") {
            // A producer trying to certify its own result.
            return Ok(br#"{"output":{"result":"trust me"},"scope":{"completeness":"EXHAUSTIVE","statement":"all"},"assurance":"VERIFIED"}"#.to_vec());
        }
        if text.contains("\"off_schema\"") {
            // Valid JSON, valid outcome shape, but `output` breaks the declared schema.
            return Ok(br#"{"output":{"result":42},"scope":{"completeness":"EXHAUSTIVE","statement":"all"}}"#.to_vec());
        }
        if text.contains("\"malformed\"") {
            return Ok(b"this is not json".to_vec());
        }
        __private::invoke(&request, &[(Hostile::ID, __private::run_capability::<Hostile>)])
    }
}

capability_bindings::export!(Bundle with_types_in jacobian_guest::__private::capability_bindings);
