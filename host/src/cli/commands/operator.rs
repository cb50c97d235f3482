//! The operator's commands: `migrate`, `policy`, `checkers`, `publishers`, `tokens`.

use std::io::Read as _;

use crate::cli::error::{Context, refuse};
use jacobian::RuntimeConfig;
use jacobian::runtime::OpenError;
use jacobian::store::StoreConfig;

use crate::cli::Place;
use crate::cli::args::{
    CheckerAction, CheckersArgs, PolicyAction, PolicyArgs, PublisherAction, PublishersArgs, RecheckArgs, TokenAction,
    TokensArgs,
};
use crate::cli::error::CliError;
use crate::cli::support::{open, read_file, store_failure};

/// `jacobian migrate`.
pub fn migrate(place: Place) -> crate::cli::error::Result<()> {
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
) -> crate::cli::error::Result<T> {
    let shared = matches!(config.store, StoreConfig::Postgres(_));
    open(config).map_err(|e| match e {
        OpenError::Store(e) => store_failure(e, &config.data_dir.display().to_string(), shared),
        e => CliError::Unavailable(jacobian::errors::render(&e)),
    })
}

/// `jacobian policy`.
pub fn policy(place: Place, args: PolicyArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let PolicyArgs { action } = args;
    // Without loading components: this is also how a broken policy is repaired.
    let config = RuntimeConfig { store, ..RuntimeConfig::new(data_dir) };
    let state = without_components(&config, jacobian::runtime::open_state)?;
    match action {
        PolicyAction::Show => match state.read_policy()? {
            Some(text) => print!("{text}"),
            None => print!("{}", jacobian::policy::Policy::default().to_toml()?),
        },
        PolicyAction::Set { file } => {
            let text = if file.as_os_str() == "-" {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text)?;
                text
            } else {
                String::from_utf8(read_file(&file)?).context("the policy file is not UTF-8")?
            };
            let mut policy = jacobian::policy::Policy::parse(&text, config.engine.max_memory_bytes)
                .with_context(|| format!("policy file {}", file.display()))?;
            // Written by this binary: under its rules, unless it names others.
            policy.rules.get_or_insert(jacobian::policy::RULES);
            state.write_policy(&policy.to_toml()?)?;
            println!("policy {} is in force", policy.digest());
        }
    }
    Ok(())
}

/// `jacobian checkers`.
pub fn checkers(place: Place, args: CheckersArgs) -> crate::cli::error::Result<()> {
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
                refuse!("{digest} is not an installed checker component; install it first");
            }
            let provides = runtime
                .components()
                .find(|r| r.digest == digest)
                .is_some_and(|r| r.descriptor.checkers.iter().any(|k| k.role == role));
            if !provides {
                refuse!("checker {digest} does not declare role {role}");
            }
            runtime.update_policy(|p| p.authorize(&role, digest))?;
            println!("authorized {digest} for role {role}");
        }
        CheckerAction::Revoke { digest } => {
            runtime.update_policy(|p| p.revoke(digest))?;
            println!("revoked {digest}");
        }
        CheckerAction::Recall { digest, reason } => {
            if reason.trim().is_empty() {
                refuse!("--reason is empty: say what the checker accepts that is false");
            }
            runtime.update_policy(|p| p.recall(digest, reason.trim()))?;
            println!("recalled {digest}: its verdicts read as NOT_CONCLUDED; `jacobian recheck` judges them again");
        }
        CheckerAction::Quorum { role, k } => {
            let binding = runtime.binding();
            let checkers: Vec<&str> = runtime
                .catalog()
                .entries()
                .filter(|e| e.checker_roles.contains(&role) && binding.authorized.get(&e.id).copied().unwrap_or(false))
                .map(|e| e.id.as_str())
                .collect();
            runtime.update_policy(|p| p.set_quorum(&role, k))?;
            println!(
                "role {role}: {k} authorized checker(s) must accept; authorized now: {}",
                if checkers.is_empty() { "none".to_owned() } else { checkers.join(", ") }
            );
        }
    }
    Ok(())
}

/// `jacobian recheck`.
pub fn recheck(place: Place, args: RecheckArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let runtime = open(data_dir, &store)?;
    let rechecked = runtime.recheck(args.checker.as_ref())?;
    for done in &rechecked {
        println!("{}", serde_json::to_string(done)?);
    }
    eprintln!("{} verdicts re-checked", rechecked.len());
    Ok(())
}

/// `jacobian publishers`.
pub fn publishers(place: Place, args: PublishersArgs) -> crate::cli::error::Result<()> {
    use jacobian::publishers::PublicKey;
    let Place { data_dir, store, .. } = place;
    let runtime = open(data_dir, &store)?;
    match args.action {
        PublisherAction::List => {
            let publishers = runtime.policy().publishers.clone();
            let trusted: Vec<serde_json::Value> = publishers
                .trusted
                .iter()
                .map(|p| {
                    let key_id = PublicKey::parse(&p.public_key).map(|k| k.id()).unwrap_or_default();
                    serde_json::json!({"name": p.name, "key_id": key_id, "public_key": p.public_key})
                })
                .collect();
            println!("{}", serde_json::json!({"require_signature": publishers.require_signature, "trusted": trusted}));
        }
        PublisherAction::Trust { name, key } => {
            let text = match std::path::Path::new(&key).is_file() {
                true => {
                    String::from_utf8(read_file(std::path::Path::new(&key))?).context("the key file is not UTF-8")?
                }
                false => key.clone(),
            };
            let key =
                PublicKey::parse(&text).map_err(|e| crate::cli::error::CliError::Invalid(format!("--key: {e}")))?;
            if name.trim().is_empty() || name.len() > 200 {
                refuse!("a publisher's name is 1-200 characters");
            }
            runtime.update_policy(|p| p.publishers.trust(&name, &key))?;
            println!("trusted {name} (key {})", key.id());
        }
        PublisherAction::Distrust { name } => {
            if !runtime.policy().publishers.trusted.iter().any(|p| p.name == name) {
                return Err(CliError::NotFound(format!("no trusted publisher {name:?}")));
            }
            runtime.update_policy(|p| {
                p.publishers.distrust(&name);
            })?;
            println!("no longer trusted: {name}");
        }
        PublisherAction::Require { setting } => {
            let on = setting == "on";
            runtime.update_policy(|p| p.publishers.require_signature = on)?;
            println!("a trusted signature is {} for installs", if on { "required" } else { "optional" });
        }
    }
    Ok(())
}

/// `jacobian tokens`.
pub fn tokens(place: Place, args: TokensArgs) -> crate::cli::error::Result<()> {
    use jacobian::auth::{Scope, Scopes, api_tokens, now_seconds};
    let Place { data_dir, store, .. } = place;
    let config = RuntimeConfig { store, ..RuntimeConfig::new(data_dir) };
    let tokens = without_components(&config, jacobian::runtime::open_tokens)?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let unavailable = |e: jacobian::store::DbError| {
        CliError::Unavailable(format!("the token store: {}", jacobian::errors::render(&e)))
    };
    match args.action {
        TokenAction::Create { tenant, scopes, expires } => {
            if !api_tokens::valid_tenant(&tenant) {
                refuse!("--tenant {tenant:?}: a tenant is 1-64 of a-z 0-9 . _ - and starts with a letter or digit");
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
                refuse!(
                    "a token id is 16 hex digits (jacobian tokens list); the argument is not shown, in case it was a token"
                );
            }
            if !rt.block_on(tokens.revoke(&id, now_seconds())).map_err(unavailable)? {
                return Err(CliError::NotFound(format!("no API token {id}")));
            }
            println!("revoked {id}");
        }
    }
    Ok(())
}
