//! LRAT proof steps read from a byte stream, one at a time, into reused
//! buffers: text (`id literals 0 hints 0`, `id d ids 0`, `c` comments, one
//! step per line) or binary (`a` id literals 0 hints 0, `d` ids 0, every
//! number `2|x| + (x < 0)` in little-endian groups of 7 bits).

use std::io::{ErrorKind, Read};

use crate::{ProofError, Rejection};

/// What the last step read was; its numbers are in the reader's buffers.
pub(crate) enum Step {
    /// A lemma with this id: [`Steps::lemma`].
    Add(u64),
    /// Deletions: [`Steps::deleted`].
    Delete,
}

pub(crate) struct Steps<R> {
    reader: R,
    buffer: Vec<u8>,
    position: usize,
    filled: usize,
    /// `None` until the first byte is seen.
    binary: Option<bool>,
    /// The 1-based line (text) or step (binary) of the last step.
    line: usize,
    /// Newlines consumed so far (text).
    newlines: usize,
    literals: Vec<i32>,
    hints: Vec<i64>,
}

type Read_<T> = Result<T, ProofError>;

impl<R: Read> Steps<R> {
    pub(crate) fn new(reader: R) -> Self {
        Steps {
            reader,
            buffer: vec![0; 1 << 18],
            position: 0,
            filled: 0,
            binary: None,
            line: 0,
            newlines: 0,
            literals: Vec::new(),
            hints: Vec::new(),
        }
    }

    /// Where the last step is, for rejections.
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// The last lemma's literals and hints.
    pub(crate) fn lemma(&self) -> (&[i32], &[i64]) {
        (&self.literals, &self.hints)
    }

    /// The last deletion's ids.
    pub(crate) fn deleted(&self) -> &[i64] {
        &self.hints
    }

    #[inline]
    fn peek(&mut self) -> Read_<Option<u8>> {
        if self.position == self.filled {
            self.position = 0;
            self.filled = loop {
                match self.reader.read(&mut self.buffer) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(ProofError::Unreadable(e)),
                }
            };
            if self.filled == 0 {
                return Ok(None);
            }
        }
        Ok(Some(self.buffer[self.position]))
    }

    fn fail<T>(&self, message: impl Into<String>) -> Read_<T> {
        Err(ProofError::Rejected(Rejection { line: self.line, message: message.into() }))
    }

    /// The next step, or `None` at the end of the proof.
    pub(crate) fn next_step(&mut self) -> Read_<Option<Step>> {
        let binary = match self.binary {
            Some(binary) => binary,
            None => {
                let first = self.peek()?;
                let binary = matches!(first, Some(b'a' | b'd'));
                self.binary = Some(binary);
                binary
            }
        };
        if binary { self.binary_step() } else { self.text_step() }
    }

    // ---- text ----

    fn text_step(&mut self) -> Read_<Option<Step>> {
        // Blank lines and comments.
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
                Some(_) => break,
            }
        }
        self.line = self.newlines + 1;
        let id = match self.text_number()? {
            Some(id) if id > 0 => id as u64,
            _ => return self.fail("expected a positive clause id"),
        };
        self.skip_blanks()?;
        self.hints.clear();
        if self.peek()? == Some(b'd') {
            self.position += 1;
            self.text_until_zero(false)?;
            self.end_of_line("text after the deletion's terminating 0")?;
            return Ok(Some(Step::Delete));
        }
        self.literals.clear();
        self.text_until_zero(true)?;
        self.text_until_zero(false)?;
        self.end_of_line("text after the hints' terminating 0")?;
        Ok(Some(Step::Add(id)))
    }

    fn skip_blanks(&mut self) -> Read_<()> {
        while let Some(b' ' | b'\t' | b'\r') = self.peek()? {
            self.position += 1;
        }
        Ok(())
    }

    fn end_of_line(&mut self, message: &str) -> Read_<()> {
        self.skip_blanks()?;
        match self.peek()? {
            None | Some(b'\n') => Ok(()),
            Some(_) => self.fail(message),
        }
    }

    /// Numbers up to a 0 on this line, into the literals or the hints.
    fn text_until_zero(&mut self, literals: bool) -> Read_<()> {
        loop {
            self.skip_blanks()?;
            match self.text_number()? {
                Some(0) => return Ok(()),
                Some(n) if literals => {
                    if n.unsigned_abs() > u64::from(crate::MAX_VARIABLE) {
                        return self.fail("literal out of range");
                    }
                    self.literals.push(n as i32);
                }
                Some(n) => self.hints.push(n),
                None => return self.fail("missing terminating 0"),
            }
        }
    }

    /// A signed integer at the position, or `None` at the end of the line.
    fn text_number(&mut self) -> Read_<Option<i64>> {
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

    fn binary_step(&mut self) -> Read_<Option<Step>> {
        let Some(kind) = self.peek()? else { return Ok(None) };
        self.position += 1;
        self.line += 1;
        self.hints.clear();
        match kind {
            b'a' => {
                let id = match self.binary_number()? {
                    Some(id) if id > 0 => id as u64,
                    _ => return self.fail("expected a positive clause id"),
                };
                self.literals.clear();
                loop {
                    match self.binary_number()? {
                        Some(0) => break,
                        Some(n) if n.unsigned_abs() <= u64::from(crate::MAX_VARIABLE) => self.literals.push(n as i32),
                        Some(_) => return self.fail("literal out of range"),
                        None => return self.fail("the proof ends inside a step"),
                    }
                }
                self.binary_until_zero()?;
                Ok(Some(Step::Add(id)))
            }
            b'd' => {
                self.binary_until_zero()?;
                Ok(Some(Step::Delete))
            }
            other => self.fail(format!("expected a step ('a' or 'd'), found byte {other}")),
        }
    }

    fn binary_until_zero(&mut self) -> Read_<()> {
        loop {
            match self.binary_number()? {
                Some(0) => return Ok(()),
                Some(n) => self.hints.push(n),
                None => return self.fail("the proof ends inside a step"),
            }
        }
    }

    /// One number (`2|x| + sign`, 7 bits a byte, low first), or `None` at the end.
    fn binary_number(&mut self) -> Read_<Option<i64>> {
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
