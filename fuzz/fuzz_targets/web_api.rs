//! Each line of the input a request `METHOD PATH [BODY]` to the web API, in-process: every
//! answer is a success or a 4xx with a JSON reason: `cargo +nightly fuzz run web_api`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faces::fuzzing::web_api(data);
});
