//! Arbitrary text read as a `--config` file must give a document or a typed error, and every
//! section read from it merged over each built-in config a value or a typed error, never a
//! panic: `cargo +nightly fuzz run config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    setup::fuzzing::check_config(data);
});
