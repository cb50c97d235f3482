//! Same input + same component + same budgets ⇒ byte-identical result.

use jacobian_guest::protocol::Mode;
use serde_json::json;

use crate::support::{self, SEARCH, VERIFY, invoke, without_accounting};

#[test]
fn identical_requests_give_identical_bytes_within_and_across_data_directories() {
    let input = json!({"hypotheses": ["commutative", "quasigroup"], "target": "associative", "max_order": 3});
    let (first, _a) = support::runtime();
    let (second, _b) = support::runtime();
    let one = invoke(&first, SEARCH, Mode::Explore, input.clone());
    let two = invoke(&first, SEARCH, Mode::Explore, input.clone());
    let three = invoke(&second, SEARCH, Mode::Explore, input);
    assert!(one.fuel_consumed > 0);
    assert_eq!(without_accounting(&one), without_accounting(&two));
    assert_eq!(without_accounting(&one), without_accounting(&three));

    let uri = one.check_with.and_then(|c| c.certificate_artifact).expect("certificate");
    let v1 = invoke(&first, VERIFY, Mode::Verify, json!({"countermodel": uri}));
    let v2 = invoke(&second, VERIFY, Mode::Verify, json!({"countermodel": uri}));
    assert_eq!(without_accounting(&v1), without_accounting(&v2));
}
