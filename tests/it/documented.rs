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

/// The project root.
fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every backticked path in `text` under one of the project's folders, and
/// every relative Markdown link target, as paths from `base`.
fn paths_named(text: &str) -> (Vec<String>, Vec<String>) {
    let folders = ["host", "guest-sdk", "capabilities", "checkers", "tests", "wit", "scripts", "fuzz", "docs"];
    let backticked = text
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.trim_end_matches(['.', ',', ':']))
        // A placeholder (`fuzz/seeds/<target>`, `checkers/*`) names no one path.
        .filter(|s| s.contains('/') && !s.contains([' ', '<', '*', '{']) && !s.contains("://"))
        .filter(|s| folders.contains(&s.split('/').next().unwrap_or_default()))
        .map(str::to_owned)
        .collect();
    let mut links = Vec::new();
    for piece in text.split("](").skip(1).chain(text.lines().filter_map(|l| l.split_once("]: ").map(|(_, t)| t))) {
        let target = piece.split([')', ' ', '#']).next().unwrap_or_default();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            links.push(target.to_owned());
        }
    }
    (backticked, links)
}

#[test]
fn the_architecture_and_performance_pages_are_short_and_every_path_and_link_in_the_documents_exists() {
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let performance = std::fs::read_to_string(root().join("docs/performance.md")).unwrap();
    assert!(
        architecture.len() <= 30_000,
        "ARCHITECTURE.md is {} bytes: decisions go to docs/decisions/",
        architecture.len()
    );
    assert!(
        performance.len() <= 15_000,
        "docs/performance.md is {} bytes: history goes to docs/decisions/",
        performance.len()
    );

    let mut documents = vec![root().join("ARCHITECTURE.md"), root().join("README.md")];
    for dir in ["docs", "docs/decisions"] {
        let mut pages: Vec<_> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "md"))
            .collect();
        pages.sort();
        documents.extend(pages);
    }
    let decisions: Vec<_> = documents.iter().filter(|p| p.parent().unwrap().ends_with("decisions")).collect();
    assert!(decisions.len() > 40, "{decisions:?}");
    let mut wrong = Vec::new();
    for document in &documents {
        let text = std::fs::read_to_string(document).unwrap();
        let name = document.strip_prefix(root()).unwrap().display().to_string();
        let (backticked, links) = paths_named(&text);
        for path in backticked {
            if !root().join(&path).exists() {
                wrong.push(format!("{name} names {path}"));
            }
        }
        for link in links {
            if !document.parent().unwrap().join(&link).exists() {
                wrong.push(format!("{name} links to {link}"));
            }
        }
        let file = document.file_name().unwrap().to_string_lossy();
        if decisions.contains(&document) && file != "README.md" {
            let number = &file[..4];
            for heading in [
                &format!("# {number}. ")[..],
                "\n## Context\n",
                "\n## Decision\n",
                "\n## Consequences\n",
                "\n## Measurement\n",
            ] {
                if !text.contains(heading) {
                    wrong.push(format!("{name} has no {:?}", heading.trim()));
                }
            }
            let index = std::fs::read_to_string(root().join("docs/decisions/README.md")).unwrap();
            if !index.contains(&format!("]({file})")) {
                wrong.push(format!("docs/decisions/README.md does not list {file}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The check bites: a path that is not there is found.
    assert_eq!(paths_named("see `host/src/nowhere.rs` and [x](gone.md)").0, ["host/src/nowhere.rs"]);
    assert_eq!(paths_named("see `host/src/nowhere.rs` and [x](gone.md)").1, ["gone.md"]);
}

#[test]
fn every_test_the_invariants_point_at_exists() {
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let invariants = architecture.split("## Invariants").nth(1).expect("an Invariants section");
    let invariants = invariants.split("\n## ").next().unwrap_or_default();
    // A test's name: a backticked snake_case identifier of five words or more.
    let named: Vec<&str> = invariants
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.matches('_').count() >= 4 && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .collect();
    assert!(named.len() >= 15, "each invariant points at its tests: {named:?}");
    let mut code = String::new();
    let mut stack =
        vec![root().join("tests/it"), root().join("host/src"), root().join("checkers"), root().join("capabilities")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("node_modules") {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                code += &std::fs::read_to_string(&path).unwrap();
            }
        }
    }
    let missing: Vec<&&str> = named.iter().filter(|name| !code.contains(&format!("fn {name}("))).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md's invariants point at tests that do not exist: {missing:?}");
}
