//! `engine perft` and `engine uci` for Xiangqi, driven as a user or GUI would: through the
//! binary and its pipes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use games::xiangqi::Xiangqi;
use games::{Agent, Game, Outcome, Player};
use players::uci_client::{UciEngineAgent, UciEngineConfig};

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

fn perft_cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(ENGINE)
        .arg("perft")
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn perft_prints_the_total_last() {
    let (ok, out, _) = perft_cli(&["--game", "xiangqi", "--depth", "3"]);
    assert!(ok);
    assert_eq!(out.trim(), "79666");
}

#[test]
fn perft_divide_lists_each_move_then_the_total() {
    let fen = "3ak4/9/3N5/9/4R4/9/9/9/9/4K4 b - - 0 1";
    let (ok, out, _) = perft_cli(&[
        "--game", "xiangqi", "--fen", fen, "--depth", "3", "--divide",
    ]);
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&"31"));
    let moves = &lines[..lines.len() - 1];
    assert_eq!(
        moves.len(),
        1,
        "one legal move out of the double check: {out}"
    );
    let (m, n) = moves[0].split_once(' ').unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(n, "31");
}

#[test]
fn perft_rejects_a_bad_fen_with_a_message_and_a_failure_status() {
    let (ok, out, err) = perft_cli(&[
        "--game",
        "xiangqi",
        "--fen",
        "rnbakabnr/9 w",
        "--depth",
        "1",
    ]);
    assert!(!ok);
    assert!(out.is_empty());
    assert!(err.contains("FEN") && err.contains("ranks"), "{err}");
    let (ok, _, err) = perft_cli(&["--game", "chess", "--depth", "1"]);
    assert!(!ok);
    assert!(err.contains("chess"), "{err}");
}

/// A UCI session through a pipe, line by line with timeouts.
struct Uci {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Uci {
    fn start(args: &[&str]) -> Uci {
        let mut child = Command::new(ENGINE)
            .arg("uci")
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                if tx.send(l.unwrap()).is_err() {
                    break;
                }
            }
        });
        Uci {
            child,
            stdin,
            lines,
        }
    }
    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }
    /// Lines up to and including the first that starts with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let mut got = Vec::new();
        loop {
            let l = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no '{prefix}' after {got:?}"));
            let done = l.starts_with(prefix);
            got.push(l);
            if done {
                return got;
            }
        }
    }
}

#[test]
fn uci_session_through_a_pipe() {
    let mut uci = Uci::start(&["--agent", "alphabeta"]);
    uci.send("uci");
    let hello = uci.until("uciok");
    assert!(hello.iter().any(|l| l.starts_with("id name")));
    assert!(hello.iter().any(|l| l.starts_with("option name Agent")));
    uci.send("isready");
    uci.until("readyok");
    uci.send("ucinewgame");
    uci.send("position startpos moves h2e2 h9g7");
    uci.send("go depth 4");
    let lines = uci.until("bestmove");
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 4 ")),
        "{lines:?}"
    );
    let best = lines
        .last()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    let mut g = Xiangqi::start();
    for t in ["h2e2", "h9g7"] {
        g.play(g.parse_action(t).unwrap()).unwrap();
    }
    assert!(g.is_legal(g.parse_action(&best).unwrap()), "{best}");

    // Mate in one is found and reported as a mate.
    uci.send("position fen 3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 0 1");
    uci.send("go depth 3");
    let lines = uci.until("bestmove");
    assert_eq!(lines.last().unwrap(), "bestmove a7a9");
    assert!(
        lines.iter().any(|l| l.contains("score mate 1")),
        "{lines:?}"
    );

    // A finished game has no move.
    uci.send("position fen 3k5/4R4/3R5/9/9/9/9/9/9/4K4 b - - 0 1");
    uci.send("go depth 2");
    assert_eq!(uci.until("bestmove").last().unwrap(), "bestmove (none)");

    // Bad input is reported and the session goes on.
    uci.send("position startpos moves h2h8");
    let e = uci.until("info string error");
    assert!(e.last().unwrap().contains("h2h8"), "{e:?}");
    uci.send("setoption name Hash value lots");
    uci.until("info string error");
    uci.send("isready");
    uci.until("readyok");

    // go infinite runs until stop.
    uci.send("position startpos");
    uci.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    uci.send("isready");
    let mut lines = uci.until("readyok");
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{lines:?}"
    );
    uci.send("stop");
    lines.extend(uci.until("bestmove"));
    assert!(
        lines.iter().any(|l| l.starts_with("info depth")),
        "{lines:?}"
    );

    // Fairy-Stockfish's rank numbering on request.
    uci.send("setoption name UCI_RankBase value 1");
    uci.send("position startpos moves h3e3");
    uci.send("go depth 1");
    let best = uci.until("bestmove").last().unwrap().clone();
    let m = best.split_whitespace().nth(1).unwrap();
    let mut g = Xiangqi::start();
    g.play(g.parse_action("h2e2").unwrap()).unwrap();
    let iccs = games::xiangqi::fen::parse_move_with_base(m, 1).unwrap();
    assert!(g.is_legal(iccs), "{best} in ranks 1-10");

    uci.send("quit");
    let status = uci.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn ucci_session_through_a_pipe() {
    let mut ucci = Uci::start(&["--agent", "alphabeta"]);
    ucci.send("ucci");
    let hello = ucci.until("ucciok");
    // UCCI lists options without `name`, and offers millisecond clocks.
    assert!(
        hello
            .iter()
            .any(|l| l.starts_with("option hashsize type spin")),
        "{hello:?}"
    );
    assert!(hello
        .iter()
        .any(|l| l == "option usemillisec type check default false"));
    ucci.send("setoption hashsize 16");
    ucci.send("setoption usemillisec true");
    ucci.send("isready");
    ucci.until("readyok");

    // Red mates in two, first with b2e2+; banned, it finds the other mate, a1e1+, and
    // reports a mate in three plies as UCCI engines do (10000 − 3).
    let mate_in_two = "4k4/9/9/9/9/9/9/1R7/R8/3K5 w - - 0 1";
    ucci.send(&format!("position fen {mate_in_two}"));
    ucci.send("go depth 5");
    assert_eq!(ucci.until("bestmove").last().unwrap(), "bestmove b2e2");
    ucci.send(&format!("position fen {mate_in_two}"));
    ucci.send("banmoves b2e2");
    ucci.send("go time 5000 increment 0 opptime 5000 oppincrement 0");
    let lines = ucci.until("bestmove");
    assert_eq!(lines.last().unwrap(), "bestmove a1e1");
    assert!(
        lines.iter().any(|l| l.contains(" score 9997 ")),
        "{lines:?}"
    );
    // A new position lifts the ban.
    ucci.send(&format!("position fen {mate_in_two}"));
    ucci.send("go depth 5");
    assert_eq!(ucci.until("bestmove").last().unwrap(), "bestmove b2e2");

    // The tree search keeps to the bans too; with every move banned there is none.
    ucci.send("setoption agent mcts");
    ucci.send(&format!("position fen {mate_in_two}"));
    ucci.send("banmoves b2e2 a1e1");
    ucci.send("go nodes 2000");
    let best = ucci.until("bestmove").last().unwrap().clone();
    assert!(
        !["bestmove b2e2", "bestmove a1e1"].contains(&best.as_str()),
        "{best}"
    );
    let only_move = "3k5/9/9/9/9/9/9/9/4A4/4K4 b - - 0 1";
    ucci.send(&format!("position fen {only_move}"));
    let mut legal = Vec::new();
    Xiangqi::from_fen(only_move)
        .unwrap()
        .legal_actions(&mut legal);
    let all: Vec<String> = legal.iter().map(|m| m.to_string()).collect();
    ucci.send(&format!("banmoves {}", all.join(" ")));
    ucci.send("go nodes 100");
    assert_eq!(ucci.until("nobestmove").last().unwrap(), "nobestmove");

    // A ban that is not a legal move is refused and the session goes on.
    ucci.send("banmoves a0a9");
    assert!(ucci
        .until("info string error")
        .last()
        .unwrap()
        .contains("a0a9"));
    ucci.send("quit");
    assert_eq!(ucci.until("bye").last().unwrap(), "bye");
    assert!(ucci.child.wait().unwrap().success());
}

#[test]
fn uci_plays_with_the_engine_tree_search() {
    let mut uci = Uci::start(&["--agent", "alphabeta"]);
    // The network agent waits for its model (GUIs send options in any order); `go` before
    // it still answers. `uniform` stands in for a model.
    uci.send("setoption name Agent value net");
    let e = uci.until("info string");
    assert!(e.last().unwrap().contains("Model"), "{e:?}");
    uci.send("go nodes 10");
    assert_eq!(uci.until("bestmove").last().unwrap(), "bestmove (none)");
    uci.send("setoption name Model value /nonexistent.onnx");
    let e = uci.until("info string error");
    assert!(e.last().unwrap().contains("/nonexistent.onnx"), "{e:?}");
    uci.send("setoption name Model value uniform");
    uci.send("position startpos moves h2e2");
    uci.send("go nodes 50");
    let lines = uci.until("bestmove");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info ") && l.contains(" nodes 50 ")),
        "{lines:?}"
    );
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    let mut g = Xiangqi::start();
    g.play(g.parse_action("h2e2").unwrap()).unwrap();
    assert!(g.is_legal(g.parse_action(best).unwrap()), "{best}");

    // Pure MCTS takes a win at once: terminals are scored exactly. (Here most moves win at
    // once, by mate or by leaving Black no move, which loses in Xiangqi; a few do not.)
    uci.send("setoption name Agent value mcts");
    let fen = "3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 0 1";
    uci.send(&format!("position fen {fen}"));
    uci.send("go nodes 400");
    let lines = uci.until("bestmove");
    let line = lines.last().unwrap().clone();
    let best = line.split_whitespace().nth(1).unwrap();
    let mut g = Xiangqi::from_fen(fen).unwrap();
    g.play(g.parse_action(best).unwrap()).unwrap();
    assert_eq!(g.outcome(), Some(Outcome::Win(Player::First)), "{line}");
    assert!(
        lines.iter().any(|l| l.contains("score mate 1 ")),
        "{lines:?}"
    );
    // Open-ended search until stop, reporting as it goes: an `info` line every second, each
    // counting more nodes than the last.
    uci.send("position startpos");
    uci.send("go infinite");
    std::thread::sleep(Duration::from_millis(2300));
    uci.send("isready");
    let lines = uci.until("readyok");
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{lines:?}"
    );
    let nodes: Vec<u64> = lines
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let at = w.iter().position(|&x| x == "nodes").unwrap();
            w[at + 1].parse().unwrap()
        })
        .collect();
    assert!(nodes.len() >= 2, "{lines:?}");
    assert!(nodes.windows(2).all(|p| p[0] < p[1]), "{nodes:?}");
    uci.send("stop");
    uci.until("bestmove");
    uci.send("setoption name Visits value 0");
    uci.until("info string error");
    uci.send("setoption name Guard value 95");
    let refused = uci.until("info string error");
    assert!(refused.last().unwrap().contains("0..90"), "{refused:?}");
    // `stop` ends a long search early; a new game drops the tree.
    uci.send("go nodes 100000000");
    std::thread::sleep(Duration::from_millis(200));
    uci.send("stop");
    uci.until("bestmove");
    uci.send("ucinewgame");
    uci.send("setoption name Threads value 2");
    uci.send("uci");
    let hello = uci.until("uciok");
    assert!(
        hello
            .iter()
            .any(|l| l.starts_with("option name Threads type spin default 2 ")),
        "{hello:?}"
    );
    assert!(
        hello
            .iter()
            .any(|l| l == "option name Guard type spin default 80 min 0 max 90"),
        "{hello:?}"
    );
    uci.send("position startpos");
    uci.send("go nodes 100");
    let lines = uci.until("bestmove");
    assert!(lines.iter().any(|l| l.contains(" nodes 100 ")), "{lines:?}");
    uci.send("quit");
    assert!(uci.child.wait().unwrap().success());
}

#[test]
fn uci_plays_the_shipped_network_with_alpha_beta_checking_it_by_default() {
    let mut uci = Uci::start(&[]);
    uci.send("uci");
    let hello = uci.until("uciok");
    for option in [
        "option name Agent type combo default net var alphabeta var mcts var net",
        "option name Guard type spin default 80 min 0 max 90",
        "option name GuardMargin type spin default 30 min 0 max 10000",
    ] {
        assert!(hello.iter().any(|l| l == option), "{option}: {hello:?}");
    }
    assert!(
        hello
            .iter()
            .any(|l| l.starts_with("option name Model type string default ")
                && l.ends_with("best.onnx")),
        "{hello:?}"
    );
    // A timed move: the tree search, then alpha-beta's check; a legal move either way.
    uci.send("position startpos moves h2e2");
    uci.send("go movetime 500");
    let lines = uci.until("bestmove");
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    let mut game = Xiangqi::start();
    game.play(game.parse_action("h2e2").unwrap()).unwrap();
    assert!(game.parse_action(best).is_ok(), "{lines:?}");
    uci.send("quit");
    assert!(uci.child.wait().unwrap().success());
}

#[test]
fn our_uci_engine_as_an_external_agent() {
    // The external-engine agent drives `engine uci` itself: both ends of the protocol meet.
    let config = UciEngineConfig {
        command: vec![
            ENGINE.to_string(),
            "uci".into(),
            "--hash".into(),
            "8".into(),
        ],
        options: vec![("Hash".into(), "8".into())],
        go: "go depth 2".into(),
        rank_base: Some(0),
        timeout: Duration::from_secs(30),
    };
    let mut agent = UciEngineAgent::spawn(config).unwrap();
    assert!(agent.name().contains("xiangqi-engine"));
    let mut g = Xiangqi::start();
    agent.new_game(&g).unwrap();
    for _ in 0..6 {
        let m = agent.select_action(&g).unwrap();
        agent.observe(&g, m).unwrap();
        g.play(m).unwrap();
    }
    assert_eq!(
        g.to_text().split_whitespace().last(),
        Some("4"),
        "six plies played"
    );
}
