//! Test guest: a bundle whose `describe` answers with 64 MiB. Installing it
//! must fail with a typed error naming the component, within the output budget.

use jacobian_guest::__private::capability_bindings;

struct Bloated;

impl capability_bindings::Guest for Bloated {
    fn describe() -> Vec<u8> {
        let mut answer = br#"{"protocol":"jacobian.component/1","kind":"CAPABILITY","provider":{"name":""#.to_vec();
        answer.resize(answer.len() + (64 << 20), b'x');
        answer.extend_from_slice(br#"","version":"0.1.0","licence":"Apache-2.0"},"capabilities":[]}"#);
        answer
    }

    fn invoke(_request: Vec<u8>) -> Result<Vec<u8>, String> {
        Err("never installed".into())
    }
}

capability_bindings::export!(Bloated with_types_in jacobian_guest::__private::capability_bindings);
