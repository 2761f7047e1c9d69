//! Xiangqi FEN and ICCS move text: `cargo +nightly fuzz run xiangqi_text corpus/xiangqi_text`.
//! The same checks run over the corpus in the stable suite (games' `xiangqi_rules` test).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    games::xiangqi::fuzzing::check_text(data);
});
