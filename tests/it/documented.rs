//! The documentation's command lines are true to the parser: every example
//! line of the command block in `docs/operating.md` (each alternative of
//! `a|b`, optional parts included, placeholders filled in) is accepted by
//! `jacobian`'s argument parser, up to a `--help` appended to it (so nothing
//! runs, and a subcommand, flag or value the parser does not know fails).

use std::path::Path;
use std::process::Command;

use crate::support::BIN;

/// The first fenced `sh` block of a Markdown file, line by line.
fn command_block(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let block = text.split("```sh\n").nth(1).expect("a ```sh block");
    block.split("\n```").next().unwrap().lines().map(str::to_owned).collect()
}

/// Split a command line into words: double quotes group, a word starting
/// with `#` starts a comment, a lone `>` a redirection.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars().chain([' ']) {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted && word.is_empty() => break,
            c if c.is_whitespace() && !quoted => match std::mem::take(&mut word) {
                redirect if redirect == ">" => break,
                done if !done.is_empty() => out.push(done),
                _ => {}
            },
            c => word.push(c),
        }
    }
    out
}

/// A documented placeholder as a value the parser takes.
fn filled(word: &str) -> String {
    let hex = "0".repeat(64);
    match word {
        "ADDR" => "127.0.0.1:0".into(),
        "K" | "N" | "M" => "1".into(),
        _ => word.replace("<hex>", &hex).replace("<id>", "0").replace('…', "host/db"),
    }
}

/// Every command a documented line stands for: ` | jacobian ` separates
/// commands, `a|b` inside a word separates alternatives, `[…]` is included.
fn commands(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for command in line.split(" | jacobian ") {
        let command = command.trim().strip_prefix("jacobian ").unwrap_or(command.trim());
        let mut variants: Vec<Vec<String>> = vec![Vec::new()];
        for word in words(&command.replace(['[', ']'], " ")) {
            let choices: Vec<String> = if word.contains('|') && !word.contains('=') {
                word.split('|').map(filled).collect()
            } else {
                vec![filled(&word)]
            };
            variants = variants
                .into_iter()
                .flat_map(|prefix| {
                    choices.iter().map(move |choice| {
                        let mut next = prefix.clone();
                        next.push(choice.clone());
                        next
                    })
                })
                .collect();
        }
        out.extend(variants);
    }
    out
}

#[test]
fn every_command_line_the_operating_guide_shows_is_one_the_parser_accepts() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/operating.md");
    let lines: Vec<String> = command_block(&guide).into_iter().filter(|l| l.starts_with("jacobian ")).collect();
    assert!(lines.len() >= 15, "the guide's command block: {lines:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for line in &lines {
        for args in commands(line) {
            let output = Command::new(BIN)
                .arg("--data-dir")
                .arg(dir.path())
                .args(&args)
                .arg("--help")
                .env_remove("JACOBIAN_STORE")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success() && stdout.contains("Usage: jacobian"),
                "`jacobian {}` (from {line:?}) is not accepted: {}{stdout}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 22, "{checked} commands");
}

#[test]
fn a_command_the_parser_does_not_know_fails_the_check() {
    // The check itself: a misspelt flag or an extra positional is refused, even with --help after it.
    for args in [&["describe", "--qurey", "x"][..], &["catalog", "extra"], &["workspace", "opn", "a.json"]] {
        let output = Command::new(BIN).args(args).arg("--help").output().unwrap();
        assert!(!output.status.success(), "`jacobian {}` accepted", args.join(" "));
    }
    assert_eq!(commands("jacobian replay|verify pack.json"), [["replay", "pack.json"], ["verify", "pack.json"]]);
    let graph = commands("jacobian workspace graph ws-<id> --format svg > out.svg  # draw it");
    assert_eq!(graph, [["workspace", "graph", "ws-0", "--format", "svg"]]);
    assert_eq!(
        commands("jacobian policy show | jacobian policy set policy.toml   # print"),
        [vec!["policy", "show"], vec!["policy", "set", "policy.toml"]]
    );
}

#[test]
fn the_exit_codes_help_lists_are_the_ones_commands_return() {
    let help = String::from_utf8(Command::new(BIN).arg("--help").output().unwrap().stdout).unwrap();
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Exit codes:")
        .skip(1)
        .filter_map(|l| l.trim_start().split_once("  ").map(|(code, _)| code))
        .collect();
    assert_eq!(listed, ["0", "1", "2", "3"], "{help}");
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let (one, other) = (file("one.json", r#"{"a":1}"#), file("other.json", r#"{"a":2}"#));
    let missing = dir.path().join("missing.json").to_string_lossy().into_owned();
    let code =
        |args: &[&str]| Command::new(BIN).arg("--data-dir").arg(dir.path()).args(args).output().unwrap().status.code();
    assert_eq!(code(&["compare", &one, &one]), Some(0), "the same");
    assert_eq!(code(&["compare", &one, &other]), Some(1), "an answer of no");
    assert_eq!(code(&["verify", &one]), Some(2), "not an archive: refused");
    assert_eq!(code(&["compare", &one, &missing]), Some(3), "an error");
    let operating =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/operating.md")).unwrap();
    assert!(operating.contains("Exit codes: 0 identical"), "docs/operating.md states them");
}
