//! The faces a person uses, run as the binary: `engine play` typed into, and `engine serve`
//! reached over a real loopback socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");
const LIUZHOU_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/liuzhou.yaml");

/// Runs `engine play` with `args` (and the Liuzhou config unless they name one), typing
/// `input`; returns (exit code, stdout + stderr).
fn play(args: &[&str], input: &str) -> (i32, String) {
    let mut cmd = Command::new(ENGINE);
    cmd.arg("play");
    if !args.contains(&"--config") {
        cmd.args(["--config", LIUZHOU_CONFIG]);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn play_takes_actions_commands_and_bad_input() {
    let (code, out) = play(
        &["--human", "black", "--agent", "random", "--seed", "3"],
        "c3\nzz\nxa1\nlegal\nundo\nundo\nhelp\nquit\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("you play Black against random"), "{out}");
    assert!(out.contains("White (engine) plays"), "{out}");
    assert!(out.contains("cannot read action \"zz\""), "{out}");
    assert!(out.contains("illegal action xa1"), "{out}");
    assert!(out.contains("took back 2 action(s)"), "{out}");
    assert!(out.contains("nothing to undo"), "{out}");
    assert!(out.contains("legal   list the legal actions"), "{out}");
    assert!(out.contains("stopped; record so far:"), "{out}");
}

#[test]
fn play_gives_a_hint_with_the_search_behind_it_and_plays_nothing() {
    let (code, out) = play(
        &["--human", "black", "--agent", "mcts", "--visits", "50"],
        "hint\nquit\n",
    );
    assert_eq!(code, 0, "{out}");
    let hint = out
        .lines()
        .find_map(|l| l.split("hint: ").nth(1))
        .unwrap_or_else(|| panic!("no hint in {out}"));
    assert!(hint.contains("(50 visits, Black "), "{hint}");
    // Nothing was played.
    assert!(out.contains("stopped; record so far: \n"), "{out}");
}

#[test]
fn play_resign_ends_the_game_for_the_engine() {
    let (code, out) = play(
        &["--human", "white", "--agent", "random", "--seed", "3"],
        "a1\nresign\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("result: Black wins (1-0): White resigned"),
        "{out}"
    );
}

#[test]
fn play_watches_a_whole_game_and_reports_the_search() {
    let (code, out) = play(
        &["--human", "none", "--agent", "mcts", "--visits", "30"],
        "",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("30 visits"), "{out}");
    let result = out.lines().find(|l| l.starts_with("result: ")).expect(&out);
    // `result: White wins (0-1): White has no stones left`: the result, then why.
    let (tag, reason) = result.split_once("): ").expect(result);
    assert!(
        ["(1-0", "(0-1", "(1/2-1/2"]
            .iter()
            .any(|r| tag.ends_with(r)),
        "{result}"
    );
    assert!(reason.len() > 3, "{result}");
}

#[test]
fn play_go_in_the_terminal() {
    let go = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/go.yaml");
    let (code, out) = play(
        &[
            "--game", "go", "--config", go, "--human", "white", "--agent", "random",
        ],
        "E5\nZ99\npass\npass\npass\nquit\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("you play White"), "{out}");
    assert!(out.contains("Black (engine) plays"), "{out}");
    assert!(out.contains("took") || out.contains("White>"), "{out}");
}

#[test]
fn play_xiangqi_against_its_network_or_its_alpha_beta() {
    let xq = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/xiangqi.yaml");
    for (agent, name) in [(None, "net"), (Some("alphabeta"), "alphabeta")] {
        let mut args = vec![
            "--game", "xiangqi", "--config", xq, "--human", "red", "--visits", "20",
        ];
        args.extend(agent.map(|a| ["--agent", a]).iter().flatten());
        let (code, out) = play(&args, "h2e2\nh2e2\nquit\n");
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains(&format!("you play Red against {name}")),
            "{out}"
        );
        assert!(out.contains("Black (engine) plays"), "{out}");
        assert!(out.contains("illegal action h2e2"), "{out}");
    }
}

#[test]
fn play_refuses_bad_flags_and_closed_input() {
    let (code, out) = play(&["--human", "red"], "");
    assert_eq!(code, 2);
    assert!(out.contains("--human") && out.contains("\"red\""), "{out}");
    let (code, out) = play(&["--agent", "deep-blue"], "");
    assert_eq!(code, 2);
    assert!(out.contains("unknown agent"), "{out}");
    let (code, out) = play(&["--human", "black", "--agent", "random"], "");
    assert_eq!(code, 2);
    assert!(out.contains("input closed"), "{out}");
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 request on a fresh connection; returns (status, body).
fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    let status = reply[9..12].parse().unwrap();
    let body = reply.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

/// Starts `engine serve` on a free loopback port in `dir`; returns the server and its port.
fn serve_in(dir: &str) -> (Server, u16) {
    let mut child = Command::new(ENGINE)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .current_dir(dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let server = Server(child);
    let port: u16 = line
        .trim()
        .trim_start_matches("listening on http://127.0.0.1:")
        .trim_end_matches('/')
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {line:?}"));
    (server, port)
}

#[test]
fn serve_from_the_repository_plays_liuzhou_with_the_shipped_model_by_default() {
    let (server, port) = serve_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let (status, games) = http(port, "GET", "/api/games", "");
    assert_eq!(status, 200, "{games}");
    let games: serde_json::Value = serde_json::from_str(&games).unwrap();
    let liuzhou = games["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "liuzhou")
        .unwrap_or_else(|| panic!("{games}"));
    assert_eq!(liuzhou["default_agent"], "net", "{liuzhou}");
    let (status, body) = http(
        port,
        "POST",
        "/api/sessions",
        r#"{"game":"liuzhou","side":"white","strength":50}"#,
    );
    assert_eq!(status, 201, "{body}");
    let session: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(session["agent"], "net", "{body}");
    let id = session["id"].as_str().unwrap();
    let (status, body) = http(port, "POST", &format!("/api/sessions/{id}/engine"), "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"visits\":"), "{body}");
    drop(server);
}

#[test]
fn serve_answers_on_loopback() {
    let (server, port) = serve_in(env!("CARGO_MANIFEST_DIR"));
    let (status, page) = http(port, "GET", "/", "");
    assert_eq!(status, 200);
    assert!(page.contains("<svg id=\"board\""));
    let (status, body) = http(
        port,
        "POST",
        "/api/sessions",
        r#"{"game":"liuzhou","side":"white","agent":"mcts","strength":20}"#,
    );
    assert_eq!(status, 201, "{body}");
    let id_at = body.find("\"id\":\"").unwrap() + 6;
    let id = &body[id_at..id_at + 32];
    let (status, body) = http(port, "POST", &format!("/api/sessions/{id}/engine"), "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"visits\":"), "{body}");
    let (status, body) = http(port, "POST", &format!("/api/sessions/{id}/play"), "{oops");
    assert_eq!(status, 400, "{body}");
    drop(server);
}

#[test]
fn play_from_the_repository_meets_the_shipped_model_unless_told_otherwise() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    for (args, against) in [
        (&["--human", "black"][..], "against net (50 visits)"),
        (
            &["--human", "black", "--agent", "mcts"][..],
            "against mcts (50 visits)",
        ),
    ] {
        let out = Command::new(ENGINE)
            .args(["play", "--visits", "50"])
            .args(args)
            .current_dir(root)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(b"quit\n")?;
                child.wait_with_output()
            })
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(against),
            "{args:?}: {text}"
        );
    }
}
