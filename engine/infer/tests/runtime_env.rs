//! A wrong `ORT_DYLIB_PATH` gives a typed error that says what to do, never ort's panic.
//!
//! One test in its own binary: it sets the process environment, and the ONNX Runtime
//! environment is loaded once per process.

use infer::runtime::{self, RuntimeError};
use infer::{ModelError, OrtModel, OrtOptions};

#[test]
fn bad_library_paths_are_typed_errors() {
    let dir = std::env::temp_dir().join(format!("infer-runtime-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

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

#[test]
fn sha256_matches_a_known_digest() {
    let path = std::env::temp_dir().join(format!("infer-sha-{}", std::process::id()));
    std::fs::write(&path, b"abc").unwrap();
    assert_eq!(
        runtime::sha256_file(&path).unwrap(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    std::fs::remove_file(&path).unwrap();
}
