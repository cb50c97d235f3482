//! A result's JSON members, kept from making its episode, so that the edge's
//! structured content is not a second serialization of the same result.

use serde_json::{Map, Value};

use super::CapabilityResult;

impl CapabilityResult {
    /// The result as JSON: what `serde_json::to_value` makes of it, built
    /// from the members the runtime already made for its episode when it
    /// has them, so the edge does not serialize the result a second time.
    pub fn into_value(mut self) -> Value {
        let Some(mut members) = self.members.0.take() else {
            return crate::json::value(&self);
        };
        members.insert("transport".into(), crate::json::value(&self.transport));
        members.insert("accounting".into(), crate::json::value(&self.accounting));
        Value::Object(members)
    }

    /// Whether [`CapabilityResult::into_value`] reuses the episode's members.
    pub fn members_kept(&self) -> bool {
        self.members.0.is_some()
    }
}

/// [`CapabilityResult`]'s members as JSON but `transport` and `accounting`,
/// kept from making its episode: a derived copy, not part of the result's
/// value, so results compare equal whatever it holds. Only the runtime
/// fills it, after which only `transport`, `text` and `accounting` change.
#[derive(Clone, Default)]
pub(crate) struct EpisodeMembers(pub(crate) Option<Map<String, Value>>);

impl PartialEq for EpisodeMembers {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for EpisodeMembers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "EpisodeMembers(kept)" } else { "EpisodeMembers(none)" })
    }
}
