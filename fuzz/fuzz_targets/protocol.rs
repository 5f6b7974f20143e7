#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| server::fuzz::fuzz_one(data));
