#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| jacobian::fuzzing::descriptor(data));
