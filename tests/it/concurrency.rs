//! More concurrent calls than sandbox slots: calls wait for a slot, none fails
//! for lack of one.

use jacobian::contract::{BudgetRequest, Code};
use serde_json::json;

use crate::support;

#[test]
fn more_concurrent_calls_than_sandbox_slots_all_run() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).expect("install hostile");
    // Reopen with the component loaded and a pool of only 2 slots.
    let runtime = support::open_with_slots(dir.path().to_path_buf(), 2);
    // Each call spins until its fuel runs out (tens of milliseconds), so the
    // 32 calls overlap and most of them must wait for a slot.
    let threads: Vec<_> = (0..32)
        .map(|_| {
            let runtime = runtime.clone();
            std::thread::spawn(move || {
                let budget = BudgetRequest { fuel: Some(20_000_000), ..Default::default() };
                let result = support::invoke_with(&runtime, "test.hostile.attack", json!({"attack": "loop"}), budget);
                result.diagnostic.map(|d| d.code)
            })
        })
        .collect();
    for thread in threads {
        assert_eq!(thread.join().expect("thread"), Some(Code::FuelExhausted));
    }
}
