//! `-- sat_proofs`: real-size outside proofs through the upload path. For
//! seeded random 3-SAT formulas at the threshold that Debian's CaDiCaL
//! finds UNSAT, CaDiCaL's DRAT proof is turned into LRAT by drat-trim, and
//! into binary LRAT by drat-trim's `compress`; each is uploaded
//! (`Runtime::upload`, the path `jacobian artifact put` and `PUT
//! /artifacts/…` take), bound to the CNF and VERIFIED by the SAT checker
//! streaming it, timed beside drat-trim's own `lrat-check` on the same
//! files in the same run. drat-trim is built here from its C sources, found
//! in the directory `JACOBIAN_DRAT_TRIM_SRC` names (a checkout of
//! github.com/marijnheule/drat-trim); without it the section says so and
//! stops. One hint flipped in the largest proof must be rejected, and an
//! upload over the policy's bound refused before anything is stored.
//!
//! CaDiCaL's DRAT proofs (binary, as it writes them) are also uploaded as
//! they are and checked by the sandbox's forward DRAT checker, timed beside
//! drat-trim checking the same files backward (its default) and forward
//! (`-f`, as the sandbox does).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use jacobian::Runtime;
use jacobian::contract::{BudgetRequest, InvokeRequest, VerificationStatus};
use serde_json::json;

use super::cadical::{dimacs, install_cadical, random_3sat};

const LRAT_FILE: &str = "jacobian:sat/lrat-file@1";
const DRAT_FILE: &str = "jacobian:sat/drat-file@1";
/// Checker memory for LRAT: the active clauses by id, streamed.
const LRAT_MEMORY: u64 = 64 << 20;
/// Checker memory for DRAT: the active clauses with their watches and hash chains (the operator's limit here;
/// CaDiCaL's 221 MB proof needs more than 64 MiB).
const DRAT_MEMORY: u64 = 256 << 20;

/// drat-trim's three programs, compiled as its Makefile does.
fn build_drat_trim(source: &Path, into: &Path) -> Option<PathBuf> {
    for (program, flags) in
        [("drat-trim", &[][..]), ("lrat-check", &["-DLONGTYPE"][..]), ("compress", &["-DLONGTYPE"][..])]
    {
        let status = Command::new("gcc")
            .arg(source.join(format!("{program}.c")))
            .args(["-std=c99", "-O2"])
            .args(flags)
            .arg("-o")
            .arg(into.join(program))
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
    }
    Some(into.to_path_buf())
}

fn seconds(mut command: Command) -> (f64, std::process::Output) {
    let start = Instant::now();
    let output = command.output().expect("run");
    (start.elapsed().as_secs_f64(), output)
}

fn invoke(
    runtime: &Runtime,
    id: &str,
    input: serde_json::Value,
    memory: Option<u64>,
) -> jacobian::contract::CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        mode: None,
        input,
        budget: memory.map(|m| BudgetRequest { memory_bytes: Some(m), ..Default::default() }),
        view: None,
        experiment: None,
        tenant: None,
    })
}

/// Upload `file` as `schema`, bind it to `cnf`, verify it within `memory` bytes: (upload s, verify s, status,
/// reason).
fn upload_and_verify(
    runtime: &Runtime,
    cnf: &str,
    file: &Path,
    schema: &str,
    memory: u64,
) -> (f64, f64, VerificationStatus, String) {
    let start = Instant::now();
    let mut source = std::fs::File::open(file).expect("proof");
    let size = source.metadata().expect("size").len();
    let uploaded = runtime.upload(&mut source, schema, Some(size), None).expect("upload");
    let up = start.elapsed().as_secs_f64();
    let made = invoke(runtime, "sat.certificate.construct", json!({"cnf": cnf, "proof": uploaded.uri}), None);
    let certificate = made.artifacts.first().unwrap_or_else(|| panic!("{:?}", made.diagnostic)).uri.clone();
    let start = Instant::now();
    let checked = invoke(runtime, "certificate.verify", json!({"certificate": certificate}), Some(memory));
    let took = start.elapsed().as_secs_f64();
    let record = checked.verification.unwrap_or_else(|| panic!("no verdict: {:?}", checked.diagnostic));
    (up, took, record.status, record.reason)
}

/// A copy of the text proof with one hint of a lemma near the middle pointed at another clause.
fn flip_a_hint(proof: &Path, into: &Path) -> usize {
    let text = std::fs::read_to_string(proof).expect("proof");
    let mut lines: Vec<&str> = text.lines().collect();
    let mut at = lines.len() / 2;
    while lines[at].split_whitespace().nth(1) == Some("d") || lines[at].split_whitespace().count() < 5 {
        at += 1;
    }
    let mut tokens: Vec<String> = lines[at].split_whitespace().map(str::to_owned).collect();
    let hint = tokens.len() - 2;
    let id: i64 = tokens[hint].parse().expect("hint");
    tokens[hint] = (id - 1).to_string();
    let edited = tokens.join(" ");
    lines[at] = &edited;
    std::fs::write(into, lines.join("\n") + "\n").expect("write");
    at + 1
}

/// drat-trim on CaDiCaL's DRAT proof, backward and forward, and the sandbox's check of the same file: a table row.
fn drat_row(runtime: &Runtime, tools: &Path, n: u32, m: usize, cnf_path: &Path, cnf: &str, drat: &Path) -> String {
    let drat_trim = |forward: bool| {
        let mut check = Command::new(tools.join("drat-trim"));
        check.arg(cnf_path).arg(drat).args(["-t", "100000"]);
        if forward {
            check.arg("-f");
        }
        let (took, output) = seconds(check);
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(said.lines().any(|l| l.trim() == "s VERIFIED"), "drat-trim did not verify r{n}");
        took
    };
    let (backward, forward) = (drat_trim(false), drat_trim(true));
    let (_, ours, status, reason) = upload_and_verify(runtime, cnf, drat, DRAT_FILE, DRAT_MEMORY);
    assert_eq!(status, VerificationStatus::Verified, "r{n} DRAT: {reason}");
    let mb = std::fs::metadata(drat).map_or(0.0, |m| m.len() as f64 / 1e6);
    format!(
        "| r{n} ({n} variables, {m} clauses) | {mb:.0} MB | {backward:.2} s | {forward:.2} s | {ours:.2} s | {:.2}× / {:.2}× |",
        ours / backward,
        ours / forward
    )
}

/// The section. `runtime` must allow the fuel and time of a check of a few hundred MB.
pub fn figures(runtime: &Runtime) {
    let Some(source) = std::env::var_os("JACOBIAN_DRAT_TRIM_SRC").map(PathBuf::from) else {
        println!("sat_proofs: skipped; set JACOBIAN_DRAT_TRIM_SRC to a checkout of github.com/marijnheule/drat-trim");
        return;
    };
    install_cadical();
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(tools) = build_drat_trim(&source, dir.path()) else {
        println!("sat_proofs: skipped; gcc could not build drat-trim from {}", source.display());
        return;
    };
    println!(
        "| formula | CaDiCaL DRAT | LRAT (text / binary) | upload | lrat-check | sandbox checker (text / binary) | ratio (text / binary) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut largest: Option<(PathBuf, String, u64)> = None;
    let mut drat_rows = Vec::new();
    for n in [290u32, 300, 310, 330] {
        let m = (f64::from(n) * 4.26).round() as usize;
        // The first seed CaDiCaL finds UNSAT.
        let (cnf_path, drat, text) = (1u64..)
            .find_map(|k| {
                let text = dimacs(n, &random_3sat(n, m, 0x9_1a7 ^ (u64::from(n) << 24) ^ (k * 0x9e37_79b9)));
                let cnf = dir.path().join(format!("r{n}.cnf"));
                let drat = dir.path().join(format!("r{n}.drat"));
                std::fs::write(&cnf, &text).expect("cnf");
                let status = Command::new("cadical").arg("-q").arg(&cnf).arg(&drat).stdout(Stdio::null()).status();
                (status.expect("cadical").code() == Some(20)).then_some((cnf, drat, text))
            })
            .expect("an UNSAT formula");
        let lrat = dir.path().join(format!("r{n}.lrat"));
        let mut convert = Command::new(tools.join("drat-trim"));
        convert.arg(&cnf_path).arg(&drat).arg("-L").arg(&lrat).args(["-t", "100000"]).stdout(Stdio::null());
        assert!(convert.status().expect("drat-trim").success() || lrat.exists(), "drat-trim failed on r{n}");
        let clrat = dir.path().join(format!("r{n}.clrat"));
        let status = Command::new(tools.join("compress")).arg(&lrat).arg(&clrat).stdout(Stdio::null()).status();
        assert!(status.expect("compress").success(), "compress failed");
        let mut check = Command::new(tools.join("lrat-check"));
        check.arg(&cnf_path).arg(&lrat);
        let (theirs, output) = seconds(check);
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(
            said.lines().any(|l| l.trim() == "c VERIFIED"),
            "lrat-check did not verify r{n}: {}",
            said.lines().last().unwrap_or("")
        );
        let cnf = invoke(runtime, "sat.cnf.construct", json!({"dimacs": text}), None).artifacts[0].uri.clone();
        let (up, ours, status, reason) = upload_and_verify(runtime, &cnf, &lrat, LRAT_FILE, LRAT_MEMORY);
        assert_eq!(status, VerificationStatus::Verified, "r{n} text: {reason}");
        let (_, binary, status, reason) = upload_and_verify(runtime, &cnf, &clrat, LRAT_FILE, LRAT_MEMORY);
        assert_eq!(status, VerificationStatus::Verified, "r{n} binary: {reason}");
        let mb = |p: &Path| std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6);
        println!(
            "| r{n} ({n} variables, {m} clauses) | {:.0} MB | {:.0} MB / {:.0} MB | {up:.2} s ({:.0} MB/s) | {theirs:.2} s | {ours:.2} s / {binary:.2} s | {:.2}× / {:.2}× |",
            mb(&drat),
            mb(&lrat),
            mb(&clrat),
            mb(&lrat) / up,
            ours / theirs,
            binary / theirs
        );
        drat_rows.push(drat_row(runtime, &tools, n, m, &cnf_path, &cnf, &drat));
        println!("(DRAT, for the second table) {}", drat_rows.last().expect("row"));
        let size = std::fs::metadata(&lrat).map_or(0, |m| m.len());
        if largest.as_ref().is_none_or(|(_, _, s)| size > *s) {
            largest = Some((lrat.clone(), cnf.clone(), size));
        }
    }
    println!();
    println!(
        "| formula | CaDiCaL DRAT (binary) | drat-trim backward | drat-trim forward (-f) | sandbox checker (forward) | sandbox ÷ drat-trim (backward / forward) |"
    );
    println!("|---|---|---|---|---|---|");
    drat_rows.iter().for_each(|row| println!("{row}"));
    println!();
    let (lrat, cnf, size) = largest.expect("proofs");
    let flipped = dir.path().join("flipped.lrat");
    let line = flip_a_hint(&lrat, &flipped);
    let (_, _, status, reason) = upload_and_verify(runtime, &cnf, &flipped, LRAT_FILE, LRAT_MEMORY);
    assert_eq!(status, VerificationStatus::Rejected, "a flipped hint: {reason}");
    println!("one hint flipped at line {line} of the {:.0} MB proof: {status:?} ({reason})", size as f64 / 1e6);
    let files = |dir: &Path| std::fs::read_dir(dir.join("files")).map_or(0, |d| d.count());
    let before = files(runtime.data().path());
    runtime.update_policy(|p| p.uploads.max_bytes = size / 2).expect("policy");
    let mut source = std::fs::File::open(&lrat).expect("proof");
    let start = Instant::now();
    let refused = runtime.upload(&mut source, LRAT_FILE, Some(size), None).expect_err("over the bound");
    println!(
        "an upload of {:.0} MB over a bound of {:.0} MB: refused in {:.1} ms ({refused}); files stored before and after: {before}, {}",
        size as f64 / 1e6,
        (size / 2) as f64 / 1e6,
        start.elapsed().as_secs_f64() * 1e3,
        files(runtime.data().path())
    );
}
