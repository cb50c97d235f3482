use serde_json::json;

use super::*;

#[test]
fn digests_round_trip_through_every_accepted_spelling() {
    let d = Digest::of(b"abc");
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    assert_eq!(d.to_hex(), hex);
    assert_eq!(d.to_string(), format!("sha256:{hex}"));
    assert_eq!(format!("sha256:{hex}").parse::<Digest>(), Ok(d));
    assert_eq!(hex.parse::<Digest>(), Ok(d));
    assert_eq!(Digest::from_artifact_uri(&d.artifact_uri()), Ok(d));
}

#[test]
fn malformed_digests_are_refused() {
    for bad in ["", "sha256:", "abc", &"A".repeat(64), &"g".repeat(64), &"a".repeat(63), &"a".repeat(65)] {
        assert!(bad.parse::<Digest>().is_err(), "{bad:?} accepted");
    }
    assert!(Digest::from_artifact_uri(&format!("artifact://md5/{}", "a".repeat(64))).is_err());
    assert!(Digest::from_artifact_uri(&format!("artifact://sha256/../{}", "a".repeat(61))).is_err());
}

#[test]
fn canonical_json_follows_rfc_8785() {
    // Keys sorted by UTF-16 code units, no whitespace, shortest numbers.
    let value = json!({"b": 1, "a": [1.0, "x", {"d": true, "c": null}], "é": 1e21});
    let text = String::from_utf8(canonical_json(&value)).expect("utf-8");
    assert_eq!(text, r#"{"a":[1,"x",{"c":null,"d":true}],"b":1,"é":1e+21}"#);
    assert_eq!(Digest::of_json(&value), Digest::of(text.as_bytes()));
}
