//! `jacobian:runtime/host`, the one interface of ours a component may
//! import: `log` (bounded lines) and `read-artifact` (only the artifacts
//! the current request names).

use wasmtime::component::{ComponentType, Lift, Linker, Lower, WasmStr};

use super::state::CallState;
use super::{HOST_INTERFACE, LogLine, MAX_LOG_LINE_BYTES, MAX_LOG_LINES};
use crate::limits::prefix;

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

pub(super) fn add_host_interface(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    let mut host = linker.instance(HOST_INTERFACE)?;
    // Strings are taken as views of the guest's memory (`WasmStr`; lifting
    // one charges the guest fuel per byte) and only what is kept is copied:
    // a 16 MiB log line costs the host 1 KiB, never 16 MiB.
    host.func_wrap("log", |mut cx, (level, message): (Level, WasmStr)| {
        if cx.data().log.len() >= MAX_LOG_LINES {
            cx.data_mut().log_dropped += 1;
            return Ok(());
        }
        let message = prefix(&message.to_str(&cx)?, MAX_LOG_LINE_BYTES).to_owned();
        cx.data_mut().log.push(LogLine { level: level.name().to_owned(), message });
        Ok(())
    })?;
    host.func_wrap("read-artifact", |cx, (digest,): (WasmStr,)| -> wasmtime::Result<(Result<Vec<u8>, String>,)> {
        // A digest is 64 hex digits (with a `sha256:` prefix at most); anything longer names nothing.
        let digest = digest.to_str(&cx)?;
        let digest = if digest.len() <= 80 { digest.into_owned() } else { String::new() };
        let answer = match cx.data().artifacts.allowed.get(&digest) {
            Some(bytes) => Ok(bytes.as_ref().clone()),
            None => Err(format!(
                "artifact {:?} is not named by this request; only artifacts the request references can be read",
                prefix(&digest, 80)
            )),
        };
        Ok((answer,))
    })?;
    Ok(())
}
