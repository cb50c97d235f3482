//! The MCP edge: the five tools, resources and prompts over rmcp.
//!
//! **Boundary:** this module and `http/` are the edge, the only modules
//! that know rmcp and axum (a test checks every other module). It converts tool
//! arguments into core requests and core results into tool results; all
//! behaviour lives in [`crate::runtime`] and [`crate::resources`]. A quick
//! component call is answered on the async thread, within fixed bounds
//! ([`Runtime::invoke_quick`], its writes in a group commit); every other call, and every other tool
//! that touches a store, runs on a blocking thread.

mod completion;
mod logging;
mod stdio;

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tracing::Instrument as _;

use crate::contract::{CapabilityResult, DescribeRequest, Diagnostic, InvokeRequest, Status};
use crate::engine::CallControl;
use crate::resources;
use crate::runtime::Runtime;
use crate::workspace::wire::{OpenRequest, QueryRequest, WriteRequest};

pub use stdio::{StdioError, serve_stdio};

/// What the initialization response tells an agent.
pub const INSTRUCTIONS: &str = "Jacobian runs installed mathematical capabilities (finite search, enumeration, \
solving, exact computation) and independent checkers, each in a sandbox. It helps when a step is a finite, exactly \
stated computation, or when computed evidence should be independently checked. Discover with capability.describe \
(query first, then one capability_id with view CONTRACT), then call capability.invoke. A producer's result is at \
most COMPUTED; only a VERIFY call on the checker named in its check_with fields can make it VERIFIED. Results cover \
exactly their input. Strategy, decomposition and stopping are yours. Read jacobian://instructions for the complete \
operating model.";

/// The request-id header an HTTP exchange carries (set by the HTTP edge).
pub const REQUEST_ID: &str = "x-request-id";

/// Marks an HTTP request whose body is above `http::BULK_BODY_BYTES`: it
/// was parsed on the background lane (`lanes`), and its call is validated on
/// a blocking thread, never answered inline on a protocol thread.
#[derive(Debug, Clone, Copy)]
pub struct Bulk;

/// Cancelled once the HTTP exchange that carried a request is over: the
/// client disconnected, or its response was sent. An invocation still running
/// then has nobody to answer, so it is cancelled (session-mode MCP would
/// otherwise run it to the end for a stream nobody reads). The HTTP edge puts
/// it in each request's extensions.
#[derive(Clone)]
pub struct ClientGone(pub tokio_util::sync::CancellationToken);

/// How tool names are spelled on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolNames {
    /// `capability.describe`, `capability.invoke` (the contract's names).
    #[default]
    Dotted,
    /// `capability_describe`, `capability_invoke`, for clients that reject dots.
    Underscore,
}

/// The MCP server: one per MCP session, each with its own default experiment.
#[derive(Clone)]
pub struct JacobianServer {
    runtime: Arc<Runtime>,
    experiment: String,
    tool_router: ToolRouter<Self>,
    logging: logging::Threshold,
}

impl JacobianServer {
    /// The experiment an invocation without one joins: one per MCP session.
    /// Over HTTP it is derived from the session id (hashed: the id itself
    /// is a credential), so a session that continues on another host of the
    /// same store keeps its experiment; over stdio it is minted per session.
    fn default_experiment(&self, context: &RequestContext<RoleServer>) -> String {
        let session = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|value| value.to_str().ok());
        match session {
            Some(id) => {
                let digest = crate::digest::Digest::of(format!("jacobian-mcp-session\0{id}").as_bytes());
                format!("exp-{}", &digest.to_hex()[..32])
            }
            None => self.experiment.clone(),
        }
    }
}

/// Cancels the call if the tool handler is dropped before it finished.
struct CancelOnDrop(Option<CallControl>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(control) = self.0.take() {
            control.cancel();
        }
    }
}

#[tool_router]
impl JacobianServer {
    /// A server over `runtime`.
    pub fn new(runtime: Arc<Runtime>, names: ToolNames) -> Self {
        let mut tool_router = Self::tool_router();
        // Published with standard formats only (computed once, not per session).
        type Schemas = (Arc<rmcp::model::JsonObject>, Option<Arc<rmcp::model::JsonObject>>);
        static PUBLISHED: std::sync::OnceLock<std::collections::HashMap<String, Schemas>> = std::sync::OnceLock::new();
        let standard = |schema: &rmcp::model::JsonObject| Arc::new(crate::descriptor::published_schema(schema));
        let published = PUBLISHED.get_or_init(|| {
            let routes = tool_router.map.values();
            routes
                .map(|r| {
                    (
                        r.attr.name.to_string(),
                        (standard(&r.attr.input_schema), r.attr.output_schema.as_deref().map(standard)),
                    )
                })
                .collect()
        });
        for route in tool_router.map.values_mut() {
            if let Some((input, output)) = published.get(route.attr.name.as_ref()) {
                (route.attr.input_schema, route.attr.output_schema) = (input.clone(), output.clone());
            }
        }
        if names == ToolNames::Underscore {
            let routes: Vec<_> = tool_router.map.drain().map(|(_, route)| route).collect();
            for mut route in routes {
                route.attr.name = route.attr.name.replace('.', "_").into();
                tool_router.add_route(route);
            }
        }
        let (experiment, logging) = (crate::experiments::mint_id(), logging::Threshold::default());
        JacobianServer { runtime, experiment, tool_router, logging }
    }

    #[tool(
        name = "capability.describe",
        description = "Search or browse the installed capability catalog, or read one capability by exact id. \
Without capability_id: query (words), domain, mode, input_kind, artifact_type, limit (default 5, max 20), and \
next_cursor passed back as cursor. Ranking is lexical retrieval, not advice: read lexical_fit and portfolio_fit, and \
routing_status (NO_ROUTE means no installed capability accepts that input kind, e.g. informal proof prose). With \
capability_id: view SUMMARY (default) to judge fit, CONTRACT for the exact input schema and validated examples before \
invoking, FULL for output schema and audit metadata.",
        output_schema = describe_output_schema()
    )]
    async fn describe(&self, Parameters(request): Parameters<DescribeRequest>) -> Result<CallToolResult, McpError> {
        // Off the async workers: the policy it binds may be read from a database.
        let runtime = self.runtime.clone();
        blocking(move || runtime.describe(&request?)).await
    }

    #[tool(
        name = "capability.invoke",
        description = "Invoke an installed capability with an input object matching its CONTRACT schema, in EXPLORE \
or VERIFY mode. Rules agents get wrong: computation never certifies itself (EXPLORE results are at most COMPUTED); \
to verify, follow the result's check_with fields to the named checker and invoke it in VERIFY mode, do not guess a \
verifier; bounded or finite evidence never widens its own scope. Structured content is the complete result; the text \
view (STANDARD, SUMMARY, FULL) may replace large output fields by path, type, bytes and SHA-256, with \
full_result_episode_uri for the whole. Failures are diagnostics {code, stage, message, suggestion, details.path}, \
never conclusions. An object or array argument sent as a JSON-encoded string (as some clients do) is read as that \
value.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<CapabilityResult>()
    )]
    async fn invoke(
        &self,
        Parameters(request): Parameters<InvokeRequest>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let mut request = match request {
            Ok(request) => request,
            // A result like every refused invocation's, with nothing stored.
            Err(diagnostic) => {
                let refused = self.runtime.refuse_arguments(diagnostic);
                logging::send(&context.peer, self.logging.messages(&refused)).await;
                return Ok(invoke_tool_result(refused));
            }
        };
        if request.experiment.is_none() {
            request.experiment = Some(self.default_experiment(&context));
        }
        request.tenant = tenant_of(&context);
        // The input is an object; some clients (the MCP Inspector) send it JSON-encoded.
        if let Value::String(text) = &request.input
            && let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(text)
        {
            request.input = object;
        }
        let request_id = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get(REQUEST_ID))
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let span = tracing::info_span!("invoke", request_id = %request_id,
            capability_id = %crate::limits::clip(&request.capability_id, crate::limits::MAX_ID_BYTES));
        // A quick call is answered right here: handing it to a blocking
        // thread and back would cost more than the call (see docs/decisions/0012-quick-calls-are-answered-on-the-protocol-thread.md).
        // A request with a large body is validated on a blocking thread: it is CPU work of its size.
        let bulk = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some_and(|parts| parts.extensions.get::<Bulk>().is_some());
        if !bulk && let Some(result) = self.runtime.invoke_quick(&request).instrument(span.clone()).await {
            logging::send(&context.peer, self.logging.messages(&result)).await;
            return Ok(invoke_tool_result(result));
        }
        let mut control = CallControl::default();
        let mut forwarder = None;
        if let Some(token) = context.meta.get_progress_token() {
            // Progress is fuel spent of the call's fuel budget, about every 100 ms.
            let (sender, mut receiver) = tokio::sync::mpsc::channel::<(u64, u64)>(4);
            control.progress = Some(Arc::new(move |used, total| {
                let _ = sender.try_send((used, total));
            }));
            let peer = context.peer.clone();
            forwarder = Some(tokio::spawn(async move {
                while let Some((used, total)) = receiver.recv().await {
                    let mut param = ProgressNotificationParam::new(token.clone(), used as f64);
                    param.total = Some(total as f64);
                    param.message = Some("fuel consumed".into());
                    let _ = peer.notify_progress(param).await;
                }
            }));
        }
        let runtime = self.runtime.clone();
        let running = control.clone();
        let mut guard = CancelOnDrop(Some(control.clone()));
        let threshold = self.logging.clone();
        // The tool result (and its log messages) are shaped on the blocking
        // thread too: the protocol thread only writes them out.
        let call = move || {
            let _entered = span.enter();
            let result = runtime.invoke_cancellable(&request, &running);
            let messages = threshold.messages(&result);
            (invoke_tool_result(result), messages)
        };
        let mut task = tokio::task::spawn_blocking(call);
        // Over HTTP, the exchange that carries this call: when the client goes
        // away, nobody can receive the result.
        let gone = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<ClientGone>())
            .map(|gone| gone.0.clone())
            .unwrap_or_default();
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = context.ct.cancelled() => {
                control.cancel();
                task.await
            }
            () = gone.cancelled() => {
                control.cancel();
                task.await
            }
        };
        guard.0 = None;
        // Every progress notification goes out before the result: the senders
        // are gone with the call's controls, so the forwarder ends.
        drop(control);
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        let (result, messages) =
            joined.map_err(|e| McpError::internal_error(format!("invocation thread failed: {e}"), None))?;
        logging::send(&context.peer, messages).await;
        Ok(result)
    }

    #[tool(
        name = "workspace.open",
        description = "Create one durable workspace: exactly one canonical problem card (kind GOAL, card-1), a pinned \
main branch and an immutable initial revision (rev-0). Idempotent by idempotency_key. Persistence has no mathematical \
assurance: everything recorded is AGENT_RECORDED and UNVERIFIED."
    )]
    async fn workspace_open(
        &self,
        Parameters(request): Parameters<OpenRequest>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (runtime, tenant) = (self.runtime.clone(), tenant_of(&context));
        blocking(move || runtime.open_workspace_as(tenant.as_deref(), &request?)).await
    }

    #[tool(
        name = "workspace.write",
        description = "Append one revision to a workspace against an exact base_revision (it must still be the head; \
otherwise REVISION_CONFLICT names the head and nothing is written). Every write carries an idempotency_key. Entries, \
in order: finding {client_ref, kind, title, body, depends_on, assumptions} (kind GOAL records a sub-goal), attempt {target, method, outcome, \
summary}, mark {card, mark, reason, replacement}, focus {cards}, scratch {text}. References are card ids or client_refs \
of earlier entries of the same write. Marks need a reason; CLOSED applies to GOAL or OPEN_QUESTION only; a RETRACTED or \
SUPERSEDED card must be restored with ACTIVE before CLOSED or ARCHIVED. Attempt outcome COMPLETED never means \
VERIFIED and never closes a goal. Drafts cannot set verification, assertion or stale."
    )]
    async fn workspace_write(
        &self,
        Parameters(request): Parameters<WriteRequest>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (runtime, tenant) = (self.runtime.clone(), tenant_of(&context));
        blocking(move || runtime.write_workspace_as(tenant.as_deref(), &request?)).await
    }

    #[tool(
        name = "workspace.query",
        description = "Read a deterministic, bounded view of a workspace, at the head or an exact revision_id: RESUME \
(where things stand), FRONTIER (active goals and open questions), ATTEMPTS (newest first, optionally of one card), \
CONTEXT (requires target_card_id: its dependency-first closure through explicit links, total_dependency_count, \
truncated, and recent attempts; it infers no relevance or missing premises), STALE (active cards that depend on a \
RETRACTED or SUPERSEDED card; no warning says nothing about truth)."
    )]
    async fn workspace_query(
        &self,
        Parameters(request): Parameters<QueryRequest>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (runtime, tenant) = (self.runtime.clone(), tenant_of(&context));
        blocking(move || runtime.workspaces().query_as(runtime.data(), tenant.as_deref(), &request?)).await
    }
}

/// The tenant of the authenticated principal that sent a request over HTTP
/// (`None`: stdio, or HTTP without authentication: the operator).
fn tenant_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<crate::auth::Principal>())
        .map(|principal| principal.tenant.clone())
}

/// A tool's arguments, read by this server: arguments that do not fit the
/// tool's input schema are the tool's own typed answer (`INVALID_REQUEST`,
/// stage `REQUEST`, the dot-path of the field in `details.path`, every
/// violation in `details.errors`), never the protocol's free-text error. The
/// published input schema is `P`'s (the `#[tool]` macro reads it from this
/// type, by its name).
pub struct Parameters<P>(pub Result<P, Diagnostic>);

impl<P: schemars::JsonSchema> schemars::JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

impl<S, P> rmcp::handler::server::common::FromContextPart<rmcp::handler::server::tool::ToolCallContext<'_, S>>
    for Parameters<P>
where
    P: Arguments + schemars::JsonSchema,
{
    fn from_context_part(context: &mut rmcp::handler::server::tool::ToolCallContext<S>) -> Result<Self, McpError> {
        let arguments = Value::Object(context.arguments.take().unwrap_or_default());
        Ok(Parameters(P::read(arguments)))
    }
}

/// A tool's request, read from its arguments (on the protocol thread, so
/// never by copying a large part of them).
pub trait Arguments: Sized {
    /// The request the arguments make, or why they make none.
    fn read(arguments: Value) -> Result<Self, Diagnostic>;
}

macro_rules! read_in_place {
    ($($request:ty),*) => {$(
        impl Arguments for $request {
            fn read(arguments: Value) -> Result<Self, Diagnostic> {
                crate::runtime::read_arguments(&arguments)
            }
        }
    )*};
}
read_in_place!(DescribeRequest, OpenRequest, WriteRequest, QueryRequest);

impl Arguments for InvokeRequest {
    /// The input (which may be megabytes) is moved into the request rather
    /// than copied out of the arguments: it is read as a `Value` whatever it
    /// holds, so the rest of the arguments decides alone whether they fit.
    fn read(mut arguments: Value) -> Result<Self, Diagnostic> {
        let input = arguments.get_mut("input").map(Value::take);
        match (crate::runtime::read_arguments::<InvokeRequest>(&arguments), input) {
            (Ok(mut request), Some(input)) => {
                request.input = input;
                Ok(request)
            }
            (read, None) => read,
            // Refused: judged on the arguments as sent.
            (Err(_), Some(input)) => {
                arguments["input"] = input;
                crate::runtime::read_arguments(&arguments)
            }
        }
    }
}

/// What `capability.describe` answers as structured content: an answer, or
/// (with `isError`) the diagnostic of a refused request.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // Only its schema is used: the answer is serialized as it is.
enum DescribeOutput {
    /// One capability's projection or a page of results.
    Answer(crate::catalog::DescribeAnswer),
    /// Why the request was refused.
    Refused { diagnostic: Diagnostic },
}

/// `capability.describe`'s output schema: a projection, a page or a
/// diagnostic, all objects (said at the root, as MCP clients expect).
fn describe_output_schema() -> Arc<rmcp::model::JsonObject> {
    let mut schema = (*rmcp::handler::server::tool::schema_for_output::<DescribeOutput>()).clone();
    schema.insert("type".into(), json!("object"));
    Arc::new(schema)
}

/// Run a store-touching tool call on a blocking thread and shape its tool result.
async fn blocking<T: serde::Serialize + Send + 'static>(
    call: impl FnOnce() -> Result<T, Diagnostic> + Send + 'static,
) -> Result<CallToolResult, McpError> {
    // The edge: typed answers become JSON here, and only here (on the
    // blocking thread, so the protocol thread only writes them out).
    tokio::task::spawn_blocking(move || match call() {
        Ok(answer) => serde_json::to_value(answer)
            .map(CallToolResult::structured)
            .map_err(|e| McpError::internal_error(format!("answer: {e}"), None)),
        Err(diagnostic) => Ok(CallToolResult::structured_error(json!({"diagnostic": diagnostic}))),
    })
    .await
    .map_err(|e| McpError::internal_error(format!("tool thread failed: {e}"), None))?
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for JacobianServer {
    #[allow(deprecated)] // rmcp marks MCP logging deprecated (see logging.rs).
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts();
        ServerConfig::new(capabilities.enable_logging().enable_completions().build())
            .with_server_info(Implementation::new("jacobian", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    #[allow(deprecated)] // rmcp marks MCP logging deprecated (see logging.rs).
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.logging.set(request.level);
        Ok(())
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        let (tenant, experiment) = (tenant_of(&context), self.default_experiment(&context));
        completion::complete(self.runtime.clone(), request, tenant, experiment).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let runtime = self.runtime.clone();
        let available = tokio::task::spawn_blocking(move || resources::available(&runtime))
            .await
            .map_err(|e| McpError::internal_error(format!("resource thread failed: {e}"), None))?;
        let resources = available
            .into_iter()
            .map(|r| Resource::new(r.uri, r.name).with_description(r.description).with_mime_type(r.mime_type))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let templates = resources::TEMPLATES
            .iter()
            .map(|r| ResourceTemplate::new(r.uri, r.name).with_description(r.description).with_mime_type(r.mime_type))
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let (runtime, tenant) = (self.runtime.clone(), tenant_of(&context));
        let uri = request.uri.clone();
        let read = tokio::task::spawn_blocking(move || resources::read_as(&runtime, &uri, tenant.as_deref()))
            .await
            .map_err(|e| McpError::internal_error(format!("resource thread failed: {e}"), None))?;
        match read {
            Ok(content) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(content.text, request.uri).with_mime_type(content.mime_type),
            ])
            .into()),
            Err(diagnostic) => Err(resource_error(diagnostic)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let prompts = resources::PROMPTS
            .iter()
            .map(|p| {
                let arguments = p
                    .arguments
                    .iter()
                    .map(|(name, description, required)| {
                        PromptArgument::new(*name).with_description(*description).with_required(*required)
                    })
                    .collect();
                Prompt::new(p.name, Some(p.description), Some(arguments))
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arguments = request.arguments.clone().unwrap_or_default();
        match resources::prompt(&request.name, &arguments) {
            Ok(text) => Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into()),
            Err(diagnostic) => {
                Err(McpError::invalid_params(diagnostic.message.clone(), Some(json!({"diagnostic": diagnostic}))))
            }
        }
    }
}

fn resource_error(diagnostic: Diagnostic) -> McpError {
    McpError::resource_not_found(diagnostic.message.clone(), Some(json!({"diagnostic": diagnostic})))
}

/// The tool result of `capability.invoke`: the complete result as structured
/// content, the projected text as text content.
pub fn invoke_tool_result(mut result: CapabilityResult) -> CallToolResult {
    let content = vec![ContentBlock::text(std::mem::take(&mut result.text))];
    let mut tool_result =
        if result.status == Status::Failed { CallToolResult::error(content) } else { CallToolResult::success(content) };
    tool_result.structured_content = Some(result.into_value());
    tool_result
}
