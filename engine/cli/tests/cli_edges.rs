//! The binary at its edges: input that is out of range or not text, output to a reader that has
//! gone. Each case names the message and the exit code a user or a GUI sees.

use std::io::Write;
use std::process::{Command, Stdio};

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");
/// The repository root, where `configs/` lives.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

struct Run {
    code: Option<i32>,
    out: String,
    err: String,
}

/// Runs `engine ARGS` in the repository root with `input` on stdin.
fn run(args: &[&str], input: &[u8]) -> Run {
    let mut child = Command::new(ENGINE)
        .args(args)
        .current_dir(ROOT)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The engine may exit before reading all of it (a refused flag): that is its answer.
    let _ = child.stdin.take().unwrap().write_all(input);
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn uci_hash_beyond_the_offered_range_is_refused_and_the_session_goes_on() {
    let r = run(
        &["uci"],
        b"uci\nsetoption name Hash value 65536\nsetoption name Hash value 2\nisready\n",
    );
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(
        r.out
            .contains("option name Hash type spin default 64 min 1 max 4096"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("info string error: setoption: Hash '65536' is not 1..4096"),
        "{}",
        r.out
    );
    assert_eq!(r.out.matches("info string error").count(), 1, "{}", r.out);
    assert!(r.out.ends_with("readyok\n"), "{}", r.out);
    for flag in ["999999", "0", "lots"] {
        let r = run(&["uci", "--hash", flag], b"isready\n");
        assert_eq!(r.code, Some(2), "--hash {flag}: {}", r.err);
        assert!(
            r.err.contains("--hash") && r.err.contains(flag),
            "{}",
            r.err
        );
        assert!(r.out.is_empty(), "{}", r.out);
    }
}

#[test]
fn bench_seconds_must_be_finite_and_at_most_a_day() {
    for (value, why) in [
        ("1e20", "outside (0, 86400]"),
        ("inf", "not a finite number"),
        ("0", "outside (0, 86400]"),
    ] {
        let r = run(&["bench", "--section", "rules", "--seconds", value], b"");
        assert_eq!(r.code, Some(2), "{value}: {}", r.err);
        assert!(
            r.err.contains("--seconds") && r.err.contains(why),
            "{}",
            r.err
        );
        assert!(!r.err.contains("panicked"), "{}", r.err);
    }
}
