//! The loaded ONNX Runtime says which release it is (what `engine doctor` prints).

#[test]
fn the_loaded_library_reports_the_release_this_build_targets() {
    testkit::onnx_runtime();
    let version = infer::runtime::version().unwrap_or_else(|e| panic!("{e}"));
    let minor = |v: &str| v.split('.').take(2).collect::<Vec<_>>().join(".");
    assert_eq!(
        minor(&version),
        minor(infer::runtime::ORT_VERSION),
        "{version}"
    );
    assert!(infer::runtime::loaded_library().is_some_and(|p| p.is_file()));
}
