//! The sandbox: wasmtime configured for Jacobian, and one call of one component.
//!
//! **Invariant:** every call gets a fresh `Store` instantiated from a cached
//! `InstancePre`, with its own fuel, memory limiter, bounded log and a
//! deny-by-default WASI context (no preopens, environment, arguments or
//! network; frozen clocks; fixed random bytes). The linker offers only WASI and
//! the `jacobian:runtime/host` interface: nothing in it can reach another
//! component.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use jacobian_guest::protocol::BundleKind;
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentType, InstancePre, Lift, Linker, Lower, ResourceTable, WasmList,
};
use wasmtime::{CallHook, Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{Deterministic, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::digest::Digest;

pub use crate::contract::{CallBudgets, LogLine};

/// The name of the host interface every component may import.
pub const HOST_INTERFACE: &str = "jacobian:runtime/host@0.1.0";

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
    /// Set for an optimistic attempt on a thread that must not be held long
    /// (see [`InlineLimits`]); `None` for an ordinary call.
    pub inline: Option<InlineLimits>,
    /// Set when an inline attempt went beyond its limits and its work was
    /// thrown away: the call must be run again as an ordinary call.
    pub abandoned: Arc<AtomicBool>,
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
const INLINE_DEADLINE: Duration = Duration::from_millis(20);

impl CallControl {
    /// Stop the call.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }

    /// Whether the call was cancelled.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// Whether an inline attempt was abandoned (see [`InlineLimits`]).
    pub fn abandoned(&self) -> bool {
        self.abandoned.load(Ordering::SeqCst)
    }
}

/// Fuel an ordinary call spends between two yields to its driver, which then
/// checks for cancellation and reports progress: about half a millisecond of
/// guest work. A yield is the out-of-fuel check guest code makes anyway.
pub const YIELD_FUEL: u64 = 10_000_000;
/// How often a call waiting for a slot checks whether it was cancelled.
const WAIT_POLL: Duration = Duration::from_millis(10);
/// At most how often a running call reports progress.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Which export to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `describe()`.
    Describe,
    /// `invoke(request)` or `check(request)`, by bundle kind.
    Run,
}

/// Why a call produced no answer. Every variant is data, never a host panic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// The fuel budget ran out.
    FuelExhausted,
    /// The guest tried to grow memory past its budget.
    MemoryLimit { limit: u64 },
    /// The guest overflowed the wasm stack.
    StackOverflow,
    /// The guest trapped (panic, abort, unreachable, bad memory access).
    Trap { message: String },
    /// The answer exceeded the output budget.
    OutputTooLarge { bytes: u64, limit: u64 },
    /// The component refused the request (its `Err` string).
    Refused { message: String },
    /// The component could not be instantiated (e.g. the pool is full).
    Instantiation { message: String },
    /// The caller cancelled the call; the guest was interrupted.
    Cancelled,
    /// Every slot was busy and the wait queue full; the call never started.
    Overloaded { running: u32, queued: u32 },
    /// An inline attempt went beyond its [`InlineLimits`]; it is run again
    /// as an ordinary call, so no caller ever sees this.
    Abandoned,
}

/// What one call produced.
#[derive(Debug)]
pub struct CallReport {
    /// The answer bytes, or why there are none.
    pub result: Result<Vec<u8>, CallFailure>,
    /// Fuel consumed (deterministic).
    pub fuel_consumed: u64,
    /// The bounded log.
    pub log: Vec<LogLine>,
    /// Log lines dropped beyond the bound.
    pub log_dropped: u64,
    /// What the guest wrote to stdout/stderr (bounded), e.g. a panic message.
    pub console: String,
}

impl CallReport {
    /// A call that produced nothing to report: no fuel, no log, no console.
    fn never_ran(failure: CallFailure) -> Self {
        CallReport { result: Err(failure), fuel_consumed: 0, log: Vec::new(), log_dropped: 0, console: String::new() }
    }
}

/// A component ready to run.
pub struct Loaded {
    /// Its digest.
    pub digest: Digest,
    /// Capability or checker bundle.
    pub kind: BundleKind,
    /// Its imports (all on the allowlist).
    pub imports: Vec<String>,
    pre: InstancePre<CallState>,
    describe: ComponentExportIndex,
    run: ComponentExportIndex,
}

/// The configured engine and linker, shared by every call.
pub struct Sandbox {
    engine: Engine,
    linker: Linker<CallState>,
    config: EngineConfig,
    slots: Slots,
}

/// Bounds concurrent calls to the pool's size: a call beyond it waits for a
/// slot, and a call beyond the bounded wait queue is refused at once, so load
/// above capacity holds no threads or memory beyond running + queued calls.
struct Slots {
    state: std::sync::Mutex<SlotState>,
    released: std::sync::Condvar,
    size: u32,
    max_queued: u32,
}

struct SlotState {
    free: u32,
    waiting: u32,
}

struct SlotGuard<'a>(&'a Slots);

impl Slots {
    fn new(size: u32, max_queued: u32) -> Self {
        Slots {
            state: std::sync::Mutex::new(SlotState { free: size, waiting: 0 }),
            released: std::sync::Condvar::new(),
            size,
            max_queued,
        }
    }

    fn acquire(&self, cancel: &AtomicBool) -> Result<SlotGuard<'_>, CallFailure> {
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

    /// A slot if one is free now, without waiting.
    fn try_acquire(&self) -> Option<SlotGuard<'_>> {
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

/// Errors preparing a component (not call failures).
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("not a valid component: {0}")]
    Invalid(String),
    #[error("imports {0:?}, which is outside the allowlist")]
    ForbiddenImport(Vec<String>),
    #[error("exports neither `invoke` nor `check` with the contract's signature")]
    NoEntry,
    #[error("exports both `invoke` and `check`: a bundle is a capability bundle or a checker bundle, never both")]
    BothEntries,
    #[error("cannot be linked: {0}")]
    Link(String),
}

const MAX_LOG_LINES: usize = 256;
const MAX_LOG_LINE_BYTES: usize = 1024;
const CONSOLE_BYTES: usize = 16 * 1024;
const MAX_REFUSAL_BYTES: usize = 16 * 1024;

/// Interfaces a component may import: the host interface and the parts of
/// WASI that a Rust `std` guest imports whether or not it uses them. Every
/// one of these is backed by a deny-by-default context. Anything else (for
/// example `wasi:sockets/*` or `wasi:http/*`) is refused at install.
pub const IMPORT_ALLOWLIST: &[&str] = &[
    "jacobian:runtime/host@0.1.",
    "wasi:cli/environment@0.2.",
    "wasi:cli/exit@0.2.",
    "wasi:cli/stdin@0.2.",
    "wasi:cli/stdout@0.2.",
    "wasi:cli/stderr@0.2.",
    "wasi:cli/terminal-input@0.2.",
    "wasi:cli/terminal-output@0.2.",
    "wasi:cli/terminal-stdin@0.2.",
    "wasi:cli/terminal-stdout@0.2.",
    "wasi:cli/terminal-stderr@0.2.",
    "wasi:io/error@0.2.",
    "wasi:io/poll@0.2.",
    "wasi:io/streams@0.2.",
    "wasi:clocks/wall-clock@0.2.",
    "wasi:clocks/monotonic-clock@0.2.",
    "wasi:random/random@0.2.",
    "wasi:random/insecure@0.2.",
    "wasi:random/insecure-seed@0.2.",
    "wasi:filesystem/types@0.2.",
    "wasi:filesystem/preopens@0.2.",
];

/// Whether an import name is on the allowlist.
pub fn import_allowed(name: &str) -> bool {
    IMPORT_ALLOWLIST.iter().any(|prefix| name.starts_with(prefix))
}

impl Sandbox {
    /// Configure the engine and the linker.
    pub fn new(config: EngineConfig) -> anyhow::Result<Self> {
        let mut wasm = Config::new();
        wasm.wasm_component_model(true)
            .consume_fuel(true)
            .max_wasm_stack(config.max_stack_bytes)
            // A call's fiber: its wasm stack, and 1 MiB for the host code it calls.
            .async_stack_size(config.max_stack_bytes + (1 << 20))
            .wasm_backtrace_max_frames(None)
            .parallel_compilation(true);
        if config.pooling {
            let mut pool = PoolingAllocationConfig::default();
            let n = config.max_concurrent_calls;
            pool.total_component_instances(n)
                .total_core_instances(n * 16)
                .total_memories(n * 4)
                .total_tables(n * 16)
                .total_stacks(n)
                .max_core_instances_per_component(16)
                .max_memories_per_component(4)
                .max_tables_per_component(16)
                .max_memory_size(usize::try_from(config.max_memory_bytes)?)
                // Reset a slot's first pages by memset instead of madvise:
                // cheaper for the small heaps most calls touch.
                .linear_memory_keep_resident(2 << 20)
                .table_keep_resident(64 << 10)
                .pagemap_scan(wasmtime::Enabled::Auto);
            wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        let engine = Engine::new(&wasm)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        add_elapsed_sleeps(&mut linker)?;
        add_host_interface(&mut linker)?;
        let slots = Slots::new(config.max_concurrent_calls.max(1), config.max_queued_calls);
        Ok(Sandbox { engine, linker, config, slots })
    }

    /// The engine settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// A key that changes whenever compiled code from this engine would not
    /// load in another: the precompiled cache lives under it.
    pub fn compatibility_key(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }

    /// Compile component bytes.
    pub fn compile(&self, bytes: &[u8]) -> Result<Component, PrepareError> {
        Component::new(&self.engine, bytes).map_err(|e| PrepareError::Invalid(format!("{e:#}")))
    }

    /// Serialize compiled code for the precompiled cache.
    pub fn serialize(&self, component: &Component) -> anyhow::Result<Vec<u8>> {
        Ok(component.serialize()?)
    }

    /// Load precompiled code.
    ///
    /// # Safety
    /// `bytes` must have been produced by [`Sandbox::serialize`] on an engine
    /// with the same compatibility key; the caller re-hashes them first.
    pub unsafe fn deserialize(&self, bytes: &[u8]) -> anyhow::Result<Component> {
        // SAFETY: guaranteed by the caller (see above).
        Ok(unsafe { Component::deserialize(&self.engine, bytes) }?)
    }

    /// Every import of the component, by name.
    pub fn imports(&self, component: &Component) -> Vec<String> {
        component.component_type().imports(&self.engine).map(|(name, _)| name.to_owned()).collect()
    }

    /// Check the import allowlist and the exports, and pre-link.
    pub fn prepare(&self, digest: Digest, component: &Component) -> Result<Loaded, PrepareError> {
        let imports = self.imports(component);
        let forbidden: Vec<String> = imports.iter().filter(|name| !import_allowed(name)).cloned().collect();
        if !forbidden.is_empty() {
            return Err(PrepareError::ForbiddenImport(forbidden));
        }
        let describe = component.get_export_index(None, "describe").ok_or(PrepareError::NoEntry)?;
        let invoke = component.get_export_index(None, "invoke");
        let check = component.get_export_index(None, "check");
        let (kind, run) = match (invoke, check) {
            (Some(i), None) => (BundleKind::Capability, i),
            (None, Some(c)) => (BundleKind::Checker, c),
            (Some(_), Some(_)) => return Err(PrepareError::BothEntries),
            (None, None) => return Err(PrepareError::NoEntry),
        };
        let pre = self.linker.instantiate_pre(component).map_err(|e| PrepareError::Link(format!("{e:#}")))?;
        Ok(Loaded { digest, kind, imports, pre, describe, run })
    }

    /// Run one call in a fresh store. Blocking, unless `control` makes it an
    /// inline attempt (bounded by [`InlineLimits`] and [`INLINE_DEADLINE`]).
    pub fn call(
        &self,
        loaded: &Loaded,
        entry: Entry,
        request: &[u8],
        budgets: &CallBudgets,
        artifacts: ArtifactAccess,
        control: &CallControl,
    ) -> CallReport {
        let inline = control.inline;
        let slot = match inline {
            None => self.slots.acquire(&control.cancel),
            Some(_) => self.slots.try_acquire().ok_or(CallFailure::Abandoned),
        };
        let _slot = match slot {
            Ok(slot) => slot,
            Err(failure) => {
                if failure == CallFailure::Abandoned {
                    control.abandoned.store(true, Ordering::SeqCst);
                }
                return CallReport::never_ran(failure);
            }
        };
        let console = MemoryOutputPipe::new(CONSOLE_BYTES);
        let wasi = deny_by_default_wasi(&console);
        let memory = inline.map_or(budgets.memory_bytes, |limits| limits.memory_bytes.min(budgets.memory_bytes));
        let mut store = Store::new(
            &self.engine,
            CallState {
                wasi,
                table: ResourceTable::new(),
                limiter: Limiter::new(memory),
                log: Vec::new(),
                log_dropped: 0,
                artifacts,
            },
        );
        store.limiter(|state| &mut state.limiter);
        // An inline attempt gets at most its own fuel; running out of that
        // (but not of the budget) abandons it, as does an answer above its
        // bound. Either way nothing of it is kept. It never yields: it is
        // short by construction and runs on a thread that must not be held.
        let fuel = inline.map_or(budgets.fuel, |limits| limits.fuel.min(budgets.fuel));
        let yields = self.config.interruptible && inline.is_none();
        // Every host call, and every libcall that can fail (among them the
        // out-of-fuel check where a call yields, `memory.grow` and table
        // operations), is a cancellation point, and for an inline attempt a
        // deadline check too (fuel does not bound host work). It also notes
        // the fuel spent so far, for progress reports.
        let (cancel, abandoned) = (control.cancel.clone(), control.abandoned.clone());
        let spent = Arc::new(AtomicU64::new(0));
        let noted = spent.clone();
        let deadline = inline.map(|_| Instant::now() + INLINE_DEADLINE);
        let reports = control.progress.is_some();
        store.call_hook(move |cx, hook| {
            if !matches!(hook, CallHook::CallingHost) {
                return Ok(());
            }
            if reports {
                noted.store(fuel.saturating_sub(cx.get_fuel().unwrap_or(fuel)), Ordering::Relaxed);
            }
            if cancel.load(Ordering::SeqCst) {
                return Err(wasmtime::Error::new(Stopped));
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                abandoned.store(true, Ordering::SeqCst);
                return Err(wasmtime::Error::new(Stopped));
            }
            Ok(())
        });
        let run = |store: &mut Store<CallState>| {
            store.set_fuel(fuel).map_err(|e| CallFailure::Instantiation { message: format!("{e:#}") })?;
            if yields {
                store
                    .fuel_async_yield_interval(Some(YIELD_FUEL))
                    .map_err(|e| CallFailure::Instantiation { message: format!("{e:#}") })?;
            }
            drive(run_entry(store, loaded, entry, request, budgets, yields), control, fuel, &spent)
        };
        let mut result = match inline {
            None => run(&mut store),
            Some(_) => match attempt(|| run(&mut store)) {
                Some(result) => result,
                None => {
                    control.abandoned.store(true, Ordering::SeqCst);
                    return CallReport::never_ran(CallFailure::Abandoned);
                }
            },
        };
        if let Some(limits) = inline {
            // Out of the attempt's own fuel, refused memory the budget would
            // have given (even if the guest coped), past the deadline, or too
            // large an answer: the ordinary call decides.
            let out_of_attempt_fuel = fuel < budgets.fuel && store.get_fuel().unwrap_or(0) == 0;
            let refused_attempt_memory = memory < budgets.memory_bytes && store.data().limiter.refused.is_some();
            let beyond = control.abandoned()
                || refused_attempt_memory
                || match &result {
                    Err(_) => out_of_attempt_fuel,
                    Ok(answer) => answer.len() as u64 > limits.output_bytes,
                };
            if beyond {
                control.abandoned.store(true, Ordering::SeqCst);
                result = Err(CallFailure::Abandoned);
            }
        }
        let consumed = fuel.saturating_sub(store.get_fuel().unwrap_or(0));
        let state = store.into_data();
        let console = String::from_utf8_lossy(&console.contents()).into_owned();
        CallReport { result, fuel_consumed: consumed, log: state.log, log_dropped: state.log_dropped, console }
    }
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
fn attempt<T>(run: impl FnOnce() -> T) -> Option<T> {
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
/// yield wakes itself, so no waker is needed): the driver then stops a
/// cancelled call, dropping the future, which unwinds the guest off its
/// fiber, and reports progress at most every [`PROGRESS_INTERVAL`]: the fuel
/// `spent` as the store's call hook last noted it (at the yield itself, or a
/// later host call). Any other call is ready at its first poll.
fn drive(
    call: impl std::future::Future<Output = Result<Vec<u8>, CallFailure>>,
    control: &CallControl,
    budget: u64,
    spent: &AtomicU64,
) -> Result<Vec<u8>, CallFailure> {
    let mut call = std::pin::pin!(call);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let mut reported = Instant::now();
    loop {
        if let std::task::Poll::Ready(result) = call.as_mut().poll(&mut context) {
            return result;
        }
        if control.cancelled() {
            return Err(CallFailure::Cancelled);
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
    loaded: &Loaded,
    entry: Entry,
    request: &[u8],
    budgets: &CallBudgets,
    yields: bool,
) -> Result<Vec<u8>, CallFailure> {
    let instance =
        if yields { loaded.pre.instantiate_async(&mut *store).await } else { loaded.pre.instantiate(&mut *store) };
    let instance = instance.map_err(|e| classify(store, e, CallStage::Instantiate))?;
    let answer: Result<WasmList<u8>, String> = match entry {
        Entry::Describe => {
            let func = instance
                .get_typed_func::<(), (WasmList<u8>,)>(&mut *store, &loaded.describe)
                .map_err(|e| CallFailure::Instantiation { message: format!("{e:#}") })?;
            let called = if yields { func.call_async(&mut *store, ()).await } else { func.call(&mut *store, ()) };
            let (list,) = called.map_err(|e| classify(store, e, CallStage::Run))?;
            Ok(list)
        }
        Entry::Run => {
            let func = instance
                .get_typed_func::<(&[u8],), (Result<WasmList<u8>, String>,)>(&mut *store, &loaded.run)
                .map_err(|e| CallFailure::Instantiation { message: format!("{e:#}") })?;
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
        Err(mut message) => {
            if message.len() > MAX_REFUSAL_BYTES {
                let mut cut = MAX_REFUSAL_BYTES;
                while !message.is_char_boundary(cut) {
                    cut -= 1;
                }
                message.truncate(cut);
            }
            Err(CallFailure::Refused { message })
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
            CallStage::Instantiate => CallFailure::Instantiation { message: format!("{error:#}") },
            CallStage::Run => CallFailure::Trap { message: format!("{error:#}") },
        },
    }
}

/// The artifacts one call may read, by hex digest (only those its request names).
#[derive(Debug, Clone, Default)]
pub struct ArtifactAccess {
    allowed: BTreeMap<String, Arc<Vec<u8>>>,
}

impl ArtifactAccess {
    /// Allow reading `bytes` under `digest`.
    pub fn allow(&mut self, digest: &Digest, bytes: Arc<Vec<u8>>) {
        self.allowed.insert(digest.to_hex(), bytes);
    }
}

/// Per-call host state.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: Limiter,
    log: Vec<LogLine>,
    log_dropped: u64,
    artifacts: ArtifactAccess,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

fn deny_by_default_wasi(console: &MemoryOutputPipe) -> WasiCtx {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(console.clone())
        .stderr(console.clone())
        .wall_clock(FrozenWallClock)
        .monotonic_clock(FrozenMonotonicClock)
        .secure_random(Deterministic::new(vec![0x4a, 0x61, 0x63, 0x6f, 0x62, 0x69, 0x61, 0x6e]))
        .insecure_random(Deterministic::new(vec![0x6a, 0x61, 0x63, 0x6f]))
        .insecure_random_seed(0)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    builder.build()
}

/// Wall clock frozen at the Unix epoch: no component can read the host's time.
struct FrozenWallClock;

impl HostWallClock for FrozenWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// Monotonic clock frozen at zero. Sleeping on it ends at once (see [`Elapsed`]).
struct FrozenMonotonicClock;

impl HostMonotonicClock for FrozenMonotonicClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// Caps a call's linear memory and records a refusal, so that memory
/// exhaustion is reported as such rather than as the abort it causes.
struct Limiter {
    cap: u64,
    total: u64,
    refused: Option<u64>,
}

impl Limiter {
    fn new(cap: u64) -> Self {
        Limiter { cap, total: 0, refused: None }
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let growth = (desired as u64).saturating_sub(current as u64);
        if self.total.saturating_add(growth) > self.cap {
            self.refused = Some(self.cap);
            return Ok(false);
        }
        self.total += growth;
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// `jacobian:runtime/host` `level`.
#[allow(dead_code)] // variants are constructed by lifting guest values
#[derive(ComponentType, Lift, Lower, Clone, Copy, Debug)]
#[component(enum)]
#[repr(u8)]
enum Level {
    #[component(name = "trace")]
    Trace,
    #[component(name = "debug")]
    Debug,
    #[component(name = "info")]
    Info,
    #[component(name = "warn")]
    Warn,
    #[component(name = "error")]
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// A `wasi:io/poll` pollable that is always ready.
struct Elapsed;

#[async_trait::async_trait]
impl wasmtime_wasi::p2::Pollable for Elapsed {
    async fn ready(&mut self) {}
}

/// The interface whose sleeps [`add_elapsed_sleeps`] replaces (the version
/// wasmtime-wasi defines; guests' older 0.2 imports resolve to it).
const MONOTONIC_CLOCK: &str = "wasi:clocks/monotonic-clock@0.2.12";

/// Replace WASI's sleeps: wasmtime-wasi's wait on the host's real time, even
/// under a frozen clock, so a guest sleeping for ever would hold its slot inside
/// one host call that no cancellation reaches. With the clocks frozen, every
/// deadline has already passed: `subscribe-duration` and `subscribe-instant`
/// give a pollable that is ready at once.
fn add_elapsed_sleeps(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    fn elapsed(
        mut cx: wasmtime::StoreContextMut<'_, CallState>,
    ) -> wasmtime::Result<(wasmtime::component::Resource<wasmtime_wasi::p2::DynPollable>,)> {
        let table = &mut cx.data_mut().table;
        let ready = table.push(Elapsed)?;
        Ok((wasmtime_wasi::p2::subscribe(table, ready)?,))
    }
    linker.allow_shadowing(true);
    let mut clock = linker.instance(MONOTONIC_CLOCK)?;
    clock.func_wrap("subscribe-duration", |cx, (_nanos,): (u64,)| elapsed(cx))?;
    clock.func_wrap("subscribe-instant", |cx, (_when,): (u64,)| elapsed(cx))?;
    linker.allow_shadowing(false);
    Ok(())
}

fn add_host_interface(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    let mut host = linker.instance(HOST_INTERFACE)?;
    host.func_wrap("log", |mut cx, (level, mut message): (Level, String)| {
        let state = cx.data_mut();
        if state.log.len() >= MAX_LOG_LINES {
            state.log_dropped += 1;
            return Ok(());
        }
        if message.len() > MAX_LOG_LINE_BYTES {
            let mut cut = MAX_LOG_LINE_BYTES;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        state.log.push(LogLine { level: level.name().to_owned(), message });
        Ok(())
    })?;
    host.func_wrap("read-artifact", |cx, (digest,): (String,)| -> wasmtime::Result<(Result<Vec<u8>, String>,)> {
        let answer = match cx.data().artifacts.allowed.get(&digest) {
            Some(bytes) => Ok(bytes.as_ref().clone()),
            None => Err(format!(
                "artifact {digest} is not named by this request; only artifacts the request references can be read"
            )),
        };
        Ok((answer,))
    })?;
    Ok(())
}
