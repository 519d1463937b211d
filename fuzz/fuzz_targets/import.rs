#![no_main]
//! See engine/src/fuzzing.rs: `import` and its invariants.

libfuzzer_sys::fuzz_target!(|data: &[u8]| engine::fuzzing::import(data));
