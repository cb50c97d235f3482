//! Evidence above the input limit: a proof file streamed into the store
//! (`jacobian artifact put`, `PUT /artifacts/sha256/<hex>`), bound to a CNF
//! by `sat.certificate.construct` and checked by the SAT checker reading it
//! in ranges. Outside truth: drat-trim's LRAT proofs of SATLIB's uuf-100
//! formulas, in text and in the binary form drat-trim's `compress` writes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

use jacobian::archive::{Archive, replay};
use jacobian::contract::{BudgetRequest, Code, Status, VerificationStatus};
use jacobian::digest::Digest;
use jacobian::store::StoreConfig;
use jacobian::{Runtime, RuntimeConfig};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::http::Server;
use crate::support::{self, BIN, cli, invoke, invoke_with};

const LRAT_FILE: &str = "jacobian:sat/lrat-file@1";

fn example(name: &str) -> String {
    let path = support::testdata(&format!("sat/drat-trim-examples/{name}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// drat-trim's proof for example `name`, with `padding` lemmas first: each a copy
/// of clause 1 (implied by clause 1 itself) deleted at once, so the proof grows
/// and the active clauses do not. drat-trim's own lemmas are renumbered after them.
fn padded_proof(name: &str, padding: u64) -> String {
    let cnf = example(&format!("{name}.cnf"));
    let header = cnf.lines().find(|l| l.starts_with("p cnf")).unwrap();
    let clauses: u64 = header.split_whitespace().nth(3).unwrap().parse().unwrap();
    let first: Vec<i64> = cnf
        .lines()
        .find(|l| !l.starts_with('c') && !l.starts_with('p') && !l.trim().is_empty())
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let literals: Vec<String> = first.iter().take_while(|l| **l != 0).map(i64::to_string).collect();
    let literals = literals.join(" ");
    let mut out = String::new();
    for i in 1..=padding {
        let id = clauses + i;
        out.push_str(&format!("{id} {literals} 0 1 0\n{id} d {id} 0\n"));
    }
    let shift = |n: i64| if n.unsigned_abs() > clauses { n.signum() * (n.abs() + padding as i64) } else { n };
    for line in example(&format!("{name}.lrat")).lines().filter(|l| !l.trim().is_empty()) {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let id = shift(tokens[0].parse().unwrap());
        if tokens[1] == "d" {
            let ids: Vec<String> = tokens[2..].iter().map(|t| shift(t.parse().unwrap()).to_string()).collect();
            out.push_str(&format!("{id} d {}\n", ids.join(" ")));
            continue;
        }
        let zero = tokens.iter().skip(1).position(|t| *t == "0").unwrap() + 1;
        let hints: Vec<String> = tokens[zero + 1..].iter().map(|t| shift(t.parse().unwrap()).to_string()).collect();
        out.push_str(&format!("{id} {} 0 {}\n", tokens[1..zero].join(" "), hints.join(" ")));
    }
    out
}

/// The binary form (drat-trim's `compress`): `a` id literals 0 hints 0, `d` ids 0,
/// each number 2|x| + (x < 0) in 7-bit groups, low first.
fn binary(text: &str) -> Vec<u8> {
    fn number(out: &mut Vec<u8>, x: i64) {
        let mut mapped = (x.unsigned_abs() << 1) | u64::from(x < 0);
        while mapped > 127 {
            out.push((mapped & 127) as u8 | 128);
            mapped >>= 7;
        }
        out.push(mapped as u8);
    }
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let tokens: Vec<i64> = line.split_whitespace().filter(|t| *t != "d").map(|t| t.parse().unwrap()).collect();
        if line.split_whitespace().nth(1) == Some("d") {
            out.push(b'd');
            tokens[1..].iter().for_each(|t| number(&mut out, *t));
        } else {
            out.push(b'a');
            tokens.iter().for_each(|t| number(&mut out, *t));
        }
    }
    out
}

fn upload(runtime: &Runtime, bytes: &[u8]) -> String {
    let uploaded = runtime.upload(&mut &bytes[..], LRAT_FILE, Some(bytes.len() as u64), None).expect("upload");
    assert_eq!(uploaded.file, Digest::of(bytes));
    uploaded.uri
}

/// Bind an uploaded proof to the CNF and check it through `certificate.verify`
/// within `memory` bytes of checker memory.
fn verdict(runtime: &Runtime, cnf: &str, proof: &str, memory: u64) -> (VerificationStatus, String) {
    let made = invoke(runtime, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "proof": proof}));
    assert_eq!(made.status, Status::Completed, "{:?}", made.diagnostic);
    let certificate = made.artifacts[0].uri.clone();
    let budget = BudgetRequest { memory_bytes: Some(memory), ..Default::default() };
    let checked = invoke_with(runtime, "certificate.verify", json!({"certificate": certificate}), budget);
    let record = checked.verification.unwrap_or_else(|| panic!("no verification: {:?}", checked.diagnostic));
    (record.status, record.reason)
}

#[test]
fn a_proof_larger_than_the_checkers_memory_is_uploaded_streamed_and_verified() {
    let (runtime, _dir) = support::runtime();
    let cnf_text = example("uuf-100-1.cnf");
    let cnf = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": cnf_text}));
    assert_eq!(cnf.status, Status::Completed, "{:?}", cnf.diagnostic);
    let cnf = cnf.artifacts[0].uri.clone();
    // About 40 MB of proof against 24 MiB of checker memory: read in ranges, never whole.
    let memory = 24 << 20;
    let text = padded_proof("uuf-100-1", 1_300_000);
    assert!(text.len() as u64 > 40 << 20, "{} bytes", text.len());
    let (status, reason) = verdict(&runtime, &cnf, &upload(&runtime, text.as_bytes()), memory);
    assert_eq!(status, VerificationStatus::Verified, "{reason}");
    let bytes = binary(&text);
    let (status, reason) = verdict(&runtime, &cnf, &upload(&runtime, &bytes), memory);
    assert_eq!(status, VerificationStatus::Verified, "binary: {reason}");

    // One hint of drat-trim's last lemma flipped to the clause before it: rejected, at its line.
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.iter().rposition(|l| l.split_whitespace().nth(1) != Some("d")).unwrap();
    let mut tokens: Vec<String> = lines[last].split_whitespace().map(str::to_owned).collect();
    let hint = tokens.len() - 2;
    let flipped: i64 = tokens[hint].parse::<i64>().unwrap() - 1;
    tokens[hint] = flipped.to_string();
    let mut copy: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    copy[last] = tokens.join(" ");
    let corrupt = copy.join("\n");
    let (status, reason) = verdict(&runtime, &cnf, &upload(&runtime, corrupt.as_bytes()), memory);
    assert_eq!(status, VerificationStatus::Rejected, "{reason}");
    assert!(reason.contains(&format!("line {}", last + 1)), "{reason}");
    let (status, reason) = verdict(&runtime, &cnf, &upload(&runtime, &binary(&corrupt)), memory);
    assert_eq!(status, VerificationStatus::Rejected, "binary: {reason}");

    // The checker reads only the file the request names: a direct call without it is refused by name.
    let made = invoke(
        &runtime,
        "sat.certificate.construct",
        Mode::Explore,
        json!({"cnf": cnf, "proof": upload(&runtime, &bytes)}),
    );
    let direct = json!({"cnf": cnf, "certificate": made.artifacts[0].uri});
    let refused = invoke(&runtime, "sat.certificate.verify", Mode::Verify, direct);
    let diagnostic = refused.diagnostic.expect("refused");
    assert_eq!(diagnostic.details["path"], json!("input.proof_file"), "{diagnostic:?}");
    // An upload of another schema is not a proof file.
    let other = runtime.upload(&mut &b"p cnf 1 1\n1 0\n"[..], "jacobian:sat/cnf-text@1", None, None).unwrap();
    let refused = invoke(&runtime, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "proof": other.uri}));
    assert_eq!(refused.status, Status::Failed, "{:?}", refused.output);
}

/// `jacobian` with `args`: (exit code, stdout, the error envelope on stderr if any).
fn run(data_dir: &Path, args: &[&str]) -> (i32, String, Value) {
    let out = Command::new(BIN).arg("--data-dir").arg(data_dir).args(args).output().expect("run jacobian");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let envelope = stderr.lines().last().and_then(|l| serde_json::from_str(l).ok()).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), envelope)
}

/// The files and the partial uploads the data directory holds.
fn stored_files(data_dir: &Path) -> (Vec<String>, usize) {
    let names = |sub: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(data_dir.join(sub))
            .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
            .unwrap_or_default();
        names.sort();
        names
    };
    (names("files"), names("tmp").iter().filter(|n| n.ends_with(".part")).count())
}

/// A PUT whose body is sent chunked (no declared length), in `pieces`.
fn put_chunked(addr: &str, path: &str, pieces: &[&[u8]]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let head =
        format!("PUT {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    for piece in pieces {
        // The server may refuse (and close) before the last piece.
        let _ = stream.write_all(format!("{:x}\r\n", piece.len()).as_bytes());
        let _ = stream.write_all(piece);
        let _ = stream.write_all(b"\r\n");
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

#[test]
fn uploads_are_bounded_content_addressed_and_stored_only_whole() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let limit = 1u64 << 20;
    let policy = cli(data, &["policy", "show"]);
    let policy_file = dir.path().join("policy.in.toml");
    std::fs::write(&policy_file, format!("{policy}\n[uploads]\nmax_bytes = {limit}\n")).unwrap();
    cli(data, &["policy", "set", policy_file.to_str().unwrap()]);
    let proof = example("uuf-100-2.lrat");
    let proof_file = dir.path().join("proof.lrat");
    std::fs::write(&proof_file, &proof).unwrap();

    // The command line: the URI of an envelope naming the file by its bytes' digest.
    let put = |file: &Path, schema: &str| run(data, &["artifact", "put", file.to_str().unwrap(), "--schema", schema]);
    let (code, stdout, _) = put(&proof_file, LRAT_FILE);
    assert_eq!(code, 0);
    let uploaded: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(uploaded["file"], json!(Digest::of(proof.as_bytes()).to_string()));
    assert_eq!(uploaded["bytes"], json!(proof.len()));
    let uri = uploaded["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("artifact://sha256/"), "{uri}");
    let before = stored_files(data);
    assert_eq!(before, (vec![Digest::of(proof.as_bytes()).to_hex()], 0));

    // Over the bound, a bad schema: refused by name, nothing stored.
    let big = dir.path().join("big.lrat");
    std::fs::write(&big, vec![b'c'; limit as usize + 1]).unwrap();
    let (code, _, envelope) = put(&big, LRAT_FILE);
    assert_eq!((code, envelope["error_type"].as_str()), (3, Some("payload_too_large")), "{envelope}");
    assert!(envelope["error"].as_str().unwrap().contains("max_bytes"), "{envelope}");
    let (code, _, envelope) = put(&proof_file, "lrat");
    assert_eq!((code, envelope["error_type"].as_str()), (3, Some("validation_error")), "{envelope}");
    assert_eq!(stored_files(data), before);

    // Over HTTP, content-addressed: the same bytes give the same artifact.
    let server = Server::start_with(data, None, &[]);
    let hex = Digest::of(proof.as_bytes()).to_hex();
    let path = format!("/artifacts/sha256/{hex}?schema=jacobian%3Asat%2Flrat-file%401");
    let (status, _, body) = server.request_with_body("PUT", &path, &[], proof.as_bytes());
    assert_eq!(status, 201, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["uri"], json!(uri));
    // Bytes that do not have the digest the path names: refused, nothing stored.
    let other = Digest::of(b"something else").to_hex();
    let (status, _, body) =
        server.request_with_body("PUT", &format!("/artifacts/sha256/{other}?schema={LRAT_FILE}"), &[], b"1 2 0 1 0\n");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("digest_mismatch"), "{body}");
    // Declared over the bound: refused before a byte is read; sent over it without a length: cut off.
    let headers = [("Content-Length", "2000000")];
    let (status, _, body) =
        server.request_with_body("PUT", &format!("/artifacts/sha256/{other}?schema={LRAT_FILE}"), &headers, b"");
    assert_eq!(status, 413, "{body}");
    let piece = vec![b'c'; 256 << 10];
    let pieces: Vec<&[u8]> = (0..6).map(|_| piece.as_slice()).collect();
    let (status, body) = put_chunked(&server.addr, &format!("/artifacts/sha256/{other}?schema={LRAT_FILE}"), &pieces);
    assert_eq!(status, 413, "{body}");
    // No schema, a malformed path, another method: refused by name.
    let (status, _, body) = server.request_with_body("PUT", &format!("/artifacts/sha256/{hex}"), &[], b"x");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("schema"), "{body}");
    let (status, _, body) = server.request_with_body("PUT", "/artifacts/sha256/XYZ?schema=a:b@1", &[], b"x");
    assert_eq!(status, 400, "{body}");
    let (status, _, _) = server.request("GET", &format!("/artifacts/sha256/{hex}"), &[]);
    assert_eq!(status, 405);
    assert_eq!(stored_files(data), before);
    drop(server);

    // The uploaded proof goes in and is VERIFIED (the CLI and the store agree).
    let runtime = support::open(data.to_path_buf());
    let cnf = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": example("uuf-100-2.cnf")}));
    let (status, reason) = verdict(&runtime, &cnf.artifacts[0].uri, &uri, 64 << 20);
    assert_eq!(status, VerificationStatus::Verified, "{reason}");

    // The archive carries the file: a reviewer replays the check byte for byte elsewhere.
    let archive = Archive::build(&runtime, runtime.default_experiment()).expect("archives");
    assert_eq!(archive.files.keys().collect::<Vec<_>>(), vec![&hex]);
    let pack = serde_json::to_vec(&archive).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let report = replay(&pack, elsewhere.path(), &support::reviewer_trust(&pack)).expect("the pack is accepted");
    assert!(report.identical && report.replayed == 3, "{:?}", report.episodes);
    // A file swapped in the pack is refused by name.
    let mut swapped: Value = serde_json::from_slice(&pack).unwrap();
    swapped["files"][&hex] = json!("MSAyIDAgMSAwCg==");
    let refused = replay(&serde_json::to_vec(&swapped).unwrap(), elsewhere.path(), &support::reviewer_trust(&pack));
    assert_eq!(refused.expect_err("refused").field, format!("files.{hex}"));

    // A stored file changed in place (same length) is no evidence: the host stops the check and says why.
    let stored = data.join("files").join(&hex);
    let mut bytes = std::fs::read(&stored).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&stored, &bytes).unwrap();
    let cnf = cnf.artifacts[0].uri.clone();
    let made = invoke(&runtime, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "proof": uri}));
    let checked = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": made.artifacts[0].uri}));
    assert_eq!(checked.status, Status::Failed, "{:?}", checked.verification);
    let diagnostic = checked.diagnostic.expect("refused");
    assert_eq!(diagnostic.code, Code::ArtifactNotFound, "{diagnostic:?}");
    assert!(diagnostic.message.contains("corrupt"), "{diagnostic:?}");
    // Uploading the same bytes again repairs it.
    let (code, stdout, _) = put(&proof_file, LRAT_FILE);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["uri"], json!(uri));
    let (status, reason) = verdict(&runtime, &cnf, &uri, 64 << 20);
    assert_eq!(status, VerificationStatus::Verified, "{reason}");
    // A file gone from the store: the upload that names it is refused at its field.
    std::fs::remove_file(&stored).unwrap();
    let refused = invoke(&runtime, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "proof": uri}));
    let diagnostic = refused.diagnostic.expect("refused");
    assert_eq!(diagnostic.details["path"], json!("input.proof"), "{diagnostic:?}");
}

#[test]
fn uploads_need_the_invoke_scope_when_the_server_authenticates() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let token = |scope: &str| -> String {
        let made: Value =
            serde_json::from_str(cli(data, &["tokens", "create", "--tenant", "acme", "--scope", scope]).trim())
                .unwrap();
        made["token"].as_str().unwrap().to_owned()
    };
    let (invoker, reader) = (token("invoke"), token("read"));
    // Room for the first upload below and then none.
    let policy = cli(data, &["policy", "show"]);
    let policy_file = dir.path().join("policy.in.toml");
    std::fs::write(&policy_file, format!("{policy}\n[quotas.default]\nstored_bytes = 12\n")).unwrap();
    cli(data, &["policy", "set", policy_file.to_str().unwrap()]);
    let server = Server::start_with(data, None, &["--auth-api-tokens", "--auth-resource", "http://127.0.0.1/mcp"]);
    let bytes = b"1 2 0 1 0\n";
    let path = format!("/artifacts/sha256/{}?schema={LRAT_FILE}", Digest::of(bytes).to_hex());
    let (status, _, body) = server.request_with_body("PUT", &path, &[], bytes);
    assert_eq!(status, 401, "{body}");
    let bearer = format!("Bearer {reader}");
    let (status, _, body) = server.request_with_body("PUT", &path, &[("Authorization", &bearer)], bytes);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("jacobian:invoke"), "{body}");
    assert_eq!(stored_files(data).0, Vec::<String>::new());
    let bearer = format!("Bearer {invoker}");
    let (status, _, body) = server.request_with_body("PUT", &path, &[("Authorization", &bearer)], bytes);
    assert_eq!(status, 201, "{body}");
    // The tenant's stored bytes: 10 of 12 spent. An upload never passes the quota: one of 11
    // declared bytes is refused whole before its body is read, one of 2 fills it, then none.
    let more = b"3 -1 0 2 0\n";
    let path = format!("/artifacts/sha256/{}?schema={LRAT_FILE}", Digest::of(more).to_hex());
    let (status, _, body) = server.request_with_body("PUT", &path, &[("Authorization", &bearer)], more);
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("quota_exceeded") && body.contains("12 stored bytes"), "{body}");
    let fits = b"0\n";
    let path = format!("/artifacts/sha256/{}?schema={LRAT_FILE}", Digest::of(fits).to_hex());
    let (status, _, body) = server.request_with_body("PUT", &path, &[("Authorization", &bearer)], fits);
    assert_eq!(status, 201, "{body}");
    let last = b"4\n";
    let path = format!("/artifacts/sha256/{}?schema={LRAT_FILE}", Digest::of(last).to_hex());
    let (status, _, body) = server.request_with_body("PUT", &path, &[("Authorization", &bearer)], last);
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("quota_exceeded") && body.contains("stored bytes"), "{body}");
    assert_eq!(stored_files(data).0.len(), 2);
}

#[test]
fn hosts_sharing_postgresql_see_a_file_uploaded_on_another_once_it_is_whole() {
    let url = support::postgres_database();
    let open = || {
        let dir = tempfile::tempdir().unwrap();
        let runtime = Runtime::open(RuntimeConfig {
            store: StoreConfig::Postgres(url.clone()),
            ..RuntimeConfig::new(dir.path().to_path_buf())
        })
        .expect("runtime on PostgreSQL");
        (runtime, dir)
    };
    let ((a, _a), (b, _b)) = (open(), open());
    // Several of the store's chunks, in the binary form.
    let bytes = binary(&padded_proof("uuf-100-3", 150_000));
    assert!(bytes.len() > 2 << 20, "{} bytes", bytes.len());
    let uri = upload(&a, &bytes);
    // A refused upload leaves no file and no partial chunks behind.
    let wrong = Digest::of(b"not these bytes");
    assert!(a.upload(&mut &bytes[..], LRAT_FILE, None, Some(&wrong)).is_err());
    let db = jacobian::store::postgres::Postgres::connect(&url).unwrap();
    assert_eq!(db.query_i64("SELECT count(*) FROM files").unwrap(), 1);
    assert_eq!(db.query_i64("SELECT count(*) FROM file_chunks WHERE digest LIKE 'pending-%'").unwrap(), 0);
    let cnf = invoke(&b, "sat.cnf.construct", Mode::Explore, json!({"dimacs": example("uuf-100-3.cnf")}));
    let (status, reason) = verdict(&b, &cnf.artifacts[0].uri, &uri, 64 << 20);
    assert_eq!(status, VerificationStatus::Verified, "{reason}");
}

#[test]
fn a_server_receives_at_most_eight_uploads_at_once_and_a_crash_leaves_nothing_for_long() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // A partial upload a crash left two days ago is swept when the data directory opens; a young one is not.
    std::fs::create_dir_all(data.join("tmp")).unwrap();
    let old = data.join("tmp/1-1.part");
    std::fs::write(&old, b"partial").unwrap();
    let two_days = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    std::fs::File::options().write(true).open(&old).unwrap().set_modified(two_days).unwrap();
    let young = data.join("tmp/1-2.part");
    std::fs::write(&young, b"partial").unwrap();
    let server = Server::start_with(data, None, &["--client-timeout-seconds", "30"]);
    assert!(!old.exists() && young.exists());
    // Eight uploads whose bodies have not arrived hold the eight places; the ninth is refused at once.
    let path = format!("/artifacts/sha256/{}?schema={LRAT_FILE}", Digest::of(b"x").to_hex());
    let held: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.addr).unwrap();
            let head = format!("PUT {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 1000\r\n\r\npartial", server.addr);
            stream.write_all(head.as_bytes()).unwrap();
            stream
        })
        .collect();
    // Each is being received (its partial file exists) before the ninth comes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let partial = || {
        std::fs::read_dir(data.join("tmp"))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| *p != young && p.extension().is_some_and(|x| x == "part"))
            .count()
    };
    while partial() < 8 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(partial(), 8);
    let (status, _, body) = server.request_with_body("PUT", &path, &[], b"x");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("8 uploads"), "{body}");
    // When they go, their places and partial files go with them.
    drop(held);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while partial() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(partial(), 0);
    let (status, _, body) = server.request_with_body("PUT", &path, &[], b"x");
    assert_eq!(status, 201, "{body}");
}
