//! `engine serve` chooses the default Go network as `engine gtp` and `engine play` do: it plays
//! the configured board where it fits (a network of any size fits every board), and where it
//! does not, Go falls back to the tree search with one warning on stderr.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod go_networks;
use go_networks::go_network;

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("engine-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Serves from the checkout with Go at `size` (and `models`, when given, as `ENGINE_MODELS`);
/// returns Go's entry of `/api/games` and what the server wrote on stderr.
fn serve_go(dir: &Path, size: usize, models: Option<&Path>) -> (serde_json::Value, String) {
    std::fs::write(
        dir.join("go.yaml"),
        format!("game:\n  name: go\n  size: {size}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("serve.yaml"),
        format!("games:\n  go: {}\n", dir.join("go.yaml").display()),
    )
    .unwrap();
    let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
    let mut cmd = Command::new(ENGINE);
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--config"])
        .arg(dir.join("serve.yaml"))
        .current_dir(ROOT)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(stderr);
    if let Some(m) = models {
        cmd.env("ENGINE_MODELS", m);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: Option<u16> = line
        .trim()
        .trim_start_matches("listening on http://127.0.0.1:")
        .trim_end_matches('/')
        .parse()
        .ok();
    let games = port.map(|port| {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "GET /api/games HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        reply.split("\r\n\r\n").nth(1).unwrap_or("").to_string()
    });
    let _ = child.kill();
    let _ = child.wait();
    let err = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    let games = games.unwrap_or_else(|| panic!("no port in {line:?}: {err}"));
    let games: serde_json::Value = serde_json::from_str(&games).unwrap();
    let go = games["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "go")
        .unwrap_or_else(|| panic!("{games}"))
        .clone();
    (go, err)
}

#[test]
fn the_shipped_go_network_plays_every_board() {
    let dir = scratch("shipped");
    for size in [9, 13, 19] {
        let (go, err) = serve_go(&dir, size, None);
        assert_eq!(go["default_agent"], "net", "{size}: {go} {err}");
        assert!(!err.contains(" only, not this"), "{size}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A network with fully connected heads (configs/go.yaml's `network:`) plays the one board it
/// was made for; on another, Go falls back with one warning.
#[test]
fn a_default_go_network_for_one_board_falls_back_elsewhere_with_one_warning() {
    let dir = scratch("one-board");
    let models = dir.join("models");
    go_network(&models, false);
    let (go, err) = serve_go(&dir, 9, Some(&models));
    assert_eq!(go["default_agent"], "net", "{go} {err}");
    assert!(!err.contains("plays 9x9 only"), "{err}");
    let (go, err) = serve_go(&dir, 13, Some(&models));
    assert_eq!(go["default_agent"], "mcts", "{go} {err}");
    let warning = "plays 9x9 only, not this 13x13 board";
    assert_eq!(err.matches(warning).count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_default_go_network_of_any_size_plays_every_board() {
    let dir = scratch("any-size");
    let models = dir.join("models");
    go_network(&models, true);
    for size in [13, 19] {
        let (go, err) = serve_go(&dir, size, Some(&models));
        assert_eq!(go["default_agent"], "net", "{size}: {go} {err}");
        assert!(!err.contains(" only, not this"), "{size}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
