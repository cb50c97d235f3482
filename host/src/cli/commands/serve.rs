//! `jacobian serve`: MCP over stdio, or streamable HTTP with `/health` and `/metrics`.

use crate::cli::error::{CliError, refuse};
use jacobian::RuntimeConfig;
use jacobian::engine::EngineConfig;
use jacobian::mcp::ToolNames;

use crate::cli::Place;
use crate::cli::args::ServeArgs;
use crate::cli::support::open_with;

/// `jacobian serve`.
pub fn serve(place: Place, args: ServeArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, auth } = place;
    let ServeArgs {
        underscore_tool_names,
        http,
        allow_hosts,
        drain_seconds,
        max_connections,
        max_unproven_connections,
        max_connections_per_tenant,
        max_in_flight_per_tenant,
        max_sessions_per_tenant,
        max_in_flight,
        max_sessions,
        client_timeout_seconds,
        max_concurrent_calls,
        max_queued_calls,
        async_threads,
        auth_api_tokens,
        auth_issuer,
        auth_jwks_uri,
        auth_jwks_file,
        auth_resource,
        insecure_no_auth,
    } = args;
    // Flags win over the config file's [auth], field by field.
    let mut auth = auth;
    auth.api_tokens |= auth_api_tokens;
    let file_issuer = auth.issuer.clone();
    if auth_issuer.is_some() && auth_issuer != file_issuer {
        // Keys the file names for its issuer are not another issuer's.
        (auth.jwks_uri, auth.jwks_file) = (None, None);
        auth.issuer = auth_issuer;
    }
    // A key location on the command line replaces the file's (either kind).
    if auth_jwks_uri.is_some() || auth_jwks_file.is_some() {
        (auth.jwks_uri, auth.jwks_file) = (auth_jwks_uri, auth_jwks_file);
    }
    auth.resource = auth_resource.or(auth.resource);
    if let Some(addr) = http {
        // A loopback address behind a reverse proxy that passes another Host is public too.
        let public = !addr.ip().is_loopback()
            || allow_hosts.iter().any(|h| !jacobian::http::LOOPBACK_HOSTS.contains(&h.to_ascii_lowercase().as_str()));
        if !auth.enabled() && public && !insecure_no_auth {
            refuse!(
                "serve --http {addr}: a non-loopback address or --allow-host name with no authentication lets anyone \
                 who reaches the port do anything; configure --auth-api-tokens or --auth-issuer (or [auth] in the \
                 config file), or say --insecure-no-auth"
            );
        }
        if auth.enabled() && auth.resource.is_none() && (addr.port() == 0 || !addr.ip().is_loopback()) {
            refuse!(
                "serve --http {addr}: with authentication on port 0 or a non-loopback address, name the URI clients \
                 reach this server by (--auth-resource https://…/mcp): it is the tokens' audience"
            );
        }
    }
    let engine = EngineConfig { max_concurrent_calls, max_queued_calls, ..EngineConfig::default() };
    let runtime = open_with(RuntimeConfig { engine, store, ..RuntimeConfig::new(data_dir) })?;
    let names = if underscore_tool_names { ToolNames::Underscore } else { ToolNames::Dotted };
    // Every running or waiting call holds a blocking thread: size the pool
    // so calls reach the slot queue (and its typed OVERLOADED) instead of
    // waiting unseen in tokio's own queue; the rest is for store I/O.
    let blocking = (max_concurrent_calls + max_queued_calls + 64) as usize;
    // Quick calls run on the async thread that received them, slow ones
    // on blocking threads; one async thread avoids every hand-off
    // between threads (see docs/decisions/0012-quick-calls-are-answered-on-the-protocol-thread.md).
    let mut builder = if http.is_none() || async_threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(async_threads as usize);
        builder
    };
    let rt = builder.enable_all().max_blocking_threads(blocking).build().map_err(CliError::Serve)?;
    match http {
        None => Ok(rt.block_on(jacobian::mcp::serve_stdio(runtime, names))?),
        Some(addr) => {
            let mut allowed_hosts: Vec<String> =
                jacobian::http::LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
            allowed_hosts.extend(allow_hosts);
            let limits = jacobian::http::HttpLimits {
                max_connections: max_connections as usize,
                max_in_flight: max_in_flight as usize,
                max_sessions: max_sessions as usize,
                max_unproven_connections: max_unproven_connections as usize,
                max_connections_per_tenant: max_connections_per_tenant as usize,
                max_in_flight_per_tenant: max_in_flight_per_tenant as usize,
                max_sessions_per_tenant: max_sessions_per_tenant as usize,
                client_timeout: std::time::Duration::from_secs(client_timeout_seconds),
                ..jacobian::http::HttpLimits::default()
            };
            let auth = if auth.enabled() {
                let resource = auth.resource.clone().unwrap_or_else(|| format!("http://{addr}/mcp"));
                Some(std::sync::Arc::new(jacobian::auth::Authenticator::new(&auth, resource, runtime.tokens())?))
            } else {
                None
            };
            let config = jacobian::http::HttpConfig { addr, allowed_hosts, names, limits, auth };
            let drain = std::time::Duration::from_secs(drain_seconds);
            rt.block_on(jacobian::http::serve(runtime, config, shutdown_signal(), drain)).map_err(CliError::Serve)
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
    tracing::info!("shutting down: draining in-flight invocations");
}
