//! The operator's commands: `install`, `migrate`, `policy`, `checkers`, `tokens`.

use std::io::Read as _;

use anyhow::{Context, bail};
use jacobian::RuntimeConfig;
use jacobian::runtime::OpenError;
use jacobian::store::StoreConfig;

use crate::cli::Place;
use crate::cli::args::{CheckerAction, CheckersArgs, InstallArgs, PolicyAction, PolicyArgs, TokenAction, TokensArgs};
use crate::cli::support::{Unavailable, open, read_file, store_failure};

/// `jacobian install`.
pub fn install(place: Place, args: InstallArgs) -> anyhow::Result<()> {
    let Place { data_dir, store, .. } = place;
    let InstallArgs { file, expect_digest } = args;
    let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
    let runtime = open(data_dir, &store)?;
    let (record, new) = runtime.install(&bytes, expect_digest)?;
    let verb = if new { "installed" } else { "already installed" };
    println!("{verb} {} ({:?}, {} {})", record.digest, record.kind, record.provider.name, record.provider.version);
    for c in &record.descriptor.capabilities {
        println!("  capability {}", c.id);
    }
    for k in &record.descriptor.checkers {
        println!(
            "  checker role {} as {} (not authorized until `jacobian checkers authorize`)",
            k.role, k.capability_id
        );
    }
    Ok(())
}

/// `jacobian check`: the report of every install check, exit 1 when the
/// bundle would be refused or an example is not deterministic.
pub fn check(place: Place, args: InstallArgs) -> anyhow::Result<()> {
    use jacobian::registry::InstallError;
    let Place { data_dir, store, .. } = place;
    let InstallArgs { file, expect_digest } = args;
    let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
    let runtime = open(data_dir, &store)?;
    let digest = jacobian::digest::Digest::of(&bytes);
    let mut report =
        serde_json::json!({"bundle": file.display().to_string(), "digest": digest, "size_bytes": bytes.len()});
    let accepted = match runtime.check_bundle(&bytes, expect_digest) {
        Err(InstallError::Store(e)) => return Err(e.into()),
        Err(refusal) => {
            // The check that refused it, in the order install runs them.
            let failed = match &refusal {
                InstallError::DigestMismatch { .. } => "digest",
                InstallError::Prepare { .. } => "component",
                InstallError::Describe { .. } => "describe",
                InstallError::Descriptor { .. } | InstallError::DuplicateId { .. } => "descriptor",
                InstallError::HealthProbe { .. } => "describe_deterministic",
                _ => "examples",
            };
            report["verdict"] = "REFUSED".into();
            report["failed_check"] = failed.into();
            report["error"] = jacobian::errors::render(&refusal).into();
            false
        }
        Ok(checked) => {
            let record = &checked.record;
            let (first, second) = (&checked.runs[0], &checked.runs[1]);
            let examples: Vec<serde_json::Value> = first
                .iter()
                .enumerate()
                .map(|(n, call)| {
                    let again = second.get(n).filter(|other| (&other.subject, &other.at) == (&call.subject, &call.at));
                    serde_json::json!({
                        "capability_id": call.subject, "example": call.title, "at": call.at,
                        "sha256": call.sha256, "deterministic": again.is_some_and(|other| other.sha256 == call.sha256),
                    })
                })
                .collect();
            let deterministic = checked.later_failure.is_none()
                && first.len() == second.len()
                && examples.iter().all(|e| e["deterministic"] == true);
            if let Some(failure) = &checked.later_failure {
                report["error"] = format!("the second run of the examples failed: {failure}").into();
            }
            report["kind"] = serde_json::to_value(record.kind)?;
            report["provider"] = serde_json::to_value(&record.provider)?;
            report["imports"] = serde_json::to_value(&record.imports)?;
            report["capabilities"] = record.descriptor.capabilities.iter().map(|c| c.id.clone()).collect();
            report["checkers"] = record
                .descriptor
                .checkers
                .iter()
                .map(|k| serde_json::json!({"role": k.role, "capability_id": k.capability_id}))
                .collect();
            report["checks"] = serde_json::json!({
                "digest": "PASSED", "component": "PASSED", "describe": "PASSED",
                "describe_deterministic": record.health.describe_deterministic, "descriptor": "PASSED",
                "examples_run": record.health.examples_run, "examples_deterministic": deterministic,
                "fuel_consumed": record.health.fuel_consumed,
            });
            report["example_calls"] = examples.into();
            report["verdict"] = if deterministic { "ACCEPTABLE" } else { "NOT_DETERMINISTIC" }.into();
            deterministic
        }
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !accepted {
        std::process::exit(1);
    }
    Ok(())
}

/// `jacobian migrate`.
pub fn migrate(place: Place) -> anyhow::Result<()> {
    let Place { data_dir, store, .. } = place;
    let shared = matches!(store, StoreConfig::Postgres(_));
    let report = jacobian::store::migrate(&store, &data_dir)
        .map_err(|e| store_failure(e, &data_dir.display().to_string(), shared))?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

/// Open part of the deployment's state with `open`, loading no component;
/// a store failure is the typed start-up error of the store it names.
fn without_components<T>(
    config: &RuntimeConfig,
    open: impl FnOnce(&RuntimeConfig) -> Result<T, OpenError>,
) -> anyhow::Result<T> {
    let shared = matches!(config.store, StoreConfig::Postgres(_));
    open(config).map_err(|e| match e {
        OpenError::Store(e) => store_failure(e, &config.data_dir.display().to_string(), shared),
        e => Unavailable(e.to_string()).into(),
    })
}

/// `jacobian policy`.
pub fn policy(place: Place, args: PolicyArgs) -> anyhow::Result<()> {
    let Place { data_dir, store, .. } = place;
    let PolicyArgs { action } = args;
    // Without loading components: this is also how a broken policy is repaired.
    let config = RuntimeConfig { store, ..RuntimeConfig::new(data_dir) };
    let state = without_components(&config, jacobian::runtime::open_state)?;
    match action {
        PolicyAction::Show => match state.read_policy()? {
            Some(text) => print!("{text}"),
            None => print!("{}", jacobian::policy::Policy::default().to_toml()),
        },
        PolicyAction::Set { file } => {
            let text = if file.as_os_str() == "-" {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text)?;
                text
            } else {
                String::from_utf8(read_file(&file)?).context("the policy file is not UTF-8")?
            };
            let policy = jacobian::policy::Policy::parse(&text, config.engine.max_memory_bytes)
                .with_context(|| format!("policy file {}", file.display()))?;
            state.write_policy(&policy.to_toml())?;
            println!("policy {} is in force", policy.digest());
        }
    }
    Ok(())
}

/// `jacobian checkers`.
pub fn checkers(place: Place, args: CheckersArgs) -> anyhow::Result<()> {
    let Place { data_dir, store, .. } = place;
    let CheckersArgs { action } = args;
    let runtime = open(data_dir, &store)?;
    match action {
        CheckerAction::List => {
            let binding = runtime.binding();
            for entry in runtime.catalog().entries().filter(|e| e.kind == jacobian::catalog::EntryKind::Verifier) {
                let authorized = binding.authorized.get(&entry.id).copied().unwrap_or(false);
                println!(
                    "{} role={} digest={} authorized={authorized}",
                    entry.id,
                    entry.checker_roles.join(","),
                    entry.component
                );
            }
        }
        CheckerAction::Authorize { digest, role } => {
            if runtime.kind_of(&digest) != Some(jacobian_guest::protocol::BundleKind::Checker) {
                bail!("{digest} is not an installed checker component; install it first");
            }
            let provides = runtime
                .components()
                .find(|r| r.digest == digest)
                .is_some_and(|r| r.descriptor.checkers.iter().any(|k| k.role == role));
            if !provides {
                bail!("checker {digest} does not declare role {role}");
            }
            runtime.update_policy(|p| p.authorize(&role, digest))?;
            println!("authorized {digest} for role {role}");
        }
        CheckerAction::Revoke { digest } => {
            runtime.update_policy(|p| p.revoke(digest))?;
            println!("revoked {digest}");
        }
    }
    Ok(())
}

/// `jacobian tokens`.
pub fn tokens(place: Place, args: TokensArgs) -> anyhow::Result<()> {
    use jacobian::auth::{Scope, Scopes, api_tokens, now_seconds};
    let Place { data_dir, store, .. } = place;
    let config = RuntimeConfig { store, ..RuntimeConfig::new(data_dir) };
    let tokens = without_components(&config, jacobian::runtime::open_tokens)?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let unavailable = |e: jacobian::store::DbError| Unavailable(format!("the token store: {e}"));
    match args.action {
        TokenAction::Create { tenant, scopes, expires } => {
            if !api_tokens::valid_tenant(&tenant) {
                bail!("--tenant {tenant:?}: a tenant is 1-64 of a-z 0-9 . _ - and starts with a letter or digit");
            }
            let mut set = Scopes::default();
            for name in &scopes {
                let scope = Scope::parse_short(name)
                    .with_context(|| format!("--scope {name:?}: expected invoke, workspace or read"))?;
                set = set.with(scope);
            }
            let now = now_seconds();
            let lifetime = match expires {
                Some(text) => Some(api_tokens::parse_duration(&text).with_context(|| {
                    format!("--expires {text:?}: expected a duration such as 30d, 12h, 90m or 3600s")
                })?),
                None => None,
            };
            let (token, record) = api_tokens::mint(&tenant, set, now, lifetime.map(|l| now.saturating_add(l)))?;
            rt.block_on(tokens.create(&record)).map_err(unavailable)?;
            let shown = serde_json::json!({"token": token, "id": record.id, "tenant": record.tenant,
                "tenant_tag": jacobian::tenants::tenant_tag(&record.tenant),
                "scopes": record.scopes, "expires_at": record.expires_at});
            println!("{shown}");
        }
        TokenAction::List => {
            for record in rt.block_on(tokens.list()).map_err(unavailable)? {
                // With the tenant's tag: its workspace ids end in it, its experiments are kept as `<id>@<tag>`.
                let mut shown = serde_json::to_value(&record)?;
                shown["tenant_tag"] = jacobian::tenants::tenant_tag(&record.tenant).into();
                println!("{shown}");
            }
        }
        TokenAction::Revoke { id } => {
            if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                bail!(
                    "a token id is 16 hex digits (jacobian tokens list); the argument is not shown, in case it was a token"
                );
            }
            if !rt.block_on(tokens.revoke(&id, now_seconds())).map_err(unavailable)? {
                return Err(std::io::Error::new(std::io::ErrorKind::NotFound, format!("no API token {id}")).into());
            }
            println!("revoked {id}");
        }
    }
    Ok(())
}
