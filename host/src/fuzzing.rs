//! Fuzz target bodies (`fuzz/fuzz_targets/`), kept here so they compile with
//! the crate and replay the committed regression inputs in the test suite.
//! Each takes arbitrary bytes, must never panic, and checks that every
//! refusal names what it refuses.

use std::collections::BTreeMap;

use jacobian_guest::protocol::BundleKind;

use crate::contract::InvokeRequest;
use crate::descriptor::DescriptorError;
use crate::workspace::model::State;
use crate::workspace::wire::WriteRequest;

/// `capability.invoke` arguments: parse, then the checks made before admission.
pub fn invoke_request(data: &[u8]) {
    let Ok(request) = serde_json::from_slice::<InvokeRequest>(data) else { return };
    let size = crate::limits::json_size(&request.input);
    assert_eq!(size, serde_json::to_vec(&request.input).expect("a parsed value serializes").len());
    if let Some(experiment) = &request.experiment
        && crate::experiments::valid_id(experiment)
    {
        assert!(!experiment.is_empty() && experiment.len() <= 64 && experiment.is_ascii(), "{experiment:?}");
    }
}

/// A component's `describe()` answer, checked as for installation.
pub fn descriptor(data: &[u8]) {
    let Some((&first, bytes)) = data.split_first() else { return };
    let kind = if first & 1 == 0 { BundleKind::Capability } else { BundleKind::Checker };
    match crate::descriptor::validate(bytes, kind, &BTreeMap::new()) {
        Ok(descriptor) => assert_eq!(descriptor.kind, kind),
        Err(DescriptorError::Invalid { path, message }) => {
            assert!(!message.is_empty());
            let top = path.split('.').next().unwrap_or_default();
            assert!(["", "protocol", "kind", "capabilities", "checkers"].contains(&top), "{path}");
        }
        Err(DescriptorError::DuplicateId { .. }) => panic!("no id is taken"),
    }
}

/// `workspace.write` arguments applied to a freshly opened workspace.
pub fn workspace_write(data: &[u8]) {
    let Ok(request) = serde_json::from_slice::<WriteRequest>(data) else { return };
    let state = State::open("fuzz", "a workspace for the fuzzer").expect("opens");
    if let Err(error) = state.apply(&request.entries) {
        assert!(!error.message.is_empty());
        assert!(error.path.starts_with("entries"), "{}", error.path);
    }
}

/// Replay every committed input of one target (the test suite does this for
/// all of them; see `fuzz/regressions/`).
pub fn replay(target: fn(&[u8]), dir: &std::path::Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        target(&std::fs::read(entry.path()).expect("regression input"));
        count += 1;
    }
    count
}
