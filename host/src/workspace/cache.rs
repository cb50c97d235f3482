//! The workspace service's memory, bounded: the head states of the
//! workspaces used most recently, and snapshots of earlier revisions every
//! [`SNAPSHOT_EVERY`] revisions, so that a query at an old revision folds at
//! most that many revisions from the nearest snapshot instead of from rev-0.
//! Both evict the entry used least recently past their capacity.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::model::State;

/// Head states kept in memory.
pub const MAX_CACHED_HEADS: usize = 256;
/// Snapshots of earlier revisions kept in memory.
pub const MAX_SNAPSHOTS: usize = 256;
/// A snapshot is kept of every revision that is a multiple of this.
pub const SNAPSHOT_EVERY: u64 = 64;

/// A map of at most `capacity` entries that evicts the one used least recently.
struct Bounded<K: Ord> {
    entries: BTreeMap<K, (Arc<State>, u64)>,
    capacity: usize,
    tick: u64,
}

impl<K: Ord + Clone> Bounded<K> {
    fn new(capacity: usize) -> Self {
        Bounded { entries: BTreeMap::new(), capacity, tick: 0 }
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
        self.entries.insert(key, (state, self.tick));
        if self.entries.len() > self.capacity
            && let Some(oldest) = self.entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone())
        {
            self.entries.remove(&oldest);
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
            heads: Mutex::new(Bounded::new(MAX_CACHED_HEADS)),
            snapshots: Mutex::new(Bounded::new(MAX_SNAPSHOTS)),
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
