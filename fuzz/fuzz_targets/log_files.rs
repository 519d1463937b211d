#![no_main]
//! See engine/src/fuzzing.rs: `log_files` and its invariants.

libfuzzer_sys::fuzz_target!(|data: &[u8]| engine::fuzzing::log_files(data));
