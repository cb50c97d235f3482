#![no_main]
//! The polynomial producer's parser (positions in errors, degree bound),
//! under every monomial order.

use jacobian_polynomial_core::poly;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let vars: Vec<String> = ["x", "y", "z"].iter().map(|v| (*v).to_owned()).collect();
    for order in [poly::Order::Lex, poly::Order::Grlex, poly::Order::Grevlex] {
        match poly::parse(text, &vars, order, 10) {
            Ok(p) => {
                let sum = p.add(&p, order);
                assert!(p.is_zero() == sum.is_zero());
            }
            Err(message) => assert!(!message.is_empty()),
        }
    }
});
