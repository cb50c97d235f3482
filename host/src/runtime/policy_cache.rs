//! The operator policy as this host sees it: cached, re-read whenever its
//! stored version changes, and changed only by compare-and-set.

use std::sync::Arc;

use crate::catalog::{Binding, CatalogEntry, EntryKind};
use crate::policy::Policy;

use super::{OpenError, Runtime};

impl Runtime {
    /// The operator policy in force, re-read whenever its stored version changes
    /// (the file text's digest, or the PostgreSQL version column).
    /// The stamp is read outside the lock, so a slow store never serializes calls.
    pub fn policy(&self) -> Arc<Policy> {
        let stamp = self.data.policy_stamp();
        {
            let guard = self.policy.lock().unwrap_or_else(|e| e.into_inner());
            if stamp.is_some() && stamp == guard.0 {
                return guard.1.clone();
            }
        }
        let fresh = self
            .data
            .read_policy()
            .ok()
            .flatten()
            .and_then(|text| Policy::parse(&text, self.sandbox.config().max_memory_bytes).ok());
        let mut guard = self.policy.lock().unwrap_or_else(|e| e.into_inner());
        *guard = match fresh {
            Some(policy) => (stamp, Arc::new(policy)),
            None => {
                // A policy that became unreadable or invalid denies every
                // checker rather than keeping stale authority, and is read
                // again on the next call (no stamp is cached), so a store
                // that recovers restores it.
                let mut deny = (*guard.1).clone();
                deny.checkers.authorize_bundled = false;
                deny.checkers.authorized.clear();
                (None, Arc::new(deny))
            }
        };
        guard.1.clone()
    }

    /// Change the stored policy (operator only: the CLI calls this): read it
    /// as stored now, change it, and write it back only if nobody wrote in
    /// between (compare-and-set on its stamp), else start again, so two
    /// operators' changes (a revocation here, an authorization there) both land.
    pub fn update_policy(&self, change: impl Fn(&mut Policy)) -> Result<Policy, OpenError> {
        let ceiling = self.sandbox.config().max_memory_bytes;
        for _ in 0..16 {
            let stamp = self.data.policy_stamp();
            let mut policy = match self.data.read_policy()? {
                Some(text) => Policy::parse(&text, ceiling)?,
                None => Policy::default(),
            };
            change(&mut policy);
            // Written by this binary: under its rules, unless it names others.
            policy.rules.get_or_insert(crate::policy::RULES);
            if self.data.write_policy_if(stamp, &policy.to_toml()?)? {
                let mut guard = self.policy.lock().unwrap_or_else(|e| e.into_inner());
                *guard = (None, Arc::new(policy.clone()));
                return Ok(policy);
            }
        }
        Err(OpenError::Engine("the policy kept changing under this update; try again".into()))
    }

    /// What discovery binds: profile, policy digest, checker authorization.
    pub fn binding(&self) -> Binding {
        let policy = self.policy();
        let authorized = self
            .catalog
            .entries()
            .filter(|e| e.kind == EntryKind::Verifier)
            .map(|e| (e.id.clone(), self.checker_authorized(&policy, e)))
            .collect();
        let modes =
            self.catalog.entries().map(|e| (e.id.clone(), policy.allowed_modes(&e.id, &e.tags, &e.modes))).collect();
        Binding {
            profile: policy.profile.clone(),
            policy_digest: policy.digest(),
            modes,
            authorized,
            budgets: policy.budgets,
        }
    }

    /// Whether `policy` authorizes the checker behind a verifier entry for its own role.
    pub(super) fn checker_authorized(&self, policy: &Policy, entry: &CatalogEntry) -> bool {
        entry.checker_roles.first().is_some_and(|role| self.checker_authorized_for(policy, entry, role))
    }

    /// Whether the checker behind a verifier entry fills `role` and `policy`
    /// authorizes its digest for exactly that role. (The policy's
    /// `authorize_bundled` covers a bundled checker for the role it fills,
    /// never for another.)
    pub(super) fn checker_authorized_for(&self, policy: &Policy, entry: &CatalogEntry, role: &str) -> bool {
        entry.checker_roles.iter().any(|r| r == role)
            && policy.authorizes(role, &entry.component, self.is_bundled(&entry.component))
    }
}
