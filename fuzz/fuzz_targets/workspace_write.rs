#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| jacobian::fuzzing::workspace_write(data));
