//! `engine match` end to end: the binary runs a short match, and bad agent specs are refused
//! with a message naming the key, and a non-zero exit.

use std::process::Command;

fn engine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine"));
    // The repository root, where configs/ lives.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

#[test]
fn a_short_match_reports_the_score() {
    let out = engine()
        .args([
            "match",
            "--game",
            "liuzhou",
            "--black",
            "mcts:visits=30",
            "--white",
            "random",
            "--games",
            "2",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("(2 games)"), "{text}");
    assert!(text.contains("95% confidence interval"), "{text}");
}

#[test]
fn a_bad_agent_spec_names_the_key() {
    let out = engine()
        .args(["match", "--black", "mcts:visits=many", "--white", "random"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("visits") && err.contains("many"), "{err}");
}

#[test]
fn a_missing_model_is_an_error_not_a_panic() {
    let out = engine()
        .args([
            "match",
            "--black",
            "net:model=no/such/model.onnx",
            "--white",
            "random",
            "--games",
            "1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no/such/model.onnx"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn an_agent_kind_the_game_lacks_is_refused() {
    let out = engine()
        .args(["match", "--black", "alphabeta:depth=2", "--white", "random"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown agent kind") && err.contains("liuzhou"),
        "{err}"
    );
}
