//! Runs every file of the faces' fuzz corpora (`gtp_go`, `gtp_liuzhou`, `uci`, `web_api`)
//! through its target's body on stable Rust, so CI exercises what the fuzzer found without
//! nightly.

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
fn gtp_go_corpus() {
    run_corpus("gtp_go", faces::fuzzing::gtp_go);
}

#[test]
fn gtp_liuzhou_corpus() {
    run_corpus("gtp_liuzhou", faces::fuzzing::gtp_liuzhou);
}

#[test]
fn uci_corpus() {
    run_corpus("uci", faces::fuzzing::uci);
}

#[test]
fn web_api_corpus() {
    run_corpus("web_api", faces::fuzzing::web_api);
}
