//! The WASI context of every call: deny by default. No preopens,
//! environment, arguments or sockets; the wall clock frozen at the Unix
//! epoch and the monotonic clock at zero (so every sleep has already ended);
//! random bytes a fixed sequence; stdout and stderr a bounded buffer of the
//! call's own, never the host's (whose stdout carries MCP).

use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{Deterministic, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder};

use super::state::CallState;

pub(super) fn deny_by_default_wasi(console: &MemoryOutputPipe) -> WasiCtx {
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
pub(super) fn add_elapsed_sleeps(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
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
