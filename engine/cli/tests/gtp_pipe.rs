//! `engine gtp` as another program sees it: the built binary driven through pipes, including
//! malformed input.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

mod go_networks;
use go_networks::go_network;

struct Engine {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("gtp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start engine gtp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Engine {
            child,
            stdin: Some(stdin),
            stdout,
        }
    }

    /// Sends raw text (one or more lines) without waiting.
    fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Reads one response: the lines up to the blank line that ends it.
    fn response(&mut self) -> String {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "engine closed"
            );
            let line = line.trim_end_matches('\n');
            if line.is_empty() {
                break;
            }
            lines.push(line.to_string());
        }
        lines.join("\n")
    }

    fn ask(&mut self, command: &str) -> String {
        self.send_raw(&format!("{command}\n"));
        self.response()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_session_through_pipes() {
    // The tree search with random playouts, whose answers do not depend on a network.
    let mut e = Engine::start(&["--size", "9", "--komi", "6.5", "--agent", "mcts"]);
    assert_eq!(e.ask("protocol_version"), "= 2");
    assert_eq!(e.ask("1 name"), "=1 engine");
    let commands = e.ask("list_commands");
    for c in [
        "protocol_version",
        "name",
        "version",
        "known_command",
        "list_commands",
        "quit",
        "boardsize",
        "clear_board",
        "komi",
        "play",
        "genmove",
        "undo",
        "showboard",
        "final_score",
        "loadsgf",
    ] {
        assert!(
            commands.lines().any(|l| l.trim_start_matches("= ") == c),
            "{c}"
        );
        assert_eq!(e.ask(&format!("known_command {c}")), "= true");
    }
    assert_eq!(e.ask("boardsize 7"), "=");
    assert_eq!(e.ask("clear_board"), "=");
    assert_eq!(e.ask("play black D4"), "=");
    assert_eq!(e.ask("play white D4"), "? illegal move");
    let reply = e.ask("genmove white");
    assert!(reply.starts_with("= "), "{reply}");
    let board = e.ask("showboard");
    assert!(board.starts_with('='), "{board}");
    assert_eq!(board.matches('X').count(), 1, "{board}");
    assert!(board.contains(" 7 "), "a 7x7 board: {board}");
    assert_eq!(e.ask("undo"), "=");
    assert_eq!(e.ask("undo"), "=");
    assert_eq!(e.ask("undo"), "? cannot undo");
    // An empty board: all dame, komi 6.5 decides.
    assert_eq!(e.ask("final_score"), "= W+6.5");
    assert_eq!(e.ask("quit"), "=");
    let status = e.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn malformed_input_gets_error_responses() {
    let mut e = Engine::start(&[]);
    // Blank lines and comments get no response at all: the next answer is the version's.
    e.send_raw("\n   \n# just a comment\n\tprotocol_version\t# tab separated\n");
    assert_eq!(e.response(), "= 2");
    assert_eq!(e.ask("frobnicate"), "? unknown command");
    assert_eq!(e.ask("42 frobnicate now"), "?42 unknown command");
    assert!(e.ask("play").starts_with("? syntax error"));
    assert!(e.ask("play b").starts_with("? syntax error"));
    assert!(e.ask("play b D4 extra").starts_with("? syntax error"));
    assert_eq!(e.ask("play purple D4"), "? invalid color or coordinate");
    assert_eq!(e.ask("play b I5"), "? invalid color or coordinate");
    assert_eq!(e.ask("play b Z1"), "? invalid color or coordinate");
    assert!(e.ask("boardsize nine").starts_with("? syntax error"));
    assert_eq!(e.ask("boardsize 1"), "? unacceptable size");
    assert_eq!(e.ask("boardsize 20"), "? unacceptable size");
    assert!(e.ask("komi x").starts_with("? syntax error"));
    assert!(e.ask("komi inf").starts_with("? syntax error"));
    assert!(e.ask("genmove").starts_with("? syntax error"));
    assert!(e
        .ask("loadsgf /nonexistent/file.sgf")
        .starts_with("? cannot load file"));
    // Control characters are dropped, bytes that are not UTF-8 do not kill the session.
    e.send_raw("proto\x07col_version\n");
    assert_eq!(e.response(), "= 2");
    let stdin = e.stdin.as_mut().unwrap();
    stdin.write_all(b"\xff\xfe name\n").unwrap();
    stdin.flush().unwrap();
    let reply = e.response();
    assert!(reply.starts_with('?') || reply == "= engine", "{reply}");
    assert_eq!(e.ask("name"), "= engine");
    assert_eq!(e.ask("quit"), "=");
}

#[test]
fn loadsgf_sets_up_the_recorded_position() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("gtp_pipe_load.sgf");
    std::fs::write(&path, "(;FF[4]GM[1]SZ[5]KM[0.5];B[cc];W[dc];B[bb];W[dd])").unwrap();
    let mut e = Engine::start(&["--agent", "mcts"]);
    let p = path.display();
    assert_eq!(e.ask(&format!("loadsgf {p}")), "= black");
    let board = e.ask("showboard");
    assert_eq!(board.matches('X').count(), 2, "{board}");
    assert_eq!(board.matches('O').count(), 2, "{board}");
    // Up to (not including) move 3: Black's C3 and White's D3 only, Black to play.
    assert_eq!(e.ask(&format!("loadsgf {p} 3")), "= black");
    let board = e.ask("showboard");
    assert_eq!(board.matches('X').count(), 1, "{board}");
    assert_eq!(e.ask(&format!("loadsgf {p} 2")), "= white");
    assert_eq!(e.ask("undo"), "=");
    assert_eq!(e.ask("undo"), "? cannot undo");
    assert_eq!(
        e.ask(&format!("loadsgf {p} x")),
        "? syntax error: move number \"x\" is not a number"
    );
    assert_eq!(
        e.ask(&format!("loadsgf {p} 0")),
        "? syntax error: move number must be 1 or more"
    );
}

#[test]
fn a_bad_config_is_an_error_exit() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("gtp_pipe_bad.yaml");
    std::fs::write(&path, "game:\n  size: 40\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gtp", "--config"])
        .arg(&path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("board size 40"), "{err}");
}

/// `engine gtp ARGS` fed `input` at once, with `models` as `ENGINE_MODELS` when given:
/// (exit code, stdout, stderr).
fn gtp(args: &[&str], models: Option<&Path>, input: &[u8]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_engine"));
    cmd.arg("gtp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(m) = models {
        cmd.env("ENGINE_MODELS", m);
    }
    let mut child = cmd.spawn().unwrap();
    // The engine may exit before reading: a failed write is its answer, not ours.
    let _ = child.stdin.take().unwrap().write_all(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `engine gtp --config PATH` with the lines of `input`: (exit code, stdout, stderr).
fn gtp_with_config(path: &Path, input: &str) -> (Option<i32>, String, String) {
    gtp(
        &["--config", path.to_str().unwrap()],
        None,
        input.as_bytes(),
    )
}

#[test]
fn a_missing_config_or_another_game_s_config_is_an_error_exit() {
    let configs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    for (path, needle) in [
        (
            std::path::PathBuf::from("/nonexistent.yaml"),
            "config /nonexistent.yaml",
        ),
        (
            configs.join("xiangqi.yaml"),
            "this file is for xiangqi, not go",
        ),
        (
            configs.join("liuzhou.yaml"),
            "this file is for liuzhou, not go",
        ),
    ] {
        let (code, _, err) = gtp_with_config(&path, "name\n");
        assert_eq!(code, Some(2), "{}: {err}", path.display());
        assert!(err.contains(needle), "{}: {err}", path.display());
    }
    let (code, out, err) = gtp_with_config(&configs.join("go.yaml"), "name\n");
    assert_eq!((code, out.as_str()), (Some(0), "= engine\n\n"), "{err}");
}

#[test]
fn move_cap_reads_as_documented_and_refuses_zero() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (cap, ok) in [
        ("{moves: 50}", true),
        ("!moves 50", true),
        ("unlimited", true),
        ("{moves: 0}", false),
        ("!moves 0", false),
        ("{turns: 5}", false),
        ("never", false),
    ] {
        let path = dir.join("gtp_pipe_cap.yaml");
        std::fs::write(&path, format!("game:\n  size: 5\n  move_cap: {cap}\n")).unwrap();
        let (code, out, err) = gtp_with_config(&path, "name\n");
        if ok {
            assert_eq!(
                (code, out.as_str()),
                (Some(0), "= engine\n\n"),
                "{cap}: {err}"
            );
        } else {
            assert_eq!(code, Some(2), "{cap}: {err}");
            assert!(err.contains("move_cap"), "{cap}: {err}");
        }
    }
    std::fs::write(
        dir.join("gtp_pipe_cap.yaml"),
        "game:\n  move_cap: !moves 0\n",
    )
    .unwrap();
    let (_, _, err) = gtp_with_config(&dir.join("gtp_pipe_cap.yaml"), "");
    assert!(err.contains("moves must be at least 1"), "{err}");
}

#[test]
fn lz_analyze_streams_until_the_next_command_which_ends_it_with_a_blank_line() {
    let mut e = Engine::start(&["--size", "7", "--agent", "mcts"]);
    assert_eq!(e.ask("play b D4"), "=");
    e.send_raw("5 lz-analyze w 5\n");
    let mut line = String::new();
    e.stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "=5\n");
    for _ in 0..2 {
        line.clear();
        e.stdout.read_line(&mut line).unwrap();
        assert!(
            line.starts_with("info move ") && line.contains(" pv "),
            "{line}"
        );
    }
    // Any command ends the analysis: reports may still come, then the blank line, then the
    // command's own answer.
    e.send_raw("6 name\n");
    loop {
        line.clear();
        assert!(e.stdout.read_line(&mut line).unwrap() > 0, "engine closed");
        if line == "\n" {
            break;
        }
        assert!(line.starts_with("info move "), "{line}");
    }
    assert_eq!(e.response(), "=6 engine");
    // The game is as it was, and goes on.
    assert!(e.ask("genmove w").starts_with("= "));
    assert!(e.ask("list_commands").contains("lz-analyze"));
    // Input closing ends an analysis too (and the session).
    e.send_raw("lz-analyze 5\n");
    line.clear();
    e.stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "=\n");
    e.stdin = None;
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut e.stdout, &mut rest).unwrap();
    assert!(rest.ends_with("\n\n") || rest == "\n", "{rest:?}");
    assert!(e.child.wait().unwrap().success());
}

/// [`gtp`] that must exit successfully: its stdout and stderr.
fn piped(args: &[&str], models: Option<&Path>, script: &[u8]) -> (String, String) {
    let (code, stdout, stderr) = gtp(args, models, script);
    assert_eq!(code, Some(0), "{stderr}");
    (stdout, stderr)
}

/// `engine gtp` at 13 × 13, 19 × 19 and 9 × 9 in turn, a move at each, with `models` as
/// `ENGINE_MODELS` when given: every genmove answers a move; returns stderr.
fn every_board_size(models: Option<&Path>) -> String {
    let (stdout, stderr) = piped(
        &["--visits", "50"],
        models,
        b"boardsize 13\nclear_board\ngenmove b\nboardsize 19\nclear_board\ngenmove b\n\
          boardsize 9\nclear_board\ngenmove b\nquit\n",
    );
    let replies: Vec<&str> = stdout.split("\n\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(replies.len(), 10, "{stdout}");
    for k in [2, 5, 8] {
        assert!(replies[k].starts_with("= "), "genmove: {}", replies[k]);
    }
    stderr
}

#[test]
fn the_default_network_plays_every_board_size() {
    let stderr = every_board_size(None);
    assert!(!stderr.contains(" only"), "{stderr}");
    // The smallest boards too: a move or a pass, never an error.
    let (stdout, stderr) = piped(
        &["--visits", "20"],
        None,
        b"boardsize 2\nclear_board\ngenmove b\nboardsize 3\nclear_board\ngenmove b\n\
          genmove w\nboardsize 5\nclear_board\ngenmove w\nquit\n",
    );
    assert!(!stdout.contains('?'), "{stdout}");
    assert!(!stderr.contains(" only"), "{stderr}");
}

/// A default network made for one board (configs/go.yaml's fully connected heads) plays that
/// board; any other size gets the tree search with random playouts, and stderr says so.
#[test]
fn a_default_network_for_one_board_hands_other_sizes_to_the_tree_search() {
    let dir = std::env::temp_dir().join(format!("engine-gtp-one-board-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    go_network(&dir, false);
    let stderr = every_board_size(Some(&dir));
    for size in ["13x13", "19x19"] {
        assert!(
            stderr.contains(&format!("go at {size}: the network plays 9x9 only")),
            "{stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Go network with a per-point policy and a pooling value head (`trainer-bridge init` of such
/// a `network:`) plays every board size itself: no fallback and no warning, and its
/// `kata-analyze` gives an ownership value for every point of the board in play.
#[test]
fn a_network_of_any_size_plays_every_board_itself() {
    let dir = std::env::temp_dir().join(format!("engine-gtp-any-size-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let net = go_network(&dir, true);
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gtp", "--visits", "20", "--model"])
        .arg(net)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut say = |text: &str| {
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut line = String::new();
    let mut read_line = || {
        line.clear();
        stdout.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    };
    say("boardsize 13\nclear_board\ngenmove b\nkata-analyze W 1 ownership true\n");
    let mut lines = Vec::new();
    // Up to the first analysis line; then a blank line stops the analysis.
    let info = loop {
        let l = read_line();
        assert!(!l.starts_with('?'), "{lines:?} {l}");
        if l.starts_with("info ") {
            break l;
        }
        lines.push(l);
    };
    assert!(
        lines.iter().any(|l| l.starts_with("= ") && l.len() > 2),
        "genmove: {lines:?}"
    );
    let ownership = info.split(" ownership ").nth(1).expect("ownership");
    assert_eq!(ownership.split_whitespace().count(), 13 * 13, "{info}");
    say("\nboardsize 19\nclear_board\ngenmove b\nboardsize 7\nclear_board\ngenmove b\nquit\n");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let moves: Vec<&str> = rest
        .lines()
        .filter(|l| l.starts_with("= ") && l.len() > 2)
        .collect();
    assert_eq!(moves.len(), 2, "genmove at 19 and at 7: {rest}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("plays 9x9 only"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
