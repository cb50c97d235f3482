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
        assert_eq!(result.verification.unwrap().status, VerificationStatus::Verified);
    }

    // Not a certificate: no producer made the CNF as one.
    let refused = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": unsat}));
    assert_eq!(refused.diagnostic.unwrap().details["path"], "input.certificate");

    // With the SAT checker revoked nothing is routed and nothing is concluded.
    let sat_checker: Digest =
        runtime.catalog().get("sat.certificate.verify").map(|e| e.component).expect("bundled SAT checker");
    runtime.update_policy(|p| p.revoke(sat_checker)).unwrap();
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
