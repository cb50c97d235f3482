//! MCP over stdio: the process's stdin and stdout polled on the reactor,
//! every line bounded before rmcp reads it.

use std::sync::Arc;

use rmcp::ServiceExt as _;

use super::{JacobianServer, ToolNames};
use crate::runtime::Runtime;

type Reader = std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>;
type Writer = std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>;

/// The process's stdin and stdout as async streams. A pipe or a Unix socket
/// (what MCP clients start servers with) is made non-blocking and polled by
/// the runtime's reactor; anything else (a terminal, a file) goes through
/// tokio's stdio, which hands every read and write to a blocking thread, a
/// thread switch per message that cost a quarter of a pipelined client's
/// throughput.
fn stdio() -> (Reader, Writer) {
    use std::os::fd::AsFd as _;
    use tokio::net::unix::pipe;
    let reader = match pollable(std::io::stdin().as_fd()) {
        Some((true, fd)) => pipe::Receiver::from_owned_fd(fd).ok().map(|r| Box::pin(r) as Reader),
        Some((false, fd)) => socket(fd).map(|s| Box::pin(s) as Reader),
        None => None,
    };
    let writer = match pollable(std::io::stdout().as_fd()) {
        Some((true, fd)) => pipe::Sender::from_owned_fd(fd).ok().map(|w| Box::pin(w) as Writer),
        Some((false, fd)) => socket(fd).map(|s| Box::pin(s) as Writer),
        None => None,
    };
    (reader.unwrap_or_else(|| Box::pin(tokio::io::stdin())), writer.unwrap_or_else(|| Box::pin(tokio::io::stdout())))
}

/// The file status flags of stdin and stdout, put back when serving ends:
/// the non-blocking mode [`stdio`] sets belongs to the open file description,
/// which the process that started the server may share and use afterwards.
struct StdioFlags(Vec<(i32, i32)>);

impl StdioFlags {
    fn save() -> Self {
        // SAFETY: F_GETFL reads flags of a descriptor number; no memory is passed.
        StdioFlags([0, 1].into_iter().map(|fd| (fd, unsafe { libc::fcntl(fd, libc::F_GETFL) })).collect())
    }
}

impl Drop for StdioFlags {
    fn drop(&mut self) {
        for &(fd, flags) in self.0.iter().filter(|(_, flags)| *flags >= 0) {
            // SAFETY: F_SETFL with an int argument; no memory is passed.
            unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
        }
    }
}

/// A duplicate of `fd` if it is a pipe (`true`) or a socket (`false`).
fn pollable(fd: std::os::fd::BorrowedFd<'_>) -> Option<(bool, std::os::fd::OwnedFd)> {
    use std::os::unix::fs::FileTypeExt as _;
    let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
    let kind = file.metadata().ok()?.file_type();
    (kind.is_fifo() || kind.is_socket()).then(|| (kind.is_fifo(), file.into()))
}

/// A socket as a non-blocking stream on the reactor.
fn socket(fd: std::os::fd::OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}

/// Why the stdio server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The MCP session could not start (the client's `initialize`).
    #[error("starting the MCP session on stdio")]
    Initialize(#[from] Box<rmcp::service::ServerInitializeError>),
    /// The session's task ended abnormally.
    #[error("a task of the MCP session on stdio")]
    Session(#[from] tokio::task::JoinError),
    /// The copier between stdin and the session stopped (a message above
    /// the limit, or stdin failed).
    #[error(transparent)]
    Input(#[from] crate::limits::CopyError),
}

/// Serve MCP over stdio until the client disconnects.
pub async fn serve_stdio(runtime: Arc<Runtime>, names: ToolNames) -> Result<(), StdioError> {
    // stdin reaches rmcp through a bounded line copier, so one message can
    // never make the transport buffer more than MAX_MESSAGE_BYTES.
    let (feed, transport) = tokio::io::duplex(64 << 10);
    let (from_client, _) = tokio::io::split(transport);
    let _restore = StdioFlags::save();
    let (stdin, stdout) = stdio();
    let feeder = tokio::spawn(crate::limits::copy_bounded_lines(stdin, feed, crate::limits::MAX_MESSAGE_BYTES));
    let served = match JacobianServer::new(runtime, names).serve((from_client, stdout)).await {
        Ok(service) => service.waiting().await.map(drop).map_err(StdioError::from),
        Err(e) => Err(Box::new(e).into()),
    };
    // The session ended; if it was the copier that ended it, say why.
    if let Ok(copied) = tokio::time::timeout(std::time::Duration::from_millis(200), feeder).await {
        copied??;
    }
    served
}
