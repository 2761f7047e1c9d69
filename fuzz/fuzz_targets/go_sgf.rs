//! Arbitrary bytes read as an SGF Go record must never panic, and what reads must round-trip:
//! `cargo +nightly fuzz run go_sgf`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    games::go::sgf::fuzz_sgf(data);
});
