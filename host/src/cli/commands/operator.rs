//! The operator's commands: `install`, `migrate`, `policy`, `checkers`.

use std::io::Read as _;

use anyhow::{Context, bail};
use jacobian::RuntimeConfig;
use jacobian::runtime::OpenError;
use jacobian::store::StoreConfig;

use crate::cli::Place;
use crate::cli::args::{CheckerAction, CheckersArgs, InstallArgs, PolicyAction, PolicyArgs};
use crate::cli::support::{Unavailable, open, read_file, store_failure};

/// `jacobian install`.
pub fn install(place: Place, args: InstallArgs) -> anyhow::Result<()> {
    let Place { data_dir, store } = place;
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

/// `jacobian migrate`.
pub fn migrate(place: Place) -> anyhow::Result<()> {
    let Place { data_dir, store } = place;
    let shared = matches!(store, StoreConfig::Postgres(_));
    let report = jacobian::store::migrate(&store, &data_dir)
        .map_err(|e| store_failure(e, &data_dir.display().to_string(), shared))?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

/// `jacobian policy`.
pub fn policy(place: Place, args: PolicyArgs) -> anyhow::Result<()> {
    let Place { data_dir, store } = place;
    let PolicyArgs { action } = args;
    // Without loading components: this is also how a broken policy is repaired.
    let config = RuntimeConfig { store, ..RuntimeConfig::new(data_dir) };
    let shared = matches!(config.store, StoreConfig::Postgres(_));
    let dir = config.data_dir.display().to_string();
    let state = jacobian::runtime::open_state(&config).map_err(|e| match e {
        OpenError::Store(e) => store_failure(e, &dir, shared),
        e => Unavailable(e.to_string()).into(),
    })?;
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
    let Place { data_dir, store } = place;
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
