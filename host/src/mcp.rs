//! The MCP edge: `capability.describe` and `capability.invoke` over rmcp.
//!
//! **Boundary:** this is the only module that knows rmcp. It converts tool
//! arguments into core requests and core results into tool results; all
//! behaviour lives in [`crate::runtime`]. Component calls run on blocking
//! threads, never on the async executor.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};

use crate::contract::{CapabilityResult, DescribeRequest, InvokeRequest, Status};
use crate::runtime::Runtime;

/// What the initialization response tells an agent.
pub const INSTRUCTIONS: &str = "Jacobian runs installed mathematical capabilities (search, enumeration, solving, \
exact computation) and independent checkers in a sandbox. Use capability.describe to search the installed catalog \
(query, domain, mode), then read one capability by id (view CONTRACT) before calling capability.invoke. A producer's \
result is at most COMPUTED evidence; only capability.invoke in VERIFY mode on the checker named in its check_with \
field can make it VERIFIED. Results cover exactly their input: finite searches stay finite evidence. Strategy, \
decomposition and stopping are yours.";

/// The MCP server.
#[derive(Clone)]
pub struct JacobianServer {
    runtime: Arc<Runtime>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl JacobianServer {
    /// A server over `runtime`.
    pub fn new(runtime: Arc<Runtime>) -> Self {
        JacobianServer { runtime, tool_router: Self::tool_router() }
    }

    #[tool(
        name = "capability.describe",
        description = "Search or browse the installed capability catalog, or read one capability by exact id. \
Without capability_id: pass query (words), domain, mode and limit (default 5, max 20); results are retrieval \
matches in stable order, not recommendations. With capability_id: view SUMMARY (default) to judge fit, CONTRACT for \
the exact input schema and validated examples before invoking, FULL for output schema and audit metadata."
    )]
    async fn describe(&self, Parameters(request): Parameters<DescribeRequest>) -> Result<CallToolResult, McpError> {
        Ok(describe_tool(&self.runtime, &request))
    }

    #[tool(
        name = "capability.invoke",
        description = "Invoke an installed capability by id with an input object matching its CONTRACT schema, \
in EXPLORE or VERIFY mode. The result carries status, output, artifacts (artifact:// URIs), scope, assurance, \
obligations and provenance. EXPLORE results are never VERIFIED: follow check_with to the checker and invoke it in \
VERIFY mode. A failed call returns a typed diagnostic {code, stage, message, suggestion, details.path}."
    )]
    async fn invoke(&self, Parameters(request): Parameters<InvokeRequest>) -> Result<CallToolResult, McpError> {
        let runtime = self.runtime.clone();
        let result = tokio::task::spawn_blocking(move || runtime.invoke(&request))
            .await
            .map_err(|e| McpError::internal_error(format!("invocation thread failed: {e}"), None))?;
        Ok(invoke_tool_result(&result))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for JacobianServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("jacobian", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// The value `capability.describe` returns (also printed by `jacobian demo`).
pub fn describe_value(runtime: &Runtime, request: &DescribeRequest) -> Value {
    match runtime.describe(request) {
        Ok(value) => value,
        Err(diagnostic) => json!({"diagnostic": diagnostic}),
    }
}

fn describe_tool(runtime: &Runtime, request: &DescribeRequest) -> CallToolResult {
    match runtime.describe(request) {
        Ok(value) => CallToolResult::structured(value),
        Err(diagnostic) => CallToolResult::structured_error(json!({"diagnostic": diagnostic})),
    }
}

/// The tool result of `capability.invoke`: the complete result as structured
/// content and as text.
pub fn invoke_tool_result(result: &CapabilityResult) -> CallToolResult {
    let value = serde_json::to_value(result).unwrap_or_default();
    let text = serde_json::to_string(&value).unwrap_or_default();
    let mut tool_result = if result.status == Status::Failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    tool_result.structured_content = Some(value);
    tool_result
}

/// Serve MCP over stdio until the client disconnects.
pub async fn serve_stdio(runtime: Arc<Runtime>) -> anyhow::Result<()> {
    let service = JacobianServer::new(runtime).serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
