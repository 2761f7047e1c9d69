//! The body of the `config` fuzz target, here so the stable test suite runs the same checks
//! over its corpus (`fuzz/corpus/config/`, in `tests/fuzz_corpus.rs`).

use std::path::Path;

use crate::config;

/// Reads `data` as a config file given with `--config` and checks, without ever panicking on
/// bad text, that it gives a document or a [`config::ConfigError`]; a document read is merged
/// over each built-in config (every game's and `serve`'s) and every section this crate owns
/// is read from the result, as a value or a typed error that says what it is.
pub fn check_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.yaml");
    let over = match config::parse(text, path) {
        Ok(doc) => doc,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    for (name, _) in config::BUILT_IN {
        let (doc, path) =
            config::effective(name, Some((over.clone(), path))).expect("a built-in config reads");
        let _ = config::named_game(&doc);
        let errors = [
            config::selfplay(&doc, &path).err(),
            config::inference(&doc, &path).err(),
            config::network(&doc, &path).err(),
            match name {
                "liuzhou" => config::liuzhou_start(&doc, &path).err(),
                "xiangqi" => config::xiangqi_start(&doc, &path).err(),
                "go" => config::go_start(&doc, &path).err(),
                _ => None,
            },
        ];
        for e in errors.into_iter().flatten() {
            assert!(
                e.to_string().contains("fuzz.yaml"),
                "an error names the file: {e}"
            );
        }
    }
}
