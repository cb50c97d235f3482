//! The sandbox: wasmtime configured for Jacobian, and one call of one component.
//!
//! - `config.rs`: engine settings, and a call's control and inline bounds.
//! - `slots.rs`: bounded concurrency with a bounded wait queue.
//! - `call.rs`: the ordinary call and the inline attempt, each one function.
//! - `wasi.rs`: the deny-by-default WASI context.
//! - `state.rs`: what one call's store holds (limiter, log, readable artifacts).
//! - `host_api.rs`: `jacobian:runtime/host` (`log`, `read-artifact`).
//!
//! **Invariant:** every call gets a fresh `Store` instantiated from a cached
//! `InstancePre`, with its own fuel, memory limiter, bounded log and a
//! deny-by-default WASI context (no preopens, environment, arguments or
//! network; frozen clocks; fixed random bytes). The linker offers only WASI and
//! the `jacobian:runtime/host` interface: nothing in it can reach another
//! component.

mod call;
mod config;
mod host_api;
mod slots;
mod state;
mod wasi;

use jacobian_guest::protocol::BundleKind;
use wasmtime::component::{Component, ComponentExportIndex, InstancePre, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::digest::Digest;

pub use crate::contract::{CallBudgets, LogLine};
pub use call::Attempt;
pub use config::{
    CallControl, EngineConfig, INLINE_DEADLINE, InlineLimits, MAX_RESOURCES, PROGRESS_INTERVAL, YIELD_FUEL,
};
pub use state::{ArtifactAccess, CallState};

use config::WAIT_POLL;
use slots::Slots;

/// The name of the host interface every component may import.
pub const HOST_INTERFACE: &str = "jacobian:runtime/host@0.1.0";

/// Which export to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `describe()`.
    Describe,
    /// `invoke(request)` or `check(request)`, by bundle kind.
    Run,
}

/// Why a call produced no answer. Every variant is data, never a host panic;
/// its `Display` is what the component did, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallFailure {
    /// The fuel budget ran out.
    #[error("ran out of fuel")]
    FuelExhausted,
    /// The guest tried to grow memory past its budget.
    #[error("tried to grow its memory past {limit} bytes")]
    MemoryLimit { limit: u64 },
    /// The guest overflowed the wasm stack.
    #[error("overflowed its stack")]
    StackOverflow,
    /// The guest trapped (panic, abort, unreachable, bad memory access).
    #[error("trapped: {message}")]
    Trap { message: String },
    /// The answer exceeded the output budget.
    #[error("answered with {bytes} bytes, above the output budget of {limit}")]
    OutputTooLarge { bytes: u64, limit: u64 },
    /// The component refused the request (its `Err` string).
    #[error("refused the request: {message}")]
    Refused { message: String },
    /// The component could not be instantiated (e.g. the pool is full).
    #[error("could not be instantiated: {message}")]
    Instantiation { message: String },
    /// The caller cancelled the call; the guest was interrupted.
    #[error("was cancelled")]
    Cancelled,
    /// The call ran past its wall-clock limit and was stopped.
    #[error("ran past its wall-clock limit of {limit_ms} ms")]
    DeadlineExceeded { limit_ms: u64 },
    /// Every slot was busy and the wait queue full; the call never started.
    #[error("did not start: all {running} sandbox slots are busy and {queued} calls are waiting")]
    Overloaded { running: u32, queued: u32 },
    /// An uploaded file the call read is corrupt (`corrupt`) or could not be
    /// read from the store: the host stopped the call, which concludes nothing.
    #[error("{message}")]
    FileUnavailable { message: String, corrupt: bool },
}

/// Why the host stopped a call in `read-file` (classified as [`CallFailure::FileUnavailable`]).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct FileFailure {
    pub(crate) message: String,
    pub(crate) corrupt: bool,
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
    pub(crate) fn never_ran(failure: CallFailure) -> Self {
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
    entries: Entries,
}

/// What a call needs of a loaded component (cheap to clone: the
/// instantiation is shared).
#[derive(Clone)]
struct Entries {
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

/// Errors preparing a component (not call failures).
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("not a WebAssembly component: {0}")]
    Invalid(String),
    #[error("imports {}, outside the allowlist", .0.join(", "))]
    ForbiddenImport(Vec<String>),
    #[error("exports neither `invoke` nor `check` with the contract's signature")]
    NoEntry,
    #[error("exports both `invoke` and `check`: a bundle is a capability bundle or a checker bundle, never both")]
    BothEntries,
    #[error("cannot be linked: {0}")]
    Link(String),
}

pub(crate) const MAX_LOG_LINES: usize = 256;
pub(crate) const MAX_LOG_LINE_BYTES: usize = 1024;
pub(crate) const CONSOLE_BYTES: usize = 16 * 1024;
pub(crate) const MAX_REFUSAL_BYTES: usize = 16 * 1024;

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
    pub fn new(config: EngineConfig) -> wasmtime::Result<Self> {
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
            // A component of another language carries its runtime as many
            // core instances (componentize-py's CPython with WASI stubs: 38).
            pool.total_component_instances(n)
                .total_core_instances(n * 64)
                .total_memories(n * 4)
                .total_tables(n * 64)
                .total_stacks(n)
                .max_core_instances_per_component(64)
                .max_memories_per_component(4)
                .max_tables_per_component(64)
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
        wasi::add_elapsed_sleeps(&mut linker)?;
        host_api::add_host_interface(&mut linker)?;
        let slots = Slots::new(config.max_concurrent_calls.max(1), config.max_queued_calls);
        Ok(Sandbox { engine, linker, config, slots })
    }

    /// The engine settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Calls running in a sandbox slot now, and calls queued for one.
    pub fn occupancy(&self) -> (u32, u32) {
        self.slots.occupancy()
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

    /// Compile component bytes. Bytes that are not a component at all are
    /// told apart in one line before the parser sees them.
    pub fn compile(&self, bytes: &[u8]) -> Result<Component, PrepareError> {
        if bytes.len() < 8 || bytes[..4] != *b"\0asm" {
            return Err(PrepareError::Invalid("bad magic number".into()));
        }
        // The preamble's layer field: 0 is a core module, 1 a component.
        if bytes[6..8] == [0, 0] {
            return Err(PrepareError::Invalid(
                "a core WebAssembly module, not a component (build the bundle for wasm32-wasip2)".into(),
            ));
        }
        Component::new(&self.engine, bytes).map_err(|e| PrepareError::Invalid(crate::errors::render(&*e)))
    }

    /// Serialize compiled code for the precompiled cache.
    pub fn serialize(&self, component: &Component) -> wasmtime::Result<Vec<u8>> {
        component.serialize()
    }

    /// Load precompiled code.
    ///
    /// # Safety
    /// `bytes` must have been produced by [`Sandbox::serialize`] on an engine
    /// with the same compatibility key; the caller re-hashes them first.
    pub unsafe fn deserialize(&self, bytes: &[u8]) -> wasmtime::Result<Component> {
        // SAFETY: guaranteed by the caller (see above).
        unsafe { Component::deserialize(&self.engine, bytes) }
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
        let pre = self.linker.instantiate_pre(component).map_err(|e| PrepareError::Link(crate::errors::render(&*e)))?;
        Ok(Loaded { digest, kind, imports, entries: Entries { pre, describe, run } })
    }
}
