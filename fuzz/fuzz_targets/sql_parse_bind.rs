#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sql::fuzz::fuzz_one(data));
