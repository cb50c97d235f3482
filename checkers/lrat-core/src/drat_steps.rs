//! DRAT proof steps read from a byte stream, one at a time, into a reused
//! buffer: text (`literals 0` a lemma, `d literals 0` a deletion, `c`
//! comments; numbers may run across lines, as in DIMACS) or binary (`a`
//! literals 0, `d` literals 0). A proof is binary when it starts with `a`,
//! or with `d` and a zero byte follows in its first 256 KiB (text has none).

use std::io::Read;

use crate::MAX_VARIABLE;
use crate::bytes::{Bytes, Read_};

/// What the last step read was; its literals are [`DratSteps::literals`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DratStep {
    Add,
    Delete,
}

pub(crate) struct DratSteps<R> {
    bytes: Bytes<R>,
    /// `None` until the head of the stream is seen.
    binary: Option<bool>,
    literals: Vec<i32>,
}

impl<R: Read> DratSteps<R> {
    pub(crate) fn new(reader: R) -> Self {
        DratSteps { bytes: Bytes::new(reader), binary: None, literals: Vec::new() }
    }

    /// Where the last step is (a line of text, a step of binary).
    pub(crate) fn line(&self) -> usize {
        self.bytes.line
    }

    /// Whether the proof is binary (known once a step is read).
    pub(crate) fn binary(&self) -> bool {
        self.binary == Some(true)
    }

    /// The last step's literals, in the order written.
    pub(crate) fn literals(&self) -> &[i32] {
        &self.literals
    }

    /// The next step, or `None` at the end of the proof.
    pub(crate) fn next_step(&mut self) -> Read_<Option<DratStep>> {
        let binary = match self.binary {
            Some(binary) => binary,
            None => {
                let head = self.bytes.head()?;
                let binary = match head.first() {
                    Some(b'a') => true,
                    Some(b'd') => head.contains(&0),
                    _ => false,
                };
                self.binary = Some(binary);
                binary
            }
        };
        self.literals.clear();
        if binary { self.binary_step() } else { self.text_step() }
    }

    fn push(&mut self, literal: i64) -> Read_<()> {
        if literal.unsigned_abs() > u64::from(MAX_VARIABLE) {
            return self.bytes.fail(format!("literal {literal} is out of range (variables up to {MAX_VARIABLE})"));
        }
        self.literals.push(literal as i32);
        Ok(())
    }

    fn text_step(&mut self) -> Read_<Option<DratStep>> {
        let Some(first) = self.bytes.next_text_line()? else { return Ok(None) };
        let kind = if first == b'd' {
            self.bytes.advance();
            if !matches!(self.bytes.peek()?, Some(b' ' | b'\t' | b'\r' | b'\n')) {
                return self.bytes.fail("expected a space after 'd'");
            }
            DratStep::Delete
        } else {
            DratStep::Add
        };
        loop {
            self.bytes.skip_blanks(true)?;
            match self.bytes.text_number()? {
                Some(0) => return Ok(Some(kind)),
                Some(literal) => self.push(literal)?,
                None => return self.bytes.fail("the proof ends inside a step (missing terminating 0)"),
            }
        }
    }

    fn binary_step(&mut self) -> Read_<Option<DratStep>> {
        let Some(kind) = self.bytes.next_binary_step()? else { return Ok(None) };
        let kind = match kind {
            b'a' => DratStep::Add,
            b'd' => DratStep::Delete,
            other => return self.bytes.fail(format!("expected a step ('a' or 'd'), found byte {other}")),
        };
        loop {
            match self.bytes.binary_number()? {
                Some(0) => return Ok(Some(kind)),
                Some(literal) => self.push(literal)?,
                None => return self.bytes.fail("the proof ends inside a step"),
            }
        }
    }
}
