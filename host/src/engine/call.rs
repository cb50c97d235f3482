//! One call of one component, in a fresh store: an ordinary call
//! ([`Sandbox::call`]), which waits for a slot, yields to its driver every
//! [`YIELD_FUEL`] fuel and can be cancelled, and an inline attempt
//! ([`Sandbox::attempt`]), which takes a slot only if one is free, never
//! yields, and is abandoned whole as soon as it needs more than its
//! [`InlineLimits`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use wasmtime::component::{ResourceTable, WasmList, WasmStr};
use wasmtime::{CallHook, Engine, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

use super::state::{ArtifactAccess, CallState, Limiter};
use super::wasi::deny_by_default_wasi;
use super::{
    CONSOLE_BYTES, CallBudgets, CallControl, CallFailure, CallReport, Entries, Entry, INLINE_DEADLINE, InlineLimits,
    Loaded, MAX_REFUSAL_BYTES, MAX_RESOURCES, PROGRESS_INTERVAL, Sandbox, YIELD_FUEL,
};

/// How an inline attempt ended.
pub enum Attempt {
    /// Within its bounds: the call's report, exactly an ordinary call's.
    Answered(CallReport),
    /// No slot was free: nothing ran.
    Busy,
    /// It went beyond a bound (or could not run on this thread): its work
    /// was thrown away.
    Beyond,
}

/// How one run in a store is bounded and watched.
struct Watch {
    /// Fuel the run may spend.
    fuel: u64,
    /// Linear memory it may grow to.
    memory: u64,
    /// Whether it yields to its driver every [`YIELD_FUEL`] fuel.
    yields: bool,
    /// Set to stop it at its next yield or host call.
    cancel: Arc<AtomicBool>,
    /// The run's deadline (an attempt's, or an ordinary call's wall limit),
    /// checked at every host call and yield; passing it sets `late`.
    deadline: Option<Instant>,
    late: Arc<AtomicBool>,
}

impl Sandbox {
    /// Run one ordinary call in a fresh store. Blocks until it ends: it waits
    /// for a slot (or fails at once with `Overloaded` when the wait queue is
    /// full), and `control` can cancel it and receives its progress.
    pub fn call(
        &self,
        loaded: &Loaded,
        entry: Entry,
        request: &[u8],
        budgets: &CallBudgets,
        artifacts: ArtifactAccess,
        control: &CallControl,
    ) -> CallReport {
        let _slot = match self.slots.acquire(&control.cancel) {
            Ok(slot) => slot,
            Err(failure) => return CallReport::never_ran(failure),
        };
        let watch = Watch {
            fuel: budgets.fuel,
            memory: budgets.memory_bytes,
            yields: self.config.interruptible,
            cancel: control.cancel.clone(),
            deadline: control.wall_limit.map(|limit| Instant::now() + limit),
            late: Arc::default(),
        };
        let (fuel, late) = (watch.fuel, watch.late.clone());
        let running = Run { engine: &self.engine, entries: &loaded.entries, entry, request, budgets, handoff: true };
        let (mut result, store, console) = running.run(artifacts, &watch, control);
        let wall_limit = control.wall_limit;
        if late.load(Ordering::SeqCst) && matches!(result, Err(CallFailure::Cancelled)) {
            let limit_ms = wall_limit.map_or(0, |limit| limit.as_millis() as u64);
            result = Err(CallFailure::DeadlineExceeded { limit_ms });
        }
        report(result, fuel, store, &console)
    }

    /// Try one call on a thread that must not be held long: only if a slot is
    /// free now, within `limits` (and the call's own budgets) and
    /// [`INLINE_DEADLINE`]. Unless [`Attempt::Answered`], the same call must
    /// run as an ordinary call (which, fuel being deterministic, gives what an
    /// attempt within bounds gives).
    pub fn attempt(
        &self,
        loaded: &Loaded,
        entry: Entry,
        request: &[u8],
        budgets: &CallBudgets,
        artifacts: ArtifactAccess,
        limits: InlineLimits,
    ) -> Attempt {
        let Some(_slot) = self.slots.try_acquire() else { return Attempt::Busy };
        let watch = Watch {
            fuel: limits.fuel.min(budgets.fuel),
            memory: limits.memory_bytes.min(budgets.memory_bytes),
            yields: false,
            cancel: Arc::default(),
            deadline: Some(Instant::now() + INLINE_DEADLINE),
            late: Arc::default(),
        };
        let control = CallControl::default();
        let running = Run { engine: &self.engine, entries: &loaded.entries, entry, request, budgets, handoff: false };
        let Some((result, store, console)) = catching_panics(|| running.run(artifacts, &watch, &control)) else {
            return Attempt::Beyond;
        };
        // Out of the attempt's own fuel (but not of the budget), refused
        // memory the budget would have given (even if the guest coped), past
        // the deadline, or too large an answer: the ordinary call decides.
        let out_of_attempt_fuel = watch.fuel < budgets.fuel && store.get_fuel().unwrap_or(0) == 0;
        let refused_attempt_memory = watch.memory < budgets.memory_bytes && store.data().limiter.refused.is_some();
        let beyond = watch.late.load(Ordering::SeqCst)
            || refused_attempt_memory
            || match &result {
                // Lifting a string the remaining fuel cannot pay for fails without spending it.
                Err(CallFailure::FuelExhausted) => watch.fuel < budgets.fuel,
                Err(_) => out_of_attempt_fuel,
                Ok(answer) => answer.len() as u64 > limits.output_bytes,
            };
        if beyond { Attempt::Beyond } else { Attempt::Answered(report(result, watch.fuel, store, &console)) }
    }
}

/// One run of one component's entry.
struct Run<'a> {
    engine: &'a Engine,
    entries: &'a Entries,
    entry: Entry,
    request: &'a [u8],
    budgets: &'a CallBudgets,
    /// Whether a run still going after its first fuel slice ([`YIELD_FUEL`])
    /// moves to the background lane (see `lanes`).
    handoff: bool,
}

impl Run<'_> {
    /// Instantiate and call the entry in a fresh store bounded by `watch`.
    ///
    /// The run owns its store, so that it can change threads between fuel
    /// slices: a call that ends within its first slice (nearly every quick
    /// one) runs entirely on this thread; one still going then (`handoff`)
    /// goes on in the background lane's idle scheduling class while this
    /// thread waits, so a long guest never keeps a request thread from a CPU.
    /// (Moving every call would cost each one two thread switches and a cold
    /// cache: 100 µs on a 200 µs call.)
    fn run(
        &self,
        artifacts: ArtifactAccess,
        watch: &Watch,
        control: &CallControl,
    ) -> (Result<Vec<u8>, CallFailure>, Store<CallState>, MemoryOutputPipe) {
        let console = MemoryOutputPipe::new(CONSOLE_BYTES);
        let wasi = deny_by_default_wasi(&console);
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        let state =
            CallState { wasi, table, limiter: Limiter::new(watch.memory), log: Vec::new(), log_dropped: 0, artifacts };
        let mut store = Store::new(self.engine, state);
        store.limiter(|state| &mut state.limiter);
        // Every host call, and every libcall that can fail (among them the
        // out-of-fuel check where a call yields, `memory.grow` and table
        // operations), is a cancellation and deadline check on the way in and
        // on the way out (so a call resumed after a yield stops at once; fuel
        // does not bound host work). It also notes the fuel spent so far, for
        // progress reports.
        let (cancel, late, deadline, fuel) = (watch.cancel.clone(), watch.late.clone(), watch.deadline, watch.fuel);
        let spent = Arc::new(AtomicU64::new(0));
        let noted = spent.clone();
        let reports = control.progress.is_some();
        store.call_hook(move |cx, hook| {
            if !matches!(hook, CallHook::CallingHost | CallHook::ReturningFromHost) {
                return Ok(());
            }
            if reports && matches!(hook, CallHook::CallingHost) {
                noted.store(fuel.saturating_sub(cx.get_fuel().unwrap_or(fuel)), Ordering::Relaxed);
            }
            if cancel.load(Ordering::SeqCst) {
                return Err(wasmtime::Error::new(Stopped));
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                late.store(true, Ordering::SeqCst);
                return Err(wasmtime::Error::new(Stopped));
            }
            Ok(())
        });
        let prepared = store
            .set_fuel(fuel)
            .and_then(|()| if watch.yields { store.fuel_async_yield_interval(Some(YIELD_FUEL)) } else { Ok(()) });
        if let Err(e) = prepared {
            return (Err(CallFailure::Instantiation { message: crate::errors::render(&*e) }), store, console);
        }
        let (entries, entry, request, budgets, yields) =
            (self.entries.clone(), self.entry, self.request.to_vec(), *self.budgets, watch.yields);
        let mut call = Box::pin(async move {
            let result = run_entry(&mut store, &entries, entry, &request, &budgets, yields).await;
            (result, store)
        });
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let (result, store) = match call.as_mut().poll(&mut context) {
            std::task::Poll::Ready(done) => done,
            std::task::Poll::Pending if self.handoff => {
                let control = control.clone();
                crate::lanes::on_background(move || drive(call, &control, fuel, &spent))
            }
            std::task::Poll::Pending => drive(call, control, fuel, &spent),
        };
        (result, store, console)
    }
}

/// What a finished run produced.
fn report(
    result: Result<Vec<u8>, CallFailure>,
    fuel: u64,
    store: Store<CallState>,
    console: &MemoryOutputPipe,
) -> CallReport {
    let consumed = fuel.saturating_sub(store.get_fuel().unwrap_or(0));
    let state = store.into_data();
    let console = String::from_utf8_lossy(&console.contents()).into_owned();
    CallReport { result, fuel_consumed: consumed, log: state.log, log_dropped: state.log_dropped, console }
}

thread_local! {
    /// Whether this thread is inside an inline attempt (its panics are expected).
    static ATTEMPTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run an inline attempt; `None` if it panicked. wasmtime-wasi's synchronous
/// bindings run stream and poll operations (a guest writing to its console,
/// as a panicking Rust guest does, or sleeping) with `block_on` on the ambient
/// tokio runtime, which panics on a thread that drives one, as the MCP edge's
/// thread does. Such an attempt is abandoned and runs again on a blocking
/// thread, where those operations work. The expected panic is kept out of the
/// log; any other thread's panics reach the previous hook unchanged.
fn catching_panics<T>(run: impl FnOnce() -> T) -> Option<T> {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !ATTEMPTING.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    ATTEMPTING.with(|a| a.set(true));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
    ATTEMPTING.with(|a| a.set(false));
    caught.ok()
}

/// Drive a call to its end on this thread. An ordinary call's future is
/// pending each time its guest has spent another [`YIELD_FUEL`] fuel (the
/// yield wakes itself, so no waker is needed). A cancelled call, or one past
/// its deadline, stops as soon as it is polled again: the store's call hook
/// refuses to return to it from the yield. Between polls the driver reports
/// progress at most every [`PROGRESS_INTERVAL`]: the fuel `spent` as the
/// store's call hook last noted it (at the yield itself, or a later host
/// call).
fn drive<T>(
    mut call: std::pin::Pin<Box<impl std::future::Future<Output = T> + ?Sized>>,
    control: &CallControl,
    budget: u64,
    spent: &AtomicU64,
) -> T {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let mut reported = Instant::now();
    loop {
        if let std::task::Poll::Ready(done) = call.as_mut().poll(&mut context) {
            return done;
        }
        if let Some(report) = &control.progress
            && reported.elapsed() >= PROGRESS_INTERVAL
        {
            report(spent.load(Ordering::Relaxed).min(budget), budget);
            reported = Instant::now();
        }
    }
}

/// Why a host call ended the guest: its call was cancelled, or an inline
/// attempt ran past its deadline (the attempt's `abandoned` flag says which).
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the call was stopped")
    }
}

impl std::error::Error for Stopped {}

/// Instantiate and call `entry`: on a fiber that yields (`yields`, see
/// [`drive`]), or synchronously, in which case the future is ready at once.
async fn run_entry(
    store: &mut Store<CallState>,
    loaded: &Entries,
    entry: Entry,
    request: &[u8],
    budgets: &CallBudgets,
    yields: bool,
) -> Result<Vec<u8>, CallFailure> {
    let instance =
        if yields { loaded.pre.instantiate_async(&mut *store).await } else { loaded.pre.instantiate(&mut *store) };
    let instance = instance.map_err(|e| classify(store, e, CallStage::Instantiate))?;
    let answer: Result<WasmList<u8>, WasmStr> = match entry {
        Entry::Describe => {
            let func = instance
                .get_typed_func::<(), (WasmList<u8>,)>(&mut *store, &loaded.describe)
                .map_err(|e| CallFailure::Instantiation { message: crate::errors::render(&*e) })?;
            let called = if yields { func.call_async(&mut *store, ()).await } else { func.call(&mut *store, ()) };
            let (list,) = called.map_err(|e| classify(store, e, CallStage::Run))?;
            Ok(list)
        }
        Entry::Run => {
            let func = instance
                .get_typed_func::<(&[u8],), (Result<WasmList<u8>, WasmStr>,)>(&mut *store, &loaded.run)
                .map_err(|e| CallFailure::Instantiation { message: crate::errors::render(&*e) })?;
            let called = if yields {
                func.call_async(&mut *store, (request,)).await
            } else {
                func.call(&mut *store, (request,))
            };
            let (answer,) = called.map_err(|e| classify(store, e, CallStage::Run))?;
            answer
        }
    };
    match answer {
        Ok(list) => {
            let bytes = list.len() as u64;
            if bytes > budgets.output_bytes {
                return Err(CallFailure::OutputTooLarge { bytes, limit: budgets.output_bytes });
            }
            Ok(list.as_le_slice(&*store).to_vec())
        }
        Err(message) => {
            // Only the kept prefix is copied out of the guest's memory.
            let text =
                message.to_str(&*store).map_err(|e| CallFailure::Trap { message: crate::errors::render(&*e) })?;
            Err(CallFailure::Refused { message: crate::limits::prefix(&text, MAX_REFUSAL_BYTES).to_owned() })
        }
    }
}

enum CallStage {
    Instantiate,
    Run,
}

fn classify(store: &Store<CallState>, error: wasmtime::Error, stage: CallStage) -> CallFailure {
    // Running out of fuel or being interrupted says why the call ended even
    // after a refused memory.grow the guest coped with; any other trap after
    // a refusal is the abort that refusal caused.
    if error.is::<Stopped>() {
        return CallFailure::Cancelled;
    }
    if let Some(file) = error.downcast_ref::<super::FileFailure>() {
        return CallFailure::FileUnavailable { message: file.message.clone(), corrupt: file.corrupt };
    }
    if let Some(wasmtime::Trap::OutOfFuel) = error.downcast_ref::<wasmtime::Trap>() {
        return CallFailure::FuelExhausted;
    }
    if let Some(limit) = store.data().limiter.refused {
        return CallFailure::MemoryLimit { limit };
    }
    match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::StackOverflow) => CallFailure::StackOverflow,
        Some(trap) => CallFailure::Trap { message: trap.to_string() },
        None => match stage {
            CallStage::Instantiate => CallFailure::Instantiation { message: crate::errors::render(&*error) },
            CallStage::Run => CallFailure::Trap { message: crate::errors::render(&*error) },
        },
    }
}
