//! Runs every file of the `config` fuzz corpus through the target's body on stable Rust.

use std::fs;
use std::path::Path;

#[test]
fn config_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/config");
    let mut n = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        setup::fuzzing::check_config(&fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "empty corpus {}", dir.display());
}
