//! Budgets and quotas across hosts of one store: experiment caps, calls in flight, fuel and bytes reserved.

use super::*;

#[test]
fn experiment_caps_hold_across_hosts_while_calls_run() {
    for backend in Backend::both() {
        let name = backend.name;
        let hosts = backend.experiment_services(2);
        let budgets = ExperimentBudgets { fuel: None, max_invocations: [("cap.x".to_owned(), 5)].into() };
        // Sixteen calls admitted at once over two hosts, none finished yet;
        // each admitted call holds its reservation (a shared store's) until recorded.
        let held: Vec<Vec<Option<Reservation>>> = std::thread::scope(|scope| {
            let tasks: Vec<_> = (0..16)
                .map(|i| {
                    let (host, budgets) = (hosts[i % 2].clone(), &budgets);
                    scope.spawn(move || (i % 2, host.admit("exp-cap", "cap.x", budgets).unwrap()))
                })
                .collect();
            let mut per_host = vec![Vec::new(), Vec::new()];
            for task in tasks {
                if let (host, Admission::Admitted { reservation }) = task.join().unwrap() {
                    per_host[host].push(reservation);
                }
            }
            per_host
        });
        let admitted: Vec<usize> = held.iter().map(Vec::len).collect();
        assert_eq!(admitted.iter().sum::<usize>(), 5, "{name}: exactly the cap runs at once: {admitted:?}");
        // A capability without a cap is not limited.
        for _ in 0..8 {
            let Admission::Admitted { reservation } = hosts[0].admit("exp-cap", "cap.free", &budgets).unwrap() else {
                panic!("{name}: uncapped");
            };
            hosts[0].record("exp-cap", &record("cap.free", StopReason::Completed, 1), reservation.as_ref()).unwrap();
        }
        // One call that never ran gives its place back; the others finish.
        let giver = if admitted[0] > 0 { 0 } else { 1 };
        for (host, reservations) in held.iter().enumerate() {
            for (i, reservation) in reservations.iter().enumerate() {
                let stop = if host == giver && i == 0 { StopReason::Unavailable } else { StopReason::Completed };
                let fuel = u64::from(stop == StopReason::Completed);
                hosts[host].record("exp-cap", &record("cap.x", stop, fuel), reservation.as_ref()).unwrap();
            }
        }
        let other = 1 - giver;
        let freed = hosts[other].admit("exp-cap", "cap.x", &budgets).unwrap();
        assert!(matches!(freed, Admission::Admitted { .. }), "{name}: the freed place");
        let refused = hosts[giver].admit("exp-cap", "cap.x", &budgets).unwrap();
        assert!(matches!(refused, Admission::Refused { stop: StopReason::InvocationCapReached, .. }), "{name}");
    }
}

/// Calls in flight under a tenant's quota are counted on every host of a
/// shared store, and a released place is free again.
#[test]
fn calls_in_flight_under_a_quota_are_counted_across_hosts() {
    use jacobian::quotas::{Limit, Quota, Reserve, Storing};
    let quota = Quota { concurrent_calls: Some(2), stored_bytes: Some(100), ..Quota::default() };
    for backend in Backend::both() {
        let hosts = backend.experiment_services(2);
        let admit = |host: usize| hosts[host].admit_quota("acme", &quota, Reserve::default()).unwrap();
        let first = admit(0).expect("one in flight");
        let second = admit(1).expect("two in flight");
        let refused = admit(0).unwrap_err();
        assert_eq!((refused.limit, refused.retry_after), (Limit::ConcurrentCalls, Some(1)), "{}", backend.name);
        let other = hosts[1].admit_quota("beta", &quota, Reserve::default()).unwrap();
        assert!(other.is_ok(), "{}: another tenant's places", backend.name);
        hosts[0].release(first, 10, 60, false).unwrap();
        let third = admit(1).unwrap_or_else(|e| panic!("{}: a place was freed: {e:?}", backend.name));
        hosts[1].release(second, 10, 60, false).unwrap();
        hosts[1].release(third, 0, 0, false).unwrap();
        // 120 bytes stored across both hosts: the next call of acme is refused, on either.
        for host in &hosts {
            let refused = host.admit_quota("acme", &quota, Reserve::default()).unwrap().unwrap_err();
            assert_eq!((refused.limit, refused.retry_after), (Limit::StoredBytes, None), "{}", backend.name);
            assert!(host.reserve_storage("acme", &quota, Storing::AtMost(1)).unwrap().is_err());
        }
    }
}

/// Fuel per day holds for calls at once: each reserves its budget when
/// admitted, on either host, and gives back what it did not spend.
#[test]
fn fuel_in_flight_is_reserved_across_hosts() {
    use jacobian::quotas::{Limit, Quota, Reserve};
    let quota = Quota { fuel_per_day: Some(100), ..Quota::default() };
    for backend in Backend::both() {
        let hosts = backend.experiment_services(2);
        let admit =
            |host: usize, fuel: u64| hosts[host].admit_quota("acme", &quota, Reserve { fuel, bytes: 0 }).unwrap();
        let first = admit(0, 60).expect("60 of 100 reserved");
        let second = admit(1, 60).expect("60 reserved is under 100");
        let refused = admit(0, 60).unwrap_err();
        assert_eq!(refused.limit, Limit::FuelPerDay, "{}: 120 reserved", backend.name);
        let other = hosts[1].admit_quota("beta", &quota, Reserve { fuel: 60, bytes: 0 }).unwrap();
        assert!(other.is_ok(), "{}: another tenant's fuel", backend.name);
        // The first spent 10 of its 60: 10 spent and 60 reserved leave room for one more, on either host.
        hosts[0].release(first, 10, 0, false).unwrap();
        let third = admit(1, 60).unwrap_or_else(|e| panic!("{}: its unspent fuel came back: {e:?}", backend.name));
        assert_eq!(admit(0, 1).unwrap_err().limit, Limit::FuelPerDay, "{}", backend.name);
        hosts[1].release(second, 60, 0, false).unwrap();
        hosts[1].release(third, 60, 0, false).unwrap();
        // 130 spent: over by less than one call's reservation, and nothing more is admitted.
        assert_eq!(admit(0, 0).unwrap_err().limit, Limit::FuelPerDay, "{}", backend.name);
    }
}

/// Stored bytes hold for stores at once on every host: an upload or a
/// workspace write reserves its length before a byte is stored and is
/// refused whole when the quota has not that much left; a body of unknown
/// length gets what is left; a call reserves its input and output budget.
#[test]
fn stored_bytes_in_flight_are_reserved_across_hosts() {
    use jacobian::quotas::{Limit, Quota, Reserve, Storing};
    let quota = Quota { stored_bytes: Some(100), ..Quota::default() };
    for backend in Backend::both() {
        let hosts = backend.experiment_services(2);
        let store = |host: usize, storing| hosts[host].reserve_storage("acme", &quota, storing).unwrap();
        let first = store(0, Storing::Exactly(60)).expect("60 of 100");
        assert_eq!(first.bytes(), 60);
        let refused = store(1, Storing::Exactly(41)).unwrap_err();
        assert_eq!((refused.limit, refused.value), (Limit::StoredBytes, 100), "{}: 60 + 41 > 100", backend.name);
        let unknown = store(1, Storing::AtMost(1_000)).expect("what is left");
        assert_eq!(unknown.bytes(), 40, "{}: a body of unknown length gets what is left", backend.name);
        assert!(store(0, Storing::AtMost(1)).is_err(), "{}: all of it reserved", backend.name);
        let other = hosts[1].reserve_storage("beta", &quota, Storing::Exactly(100)).unwrap();
        assert!(other.is_ok(), "{}: another tenant's bytes", backend.name);
        // The first stored 50 of its 60, the second 0 (refused on its way): 50 left, on either host.
        hosts[0].release(first, 0, 50, false).unwrap();
        hosts[1].release(unknown, 0, 0, false).unwrap();
        let call = hosts[1].admit_quota("acme", &quota, Reserve { fuel: 0, bytes: 70 }).unwrap().expect("50 left");
        let refused = store(0, Storing::AtMost(1)).unwrap_err();
        assert_eq!(refused.limit, Limit::StoredBytes, "{}: the call reserved its output budget", backend.name);
        hosts[1].release(call, 0, 30, false).unwrap();
        assert_eq!(store(0, Storing::AtMost(1_000)).unwrap().bytes(), 20, "{}: 80 stored", backend.name);
    }
}
