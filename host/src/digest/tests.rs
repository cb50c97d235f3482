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

#[test]
fn canonical_json_matches_the_rfc_8785_examples() {
    // RFC 8785 section 3.2.2: the sample input and its canonical form.
    let input = r#"{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }"#;
    let value: serde_json::Value = serde_json::from_str(input).expect("sample parses");
    assert_eq!(
        String::from_utf8(canonical_json(&value)).expect("utf-8"),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
    // Section 3.2.3: members sorted by UTF-16 code units, so U+FB33 comes
    // after the surrogate pair of U+1F600 though its code point is smaller.
    let input = r#"{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis"}"#;
    let value: serde_json::Value = serde_json::from_str(input).expect("sample parses");
    let text = String::from_utf8(canonical_json(&value)).expect("utf-8");
    let order: Vec<usize> = ["Carriage Return", "One", "Control", "Latin Small", "Euro Sign", "Emoji", "Hebrew"]
        .iter()
        .map(|label| text.find(label).expect("member written"))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "members out of UTF-16 order: {text}");
    // Appendix B: IEEE 754 doubles and their ECMAScript spellings.
    for (bits, spelt) in [
        (0x0000000000000000_u64, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7fefffffffffffff, "1.7976931348623157e+308"),
        (0xffefffffffffffff, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xc340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44b52d02c7e14af6, "1e+23"),
        (0x444b1ae4d6e2ef50, "1e+21"),
        (0x3eb0c6f7a0b5ed8d, "0.000001"),
        (0x41b3de4355555555, "333333333.3333333"),
    ] {
        let number = serde_json::Number::from_f64(f64::from_bits(bits)).expect("finite");
        assert_eq!(canonical_json(&serde_json::Value::Number(number)), spelt.as_bytes(), "{bits:#018x}");
    }
}

#[test]
fn canonical_members_locate_each_value_in_the_bytes() {
    let value = json!({"z": {"b": [1, 2.5]}, "a": "x\ny", "m": null});
    let (bytes, spans) = canonical_members(value.as_object().expect("object"));
    assert_eq!(bytes, canonical_json(&value));
    let names: Vec<&str> = spans.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, ["a", "m", "z"]);
    for (name, range) in spans {
        assert_eq!(bytes[range].to_vec(), canonical_json(&value[name]), "{name}");
    }
}

/// Any JSON value, with names and strings drawn to hit every escape and
/// every sorting rule (controls, quotes, characters on both sides of U+E000
/// and beyond U+FFFF) and numbers of all three kinds.
fn any_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    let text = proptest::collection::vec(
        prop_oneof![
            Just('a'),
            Just('Z'),
            Just('"'),
            Just('\\'),
            Just('/'),
            Just('\u{7f}'),
            Just('\u{e9}'),
            Just('\u{d7ff}'),
            Just('\u{e000}'),
            Just('\u{fb33}'),
            Just('\u{ffff}'),
            Just('\u{10000}'),
            Just('\u{1f600}'),
            (0u8..0x20).prop_map(char::from),
        ],
        0..6,
    )
    .prop_map(|chars| chars.into_iter().collect::<String>());
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        (-1000i64..1000, -30i32..30).prop_map(|(m, e)| json!(m as f64 * 10f64.powi(e))),
        text.clone().prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map(text.clone(), inner, 0..8)
                .prop_map(|members| serde_json::Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// The canonical writer agrees byte for byte with an independent RFC
    /// 8785 implementation: stored digests never change with it.
    #[test]
    fn canonical_json_agrees_with_an_independent_implementation(value in any_json()) {
        let theirs = serde_json_canonicalizer::to_vec(&value).expect("canonicalizes");
        proptest::prop_assert_eq!(canonical_json(&value), theirs);
    }
}
