//! Arbitrary LFEN and action text must never panic: `cargo +nightly fuzz run liuzhou_text`.
//! The input's first line is a position, each further line an action to play.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    games::liuzhou::fuzz_text(data);
});
