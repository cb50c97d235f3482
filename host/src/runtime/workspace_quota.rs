//! The workspace tools under a tenant's stored-bytes quota: a write's size
//! reserved before it is stored, and what it stored granted to the tenant.

use crate::contract::Diagnostic;
use crate::quotas::Storing;

use super::Runtime;
use super::admit::quota_exceeded;
use super::diagnostics::storage_failed;

impl Runtime {
    /// `workspace.open` for `tenant` (`None`: the operator), under the
    /// tenant's stored-bytes quota (see [`Runtime::storing_as`]).
    pub fn open_workspace_as(
        &self,
        tenant: Option<&str>,
        request: &crate::workspace::wire::OpenRequest,
    ) -> Result<crate::workspace::wire::Opened, Diagnostic> {
        let open = |tenant: Option<&str>| self.workspaces().open_as(self.data(), tenant, request);
        self.granting(tenant, self.storing_as(tenant, request, open)?, |opened| &opened.revision_artifact_uri)
    }

    /// `workspace.write` for `tenant` (`None`: the operator), under the
    /// tenant's stored-bytes quota (see [`Runtime::storing_as`]).
    pub fn write_workspace_as(
        &self,
        tenant: Option<&str>,
        request: &crate::workspace::wire::WriteRequest,
    ) -> Result<crate::workspace::wire::Written, Diagnostic> {
        let write = |tenant: Option<&str>| self.workspaces().write_as(self.data(), tenant, request);
        self.granting(tenant, self.storing_as(tenant, request, write)?, |written| &written.revision_artifact_uri)
    }

    /// `done`, once the revision it made is granted to `tenant`, who reads
    /// its revisions (see `grants.rs`).
    fn granting<T>(&self, tenant: Option<&str>, done: T, revision: impl Fn(&T) -> &String) -> Result<T, Diagnostic> {
        self.grant_to(tenant, std::slice::from_ref(revision(&done))).map_err(storage_failed)?;
        Ok(done)
    }

    /// A workspace request of `tenant`: its size reserved under the tenant's
    /// stored-bytes quota first (refused with `QUOTA_EXCEEDED` when it has
    /// not that much left), and counted once it is done.
    fn storing_as<T>(
        &self,
        tenant: Option<&str>,
        request: &impl serde::Serialize,
        store: impl FnOnce(Option<&str>) -> Result<T, Diagnostic>,
    ) -> Result<T, Diagnostic> {
        let policy = self.policy();
        let Some(tenant) = tenant.filter(|_| policy.quotas.of_any_storage()) else {
            return store(tenant);
        };
        let bytes = crate::json::bytes(request).len() as u64;
        let hold = self
            .experiments
            .reserve_storage(tenant, policy.quotas.of(tenant), Storing::Exactly(bytes))
            .map_err(storage_failed)?
            .map_err(|e| {
                self.metrics.quota_refusal(e.limit);
                quota_exceeded(&e)
            })?;
        let done = store(Some(tenant));
        self.release_quota(hold, 0, if done.is_ok() { bytes } else { 0 }, false);
        done
    }
}
