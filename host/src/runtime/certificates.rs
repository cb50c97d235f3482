//! What a certificate needs, as the host recorded it when a producer made
//! the certificate: the checker role (the one an operator must authorize a
//! checker for), the format, and the checker its producer named. Recorded in
//! `execute.rs` from the producer's validated route, read by `route.rs` and
//! `verify.rs`; records carried by an archive are adopted only when the
//! certificate's own lineage and its producer's declarations bear them out.

use std::collections::BTreeSet;

use jacobian_guest::protocol::{Lineage, VerificationRoute};
use serde_json::Value;

use crate::catalog::EntryKind;
use crate::digest::Digest;
use crate::store::{CertificateRecord, DbError};

use super::Runtime;
use super::diagnostics::named_in_content;
use super::execute::declared;
use super::stages::Certificate;
use super::verify::Judging;

impl Runtime {
    /// The record of a certificate artifact, if a producer made it as one.
    pub fn certificate(&self, digest: &Digest) -> Result<Option<CertificateRecord>, DbError> {
        self.episodes.certificate(digest)
    }

    /// Keep a certificate's record that did not come from a producer run
    /// here (an archive's), after checking it against the certificate
    /// itself: its lineage names the record's producer capability and
    /// component, that producer is installed here and declares the record's
    /// role, checker and format, and the certificate's content, where it
    /// names a format, names the same one.
    pub fn adopt_certificate(&self, digest: &Digest, record: &CertificateRecord) -> Result<(), String> {
        let bytes = self.data.read_artifact(digest).map_err(|e| crate::errors::render(&e))?;
        let envelope: Value = serde_json::from_slice(&bytes).map_err(|e| format!("not an artifact: {e}"))?;
        let lineage: Lineage = serde_json::from_value(envelope["lineage"].clone())
            .map_err(|e| format!("the certificate's lineage is unreadable: {e}"))?;
        if lineage.capability_id != record.capability_id || lineage.provider_digest != record.producer.to_hex() {
            return Err(format!(
                "the certificate was made by {} (component {}), not by {} (component {})",
                lineage.capability_id, lineage.provider_digest, record.capability_id, record.producer
            ));
        }
        let producer = self
            .catalog
            .get(&record.capability_id)
            .filter(|e| e.kind == EntryKind::Producer && e.component == record.producer)
            .ok_or_else(|| format!("its producer {} ({}) is not installed", record.capability_id, record.producer))?;
        let route = VerificationRoute {
            checker_role: record.checker_role.clone(),
            verify_capability_id: record.verify_capability_id.clone(),
            certificate_format: record.certificate_format.clone(),
            certificate_artifact_role: String::new(),
        };
        crate::descriptor::route_declared(&declared(producer), &route)?;
        if let Some(written) = envelope["content"]["format"].as_str()
            && written != record.certificate_format
        {
            return Err(format!(
                "the record says format {} but the certificate says {written}",
                record.certificate_format
            ));
        }
        self.episodes.put_certificate(digest, record).map_err(|e| e.to_string())
    }

    /// Keep the record of a certificate that `by` has adopted, unchanged:
    /// an offline re-check hands a pack's certificate to this binary's
    /// checkers when the pack's own conclude nothing, and the pack's runtime,
    /// which loads the certificate's producer, is the one that bore the
    /// record out (this runtime does not load that producer).
    pub fn adopt_from(&self, digest: &Digest, by: &Runtime) -> Result<CertificateRecord, String> {
        let record = by
            .certificate(digest)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{} is no certificate the pack's runtime recorded", digest.artifact_uri()))?;
        self.episodes.put_certificate(digest, &record).map_err(|e| e.to_string())?;
        Ok(record)
    }

    /// What a check's input judges. The certificates the host recorded
    /// among its artifacts must all need one role and be of one format, and
    /// every other artifact must be named inside one of them (as a SAT
    /// certificate names its CNF): a check cannot borrow the role of a
    /// certificate it does not judge, nor judge an artifact of no role beside
    /// one. A routed call must judge the certificate it was routed for.
    pub(super) fn judging(&self, references: &[String], routed: Option<&Certificate>) -> Result<Judging, String> {
        let mut found: Vec<Certificate> = Vec::new();
        for uri in references {
            let Ok(digest) = Digest::from_artifact_uri(uri) else { continue };
            if found.iter().all(|c| &c.uri != uri)
                && let Some(record) = self.episodes.certificate(&digest).map_err(|e| e.to_string())?
            {
                found.push(Certificate { uri: uri.clone(), record });
            }
        }
        if let Some(routed) = routed
            && !references.contains(&routed.uri)
        {
            return Ok(Judging::Unbound(routed.uri.clone()));
        }
        let kinds: BTreeSet<String> = found
            .iter()
            .chain(routed)
            .map(|c| format!("role {} in format {}", c.record.checker_role, c.record.certificate_format))
            .collect();
        if kinds.len() > 1 {
            return Ok(Judging::Mixed(kinds.into_iter().collect()));
        }
        let Some(certificate) = routed.cloned().or_else(|| found.first().cloned()) else {
            return Ok(Judging::Nothing);
        };
        let mut named = BTreeSet::new();
        for c in &found {
            let digest = Digest::from_artifact_uri(&c.uri).map_err(|e| e.to_string())?;
            let bytes = self.data.read_artifact(&digest).map_err(|e| crate::errors::render(&e))?;
            named.extend(named_in_content(&bytes));
        }
        if let Some(stray) = references.iter().find(|r| found.iter().all(|c| &c.uri != *r) && !named.contains(*r)) {
            return Ok(Judging::Unbound(stray.clone()));
        }
        Ok(Judging::Certificate(certificate))
    }
}
