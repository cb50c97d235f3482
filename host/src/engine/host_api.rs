//! `jacobian:runtime/host`, the one interface of ours a component may
//! import: `log` (bounded lines), `read-artifact` (only the artifacts the
//! current request names), and `file-size` / `read-file` (the file an
//! upload the request names carries, in ranges, paid in fuel).

use wasmtime::component::{ComponentType, Lift, Linker, Lower, WasmStr};

use super::FileFailure;
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

pub(super) fn add_host_interface(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
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
    host.func_wrap("file-size", |cx, (digest,): (WasmStr,)| -> wasmtime::Result<(Result<u64, String>,)> {
        let digest = digest.to_str(&cx)?;
        Ok((named_file(cx.data(), &digest).map(|f| f.file.len()),))
    })?;
    host.func_wrap(
        "read-file",
        |mut cx, (digest, offset, length): (WasmStr, u64, u32)| -> wasmtime::Result<(Result<Vec<u8>, String>,)> {
            let digest = digest.to_str(&cx)?.into_owned();
            let file = match named_file(cx.data(), &digest) {
                Ok(file) => file,
                Err(e) => return Ok((Err(e),)),
            };
            // Re-hashing the whole file before its first byte is paid in fuel
            // too, up front: a call that cannot pay is stopped before the host reads it.
            if !file.hashed() {
                charge(&mut cx, file.file.len())?;
            }
            // A file that is corrupt or cannot be read stops the call: the host
            // says why, not the guest (see `FileFailure`).
            file.intact().map_err(|(message, corrupt)| FileFailure { message, corrupt })?;
            let length = (length as usize).min(MAX_FILE_READ);
            let available = file.file.len().saturating_sub(offset).min(length as u64) as usize;
            // The copy is paid in fuel, as the guest's own work would be.
            charge(&mut cx, available as u64)?;
            let mut buffer = vec![0u8; available];
            let n = file.file.read_at(offset, &mut buffer).map_err(|e| FileFailure {
                message: format!("file {} could not be read: {e}", prefix(&digest, 80)),
                corrupt: false,
            })?;
            buffer.truncate(n);
            Ok((Ok(buffer),))
        },
    )?;
    Ok(())
}

/// Take the fuel for handling `bytes` of a file, or stop the call as out of fuel.
fn charge(cx: &mut wasmtime::StoreContextMut<'_, CallState>, bytes: u64) -> wasmtime::Result<()> {
    let cost = bytes / FILE_BYTES_PER_FUEL;
    let fuel = cx.get_fuel()?;
    if fuel < cost {
        cx.set_fuel(0)?;
        return Err(wasmtime::Trap::OutOfFuel.into());
    }
    cx.set_fuel(fuel - cost)?;
    Ok(())
}

/// The most one `read-file` call copies.
const MAX_FILE_READ: usize = 4 << 20;
/// Bytes of a file copied per unit of fuel charged.
const FILE_BYTES_PER_FUEL: u64 = 16;

/// The file an upload artifact named by the request carries.
fn named_file(state: &CallState, digest: &str) -> Result<std::sync::Arc<super::state::FileAccess>, String> {
    let digest = digest.strip_prefix("sha256:").unwrap_or(digest);
    if let Some(file) = state.artifacts.files.get(digest) {
        return Ok(file.clone());
    }
    Err(if state.artifacts.allowed.contains_key(digest) {
        format!("artifact {} carries no file (it is not an upload)", prefix(digest, 80))
    } else {
        format!(
            "artifact {:?} is not named by this request; only artifacts the request references can be read",
            prefix(digest, 80)
        )
    })
}
