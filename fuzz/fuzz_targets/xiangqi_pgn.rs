//! Arbitrary bytes read as a Xiangqi PGN file (ICCS, WXF, Chinese; UTF-8, UTF-16, GBK) must
//! never panic, and every game read must replay legally and write back to itself:
//! `cargo +nightly fuzz run xiangqi_pgn`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    games::xiangqi::fuzzing::check_pgn(data);
});
