//! `certificate.verify`: one entry point that routes a certificate to the
//! operator-authorized checker for its format.

use jacobian::contract::{Assurance, Status, VerificationStatus};
use jacobian::digest::Digest;
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, invoke};

fn produce(runtime: &jacobian::Runtime, id: &str, input: Value) -> String {
    let result = invoke(runtime, id, Mode::Explore, input);
    assert_eq!(result.status, Status::Completed, "{id}: {:?}", result.diagnostic);
    result.check_with.and_then(|c| c.certificate_artifact).expect("certificate")
}

#[test]
fn certificates_of_every_format_reach_their_checker() {
    let (runtime, dir) = support::runtime();
    let construct = |dimacs: &str| {
        invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": dimacs})).artifacts[0].uri.clone()
    };
    let unsat = construct("p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n");
    let sat = construct("p cnf 2 1\n1 2 0\n");
    let examples = support::testdata("sat/drat-trim-examples");
    let foreign_cnf = construct(&std::fs::read_to_string(examples.join("example-5-vars.cnf")).unwrap());
    let foreign = invoke(
        &runtime,
        "sat.certificate.construct",
        Mode::Explore,
        json!({"cnf": foreign_cnf, "lrat": std::fs::read_to_string(examples.join("example-5-vars.lrat")).unwrap()}),
    )
    .artifacts[0]
        .uri
        .clone();
    let cases = [
        (produce(&runtime, "sat.solve", json!({"cnf": unsat})), "sat.certificate.verify"),
        (produce(&runtime, "sat.solve", json!({"cnf": sat})), "sat.certificate.verify"),
        (foreign, "sat.certificate.verify"),
        (
            produce(
                &runtime,
                "polynomial.compute.groebner_basis",
                json!({"generators": ["y - x^2", "z - x^3"], "vars": ["x", "y", "z"], "order": "lex"}),
            ),
            "polynomial.groebner_basis.verify",
        ),
        (
            {
                let square = json!({"vertices": 4, "edges": [[0, 1], [1, 2], [2, 3], [3, 0]]});
                let graph =
                    invoke(&runtime, "graph.construct.explicit", Mode::Explore, square).artifacts[0].uri.clone();
                produce(&runtime, "graph.induced_tree.maximum", json!({"graph": graph}))
            },
            "graph.induced_tree.maximum.verify",
        ),
        (
            produce(
                &runtime,
                "universal_algebra.search.countermodel",
                json!({"hypotheses": ["commutative"], "target": "associative", "max_order": 2}),
            ),
            "universal_algebra.countermodel.verify",
        ),
    ];
    let mut built_apart = 0;
    for (certificate, checker) in &cases {
        let result = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
        assert_eq!(
            result.assurance,
            Assurance::Verified,
            "{checker}: {:?} {:?}",
            result.diagnostic,
            result.verification
        );
        assert_eq!(result.output.as_ref().unwrap()["routed_to"], *checker);
        // The episode's trace names the digest of the request's input, not of the checker input built from it.
        let transport = result.transport.as_ref().expect("transport");
        let episode: Value =
            serde_json::from_slice(&runtime.episode(&transport.full_result_digest).unwrap().expect("stored")).unwrap();
        let asked = Digest::of_json(&json!({"certificate": certificate})).to_string();
        assert_eq!(episode["trace"][0]["payload"]["input_digest"], asked, "{checker}");
        built_apart += usize::from(result.provenance.as_ref().expect("provenance").input_digest.to_string() != asked);
        assert_eq!(result.verification.unwrap().status, VerificationStatus::Verified);
    }
    assert!(built_apart > 0, "some checker inputs differ from the request's, or the trace's digest was not tested");

    // Not a certificate: no producer made the CNF as one.
    let refused = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": unsat}));
    assert_eq!(refused.diagnostic.unwrap().details["path"], "input.certificate");

    // With the SAT checkers revoked nothing is routed and nothing is concluded.
    for id in ["sat.certificate.verify", "sat.certificate.plain.verify"] {
        let sat_checker: Digest = runtime.catalog().get(id).map(|e| e.component).expect("bundled SAT checker");
        runtime.update_policy(|p| p.revoke(sat_checker)).unwrap();
    }
    let unrouted = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": cases[0].0}));
    assert_eq!(unrouted.status, Status::Completed);
    assert_eq!(unrouted.assurance, Assurance::None);
    let record = unrouted.verification.as_ref().expect("the router's own record");
    assert_eq!((record.status, record.checker_authorized), (VerificationStatus::NotConcluded, false));
    assert_eq!(record.checker_digest, jacobian::catalog::router_component(), "no checker's digest");
    assert!(record.remaining_obligations[0].contains("format lrat"), "{record:?}");
    // It names no component, so an archive of its experiment carries none for it.
    let alone = runtime.invoke(&jacobian::contract::InvokeRequest {
        capability_id: "certificate.verify".into(),
        input: json!({"certificate": cases[0].0}),
        experiment: Some("unrouted".into()),
        ..Default::default()
    });
    assert_eq!(alone.verification.map(|v| v.status), Some(VerificationStatus::NotConcluded));
    let pack = jacobian::archive::Archive::build(&runtime, "unrouted").expect("archives");
    assert_eq!(pack.episodes.len(), 1);
    assert!(unrouted.obligations[0].contains("format lrat"), "{:?}", unrouted.obligations);
    drop(dir);
}
