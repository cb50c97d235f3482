//! The source layout keeps its promises: small files, no import cycles,
//! the MCP and HTTP crates only at the edge, and an ARCHITECTURE.md codemap
//! that names every module of `host/src` and nothing that is not there,
//! guest components found rather than listed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The project root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `host/src`, as a path relative to the project root.
fn sources() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("host/src"), &mut files);
    let mut names: Vec<String> =
        files.iter().map(|p| p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/")).collect();
    names.sort();
    names
}

/// A file's code without its comments (doc links are not imports).
fn code(path: &str) -> String {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    text.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The first path segments after each `prefix` in `code`, following
/// `prefix{a, b::c}` groups one level deep.
fn segments_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        found.insert(ident(group[start..i].trim()));
                        start = i + 1;
                    }
                    _ => {}
                }
                if depth == 0 {
                    found.insert(ident(group[start..i].trim()));
                    break;
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|s| !s.is_empty() && s != "self");
    found
}

/// A module's name among its siblings: `host/src/runtime/pipeline.rs` → `pipeline`, `…/runtime/mod.rs` → `runtime`.
fn module_of(file: &str, depth: usize) -> Option<String> {
    let parts: Vec<&str> = file.strip_prefix("host/src/")?.split('/').collect();
    let part = parts.get(depth)?;
    Some(part.trim_end_matches(".rs").to_owned())
}

/// The first cycle in a directed graph, if any.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut found = path[start..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// Every `.rs` file of the workspace (the host, the SDK, the guests, the
/// tests and benches), skipping build output and installed packages.
fn workspace_sources() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if path.is_dir() {
                if !["target", "node_modules", ".git"].contains(&name.as_ref()) && !name.starts_with('.') {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root(), &mut files);
    let root = root().canonicalize().unwrap();
    let mut names: Vec<String> = files
        .iter()
        .map(|p| p.canonicalize().unwrap().strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/"))
        .collect();
    names.sort();
    names
}

#[test]
fn no_source_file_of_the_workspace_is_over_six_hundred_lines() {
    let sources = workspace_sources();
    for part in ["host/src/runtime/pipeline.rs", "host/benches/runtime.rs", "tests/it/main.rs", "fuzz/fuzz_targets"] {
        assert!(sources.iter().any(|file| file.starts_with(part)), "the walk reaches {part}");
    }
    let long: Vec<(String, usize)> = sources
        .into_iter()
        .map(|file| {
            let lines = std::fs::read_to_string(root().join(&file)).unwrap().lines().count();
            (file, lines)
        })
        .filter(|(_, lines)| *lines > 600)
        .collect();
    assert!(long.is_empty(), "split these: {long:?}");
}

#[test]
fn every_component_crate_is_built_and_those_under_tests_guests_are_the_test_guests() {
    // host/build.rs finds the guests in `cargo metadata`; nothing lists them.
    let components = |dir: &str| -> BTreeSet<String> {
        std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|entry| std::fs::read_to_string(entry.unwrap().path().join("Cargo.toml")).unwrap_or_default())
            .filter(|manifest| manifest.lines().any(|l| l.starts_with("crate-type") && l.contains(r#""cdylib""#)))
            .map(|manifest| {
                let name = manifest.lines().find_map(|l| l.strip_prefix("name = ")).expect("a package name");
                name.trim_matches('"').to_owned()
            })
            .collect()
    };
    let test_guests: BTreeSet<String> = std::fs::read_dir(jacobian::bundled::TEST_GUESTS_DIR)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().trim_end_matches(".wasm").replace('_', "-"))
        .collect();
    assert_eq!(test_guests, components("tests/guests"), "one test guest per component crate under tests/guests");
    assert!(test_guests.len() >= 10, "{test_guests:?}");
    let bundled: BTreeSet<String> = jacobian::bundled::BUNDLED.iter().map(|c| c.package.to_owned()).collect();
    let shipped: BTreeSet<String> = components("capabilities").union(&components("checkers")).cloned().collect();
    assert_eq!(bundled, shipped, "every component crate under capabilities/ and checkers/ is bundled");
}

#[test]
fn no_serialization_has_a_default_standing_in_for_its_failure() {
    // `json.rs` says once that our values serialize; a failure elsewhere is an error.
    let mut silent = Vec::new();
    for file in sources().into_iter().filter(|f| f != "host/src/json.rs") {
        let code: String = code(&file).split_whitespace().collect();
        for call in ["serde_json::to_", "toml::to_"] {
            for (at, _) in code.match_indices(call) {
                let Some(open) = code[at..].find('(').map(|i| at + i) else { continue };
                let mut depth = 0usize;
                let close = code[open..].char_indices().find_map(|(i, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(open + i)
                });
                let after = close.map_or("", |close| &code[close + 1..]);
                if [".unwrap_or_default()", ".ok()", ".unwrap_or("].iter().any(|s| after.starts_with(s)) {
                    silent.push(format!("{file}: {}", &code[at..(close.unwrap_or(at) + 1).min(code.len())]));
                }
            }
        }
    }
    assert!(silent.is_empty(), "return or report these errors (or use jacobian::json for our own values): {silent:#?}");
}

#[test]
fn no_two_modules_import_each_other_at_any_level() {
    let files = sources();
    // The library's top-level modules (the binary's `cli/` imports the library, never the reverse).
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files.iter().filter(|f| !f.starts_with("host/src/cli/") && !f.ends_with("/main.rs")) {
        let Some(module) = module_of(file, 0).filter(|m| m != "lib") else { continue };
        let imports = segments_after(&code(file), "crate::");
        graph.entry(module.clone()).or_default().extend(imports.into_iter().filter(|i| *i != module));
    }
    assert!(graph.len() > 15, "the scan found the modules: {graph:?}");
    assert_eq!(cycle(&graph), None, "top-level modules that import each other");
    // Within each directory module, its files among themselves (`super::x`).
    let directories: BTreeSet<String> =
        files.iter().filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_owned())).collect();
    for directory in directories {
        let mut siblings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in files.iter().filter(|f| f.rsplit_once('/').is_some_and(|(d, _)| d == directory)) {
            let name = file.rsplit_once('/').unwrap().1.trim_end_matches(".rs").to_owned();
            if name == "mod" || name == "tests" {
                continue;
            }
            let imports = segments_after(&code(file), "super::");
            siblings.entry(name.clone()).or_default().extend(imports.into_iter().filter(|i| *i != name));
        }
        assert_eq!(cycle(&siblings), None, "files of {directory} that import each other");
    }
}

#[test]
fn only_the_mcp_and_http_edge_knows_the_mcp_and_http_crates() {
    let edge = [
        "host/src/mcp/mod.rs",
        "host/src/mcp/completion.rs",
        "host/src/mcp/logging.rs",
        "host/src/mcp/stdio.rs",
        "host/src/http/mod.rs",
        "host/src/http/authn.rs",
        "host/src/http/coalesce.rs",
        "host/src/http/connections.rs",
        "host/src/http/listener.rs",
        "host/src/http/sessions.rs",
        "host/src/http/uploads.rs",
    ];
    for file in sources() {
        let code = code(&file);
        for krate in ["rmcp::", "axum::"] {
            let uses = code.contains(krate);
            if edge.contains(&file.as_str()) {
                continue;
            }
            assert!(!uses, "{file} uses {krate}: only {edge:?} may");
        }
    }
    assert!(code("host/src/mcp/mod.rs").contains("rmcp::") && code("host/src/http/mod.rs").contains("axum::"));
}

/// Modules that may not import others: the files under each prefix, and
/// the top-level modules of the crate they may not name.
const FORBIDDEN: &[(&str, &[&str])] = &[
    // The sandbox runs components; storage, stages and edges sit above it.
    ("host/src/engine/", &["store", "runtime", "workspace", "http", "mcp"]),
    // The stages answer requests; the protocol edges call them, never the reverse.
    ("host/src/runtime/", &["http", "mcp"]),
];

/// `file`'s imports that [`FORBIDDEN`] refuses.
fn forbidden_imports(file: &str, code: &str) -> Vec<String> {
    FORBIDDEN
        .iter()
        .filter(|(prefix, _)| file.starts_with(prefix))
        .flat_map(|(_, banned)| {
            segments_after(code, "crate::")
                .into_iter()
                .filter(|module| banned.contains(&module.as_str()))
                .map(|module| format!("{file} imports crate::{module}"))
        })
        .collect()
}

#[test]
fn the_sandbox_never_imports_the_stores_and_the_stages_never_the_edges() {
    let found: Vec<String> = sources().iter().flat_map(|file| forbidden_imports(file, &code(file))).collect();
    assert!(found.is_empty(), "{found:#?}");
    // The rules bite: a deliberate violation of each is found (engine/state.rs imported the store until #50).
    assert_eq!(
        forbidden_imports("host/src/engine/state.rs", "use crate::store::StoredFile;"),
        ["host/src/engine/state.rs imports crate::store"]
    );
    assert_eq!(
        forbidden_imports("host/src/runtime/pipeline.rs", "use crate::{digest::Digest, mcp::Server};"),
        ["host/src/runtime/pipeline.rs imports crate::mcp"]
    );
    assert!(forbidden_imports("host/src/http/mod.rs", "use crate::runtime::Runtime;").is_empty());
}

#[test]
fn the_codemap_names_every_module_and_only_paths_that_exist() {
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let named: BTreeSet<String> = architecture
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.trim_end_matches(['.', ',', ':']).to_owned())
        .filter(|s| {
            let first = s.split('/').next().unwrap_or_default();
            s.contains('/')
                && !s.contains(' ')
                && !s.contains("://")
                && ["host", "guest-sdk", "capabilities", "checkers", "tests", "wit", "scripts", "fuzz", "target"]
                    .contains(&first)
        })
        .collect();
    assert!(named.len() > 40, "the codemap names paths: {named:?}");
    let missing: Vec<&String> =
        named.iter().filter(|p| !p.starts_with("target/") && !root().join(p).exists()).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
    let unnamed: Vec<String> = sources()
        .into_iter()
        .filter(|file| !file.ends_with("/tests.rs"))
        .filter(|file| {
            let directory = file.strip_suffix("mod.rs").map(str::to_owned);
            !named.contains(file) && directory.is_none_or(|d| !named.contains(&d))
        })
        .collect();
    assert!(unnamed.is_empty(), "ARCHITECTURE.md's codemap does not name: {unnamed:?}");
}

#[test]
fn no_checker_depends_on_a_producer_and_no_producer_on_a_checker() {
    // Every dependency kind counts (normal, build, dev): a checker's tests
    // may not borrow a producer's code either.
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .expect("cargo metadata");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let side = |manifest: &str| -> Option<&'static str> {
        let relative = manifest.strip_prefix(&root().canonicalize().unwrap().to_string_lossy().to_string())?;
        let relative = relative.trim_start_matches('/');
        if relative.starts_with("capabilities/") {
            Some("producer")
        } else if relative.starts_with("checkers/") {
            Some("checker")
        } else {
            None
        }
    };
    let packages = metadata["packages"].as_array().unwrap();
    let side_of: BTreeMap<String, &str> = packages
        .iter()
        .filter_map(|p| Some((p["name"].as_str()?.to_owned(), side(p["manifest_path"].as_str()?)?)))
        .collect();
    let cores = side_of.keys().filter(|name| name.ends_with("-core")).count();
    assert!(cores >= 11, "every producer and checker has a core crate: {side_of:?}");
    // Direct dependencies between workspace crates; walked transitively, so
    // a path through a third crate (the SDK, a test helper) counts too.
    let direct: BTreeMap<&str, Vec<&str>> = packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"].as_array().unwrap().iter().filter_map(|d| d["name"].as_str()).collect();
            (p["name"].as_str().unwrap(), deps)
        })
        .collect();
    for (name, own) in &side_of {
        let mut reached = vec![name.as_str()];
        let mut seen = std::collections::BTreeSet::new();
        while let Some(package) = reached.pop() {
            for &target in direct.get(package).into_iter().flatten() {
                if !seen.insert(target) {
                    continue;
                }
                if let Some(other) = side_of.get(target) {
                    assert_eq!(own, other, "{name} ({own}) depends, through {package}, on {target} ({other})");
                }
                reached.push(target);
            }
        }
    }
}

/// The error types of `code` that say a cause in their message and also
/// report it as their source: `{source}` in a message, or `{0}` in the message
/// of a `#[from]` / `#[source]` field.
fn causes_said_twice(file: &str, code: &str) -> Vec<String> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(message) = line.trim().strip_prefix("#[error(\"") else { continue };
        let field = lines[at + 1..].iter().take(2).copied().collect::<Vec<_>>().join(" ");
        let source_field = field.contains("#[from]") || field.contains("#[source]");
        if message.contains("{source}") || (message.contains("{0}") && source_field) {
            found.push(format!("{file}:{}: {}", at + 1, line.trim()));
        }
    }
    found
}

#[test]
fn no_error_type_says_its_cause_twice() {
    let found: Vec<String> = sources().iter().flat_map(|file| causes_said_twice(file, &code(file))).collect();
    assert!(found.is_empty(), "say the context only; errors::render adds the cause: {found:#?}");
    // The rule bites on both shapes (store/error.rs and runtime/experiments.rs had them until #50).
    let twice = "    #[error(\"data directory {path}: {source}\")]\n    Open { path: PathBuf, source: io::Error },\n\
                 #[error(\"experiment store: {0}\")]\npub struct ExperimentError(#[from] DbError);";
    assert_eq!(causes_said_twice("x.rs", twice).len(), 2);
    assert!(causes_said_twice("x.rs", "#[error(\"policy file: {0}\")]\n    Parse(String),").is_empty());
}
