//! Signatures made by Debian's `minisign` 0.11 (`minisign -G -W`, then `-S`
//! for the prehashed default and `-S -l` for the legacy algorithm) over the
//! six bytes `hello\n`: outside truth, not our own signer.

use super::*;

const KEY: &str = "RWRKgNOafoRzEhx0GLEd0WtU7tyxvADckJ1vxny1SGOCU8Q1SthrWvvT";
const KEY_FILE: &str = "untrusted comment: minisign public key 1273847E9AD3804A\nRWRKgNOafoRzEhx0GLEd0WtU7tyxvADckJ1vxny1SGOCU8Q1SthrWvvT\n";
const OTHER_KEY: &str = "RWRSSMLO/qkDwm3CPw5cTXGOHSKlUBuzIhyMaHMZ0SNRWnNFvibaAphO";
const PREHASHED: &str = "untrusted comment: signature from minisign secret key\n\
RURKgNOafoRzEmJj6dmBCeo2FNwkRoub1OZvhiLIZWDVJdP5zLKA9lxRIKklg3w/2K+8DZevE1Sc59mR67l8TXIITYdiaIpa8wg=\n\
trusted comment: my trusted\n\
njW/PdRrpHWx2PLhpk6rXZ7VtZaS+PHXnRnwYiu7DUWo2a/l53Z2N7GA0oyrMwQAef+pIzFYy4lQ4SDOUY3oCw==\n";
const LEGACY: &str = "untrusted comment: signature from minisign secret key\n\
RWRKgNOafoRzEosP3tYGfULWH9eT78MViK+f+kYhenOjeWYS2h9aTR1p3sHrhGPUTh6g5i+u7wW1RIwfsv0uYsjcvAvuJZQXVQs=\n\
trusted comment: timestamp:1796396988\tfile:g\n\
ChwsDY73LDW9Ct4nDw/+GcH7YmQ1fAP2J8NsL8mN7nhXDddUVJE0Qdf1vFFqtWeCyYAkA0k1YdXa1zlLBsSNBA==\n";
const SIGNED: &[u8] = b"hello\n";

fn trusting(keys: &[(&str, &str)], require_signature: bool) -> Publishers {
    let trusted = keys.iter().map(|(name, key)| TrustedPublisher { name: (*name).into(), public_key: (*key).into() });
    Publishers { require_signature, trusted: trusted.collect() }
}

#[test]
fn minisign_signatures_of_both_algorithms_verify() {
    let publishers = trusting(&[("Other", OTHER_KEY), ("Example Labs", KEY)], true);
    let publisher = publishers.admit(SIGNED, Some(PREHASHED)).expect("prehashed").expect("signed");
    assert_eq!((publisher.name.as_str(), publisher.key_id.as_str()), ("Example Labs", "1273847E9AD3804A"));
    assert_eq!(publisher.trusted_comment, "my trusted");
    assert_eq!(publisher.public_key, KEY);
    publisher.reverify(SIGNED).expect("re-verifies");
    let legacy = publishers.admit(SIGNED, Some(LEGACY)).expect("legacy").expect("signed");
    assert_eq!(legacy.trusted_comment, "timestamp:1796396988\tfile:g");
    assert_eq!(PublicKey::parse(KEY_FILE).expect("a .pub file").id(), "1273847E9AD3804A");
}

#[test]
fn unsigned_wrongly_signed_and_untrusted_are_refused() {
    let publishers = trusting(&[("Example Labs", KEY)], true);
    assert_eq!(publishers.admit(SIGNED, None), Err(SignatureRefusal::Required));
    assert_eq!(trusting(&[("Example Labs", KEY)], false).admit(SIGNED, None), Ok(None));
    // Other bytes, one flipped bit.
    let refusal = publishers.admit(b"hellO\n", Some(PREHASHED)).expect_err("other bytes");
    assert!(matches!(&refusal, SignatureRefusal::Invalid(m) if m.contains("not the ones signed")), "{refusal}");
    // The trusted comment changed: the global signature no longer holds.
    let edited = PREHASHED.replace("my trusted", "my trusteD");
    let refusal = publishers.admit(SIGNED, Some(&edited)).expect_err("edited comment");
    assert!(matches!(&refusal, SignatureRefusal::Invalid(m) if m.contains("trusted comment")), "{refusal}");
    // A key the policy does not list, even when signatures are optional.
    let other = trusting(&[("Other", OTHER_KEY)], false).admit(SIGNED, Some(PREHASHED)).expect_err("untrusted");
    assert_eq!(other, SignatureRefusal::Untrusted { key_id: "1273847E9AD3804A".into() });
    for garbage in ["", "untrusted comment: x\nnot base64!\n", "hello\n", &PREHASHED[..120]] {
        assert!(matches!(publishers.admit(SIGNED, Some(garbage)), Err(SignatureRefusal::Invalid(_))), "{garbage:?}");
    }
}

#[test]
fn a_recorded_signature_that_does_not_hold_is_caught() {
    let publisher = trusting(&[("Example Labs", KEY)], false).admit(SIGNED, Some(PREHASHED)).unwrap().unwrap();
    assert!(publisher.reverify(b"other").is_err());
    let swapped = Publisher { public_key: OTHER_KEY.into(), ..publisher.clone() };
    assert!(swapped.reverify(SIGNED).is_err());
    let renamed = Publisher { trusted_comment: "forged".into(), ..publisher };
    assert!(renamed.reverify(SIGNED).is_err());
}

#[test]
fn the_policy_section_is_checked() {
    assert!(trusting(&[("A", KEY), ("B", OTHER_KEY)], true).validate().is_ok());
    let cases = [
        (trusting(&[("A", KEY), ("A", OTHER_KEY)], false), "publishers.trusted.1.name"),
        (trusting(&[("A", KEY), ("B", KEY_FILE)], false), "publishers.trusted.1.public_key: key 1273847E9AD3804A"),
        (trusting(&[("", KEY)], false), "publishers.trusted.0.name"),
        (trusting(&[("A", "RWQ=")], false), "publishers.trusted.0.public_key"),
    ];
    for (publishers, expected) in cases {
        let error = publishers.validate().expect_err(expected);
        assert!(error.starts_with(expected), "{error}");
    }
}
