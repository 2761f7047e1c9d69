//! Each line of the input fed to a Go GTP session (random-playout agent): every answer is a
//! well-formed GTP response, never a panic or a hang: `cargo +nightly fuzz run gtp_go`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faces::fuzzing::gtp_go(data);
});
