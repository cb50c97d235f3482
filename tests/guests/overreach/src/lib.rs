//! Test guest: a bundle that opens a TCP connection through the standard
//! library, so the component imports `wasi:sockets`. Installing it must be
//! refused before any of its code runs.

use jacobian_guest::__private::capability_bindings;

struct Overreach;

impl capability_bindings::Guest for Overreach {
    fn describe() -> Vec<u8> {
        br#"{"protocol":"jacobian.component/1","kind":"CAPABILITY","provider":{"name":"overreach","version":"0.1.0","licence":"Apache-2.0"},"capabilities":[]}"#.to_vec()
    }

    fn invoke(request: Vec<u8>) -> Result<Vec<u8>, String> {
        use std::io::Write;
        let mut socket = std::net::TcpStream::connect("127.0.0.1:9").map_err(|e| e.to_string())?;
        socket.write_all(&request).map_err(|e| e.to_string())?;
        Err("sent".into())
    }
}

capability_bindings::export!(Overreach with_types_in jacobian_guest::__private::capability_bindings);
