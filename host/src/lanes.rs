//! Where the server's work runs.
//!
//! The protocol threads (the async runtime `serve` starts) read requests,
//! parse small bodies, answer quick calls inline and write responses: work
//! bounded per request to about a millisecond. Validation, storage and
//! workspaces run on ordinary blocking threads: that work holds the stores'
//! locks. What is unbounded CPU work runs on the background lane: large
//! request bodies are parsed here, and the guest of an ordinary call still
//! running after its first fuel slice continues here. Every thread of the lane is in the idle scheduling class, so however
//! many long calls and large requests keep it busy, a small request finds a
//! CPU as soon as it arrives. The guest's own thread, not the one that
//! validates and records its call, is the one lowered: a thread holding a
//! store lock at idle priority would make every other writer wait for a CPU
//! it cannot get (priority inversion). The attack benchmark measures this
//! (`docs/performance.md`).

use std::sync::OnceLock;

use tokio::runtime::{Handle, Runtime};

/// The background lane's runtime, started on first use and kept for the
/// process's lifetime.
pub fn background() -> &'static Handle {
    static LANE: OnceLock<Runtime> = OnceLock::new();
    LANE.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("jacobian-background")
            .on_thread_start(lower_thread_priority)
            .enable_all()
            .build()
            .expect("the background lane's runtime")
    })
    .handle()
}

/// Run `work` on one of the background lane's blocking threads and wait
/// for it here (a panic in `work` resumes here).
pub fn on_background<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    background().spawn_blocking(move || {
        let _ = sender.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)));
    });
    match receiver.recv() {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("the background lane stopped"),
    }
}

/// Move the calling thread to the idle scheduling class (`SCHED_IDLE`), for
/// good (an unprivileged thread cannot leave it, which is why the lane has
/// threads of its own). A thread of any other class that wakes takes the CPU
/// from it at once; a lower nice value alone does not: the scheduler lets a
/// running thread finish its slice first, milliseconds of delay for a
/// request that needs a hundred microseconds.
fn lower_thread_priority() {
    if let Err(error) = idle_class() {
        tracing::warn!(%error, "the background lane runs at normal priority");
    }
}

/// Move the calling thread to `SCHED_IDLE` (see [`lower_thread_priority`]).
pub fn idle_class() -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on this thread's own id with a valid
    // parameter changes only its scheduling class.
    let status = unsafe { libc::sched_setscheduler(libc::gettid(), libc::SCHED_IDLE, &param) };
    if status == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}
