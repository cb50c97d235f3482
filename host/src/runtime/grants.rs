//! Reads follow ownership. The operator (stdio, the CLI, HTTP without
//! authentication) reads everything. A tenant reads an artifact only when it
//! was granted to it — it uploaded it, one of its calls produced it, or the
//! operator shared it (`jacobian artifact share`) — and an episode only when
//! one of its experiments names it. Everything else answers exactly as a
//! digest that was never stored: `ARTIFACT_NOT_FOUND` in a call, not found
//! for a resource, absent from an archive. Knowing a digest is not enough:
//! an upload's URI follows from its schema, size and file hash, and an
//! output's from its content and input, so a digest is guessable and a
//! capability it is not.

use crate::contract::episode_uri;
use crate::digest::Digest;
use crate::store::{DbError, StoreError};
use crate::tenants::tenant_tag;

use super::Runtime;

fn failed(what: &str, source: DbError) -> StoreError {
    StoreError::Database { what: what.to_owned(), source }
}

impl Runtime {
    /// Whether `tenant` (`None`: the operator) may read `uri`
    /// (`artifact://sha256/…` or `episode://sha256/…`).
    pub fn may_read(&self, tenant: Option<&str>, uri: &str) -> Result<bool, StoreError> {
        self.tag_may_read(tenant.map(tenant_tag).as_deref(), uri)
    }

    /// [`Runtime::may_read`] for the tenant of tag `tag` (an experiment
    /// key's, [`crate::experiments::owner_tag`]).
    pub fn tag_may_read(&self, tag: Option<&str>, uri: &str) -> Result<bool, StoreError> {
        match tag {
            None => Ok(true),
            Some(tag) => self.episodes.granted(tag, uri).map_err(|e| failed("grants", e)),
        }
    }

    /// An artifact's bytes as `tenant` may read them: one not granted to it
    /// is not found, exactly as one never stored.
    pub fn read_artifact_as(&self, tenant: Option<&str>, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.readable(tenant, digest)?;
        self.data.read_artifact(digest)
    }

    /// An artifact's stored size, as [`Runtime::read_artifact_as`] would find it.
    pub fn artifact_size_as(&self, tenant: Option<&str>, digest: &Digest) -> Result<u64, StoreError> {
        self.readable(tenant, digest)?;
        self.data.artifact_size(digest)
    }

    /// An episode's bytes as they read now (a recalled verdict as recalled),
    /// as `tenant` may read them: `None` when it is not one of its own.
    pub fn episode_as(&self, tenant: Option<&str>, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError> {
        if !self.may_read(tenant, &episode_uri(digest))? {
            return Ok(None);
        }
        self.episode_now(digest).map_err(|e| failed("episodes", e))
    }

    fn readable(&self, tenant: Option<&str>, digest: &Digest) -> Result<(), StoreError> {
        if self.may_read(tenant, &digest.artifact_uri())? {
            Ok(())
        } else {
            Err(StoreError::NotFound { what: "artifact", digest: *digest })
        }
    }

    /// Let `tenant` (none: the operator, who needs no grant) read `uris`:
    /// what it uploaded, what its call produced.
    pub(super) fn grant_to(&self, tenant: Option<&str>, uris: &[String]) -> Result<(), StoreError> {
        match tenant {
            Some(tenant) if !uris.is_empty() => {
                self.episodes.grant(&tenant_tag(tenant), uris).map_err(|e| failed("grants", e))
            }
            _ => Ok(()),
        }
    }

    /// The operator shares an artifact with `tenant`: the artifact and every
    /// artifact it names, closed (a certificate and the CNF it is about, an
    /// output and the upload it read). Returns the URIs granted, in order.
    pub fn share(&self, tenant: &str, digest: &Digest) -> Result<Vec<String>, StoreError> {
        let mut granted: Vec<String> = Vec::new();
        let mut pending = vec![*digest];
        while let Some(digest) = pending.pop() {
            let uri = digest.artifact_uri();
            if granted.contains(&uri) {
                continue;
            }
            let bytes = self.data.read_artifact(&digest)?;
            for named in super::diagnostics::named_in_content(&bytes) {
                // A name that is no stored artifact grants nothing.
                if let Ok(named) = Digest::from_artifact_uri(&named)
                    && self.data.artifact_size(&named).is_ok()
                {
                    pending.push(named);
                }
            }
            granted.push(uri);
        }
        self.episodes.grant(&tenant_tag(tenant), &granted).map_err(|e| failed("grants", e))?;
        Ok(granted)
    }
}
