//! LRAT proof steps read from a byte stream, one at a time, into reused
//! buffers: text (`id literals 0 hints 0`, `id d ids 0`, `c` comments, one
//! step per line) or binary (`a` id literals 0 hints 0, `d` ids 0).

use std::io::Read;

use crate::bytes::{Bytes, Read_};

/// What the last step read was; its numbers are in the reader's buffers.
pub(crate) enum Step {
    /// A lemma with this id: [`Steps::lemma`].
    Add(u64),
    /// Deletions: [`Steps::deleted`].
    Delete,
}

pub(crate) struct Steps<R> {
    bytes: Bytes<R>,
    /// `None` until the first byte is seen.
    binary: Option<bool>,
    literals: Vec<i32>,
    hints: Vec<i64>,
}

impl<R: Read> Steps<R> {
    pub(crate) fn new(reader: R) -> Self {
        Steps { bytes: Bytes::new(reader), binary: None, literals: Vec::new(), hints: Vec::new() }
    }

    /// Where the last step is, for rejections.
    pub(crate) fn line(&self) -> usize {
        self.bytes.line
    }

    /// The last lemma's literals and hints.
    pub(crate) fn lemma(&self) -> (&[i32], &[i64]) {
        (&self.literals, &self.hints)
    }

    /// The last deletion's ids.
    pub(crate) fn deleted(&self) -> &[i64] {
        &self.hints
    }

    /// The next step, or `None` at the end of the proof.
    pub(crate) fn next_step(&mut self) -> Read_<Option<Step>> {
        let binary = match self.binary {
            Some(binary) => binary,
            None => {
                // Text steps start with an id (a digit); binary ones with `a` or `d`.
                let binary = matches!(self.bytes.peek()?, Some(b'a' | b'd'));
                self.binary = Some(binary);
                binary
            }
        };
        if binary { self.binary_step() } else { self.text_step() }
    }

    // ---- text ----

    fn text_step(&mut self) -> Read_<Option<Step>> {
        if self.bytes.next_text_line()?.is_none() {
            return Ok(None);
        }
        let id = match self.bytes.text_number()? {
            Some(id) if id > 0 => id as u64,
            _ => return self.bytes.fail("expected a positive clause id"),
        };
        self.bytes.skip_blanks(false)?;
        self.hints.clear();
        if self.bytes.peek()? == Some(b'd') {
            self.bytes.advance();
            self.text_until_zero(false)?;
            self.bytes.end_of_line("text after the deletion's terminating 0")?;
            return Ok(Some(Step::Delete));
        }
        self.literals.clear();
        self.text_until_zero(true)?;
        self.text_until_zero(false)?;
        self.bytes.end_of_line("text after the hints' terminating 0")?;
        Ok(Some(Step::Add(id)))
    }

    /// Numbers up to a 0 on this line, into the literals or the hints.
    fn text_until_zero(&mut self, literals: bool) -> Read_<()> {
        loop {
            self.bytes.skip_blanks(false)?;
            match self.bytes.text_number()? {
                Some(0) => return Ok(()),
                Some(n) if literals => {
                    if n.unsigned_abs() > u64::from(crate::MAX_VARIABLE) {
                        return self.bytes.fail("literal out of range");
                    }
                    self.literals.push(n as i32);
                }
                Some(n) => self.hints.push(n),
                None => return self.bytes.fail("missing terminating 0"),
            }
        }
    }

    // ---- binary ----

    fn binary_step(&mut self) -> Read_<Option<Step>> {
        let Some(kind) = self.bytes.next_binary_step()? else { return Ok(None) };
        self.hints.clear();
        match kind {
            b'a' => {
                let id = match self.bytes.binary_number()? {
                    Some(id) if id > 0 => id as u64,
                    _ => return self.bytes.fail("expected a positive clause id"),
                };
                self.literals.clear();
                loop {
                    match self.bytes.binary_number()? {
                        Some(0) => break,
                        Some(n) if n.unsigned_abs() <= u64::from(crate::MAX_VARIABLE) => self.literals.push(n as i32),
                        Some(_) => return self.bytes.fail("literal out of range"),
                        None => return self.bytes.fail("the proof ends inside a step"),
                    }
                }
                self.binary_until_zero()?;
                Ok(Some(Step::Add(id)))
            }
            b'd' => {
                self.binary_until_zero()?;
                Ok(Some(Step::Delete))
            }
            other => self.bytes.fail(format!("expected a step ('a' or 'd'), found byte {other}")),
        }
    }

    fn binary_until_zero(&mut self) -> Read_<()> {
        loop {
            match self.bytes.binary_number()? {
                Some(0) => return Ok(()),
                Some(n) => self.hints.push(n),
                None => return self.bytes.fail("the proof ends inside a step"),
            }
        }
    }
}
