//! The releases of this project this binary knows (`host/releases.toml`):
//! the components each bundled, by the digests its reproducible guest build
//! gives (`host/build.rs`), the authorization rules its policies were
//! written under, and what replaying its archives on this binary is known
//! to show, with the reason. An offline re-check trusts a pack's component
//! as bundled when this binary or a release it knows bundled it (never a
//! recalled one), so an archive is re-checked as its writer would have,
//! while a pack still cannot vouch for a component itself: the list is
//! compiled into the binary. How a release is added: `tests/compat/README.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::digest::Digest;

/// One release.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// The commit it was built from (short hash).
    pub name: String,
    /// When.
    pub date: String,
    /// The authorization rules its policies were written under (`policy/rules.rs`).
    pub rules: u32,
    /// The components it bundled: package name to digest.
    pub bundled: BTreeMap<String, Digest>,
    /// The checkers among them that this binary vouches for offline, each
    /// with why: package name to the reason. A checker of the release not
    /// listed here (and any recalled one) is trusted by no re-check.
    pub vouched: BTreeMap<String, String>,
    /// What replaying or verifying its archives here shows that is not an
    /// identical episode or a `VERIFIED` verdict, and why.
    #[serde(default, rename = "difference")]
    pub differences: Vec<Difference>,
}

/// A known difference in re-checking a release's archives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Difference {
    /// The capability of the episodes it concerns.
    pub capability_id: String,
    /// The certificate format it concerns, when its cause is the format:
    /// it then explains only an episode whose certificate is of this format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// What they show: a replay outcome (`SKIPPED`, `DIFFERENT`) or a
    /// verdict's status (`NOT_CONCLUDED`, …).
    pub outcome: String,
    /// Why.
    pub reason: String,
}

/// A change of an answer's shape (a new field, a new verdict record) that
/// replay names `CONTRACT_CHANGE` rather than `DIFFERENT`, and `compare
/// --ignore-contract-changes` leaves out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractChange {
    /// What changed, in a few words.
    pub name: String,
    /// The first release whose answers have the new shape; absent while no
    /// release has it yet (it then concerns every known release's packs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The episode fields it changes, as dot-paths; `*` stands for any one
    /// segment (an array index, a key).
    pub fields: Vec<String>,
    /// Why.
    pub reason: String,
}

impl ContractChange {
    /// Whether the change concerns a differing `field`.
    pub fn covers(&self, field: &str) -> bool {
        self.fields.iter().any(|pattern| {
            let (mut want, mut have) = (pattern.split('.'), field.split('.'));
            loop {
                match (want.next(), have.next()) {
                    (None, None) => return true,
                    (Some(w), Some(h)) if w == "*" || w == h => {}
                    _ => return false,
                }
            }
        })
    }

    /// Whether the change lies between the pack's writer and this binary:
    /// the writer is a known release older than `since`.
    pub fn after(&self, writer: Option<&Release>) -> bool {
        let Some(writer) = writer else { return false };
        let position = |name: &str| releases().iter().position(|r| r.name == name);
        match (position(&writer.name), self.since.as_deref().map(position)) {
            (Some(_), None) => true,
            (Some(w), Some(Some(since))) => w < since,
            _ => false,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    release: Vec<Release>,
    #[serde(default)]
    contract_change: Vec<ContractChange>,
}

static FILE: LazyLock<File> = LazyLock::new(|| {
    // The file is part of this source tree; `tests::the_release_list_parses_and_names_known_rules` holds it.
    toml::from_str::<File>(include_str!("../releases.toml")).expect("host/releases.toml parses")
});

/// Every known release, oldest first.
pub fn releases() -> &'static [Release] {
    &FILE.release
}

/// Every named change of an answer's shape.
pub fn contract_changes() -> &'static [ContractChange] {
    &FILE.contract_change
}

/// The first release that bundled `digest` as a checker this binary vouches
/// for, with the reason.
pub fn vouched_by(digest: &Digest) -> Option<(&'static Release, &'static str)> {
    releases().iter().find_map(|r| {
        let package = r.bundled.iter().find(|(_, d)| *d == digest).map(|(p, _)| p)?;
        r.vouched.get(package).map(|why| (r, why.as_str()))
    })
}

/// The release that wrote a pack recording `bundled` as bundled: the first
/// that bundled every one of them (none for an empty set).
pub fn writer_of(bundled: &BTreeSet<Digest>) -> Option<&'static Release> {
    if bundled.is_empty() {
        return None;
    }
    releases().iter().find(|r| bundled.iter().all(|d| r.bundled.values().any(|b| b == d)))
}

impl Release {
    /// Why re-checking this release's archives shows `outcome` for
    /// `capability_id` on a certificate of `format`, if the release says.
    pub fn explains(&self, capability_id: &str, outcome: &str, format: Option<&str>) -> Option<String> {
        self.differences
            .iter()
            .find(|d| {
                d.capability_id == capability_id
                    && d.outcome == outcome
                    && d.format.as_deref().is_none_or(|f| Some(f) == format)
            })
            .map(|d| format!("release {}: {}", self.name, d.reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_list_parses_and_names_known_rules() {
        assert!(!releases().is_empty());
        for release in releases() {
            assert!(crate::policy::rules::meaning(release.rules).is_some(), "{}", release.name);
            assert!(!release.bundled.is_empty(), "{}", release.name);
            // Only checkers are vouched for, each one the release bundled,
            // never one recalled, and each with a reason.
            for (package, why) in &release.vouched {
                let digest = release.bundled.get(package).unwrap_or_else(|| panic!("{}: {package}", release.name));
                assert!(package.ends_with("-checker") && !why.is_empty(), "{}: {package}", release.name);
                assert!(crate::policy::Policy::default().recall_of(digest).is_none(), "{}: {package}", release.name);
            }
        }
        let first = &releases()[0];
        let (package, one) = first.bundled.iter().next().map(|(p, d)| (p, *d)).expect("a component");
        let vouched = vouched_by(&one).map(|(r, _)| &r.name);
        assert_eq!(vouched, first.vouched.contains_key(package).then_some(&first.name));
        assert_eq!(writer_of(&BTreeSet::from([one])).map(|r| &r.name), Some(&first.name));
        assert!(writer_of(&BTreeSet::from([one, Digest::of(b"unknown")])).is_none());
        assert!(writer_of(&BTreeSet::new()).is_none());
        for change in contract_changes() {
            let since = change.since.as_deref();
            assert!(since.is_none_or(|s| releases().iter().any(|r| r.name == s)), "{}", change.name);
        }
    }

    #[test]
    fn a_contract_change_covers_its_fields_for_packs_of_releases_before_it() {
        let change = ContractChange {
            name: "verdicts name their certificate's format".into(),
            since: Some(releases().last().expect("a release").name.clone()),
            fields: vec!["verification.certificate_format".into(), "artifacts.*.bytes".into()],
            reason: "for the test".into(),
        };
        assert!(change.covers("verification.certificate_format"));
        assert!(change.covers("artifacts.3.bytes"));
        assert!(!change.covers("artifacts.3.uri") && !change.covers("verification") && !change.covers("artifacts.3"));
        let (first, last) = (&releases()[0], releases().last().expect("a release"));
        assert!(change.after(Some(first)) || first == last);
        assert!(!change.after(Some(last)), "a pack of the release that made it has the new shape");
        assert!(!change.after(None), "a pack of an unknown writer is not excused");
        let unreleased = ContractChange { since: None, ..change };
        assert!(unreleased.after(Some(last)));
    }
}
