//! `jacobian:runtime/host`, the one interface of ours a component may
//! import: `log` (bounded lines) and `read-artifact` (only the artifacts
//! the current request names).

use wasmtime::component::{ComponentType, Lift, Linker, Lower};

use super::state::CallState;
use super::{HOST_INTERFACE, LogLine, MAX_LOG_LINE_BYTES, MAX_LOG_LINES};

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
