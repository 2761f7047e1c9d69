//! Arbitrary bytes read as a self-play shard must never panic; a shard that reads passes its
//! own checksums and writes back to itself: `cargo +nightly fuzz run shard`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    shards::fuzzing::check_bytes(data);
});
