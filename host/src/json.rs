//! Our own values as JSON. Serializing a type of this crate to JSON cannot
//! fail: every `Serialize` here is derived or writes strings, and every map
//! is keyed by strings. These functions say so once, and should that ever
//! break, the failure is a panic naming the type, never an empty or `null`
//! value standing in for it (which would be stored, hashed or handed to a
//! guest as if it were the value).

use serde::Serialize;
use serde_json::Value;

/// `value` as a JSON value.
pub fn value<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_else(|e| unserializable::<T>(&e))
}

/// `value` as compact JSON bytes.
pub fn bytes<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|e| unserializable::<T>(&e))
}

/// `value` as compact JSON text.
pub fn text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| unserializable::<T>(&e))
}

/// `value` as indented JSON text.
pub fn pretty_text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| unserializable::<T>(&e))
}

/// `value` as indented JSON bytes.
pub fn pretty_bytes<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(value).unwrap_or_else(|e| unserializable::<T>(&e))
}

/// The members of a value that is a JSON object (a struct of this crate).
pub fn members<T: Serialize + ?Sized>(value: &T) -> serde_json::Map<String, Value> {
    match self::value(value) {
        Value::Object(members) => members,
        other => panic!("a {} serialized to JSON that is not an object: {other}", std::any::type_name::<T>()),
    }
}

/// The wire name of a unit variant (`COMPLETED`, `INVALID_INPUT`), as a
/// result spells it; empty for a value that is not a string in JSON.
pub fn name<T: Serialize + ?Sized>(value: &T) -> String {
    match self::value(value) {
        Value::String(name) => name,
        _ => String::new(),
    }
}

fn unserializable<T: ?Sized>(error: &serde_json::Error) -> ! {
    panic!("a {} did not serialize to JSON: {error}", std::any::type_name::<T>())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    #[test]
    fn a_value_that_cannot_be_json_is_a_panic_naming_its_type_not_a_null() {
        // Maps keyed by something other than strings are the one way a derived value fails.
        let keyed_by_pairs: BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
        let failed = std::panic::catch_unwind(|| super::value(&keyed_by_pairs)).expect_err("a panic");
        let message = failed.downcast_ref::<String>().expect("a message");
        assert!(message.contains("BTreeMap<(u8, u8), u8>"), "{message}");
        assert_eq!(super::name(&"COMPLETED"), "COMPLETED");
        assert_eq!(super::name(&7), "");
        assert_eq!(super::members(&serde_json::json!({"a": 1}))["a"], 1);
        assert!(std::panic::catch_unwind(|| super::members(&[1])).is_err());
    }
}
