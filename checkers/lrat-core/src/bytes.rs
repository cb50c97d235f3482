//! A proof's bytes read through one reused buffer, with the two number
//! syntaxes proof formats share: signed decimal text, and binary (every
//! number `2|x| + (x < 0)` in little-endian groups of 7 bits, the high bit
//! set on all but the last byte). Tracks where a step is, for rejections.

use std::io::{ErrorKind, Read};

use crate::{ProofError, Rejection};

pub(crate) type Read_<T> = Result<T, ProofError>;

pub(crate) struct Bytes<R> {
    reader: R,
    buffer: Vec<u8>,
    position: usize,
    filled: usize,
    /// The 1-based line (text) or step (binary) of the step being read.
    pub(crate) line: usize,
    /// Newlines consumed so far (text).
    pub(crate) newlines: usize,
}

impl<R: Read> Bytes<R> {
    pub(crate) fn new(reader: R) -> Self {
        Bytes { reader, buffer: vec![0; 1 << 18], position: 0, filled: 0, line: 0, newlines: 0 }
    }

    fn read(&mut self, at: usize) -> Read_<usize> {
        loop {
            match self.reader.read(&mut self.buffer[at..]) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(ProofError::Unreadable(e)),
            }
        }
    }

    /// The first bytes of the stream (as many as the buffer holds, fewer
    /// only at its end), for telling text from binary before reading on.
    pub(crate) fn head(&mut self) -> Read_<&[u8]> {
        debug_assert_eq!((self.position, self.filled), (0, 0), "head is read first");
        while self.filled < self.buffer.len() {
            let n = self.read(self.filled)?;
            if n == 0 {
                break;
            }
            self.filled += n;
        }
        Ok(&self.buffer[..self.filled])
    }

    #[inline]
    pub(crate) fn peek(&mut self) -> Read_<Option<u8>> {
        if self.position == self.filled {
            self.position = 0;
            self.filled = self.read(0)?;
            if self.filled == 0 {
                return Ok(None);
            }
        }
        Ok(Some(self.buffer[self.position]))
    }

    #[inline]
    pub(crate) fn advance(&mut self) {
        self.position += 1;
    }

    pub(crate) fn fail<T>(&self, message: impl Into<String>) -> Read_<T> {
        Err(ProofError::Rejected(Rejection { line: self.line, message: message.into() }))
    }

    // ---- text ----

    /// Past blank lines and `c` comment lines to the next step; the byte
    /// that starts it, or `None` at the end. Sets the step's line.
    pub(crate) fn next_text_line(&mut self) -> Read_<Option<u8>> {
        loop {
            match self.peek()? {
                None => return Ok(None),
                Some(b'\n') => {
                    self.newlines += 1;
                    self.position += 1;
                }
                Some(b' ' | b'\t' | b'\r') => self.position += 1,
                Some(b'c') => {
                    while let Some(b) = self.peek()? {
                        if b == b'\n' {
                            break;
                        }
                        self.position += 1;
                    }
                }
                Some(first) => {
                    self.line = self.newlines + 1;
                    return Ok(Some(first));
                }
            }
        }
    }

    /// Past spaces and tabs, and newlines too when `newlines` (counted).
    pub(crate) fn skip_blanks(&mut self, newlines: bool) -> Read_<()> {
        loop {
            match self.peek()? {
                Some(b' ' | b'\t' | b'\r') => self.position += 1,
                Some(b'\n') if newlines => {
                    self.newlines += 1;
                    self.position += 1;
                }
                _ => return Ok(()),
            }
        }
    }

    /// Only blanks until the end of the line.
    pub(crate) fn end_of_line(&mut self, message: &str) -> Read_<()> {
        self.skip_blanks(false)?;
        match self.peek()? {
            None | Some(b'\n') => Ok(()),
            Some(_) => self.fail(message),
        }
    }

    /// A signed integer at the position, or `None` at the end of the line.
    pub(crate) fn text_number(&mut self) -> Read_<Option<i64>> {
        let negative = match self.peek()? {
            None | Some(b'\n') => return Ok(None),
            Some(b'-') => {
                self.position += 1;
                true
            }
            Some(_) => false,
        };
        let mut value: i64 = 0;
        let mut digits = 0;
        while let Some(b) = self.peek()? {
            match b {
                b'0'..=b'9' => {
                    value = match value.checked_mul(10).and_then(|v| v.checked_add(i64::from(b - b'0'))) {
                        Some(v) => v,
                        None => return self.fail("a number out of range"),
                    };
                    digits += 1;
                    self.position += 1;
                }
                b' ' | b'\t' | b'\r' | b'\n' => break,
                other => return self.fail(format!("{:?} is not part of an integer", other as char)),
            }
        }
        if digits == 0 {
            return self.fail("expected an integer");
        }
        Ok(Some(if negative { -value } else { value }))
    }

    // ---- binary ----

    /// The next step's kind byte, or `None` at the end. Counts the step.
    pub(crate) fn next_binary_step(&mut self) -> Read_<Option<u8>> {
        let Some(kind) = self.peek()? else { return Ok(None) };
        self.position += 1;
        self.line += 1;
        Ok(Some(kind))
    }

    /// One number, or `None` at the end of the stream.
    pub(crate) fn binary_number(&mut self) -> Read_<Option<i64>> {
        let mut mapped: u64 = 0;
        let mut shift = 0;
        loop {
            let Some(byte) = self.peek()? else {
                return if shift == 0 { Ok(None) } else { self.fail("the proof ends inside a number") };
            };
            self.position += 1;
            if shift > 56 {
                return self.fail("a number out of range");
            }
            mapped |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                let magnitude = (mapped >> 1) as i64;
                return Ok(Some(if mapped & 1 == 1 { -magnitude } else { magnitude }));
            }
        }
    }
}
