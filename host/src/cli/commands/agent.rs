//! What an agent sees over MCP, from the command line: `describe`, `resource`, `prompt`,
//! `catalog`, `components`, `invoke`, `workspace`, and the `demo` that walks through them.

use std::io::Read as _;
use std::path::PathBuf;

use crate::cli::error::{Context, refuse};
use jacobian::contract::{DescribeRequest, Diagnostic, InvokeRequest, Status};
use jacobian::store::StoreConfig;

use crate::cli::Place;
use crate::cli::args::{
    ArtifactAction, ArtifactArgs, DescribeArgs, InvokeArgs, PromptArgs, ResourceArgs, WorkspaceAction, WorkspaceArgs,
};
use crate::cli::support::{fail_with, from_name, open, read_request};

/// `jacobian describe`.
pub fn describe(place: Place, args: DescribeArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let DescribeArgs { id, view, query, domain, mode, limit, cursor, input_kind, artifact_type } = args;
    let request = DescribeRequest {
        capability_id: id,
        view: view.map(|v| from_name(&v, "view")).transpose()?,
        query,
        domain,
        mode,
        limit,
        cursor,
        input_kind: input_kind.map(|k| from_name(&k, "input-kind")).transpose()?,
        artifact_type,
    };
    let runtime = open(data_dir, &store)?;
    match as_json(runtime.describe(&request))? {
        Ok(value) => println!("{}", serde_json::to_string_pretty(&value)?),
        Err(diagnostic) => fail_with(&diagnostic),
    }
    Ok(())
}

/// `jacobian resource`.
pub fn resource(place: Place, args: ResourceArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let ResourceArgs { uri } = args;
    let Some(uri) = uri else {
        println!("{}", serde_json::to_string_pretty(&jacobian::resources::listing())?);
        return Ok(());
    };
    let runtime = open(data_dir, &store)?;
    match jacobian::resources::read(&runtime, &uri) {
        Ok(content) => println!("{}", content.text),
        Err(diagnostic) => fail_with(&diagnostic),
    }
    Ok(())
}

/// `jacobian prompt`.
pub fn prompt(place: Place, args: PromptArgs) -> crate::cli::error::Result<()> {
    let Place { .. } = place;
    let PromptArgs { name, args } = args;
    let mut arguments = serde_json::Map::new();
    for arg in args {
        let (key, value) = arg.split_once('=').with_context(|| format!("--arg {arg}: expected key=value"))?;
        arguments.insert(key.to_owned(), value.into());
    }
    match jacobian::resources::prompt(&name, &arguments) {
        Ok(text) => println!("{text}"),
        Err(diagnostic) => refuse!("{}", diagnostic.message),
    }
    Ok(())
}

/// `jacobian artifact put` and `share`.
pub fn artifact(place: Place, args: ArtifactArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    match args.action {
        ArtifactAction::Put { file, schema } => {
            let mut source = std::fs::File::open(&file).with_context(|| format!("{}", file.display()))?;
            let declared = source.metadata().with_context(|| format!("{}", file.display()))?.len();
            let runtime = open(data_dir, &store)?;
            let uploaded = runtime.upload(&mut source, &schema, Some(declared), None)?;
            println!("{}", serde_json::to_string_pretty(&uploaded)?);
        }
        ArtifactAction::Share { uri, tenant } => {
            if !jacobian::auth::api_tokens::valid_tenant(&tenant) {
                refuse!("--tenant {tenant:?}: a tenant is 1-64 of a-z 0-9 . _ - starting with a letter or digit");
            }
            let digest = jacobian::digest::Digest::from_artifact_uri(&uri).with_context(|| format!("URI {uri:?}"))?;
            let runtime = open(data_dir, &store)?;
            let granted = runtime.share(&tenant, &digest).with_context(|| format!("URI {uri}"))?;
            println!("{}", serde_json::json!({"tenant": tenant, "granted": granted}));
        }
    }
    Ok(())
}

/// `jacobian demo`.
pub fn demo(explicit_data_dir: Option<PathBuf>) -> crate::cli::error::Result<()> {
    let dir = match explicit_data_dir {
        Some(dir) => dir,
        None => std::env::temp_dir().join(format!("jacobian-demo-{}", std::process::id())),
    };
    Ok(jacobian::demo::run(open(dir, &StoreConfig::DataDir)?)?)
}

/// `jacobian catalog`.
pub fn catalog(place: Place) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let runtime = open(data_dir, &store)?;
    // Every page, as one inventory.
    let binding = runtime.binding();
    let mut inventory = runtime.catalog().inventory(&binding, 0);
    while inventory.next.take().is_some() {
        let more = runtime.catalog().inventory(&binding, inventory.capabilities.len());
        inventory.next = more.next;
        inventory.capabilities.extend(more.capabilities);
    }
    // Through a Value, as every answer is printed: keys sorted.
    println!("{}", serde_json::to_string_pretty(&serde_json::to_value(&inventory)?)?);
    Ok(())
}

/// `jacobian components`.
pub fn components(place: Place) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let runtime = open(data_dir, &store)?;
    let components: Vec<_> = runtime.components().collect();
    let listing = serde_json::json!({
        "components": components,
        "load_failures": runtime.load_failures(),
    });
    println!("{}", serde_json::to_string_pretty(&listing)?);
    Ok(())
}

/// `jacobian invoke`.
pub fn invoke(place: Place, args: InvokeArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let InvokeArgs { id, input, mode, view, experiment } = args;
    let text = if input.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        std::fs::read_to_string(&input).with_context(|| format!("reading {}", input.display()))?
    };
    let input: serde_json::Value = serde_json::from_str(&text).context("the input file is not valid JSON")?;
    let runtime = open(data_dir, &store)?;
    let text_view = view.map(|v| from_name(&v, "view")).transpose()?;
    let request =
        InvokeRequest { capability_id: id, mode, input, budget: None, view: text_view, experiment, tenant: None };
    let result = runtime.invoke(&request);
    if text_view.is_some() {
        println!("{}", result.text);
    } else {
        println!("{}", serde_json::to_string_pretty(&result)?);
    }
    if result.status == Status::Failed {
        crate::cli::Exit::Refused.exit();
    }
    Ok(())
}

/// A typed answer as the JSON printed for it (keys sorted, as every answer is printed).
fn as_json<T: serde::Serialize>(
    answer: Result<T, Diagnostic>,
) -> crate::cli::error::Result<Result<serde_json::Value, Diagnostic>> {
    Ok(match answer {
        Ok(answer) => Ok(serde_json::to_value(answer)?),
        Err(diagnostic) => Err(diagnostic),
    })
}

/// `jacobian workspace`.
pub fn workspace(place: Place, args: WorkspaceArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let WorkspaceArgs { action } = args;
    let runtime = open(data_dir, &store)?;
    let workspaces = runtime.workspaces();
    let answer = match action {
        WorkspaceAction::Open(file) => as_json(workspaces.open(runtime.data(), &read_request(&file.path())?))?,
        WorkspaceAction::Write(file) => as_json(workspaces.write(runtime.data(), &read_request(&file.path())?))?,
        WorkspaceAction::Query(file) => as_json(workspaces.query(runtime.data(), &read_request(&file.path())?))?,
        WorkspaceAction::Graph { id, format, attempts, revision } => {
            let revision = match revision {
                Some(text) => Some(
                    jacobian::workspace::model::parse_numbered(&text, "rev")
                        .with_context(|| format!("--revision {text}: expected rev-<n>"))?,
                ),
                None => None,
            };
            match workspaces.state(runtime.data(), &id, revision) {
                Ok(state) => {
                    use jacobian::workspace::graph;
                    let drawing = graph::Drawing { attempts };
                    match format.as_str() {
                        "dot" => print!("{}", graph::dot(&state)),
                        "svg" => print!("{}", graph::svg(&state, drawing)),
                        "html" => print!("{}", graph::html(&state, &id, drawing)),
                        other => refuse!("--format {other}: expected dot, svg or html"),
                    }
                    return Ok(());
                }
                Err(diagnostic) => Err(diagnostic),
            }
        }
    };
    match answer {
        Ok(value) => println!("{}", serde_json::to_string_pretty(&value)?),
        Err(diagnostic) => fail_with(&diagnostic),
    }
    Ok(())
}
