use super::*;

const CEILING: u64 = 1 << 30;

fn digest(byte: u8) -> Digest {
    Digest::of(&[byte])
}

#[test]
fn revocation_wins_over_bundled_and_explicit_authorization() {
    let mut policy = Policy::default();
    let (bundled, operator) = (digest(1), digest(2));
    assert!(policy.authorizes("role", &bundled, true));
    assert!(!policy.authorizes("role", &operator, false), "operator checkers start unauthorized");
    policy.authorize("role", operator);
    assert!(policy.authorizes("role", &operator, false));
    assert!(!policy.authorizes("other-role", &operator, false), "authorization is per role");
    policy.revoke(bundled);
    policy.revoke(operator);
    assert!(!policy.authorizes("role", &bundled, true));
    assert!(!policy.authorizes("role", &operator, false));
    policy.authorize("role", bundled);
    assert!(policy.authorizes("role", &bundled, true), "authorizing lifts a revocation");
}

#[test]
fn bundled_authorization_can_be_switched_off() {
    let policy = Policy::parse("[checkers]\nauthorize_bundled = false\n", CEILING).expect("parses");
    assert!(!policy.authorizes("role", &digest(1), true));
}

#[test]
fn the_policy_file_round_trips_and_its_digest_ignores_formatting() {
    let mut policy = Policy::default();
    policy.authorize("role", digest(3));
    policy.revoke(digest(4));
    let text = policy.to_toml().expect("a policy file");
    let parsed = Policy::parse(&text, CEILING).expect("parses its own output");
    assert_eq!(parsed, policy);
    let reformatted = format!("\n\n{}", text.replace(" = ", "="));
    assert_eq!(Policy::parse(&reformatted, CEILING).expect("parses").digest(), policy.digest());
}

#[test]
fn bad_policy_files_are_typed_errors() {
    let check = |text: &str, needle: &str| {
        let error = Policy::parse(text, CEILING).expect_err(text).to_string();
        assert!(error.contains(needle), "{error}");
    };
    check("[budgets]\nfuel = 1\nmemory_bytes = 0\noutput_bytes = 1\n", "budgets.memory_bytes");
    check("[budgets]\nfuel = 1\nmemory_bytes = 2147483648\noutput_bytes = 1\n", "ceiling");
    check("[checkers]\nauthorise_bundled = true\n", "authorise_bundled");
    check("[checkers]\nrevoked = [\"sha256:nothex\"]\n", "sha256");
}
