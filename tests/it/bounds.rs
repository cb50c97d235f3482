//! Every host-side cost is bounded, enforced before the work, named in the
//! error, and tested at its boundary: a request or a component can make the
//! host do only bounded work.

use jacobian::contract::{Code, InvokeRequest, Status};
use jacobian::experiments::StopReason;
use jacobian_guest::protocol::Mode;
use serde_json::json;

use crate::support::{self, invoke};

/// Without anyone cancelling it, a call that spends host time instead of fuel
/// is stopped at the operator's wall-clock ceiling, typed, and stores nothing.
#[test]
fn a_call_past_the_wall_clock_ceiling_is_stopped_typed_and_not_stored() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    runtime.update_policy(|p| p.budgets.wall_ms = 300).unwrap();
    for attack in ["host_time", "bulk_fill"] {
        let result = runtime.invoke(&InvokeRequest {
            capability_id: "test.hostile.attack".into(),
            input: json!({"attack": attack, "argument": "forever"}),
            experiment: Some("deadline".into()),
            ..Default::default()
        });
        let d = result.diagnostic.as_ref().expect("stopped");
        assert_eq!(d.code, Code::DeadlineExceeded, "{attack}: {}", d.message);
        assert_eq!(d.details["wall_ms"], 300, "{attack}");
        assert!(d.message.contains("300 ms") && d.suggestion.contains("not replayable"), "{attack}: {d:?}");
        assert_eq!(result.accounting.stop_reason, Some(StopReason::Cancelled), "{attack}");
    }
    let lines = runtime.experiments().invocations("deadline").unwrap();
    assert!(lines.iter().all(|l| l.stop_reason == StopReason::Cancelled && l.episode.is_none()), "{lines:?}");
    // The host keeps serving, and an ordinary call is not affected.
    let after = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    assert_eq!(after.status, Status::Completed);
    // The ceiling is the operator's, checked when the policy is read.
    let error =
        jacobian::policy::Policy::parse("[budgets]\nfuel = 1\nmemory_bytes = 1\noutput_bytes = 1\nwall_ms = 0\n", 1)
            .unwrap_err();
    assert_eq!(error.to_string(), "policy file: budgets.wall_ms must be positive");
}
