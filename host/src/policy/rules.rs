//! Authorization rules, versioned: what an authorization in a policy means.
//! A policy names the rules it was written under (`Policy::rules`), and so
//! does an archive, which carries its policy; one written under older rules
//! is read through the mapping [`mapping`] states, and the offline
//! re-checks print the mapping they applied.

/// This binary's authorization rules.
pub const RULES: u32 = 2;

/// What each version of the rules meant, and when it was in force; `None`
/// for a version this binary does not know.
pub fn meaning(version: u32) -> Option<&'static str> {
    match version {
        1 => Some(
            "checker-bound (releases up to 052cb71): an authorization, or the policy's authorize_bundled, named a \
             checker, and its verdict counted for whatever artifact it was asked to judge",
        ),
        2 => Some(
            "role-bound (from 80cb186): VERIFIED needs a certificate the host recorded and a checker authorized for \
             exactly the role its record names; authorize_bundled covers a bundled checker for the roles it declares",
        ),
        _ => None,
    }
}

/// How an archive whose policy was written under `version` is re-checked
/// under [`RULES`] (a live policy is always of this binary's rules).
pub fn mapping(version: u32) -> &'static str {
    match version {
        1 => {
            "rules 1 re-checked under rules 2: the pack's authorize_bundled covers the checkers its release bundled \
             that this binary vouches for, each for the roles its component declares and only those (a checker \
             declaring acme.lint gets acme.lint); the pack's own authorizations are not its to grant (the \
             reviewer's --authorize, role-bound); a certificate's record is the route of the producer episode that \
             made it"
        }
        _ => {
            "as written: the pack's authorize_bundled covers the checkers this binary bundles or vouches for from \
             the release that wrote it, for the roles they declare; the pack's own authorizations are the \
             reviewer's to grant (--authorize)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    #[test]
    fn a_policy_names_its_rules_and_a_live_one_of_other_rules_is_refused() {
        let written = Policy::default().to_toml().expect("writes");
        assert!(written.contains(&format!("rules = {RULES}")), "{written}");
        let unversioned = Policy::parse("profile = \"DEFAULT\"\n", 1 << 30).expect("parses");
        assert_eq!((unversioned.rules, unversioned.rules()), (None, RULES));
        // Naming this binary's rules changes no recorded digest.
        assert_eq!(unversioned.digest(), Policy::default().digest());
        for other in [0, 1, RULES + 1] {
            let err = Policy::parse(&format!("rules = {other}\n"), 1 << 30).expect_err("other rules");
            assert!(err.to_string().contains(&format!("rules = {other}")), "{err}");
        }
        assert!(meaning(1).is_some() && meaning(RULES).is_some() && meaning(RULES + 1).is_none());
        assert!(mapping(1).contains("only those") && mapping(RULES).starts_with("as written"));
    }
}
