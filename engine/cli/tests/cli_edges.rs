//! The binary at its edges: input that is out of range or not text, output to a reader that has
//! gone. Each case names the message and the exit code a user or a GUI sees.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");
/// The repository root, where `configs/` lives.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

struct Run {
    code: Option<i32>,
    out: String,
    err: String,
}

/// Starts `engine ARGS` in the repository root with all three streams piped.
fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(ENGINE)
        .args(args)
        .current_dir(ROOT)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `engine ARGS` in the repository root with `input` on stdin.
fn run(args: &[&str], input: &[u8]) -> Run {
    let mut child = spawn(args);
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
fn uci_reports_a_line_that_is_not_utf8_and_reads_on() {
    let r = run(&["uci"], b"isready\n\xff\xfe\nisready\ngo banana\n");
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert_eq!(
        r.out,
        "readyok\ninfo string error: line 2 is not UTF-8: ignored\nreadyok\n\
         info string error: go: unknown parameter 'banana'\n"
    );
}

#[test]
fn play_reports_a_line_that_is_not_utf8_and_reads_on() {
    let r = run(
        &[
            "play", "--game", "liuzhou", "--human", "black", "--agent", "random",
        ],
        b"\xff\nquit\n",
    );
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(
        r.out.contains("input line 1 is not UTF-8: ignored"),
        "{}",
        r.out
    );
    assert!(r.out.contains("stopped; record so far:"), "{}", r.out);
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

#[test]
fn bench_provider_and_batch_are_checked_before_any_work() {
    let r = run(&["bench", "--section", "inference", "--batch", "0"], b"");
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(r.err.contains("--batch"), "{}", r.err);
    let r = run(
        &["bench", "--section", "inference", "--provider", "gpu"],
        b"",
    );
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(
        r.err.contains("--provider") && r.err.contains("cuda"),
        "{}",
        r.err
    );
    let r = run(
        &[
            "bench",
            "--section",
            "inference",
            "--precision",
            "int8",
            "--provider",
            "cuda",
        ],
        b"",
    );
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(r.err.contains("CPU only"), "{}", r.err);
    assert!(!r.err.contains("panicked"), "{}", r.err);
}

/// Starts `engine ARGS`, reads `lines` lines of its output and closes the pipe: the command
/// must end quietly (exit 0, no panic, no error) rather than die writing the rest.
fn close_early(args: &[&str], input: &[u8], lines: usize) {
    let mut child = spawn(args);
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input);
    drop(stdin);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for _ in 0..lines {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
    }
    drop(stdout);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{args:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("error"),
        "{args:?}: {err}"
    );
}

#[test]
fn a_closed_stdout_ends_commands_quietly() {
    // Each goes on writing (or computing, then writing) after the first line is read.
    close_early(
        &[
            "match", "--game", "liuzhou", "--games", "400", "--black", "random", "--white",
            "random",
        ],
        b"",
        1,
    );
    close_early(
        &[
            "play", "--game", "liuzhou", "--agent", "random", "--human", "none",
        ],
        b"",
        1,
    );
    close_early(
        &["perft", "--game", "liuzhou", "--depth", "4", "--divide"],
        b"",
        0,
    );
    close_early(
        &["perft", "--game", "xiangqi", "--depth", "4", "--divide"],
        b"",
        0,
    );
    close_early(
        &["bench", "--section", "rules", "--seconds", "0.05"],
        b"",
        1,
    );
    close_early(&["gtp"], "list_commands\n".repeat(2000).as_bytes(), 1);
}

#[test]
fn perft_position_errors_say_which_flag_and_text() {
    let r = run(
        &[
            "perft",
            "--game",
            "liuzhou",
            "--position",
            "xx",
            "--depth",
            "1",
        ],
        b"",
    );
    assert_eq!(r.code, Some(2));
    assert!(r.err.contains("perft: --position 'xx': LFEN"), "{}", r.err);
    let r = run(
        &[
            "perft",
            "--game",
            "xiangqi",
            "--position",
            "xx",
            "--depth",
            "1",
        ],
        b"",
    );
    assert_eq!(r.code, Some(2));
    assert!(r.err.contains("perft: --position 'xx': FEN"), "{}", r.err);
}

#[test]
fn go_perft_refuses_a_size_that_differs_from_the_position_and_a_baseless_ko() {
    let r = run(
        &[
            "perft",
            "--game",
            "go",
            "--size",
            "9",
            "--position",
            "3/3/3 b 0 - 0",
            "--depth",
            "1",
        ],
        b"",
    );
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(
        r.err
            .contains("--size 9 but --position '3/3/3 b 0 - 0' is a 3x3 board"),
        "{}",
        r.err
    );
    // Without --size the position's side is the size.
    let r = run(
        &[
            "perft",
            "--game",
            "go",
            "--position",
            "4/4/4/4 b",
            "--depth",
            "1",
        ],
        b"",
    );
    assert_eq!((r.code, r.out.as_str()), (Some(0), "17\n"), "{}", r.err);
    let r = run(
        &[
            "perft",
            "--game",
            "go",
            "--position",
            "3/3/3 b 0 B2 0",
            "--depth",
            "2",
        ],
        b"",
    );
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(
        r.err.contains("ko point B2: not surrounded by stones"),
        "{}",
        r.err
    );
}

/// Logs that go to a file or a pipe are plain text: no colour codes, no progress redraws.
#[test]
fn logs_to_a_pipe_hold_no_escape_codes() {
    let out_dir = std::env::temp_dir().join(format!("engine-plain-log-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_engine"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args([
            "selfplay", "--game", "liuzhou", "--model", "uniform", "--games", "2", "--out",
        ])
        .arg(&out_dir)
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stderr.is_empty(), "the run logs something");
    assert!(
        !out.stderr.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.contains(&0x1b));
    let _ = std::fs::remove_dir_all(&out_dir);
}
