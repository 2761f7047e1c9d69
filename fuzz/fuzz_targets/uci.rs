//! Each line of the input parsed as UCI/UCCI, then fed as one session to alpha-beta: only
//! protocol lines are written and every `go` gets one `bestmove`: `cargo +nightly fuzz run uci`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faces::fuzzing::uci(data);
});
