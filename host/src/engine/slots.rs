//! The sandbox's slots: bounded concurrency with a bounded wait queue.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{CallFailure, WAIT_POLL};

/// Bounds concurrent calls to the pool's size: a call beyond it waits for a
/// slot, and a call beyond the bounded wait queue is refused at once, so load
/// above capacity holds no threads or memory beyond running + queued calls.
pub(super) struct Slots {
    state: std::sync::Mutex<SlotState>,
    released: std::sync::Condvar,
    size: u32,
    max_queued: u32,
}

struct SlotState {
    free: u32,
    waiting: u32,
}

pub(super) struct SlotGuard<'a>(&'a Slots);

impl Slots {
    pub(super) fn new(size: u32, max_queued: u32) -> Self {
        Slots {
            state: std::sync::Mutex::new(SlotState { free: size, waiting: 0 }),
            released: std::sync::Condvar::new(),
            size,
            max_queued,
        }
    }

    pub(super) fn acquire(&self, cancel: &AtomicBool) -> Result<SlotGuard<'_>, CallFailure> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.free == 0 {
            if state.waiting >= self.max_queued {
                return Err(CallFailure::Overloaded { running: self.size, queued: state.waiting });
            }
            state.waiting += 1;
            while state.free == 0 {
                // A caller who cancels while waiting leaves the queue at once.
                if cancel.load(Ordering::SeqCst) {
                    state.waiting -= 1;
                    return Err(CallFailure::Cancelled);
                }
                state = self.released.wait_timeout(state, WAIT_POLL).unwrap_or_else(|e| e.into_inner()).0;
            }
            state.waiting -= 1;
        }
        state.free -= 1;
        Ok(SlotGuard(self))
    }

    /// Calls holding a slot now, and calls waiting for one.
    pub(super) fn occupancy(&self) -> (u32, u32) {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (self.size - state.free, state.waiting)
    }

    /// A slot if one is free now, without waiting.
    pub(super) fn try_acquire(&self) -> Option<SlotGuard<'_>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.free == 0 {
            return None;
        }
        state.free -= 1;
        Some(SlotGuard(self))
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        self.0.state.lock().unwrap_or_else(|e| e.into_inner()).free += 1;
        self.0.released.notify_one();
    }
}
