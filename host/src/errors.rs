//! Error text for people: one renderer for every error chain the host
//! reports (the CLI's envelope, diagnostics, install refusals, logs).
//!
//! An error type says its own context in its message and reports its cause as
//! its `source`, never both (a wrapper that adds nothing is `transparent`);
//! the layout test holds every type to that. [`render`] joins the chain, each
//! part once, on one line; `to_string()` alone would drop the causes.

use std::error::Error;

/// `outer: cause: deeper cause`, each part once, on one line.
///
/// A cause whose text is the very text before it is not repeated: a foreign
/// type may say its source's message as its own (ours never do).
pub fn render(error: &(dyn Error + 'static)) -> String {
    let mut text = one_line(&error.to_string());
    let mut last = text.clone();
    let mut source = error.source();
    while let Some(cause) = source {
        let next = one_line(&cause.to_string());
        if !next.is_empty() && next != last {
            text.push_str(": ");
            text.push_str(&next);
        }
        last = next;
        source = cause.source();
    }
    text
}

/// `text` with every run of whitespace that holds a line break made one space.
pub fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\r']) {
        return text.to_owned();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("component x")]
    struct Outer {
        source: Inner,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("not a WebAssembly component: bad magic number")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("opening the store")]
    struct Wrapper(#[source] Outer);

    #[test]
    fn each_cause_is_said_once() {
        let outer = Outer { source: Inner };
        assert_eq!(render(&outer), "component x: not a WebAssembly component: bad magic number");
        assert_eq!(
            render(&Wrapper(outer)),
            "opening the store: component x: not a WebAssembly component: bad magic number"
        );
        assert_eq!(render(&Inner), "not a WebAssembly component: bad magic number");
    }

    #[test]
    fn line_breaks_become_spaces() {
        assert_eq!(one_line("expected=[\n    0x0,\n    0x61,\n]"), "expected=[ 0x0, 0x61, ]");
        assert_eq!(one_line("one line"), "one line");
    }
}
