#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| types::fuzz::types_io::fuzz_one(data));
