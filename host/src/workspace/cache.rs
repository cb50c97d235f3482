//! The workspace service's memory, bounded: the head states of the
//! workspaces used most recently, and snapshots of earlier revisions every
//! [`SNAPSHOT_EVERY`] revisions, so that a query at an old revision folds at
//! most that many revisions from the nearest snapshot instead of from rev-0.
//! Both evict the entries used least recently past their capacity, counted
//! in states and in bytes: a state weighs the bytes of every entry written to
//! its workspace so far (at most [`super::model::MAX_WORKSPACE_BYTES`]), so a
//! few large workspaces cannot hold more memory than many small ones. States
//! of one workspace share their texts (`State`), and each counts them all:
//! the bound is on what the states would hold unshared, so snapshots of one
//! very large workspace crowd each other out (a query at an old revision of
//! it then folds from further back, each step copying pointers, not texts).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::model::State;

/// Head states kept in memory.
pub const MAX_CACHED_HEADS: usize = 256;
/// Snapshots of earlier revisions kept in memory.
pub const MAX_SNAPSHOTS: usize = 256;
/// Bytes the head states may weigh together, and the snapshots together.
pub const MAX_CACHED_BYTES: u64 = 256 << 20;
/// A snapshot is kept of every revision that is a multiple of this.
pub const SNAPSHOT_EVERY: u64 = 64;

/// What a state weighs in the cache: its entries' bytes and a little for the rest.
fn weight(state: &State) -> u64 {
    state.entry_bytes.saturating_add(1024)
}

/// A map of at most `capacity` entries weighing at most `max_bytes` together
/// (bar the one entry just put) that evicts the entries used least recently.
struct Bounded<K: Ord> {
    entries: BTreeMap<K, (Arc<State>, u64)>,
    capacity: usize,
    max_bytes: u64,
    bytes: u64,
    tick: u64,
}

impl<K: Ord + Clone> Bounded<K> {
    fn new(capacity: usize, max_bytes: u64) -> Self {
        Bounded { entries: BTreeMap::new(), capacity, max_bytes, bytes: 0, tick: 0 }
    }

    fn touch(&mut self, key: &K) -> Option<Arc<State>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|(state, used)| {
            *used = tick;
            state.clone()
        })
    }

    fn put(&mut self, key: K, state: Arc<State>) {
        self.tick += 1;
        self.bytes = self.bytes.saturating_add(weight(&state));
        if let Some((replaced, _)) = self.entries.insert(key, (state, self.tick)) {
            self.bytes = self.bytes.saturating_sub(weight(&replaced));
        }
        while self.entries.len() > 1 && (self.entries.len() > self.capacity || self.bytes > self.max_bytes) {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some((evicted, _)) = self.entries.remove(&oldest) {
                self.bytes = self.bytes.saturating_sub(weight(&evicted));
            }
        }
    }
}

/// Head states and snapshots.
pub(super) struct StateCache {
    heads: Mutex<Bounded<String>>,
    snapshots: Mutex<Bounded<(String, u64)>>,
}

impl StateCache {
    pub fn new() -> Self {
        StateCache {
            heads: Mutex::new(Bounded::new(MAX_CACHED_HEADS, MAX_CACHED_BYTES)),
            snapshots: Mutex::new(Bounded::new(MAX_SNAPSHOTS, MAX_CACHED_BYTES)),
        }
    }

    /// The cached head state of a workspace.
    pub fn head(&self, workspace_id: &str) -> Option<Arc<State>> {
        self.heads.lock().unwrap_or_else(|e| e.into_inner()).touch(&workspace_id.to_owned())
    }

    /// Keep `state` as the head of `workspace_id` unless a later one is kept.
    pub fn put_head(&self, workspace_id: &str, state: Arc<State>) {
        let mut heads = self.heads.lock().unwrap_or_else(|e| e.into_inner());
        let key = workspace_id.to_owned();
        if heads.touch(&key).is_none_or(|s| s.revision <= state.revision) {
            heads.put(key, state);
        }
    }

    /// The latest snapshot of `workspace_id` at or before `revision`.
    pub fn snapshot_before(&self, workspace_id: &str, revision: u64) -> Option<Arc<State>> {
        let mut snapshots = self.snapshots.lock().unwrap_or_else(|e| e.into_inner());
        let key = snapshots
            .entries
            .range((workspace_id.to_owned(), 0)..=(workspace_id.to_owned(), revision))
            .next_back()
            .map(|(k, _)| k.clone())?;
        snapshots.touch(&key)
    }

    /// Keep `state` if its revision is a snapshot point.
    pub fn maybe_snapshot(&self, workspace_id: &str, state: &Arc<State>) {
        if state.revision.is_multiple_of(SNAPSHOT_EVERY) {
            self.snapshots
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .put((workspace_id.to_owned(), state.revision), state.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weighing(bytes: u64, revision: u64) -> Arc<State> {
        let mut state = State::open("Goal", "").expect("open");
        state.entry_bytes = bytes;
        state.revision = revision;
        Arc::new(state)
    }

    /// The cache is bounded in bytes as well as in states: large states evict
    /// the ones used least recently, and the one just put is always kept.
    #[test]
    fn the_cache_is_bounded_in_bytes() {
        let cache = StateCache::new();
        let large = MAX_CACHED_BYTES / 3;
        for w in ["w1", "w2", "w3"] {
            cache.put_head(w, weighing(large, 1));
        }
        assert!(cache.head("w1").is_none(), "three large heads are kept together");
        assert!(cache.head("w2").is_some() && cache.head("w3").is_some());
        cache.put_head("huge", weighing(MAX_CACHED_BYTES * 2, 1));
        assert!(cache.head("huge").is_some(), "the state just put is kept");
        assert!(cache.head("w2").is_none() && cache.head("w3").is_none());
        // Replacing a head gives back the weight of the one it replaces.
        cache.put_head("huge", weighing(1, 2));
        for i in 0..MAX_CACHED_HEADS - 1 {
            cache.put_head(&format!("small-{i}"), weighing(1, 1));
        }
        assert!(cache.head("huge").is_some(), "a replaced head's weight was counted twice");
        assert!(cache.heads.lock().expect("heads").bytes <= MAX_CACHED_BYTES);
    }
}
