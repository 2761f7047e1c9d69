//! Runs every fuzz corpus file through its target's body on stable Rust, so CI exercises what
//! the fuzzer found without needing nightly.

use std::fs;
use std::path::Path;

fn run_corpus(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        body(&fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "empty corpus {}", dir.display());
}

#[test]
fn liuzhou_text_corpus() {
    run_corpus("liuzhou_text", games::liuzhou::fuzz_text);
}

#[test]
fn go_sgf_corpus() {
    run_corpus("go_sgf", games::go::sgf::fuzz_sgf);
}

#[test]
fn xiangqi_pgn_corpus() {
    run_corpus("xiangqi_pgn", games::xiangqi::fuzzing::check_pgn);
}
