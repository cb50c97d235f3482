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

/// How a policy written under `version` is read under [`RULES`].
pub fn mapping(version: u32) -> &'static str {
    match version {
        1 => {
            "rules 1 read as rules 2: an authorization of a checker holds for the roles its component declares, and \
             only those (a checker declaring acme.lint gets acme.lint); a certificate's record is the route of the \
             producer episode that made it"
        }
        _ => "as written",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Digest;
    use crate::policy::{Authorization, Policy};

    fn written_under(rules: u32, digest: Digest) -> Policy {
        let mut policy = Policy { rules: Some(rules), ..Policy::default() };
        policy.checkers.authorized.push(Authorization { role: "acme.lint".into(), digest });
        policy
    }

    #[test]
    fn under_rules_1_an_authorization_names_a_checker_and_under_rules_2_a_role() {
        let checker = Digest::of(b"checker");
        // The caller only asks for roles the checker declares; a checker
        // authorized (under rules 1) as acme.lint that also declares sat.lrat
        // holds for both, and under rules 2 for exactly the one named.
        assert!(written_under(1, checker).authorizes("sat.lrat", &checker, false));
        assert!(!written_under(2, checker).authorizes("sat.lrat", &checker, false));
        assert!(written_under(2, checker).authorizes("acme.lint", &checker, false));
        // Another digest is never authorized by it, under either rules.
        let other = Digest::of(b"other");
        assert!(!written_under(1, checker).authorizes("acme.lint", &other, false));
        // A recall wins under either.
        let mut recalled = written_under(1, checker);
        recalled.recall(checker, "unsound");
        assert!(!recalled.authorizes("acme.lint", &checker, false));
    }

    #[test]
    fn a_policy_names_its_rules_and_one_this_binary_does_not_know_is_refused() {
        let written = Policy::default().to_toml().expect("writes");
        assert!(written.contains(&format!("rules = {RULES}")), "{written}");
        let unversioned = Policy::parse("profile = \"DEFAULT\"\n", 1 << 30).expect("parses");
        assert_eq!((unversioned.rules, unversioned.rules()), (None, RULES));
        let err = Policy::parse("rules = 3\n", 1 << 30).expect_err("unknown rules");
        assert!(err.to_string().contains("rules = 3"), "{err}");
        assert!(Policy::parse("rules = 0\n", 1 << 30).is_err());
        assert!(meaning(1).is_some() && meaning(RULES).is_some() && mapping(RULES) == "as written");
    }
}
