//! Every shipped config's `train` section reads and passes its checks.

use std::path::Path;

use setup::config;
use train::TrainConfig;

#[test]
fn every_shipped_train_section_reads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let doc = config::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let train: TrainConfig = config::checked(&doc, "train", &path, TrainConfig::validate)
            .unwrap_or_else(|e| panic!("{e}"));
        if doc.get("train").is_some() {
            assert!(!train.run_dir.as_os_str().is_empty(), "{}", path.display());
            seen += 1;
        }
    }
    assert!(
        seen >= 3,
        "{seen} configs with a train section in {}",
        dir.display()
    );
}
