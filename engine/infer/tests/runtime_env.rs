//! A missing library or a wrong `ORT_DYLIB_PATH` gives a typed error that says what to do,
//! never ort's panic; `infer` fetches nothing itself, only through the fetcher a program
//! registers.
//!
//! One test in its own binary: it sets the process environment, and the ONNX Runtime
//! environment is loaded once per process.

use infer::runtime::{self, RuntimeError};
use infer::{ModelError, OrtModel, OrtOptions};

#[test]
fn bad_library_paths_are_typed_errors() {
    let dir = std::env::temp_dir().join(format!("infer-runtime-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // No library anywhere and no fetcher registered: NotFound, naming the places and the fix.
    std::env::remove_var("ORT_DYLIB_PATH");
    std::env::set_var("XDG_CACHE_HOME", dir.join("cache"));
    if runtime::find_library() == Ok(None) {
        match runtime::library_path() {
            Err(e @ RuntimeError::NotFound { .. }) => {
                let text = e.to_string();
                let cache = dir.join("cache").join("liuzhou-engine").join("ort");
                assert!(text.contains(&*cache.to_string_lossy()), "{text}");
                assert!(
                    text.contains("ort_fetch") && text.contains("ORT_DYLIB_PATH"),
                    "{text}"
                );
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
        assert!(!dir.join("cache").exists(), "nothing was fetched");

        // A program's fetcher is asked for the cache directory, and the lookup then finds
        // what it put there (the stand-in writes a placeholder: nothing loads it here).
        runtime::set_fetcher(|dir| {
            std::fs::create_dir_all(dir).map_err(|e| RuntimeError::Fetch(e.to_string()))?;
            std::fs::write(dir.join(runtime::LIB_NAME), b"placeholder")
                .map_err(|e| RuntimeError::Fetch(e.to_string()))
        });
        let fetched = runtime::library_path().unwrap();
        assert_eq!(fetched, runtime::cache_dir().join(runtime::LIB_NAME));
        assert!(
            fetched.starts_with(dir.join("cache")),
            "{}",
            fetched.display()
        );
        assert_eq!(runtime::find_library(), Ok(Some(fetched)));
    } else {
        // A checkout's .ort/ holds the library: the lookup finds it before the cache.
        eprintln!("SKIPPED: the checkout's .ort/ has the library; NotFound is not checked");
    }

    std::env::set_var("ORT_DYLIB_PATH", dir.join("absent.so"));
    match runtime::library_path() {
        Err(e @ RuntimeError::EnvPathMissing { .. }) => {
            assert!(e.to_string().contains("absent.so"), "{e}")
        }
        other => panic!("expected EnvPathMissing, got {other:?}"),
    }

    // A truncated library: the loader refuses it, and loading a model reports that.
    let lib = dir.join("libonnxruntime.so.1.31.1");
    std::fs::write(&lib, b"\x7fELF truncated").unwrap();
    std::env::set_var("ORT_DYLIB_PATH", &lib);
    let model = dir.join("model.onnx");
    std::fs::write(&model, b"unused").unwrap();
    match OrtModel::load(&model, &OrtOptions::default()) {
        Err(ModelError::Runtime(e @ RuntimeError::Load { .. })) => {
            let text = e.to_string();
            assert!(text.contains("ORT_DYLIB_PATH"), "says what to do: {text}");
        }
        Err(e) => panic!("expected a Load error, got {e}"),
        Ok(_) => panic!("a truncated library loaded"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
