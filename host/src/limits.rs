//! Request limits, in one place. Each is enforced where the bytes arrive and
//! answered with a typed error naming the limit; nothing is stored when one
//! is exceeded. `docs/limits.md` lists them for operators.

/// One MCP message: an HTTP request body, or one line of the stdio
/// transport. HTTP answers 413 `PAYLOAD_TOO_LARGE`; on stdio the message
/// cannot be framed, so the session ends with that envelope on stderr.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// The `input` of one `capability.invoke`, as compact JSON: above it the call
/// fails with `OVERSIZED` at `input` before anything runs.
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// Artifact references (`artifact://…` strings) one input may hold, repeats
/// included: above it the call fails with `OVERSIZED` at `input` before any
/// artifact is read.
pub const MAX_ARTIFACT_REFERENCES: usize = 256;
/// Total bytes of the distinct artifacts one input names, summed from the
/// store's sizes before any is read (the host holds them for the call):
/// above it the call fails with `OVERSIZED` at the reference that crosses it.
pub const MAX_ARTIFACT_BYTES: u64 = 128 << 20;

/// Nesting depth of one `input` (arrays and objects): above it the call
/// fails with `OVERSIZED` at `input` before it is validated (schema
/// validation and every walk over the input recurse once per level).
pub const MAX_JSON_DEPTH: usize = 64;
/// The longest capability id (a longer one names nothing, and is refused
/// before any lookup).
pub const MAX_ID_BYTES: usize = 128;

/// Nesting depth of a JSON value (a scalar is 0), without recursion.
pub fn json_depth(value: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0usize)];
    while let Some((value, depth)) = pending.pop() {
        deepest = deepest.max(depth);
        match value {
            serde_json::Value::Array(items) => pending.extend(items.iter().map(|v| (v, depth + 1))),
            serde_json::Value::Object(map) => pending.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// Largest input a call may have to be tried on the MCP edge's own thread
/// ([`crate::runtime::Runtime::try_invoke_quick`]); larger ones go straight
/// to a blocking thread, so validating them never holds the transport.
pub const INLINE_INPUT_BYTES: usize = 64 << 10;

/// Serialized size of a value as compact JSON, without building the string.
pub fn json_size(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a sink that never fails fails only for values JSON cannot
    // hold (non-string map keys), which count what was written before.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Why [`copy_bounded_lines`] stopped before the end of its input.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// A message above the limit.
    #[error(transparent)]
    TooLarge(#[from] MessageTooLarge),
    /// Reading the input or writing the output failed.
    #[error("copying stdin to the MCP session")]
    Io(#[from] std::io::Error),
}

/// A stdio message above [`MAX_MESSAGE_BYTES`].
#[derive(Debug, thiserror::Error)]
#[error(
    "an MCP message on stdin is above the limit of {limit} bytes (at least {bytes} bytes before the newline); the session ends"
)]
pub struct MessageTooLarge {
    /// Bytes read of the message before giving up.
    pub bytes: usize,
    /// The limit.
    pub limit: usize,
}

#[cfg(feature = "sandbox")]
/// Copy newline-framed messages from `input` to `output`, streaming, and stop
/// with [`MessageTooLarge`] at the first message above `limit` bytes (without
/// its newline), so the reader behind `output` never buffers more than that.
pub async fn copy_bounded_lines(
    input: impl tokio::io::AsyncRead + Unpin,
    mut output: impl tokio::io::AsyncWrite + Unpin,
    limit: usize,
) -> Result<(), CopyError> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut reader = tokio::io::BufReader::with_capacity(64 << 10, input);
    let mut line = 0usize;
    let mut pending_cr = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        let (take, ends) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line += take - usize::from(ends);
        // A CRLF line's `\r` is framing, not message: one byte over is allowed
        // when it is (or, mid-line, may turn out to be) that `\r`.
        let cr =
            if ends { if take >= 2 { buf[take - 2] == b'\r' } else { pending_cr } } else { buf[take - 1] == b'\r' };
        pending_cr = !ends && buf[take - 1] == b'\r';
        if line > limit + usize::from(cr) {
            return Err(MessageTooLarge { bytes: line, limit }.into());
        }
        output.write_all(&buf[..take]).await?;
        reader.consume(take);
        if ends {
            output.flush().await?;
            line = 0;
        }
    }
}

/// Longest text of one error message quoted back to a caller (schema
/// violations quote the offending value, which may be megabytes).
pub const MAX_ERROR_TEXT_BYTES: usize = 512;

/// `text` cut to [`MAX_ERROR_TEXT_BYTES`] at a character boundary, marked
/// with how much was left out.
pub fn bounded_text(text: impl std::fmt::Display) -> String {
    let mut text = text.to_string();
    if text.len() > MAX_ERROR_TEXT_BYTES {
        let total = text.len();
        let mut cut = MAX_ERROR_TEXT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(&format!("… ({} more bytes)", total - cut));
    }
    text
}

/// `text`, or its first `max` bytes (at a character boundary) followed by
/// `…` when it is longer: a caller's string quoted back in a message.
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(format!("{}…", prefix(text, max)))
}

/// The longest prefix of `text` of at most `limit` bytes that ends on a character boundary.
pub fn prefix(text: &str, limit: usize) -> &str {
    let mut cut = limit.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

#[cfg(all(test, feature = "sandbox"))]
mod tests {
    use super::*;

    async fn copy(input: &[u8], limit: usize) -> Result<Vec<u8>, usize> {
        let mut out = Vec::new();
        match copy_bounded_lines(input, &mut out, limit).await {
            Ok(()) => Ok(out),
            Err(CopyError::TooLarge(e)) => Err(e.bytes),
            Err(CopyError::Io(e)) => panic!("copying from memory: {e}"),
        }
    }

    #[tokio::test]
    async fn lines_pass_up_to_the_limit_and_crlf_framing_is_not_counted() {
        assert_eq!(copy(b"abcd\nxy\n", 4).await, Ok(b"abcd\nxy\n".to_vec()));
        assert_eq!(copy(b"abcd\r\n", 4).await, Ok(b"abcd\r\n".to_vec()));
        assert_eq!(copy(b"abcde\n", 4).await, Err(5));
        assert_eq!(copy(b"abcd\re\n", 4).await, Err(6));
        // A last line without its newline is passed on as it is.
        assert_eq!(copy(b"ab\ncd", 4).await, Ok(b"ab\ncd".to_vec()));
        // Lines longer than the reader's buffer are counted across reads.
        let long = [vec![b'x'; 200_000], b"\n".to_vec()].concat();
        assert_eq!(copy(&long, 200_000).await.map(|o| o.len()), Ok(200_001));
        assert!(copy(&long, 199_999).await.is_err());
    }
}
