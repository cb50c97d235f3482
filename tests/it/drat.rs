//! DRAT as CaDiCaL writes it, checked directly: Debian's `cadical` (outside
//! the project) refutes SATLIB's uuf50 formulas and drat-trim's uuf-100
//! examples; each proof, text and binary, is uploaded or given inline as it
//! is and VERIFIED by the SAT checker. The same proofs offered for SATLIB's
//! satisfiable uf50 formulas are REJECTED.

use std::path::Path;
use std::process::{Command, Stdio};

use jacobian::Runtime;
use jacobian::contract::{Status, VerificationStatus};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::sat::satlib;
use crate::support::{self, invoke};

const DRAT_FILE: &str = "jacobian:sat/drat-file@1";

fn construct(runtime: &Runtime, id: &str, input: Value) -> String {
    let result = invoke(runtime, id, Mode::Explore, input);
    assert_eq!(result.status, Status::Completed, "{id}: {:?}", result.diagnostic);
    result.artifacts[0].uri.clone()
}

/// Bind the proof (inline text, or an uploaded file) to the CNF and check it through `certificate.verify`.
fn verdict(runtime: &Runtime, cnf: &str, proof: Value) -> (VerificationStatus, String) {
    let mut input = json!({"cnf": cnf});
    input.as_object_mut().unwrap().extend(proof.as_object().unwrap().clone());
    let certificate = construct(runtime, "sat.certificate.construct", input);
    let checked = invoke(runtime, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
    let record = checked.verification.unwrap_or_else(|| panic!("no verification: {:?}", checked.diagnostic));
    (record.status, record.reason)
}

/// CaDiCaL's DRAT proof of `cnf` (text or binary) into `proof`; its exit code.
fn cadical(cnf: &Path, proof: &Path, binary: bool) -> Option<i32> {
    let mut command = Command::new("cadical");
    command.arg("-q").arg(if binary { "--binary=true" } else { "--binary=false" }).arg(cnf).arg(proof);
    command.stdout(Stdio::null()).status().expect("cadical runs").code()
}

#[test]
fn cadical_s_drat_proofs_are_verified_as_written_and_never_for_a_satisfiable_formula() {
    let present = Command::new("cadical").arg("--version").output();
    assert!(present.is_ok(), "cadical is not installed (scripts/test.sh installs it with apt-get)");
    let (runtime, _dir) = support::runtime();
    let dir = tempfile::tempdir().unwrap();
    let mut unsat: Vec<(String, String)> = satlib("uuf50-218").into_iter().take(12).collect();
    for k in 1..=5 {
        let path = support::testdata(&format!("sat/drat-trim-examples/uuf-100-{k}.cnf"));
        unsat.push((format!("uuf-100-{k}"), std::fs::read_to_string(&path).unwrap()));
    }
    let satisfiable = satlib("uf50-218");
    let (mut binary_steps, mut rejected) = (0, 0);
    for (i, (name, dimacs)) in unsat.iter().enumerate() {
        let file = dir.path().join("formula.cnf");
        std::fs::write(&file, dimacs).unwrap();
        let cnf = construct(&runtime, "sat.cnf.construct", json!({"dimacs": dimacs}));
        for binary in [false, true] {
            let proof = dir.path().join("proof.drat");
            assert_eq!(cadical(&file, &proof, binary), Some(20), "{name}: CaDiCaL agrees it is unsatisfiable");
            let bytes = std::fs::read(&proof).unwrap();
            assert_eq!(bytes[0] == b'a' || bytes[0] == b'd', binary, "{name}: CaDiCaL wrote the form asked for");
            let given = if binary {
                let uploaded = runtime.upload(&mut &bytes[..], DRAT_FILE, Some(bytes.len() as u64), None).unwrap();
                json!({"proof": uploaded.uri})
            } else {
                json!({"drat": String::from_utf8(bytes).unwrap()})
            };
            let (status, reason) = verdict(&runtime, &cnf, given.clone());
            assert_eq!(status, VerificationStatus::Verified, "{name} (binary: {binary}): {reason}");
            assert!(reason.contains("drat"), "{reason}");
            binary_steps += usize::from(binary);
            // The same proof for a satisfiable formula of SATLIB's: never VERIFIED.
            if i < 12 {
                let (other, text) = &satisfiable[i];
                let sat_cnf = construct(&runtime, "sat.cnf.construct", json!({"dimacs": text}));
                let (status, reason) = verdict(&runtime, &sat_cnf, given);
                assert_eq!(status, VerificationStatus::Rejected, "{name}'s proof for {other}: {reason}");
                rejected += 1;
            }
        }
    }
    assert_eq!((binary_steps, rejected), (17, 24));
}
