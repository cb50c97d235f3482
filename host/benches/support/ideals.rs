//! `-- ideals`: `polynomial.compute.groebner_basis` and its checker in the
//! sandbox on the classic benchmark ideals (cyclic-4, 5, 6 and Katsura-3,
//! 4, 5, under grevlex and lex) beside Debian's Singular (`std` with
//! `option(redSB)`, timed by its own `rtimer`) and sympy (`groebner`, timed
//! inside Python), each outside tool capped at a minute. Every basis the
//! sandbox returns is checked by the independent checker.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::classic_ideals::classic;

type Invoke<'a> = &'a dyn Fn(&str, Value) -> jacobian::contract::CapabilityResult;

const CAP: Duration = Duration::from_secs(60);

/// Run `program` with `input` on stdin under the cap; its stdout, or `None` on timeout or failure.
fn capped(program: &str, args: &[&str], input: &str) -> Option<String> {
    let mut child = Command::new("timeout")
        .arg(CAP.as_secs().to_string())
        .arg(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let output = child.wait_with_output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Singular's `std` time in seconds, from its own timer.
fn singular(vars: &[String], generators: &[String], order: &str) -> Option<f64> {
    let ring = if order == "lex" { "lp" } else { "dp" };
    let script = format!(
        "ring r=0,({}),{ring};\noption(redSB);\nideal i={};\nint t=rtimer; ideal G=std(i); int e=rtimer-t;\nprint(e);\nquit;\n",
        vars.join(","),
        generators.join(",")
    );
    let out = capped("Singular", &["-q", "--ticks-per-sec", "1000000"], &script)?;
    Some(out.split_whitespace().last()?.parse::<f64>().ok()? / 1e6)
}

const SYMPY: &str = r#"
import sys, time
from sympy import groebner, symbols, QQ
vars = sys.argv[1].split(","); order = sys.argv[2]
gens = symbols(vars); ns = dict(zip(vars, gens))
polys = [eval(line.replace("^", "**"), {}, ns) for line in sys.stdin.read().splitlines()]
start = time.perf_counter(); groebner(polys, *gens, order=order, domain=QQ); print(time.perf_counter() - start)
"#;

/// sympy's `groebner` time in seconds, timed inside Python.
fn sympy(vars: &[String], generators: &[String], order: &str) -> Option<f64> {
    let out = capped("python3", &["-c", SYMPY, &vars.join(","), order], &generators.join("\n"))?;
    out.trim().parse().ok()
}

fn show(seconds: Option<f64>) -> String {
    seconds.map_or_else(|| format!("> {} s", CAP.as_secs()), |s| format!("{:.1} ms", s * 1e3))
}

/// Debian's Singular, installed here when it is missing.
fn install_singular() {
    let present = Command::new("Singular").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if present.is_ok_and(|s| s.success()) {
        return;
    }
    let status = Command::new("apt-get")
        .args(["install", "-y", "-qq", "singular"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .expect("apt-get");
    assert!(status.success(), "installing Debian's singular failed");
}

pub fn figures(invoke: Invoke) {
    install_singular();
    println!(
        "| ideal | order | sandbox: basis (elements, method) | its check | sympy | Singular | sympy / sandbox | sandbox / Singular |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, n) in [("cyclic", 4), ("cyclic", 5), ("cyclic", 6), ("katsura", 3), ("katsura", 4), ("katsura", 5)] {
        let (vars, generators) = classic(name, n);
        for order in ["grevlex", "lex"] {
            let input = json!({"generators": generators, "vars": vars, "order": order});
            let start = Instant::now();
            let result = invoke("polynomial.compute.groebner_basis", input);
            let ours = start.elapsed().as_secs_f64();
            let output = result.output.clone().unwrap_or(Value::Null);
            let (basis, check) = if output["complete"] == true {
                let certificate = result.check_with.and_then(|c| c.certificate_artifact).expect("a certificate");
                let start = Instant::now();
                let verified = invoke("polynomial.groebner_basis.verify", json!({"certificate": certificate}));
                let check = start.elapsed().as_secs_f64();
                assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified, "{name}-{n} {order}");
                let size = output["basis"].as_array().map_or(0, Vec::len);
                (format!("{:.1} ms ({size}, {})", ours * 1e3, output["method"].as_str().unwrap_or("?")), Some(check))
            } else {
                let why =
                    output["stop_reason"].as_str().map_or_else(|| format!("{:?}", result.diagnostic), str::to_owned);
                (format!("stopped after {:.1} s ({why}, work {})", ours, output["work"]), None)
            };
            let theirs = sympy(&vars, &generators, order);
            let reference = singular(&vars, &generators, order);
            let complete = check.is_some();
            let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) if complete => format!("{:.0}", x / y),
                _ => "–".to_owned(),
            };
            println!(
                "| {name}-{n} | {order} | {basis} | {} | {} | {} | {} | {} |",
                check.map_or("–".to_owned(), |c| format!("{:.1} ms", c * 1e3)),
                show(theirs),
                show(reference),
                ratio(theirs, Some(ours)),
                ratio(Some(ours), reference),
            );
        }
    }
}
