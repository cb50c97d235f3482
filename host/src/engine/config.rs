//! What a caller sets: the engine's settings for the life of the process,
//! and the control and bounds of one call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Engine-wide settings (fixed for the life of the process).
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Use the pooling instance allocator.
    pub pooling: bool,
    /// Hard ceiling on one call's linear memory; budgets may only be lower.
    pub max_memory_bytes: u64,
    /// Wasm stack per call (engine-wide in wasmtime).
    pub max_stack_bytes: usize,
    /// Component instances alive at once (pool size).
    pub max_concurrent_calls: u32,
    /// Calls allowed to wait for a slot when all are busy; a call beyond
    /// them fails at once with [`CallFailure::Overloaded`] (back-pressure).
    pub max_queued_calls: u32,
    /// Run ordinary calls on a fiber that yields every [`YIELD_FUEL`] fuel,
    /// so they can be cancelled and report progress (see [`CallControl`]).
    /// Without it a call runs to its end; host calls still stop a cancelled one.
    pub interruptible: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            pooling: true,
            max_memory_bytes: 1 << 30,
            max_stack_bytes: 1 << 20,
            max_concurrent_calls: 32,
            max_queued_calls: 256,
            interruptible: true,
        }
    }
}

/// Caller control over a running call: cancellation, and progress reports
/// (fuel used so far, fuel budget) every [`PROGRESS_INTERVAL`] or so.
#[derive(Clone, Default)]
pub struct CallControl {
    /// Set to stop the guest at its next yield (every [`YIELD_FUEL`] fuel)
    /// or host call, whichever comes first.
    pub cancel: Arc<AtomicBool>,
    /// Called from the calling thread while the guest runs.
    pub progress: Option<Arc<dyn Fn(u64, u64) + Send + Sync>>,
    /// Wall time the call may run once it has a slot; past it the call is
    /// stopped at its next yield or host call with
    /// [`super::CallFailure::DeadlineExceeded`].
    pub wall_limit: Option<Duration>,
}

/// Bounds of an optimistic inline attempt. A call that stays within them is
/// answered exactly as an ordinary call would be (fuel is deterministic and
/// components are pure functions of their input); one that needs more fuel
/// or memory, a slot that is not free at once, a larger answer or more time
/// than [`INLINE_DEADLINE`] is abandoned before it has any effect and then run
/// again from the start as an ordinary call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InlineLimits {
    /// Fuel the attempt may use (about a millisecond of guest work).
    pub fuel: u64,
    /// Answer bytes the attempt may return.
    pub output_bytes: u64,
    /// Linear memory the attempt may grow to. It also bounds what one host
    /// call can take, which no deadline can interrupt.
    pub memory_bytes: u64,
}

impl InlineLimits {
    /// The limits the MCP edge uses: about 1 ms of guest work, a 256 KiB
    /// answer and 32 MiB of memory.
    pub const DEFAULT: InlineLimits =
        InlineLimits { fuel: 20_000_000, output_bytes: 256 << 10, memory_bytes: 32 << 20 };
}

/// Wall time an inline attempt may take. Guest code and bulk memory
/// operations are bounded by the attempt's fuel (wasmtime charges
/// `memory.copy` and `memory.fill` per byte, before they run), but fuel does
/// not bound time spent in host functions: a guest can pass the same large
/// string to `log` again and again for a few fuel each. So an attempt is also
/// abandoned at its first host call (or fallible libcall) past this deadline;
/// a host call under way finishes first, bounded by the attempt's memory.
pub const INLINE_DEADLINE: Duration = Duration::from_millis(20);

impl CallControl {
    /// Stop the call.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }

    /// Whether the call was cancelled.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }
}

/// Host resources (WASI streams, pollables, …) one call may hold at once:
/// a guest that keeps creating them (a `subscribe-duration` storm) is refused
/// past this, instead of growing the host's table (wasmtime's default allows
/// a million).
pub const MAX_RESOURCES: usize = 4096;

/// Fuel an ordinary call spends between two yields to its driver, which then
/// checks for cancellation and reports progress: about half a millisecond of
/// guest work. A yield is the out-of-fuel check guest code makes anyway.
pub const YIELD_FUEL: u64 = 10_000_000;
/// How often a call waiting for a slot checks whether it was cancelled.
pub(super) const WAIT_POLL: Duration = Duration::from_millis(10);
/// At most how often a running call reports progress.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);
