//! MCP completions (`completion/complete`): experiment ids for
//! `experiment://{id}`, capability ids for `capability://{id}`, and episode
//! URIs for the `result` of `jacobian-check-evidence`. The values come from
//! [`crate::resources::complete`]; this file only speaks rmcp.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use serde_json::json;

use crate::resources::{self, Completing};
use crate::runtime::Runtime;

/// Answer one completion request for `tenant`, whose session's experiment is `experiment`.
pub(super) async fn complete(
    runtime: Arc<Runtime>,
    request: CompleteRequestParams,
    tenant: Option<String>,
    experiment: String,
) -> Result<CompleteResult, McpError> {
    // Experiment and episode lists are store reads: off the async workers.
    let found = tokio::task::spawn_blocking(move || {
        let completing = match &request.r#ref {
            Reference::Resource(template) => Completing::Template(&template.uri),
            Reference::Prompt(prompt) => Completing::Prompt(&prompt.name),
            // A kind of reference this version of rmcp does not know yet.
            _ => return Ok((Vec::new(), false)),
        };
        let argument = &request.argument;
        resources::complete(&runtime, completing, &argument.name, &argument.value, tenant.as_deref(), &experiment)
    })
    .await
    .map_err(|e| McpError::internal_error(format!("completion thread failed: {e}"), None))?;
    match found {
        Ok((values, more)) => {
            let total = values.len() as u32;
            let info = CompletionInfo::with_pagination(values, (!more).then_some(total), more)
                .map_err(|e| McpError::internal_error(e, None))?;
            Ok(CompleteResult::new(info))
        }
        Err(diagnostic) => {
            Err(McpError::internal_error(diagnostic.message.clone(), Some(json!({"diagnostic": diagnostic}))))
        }
    }
}
