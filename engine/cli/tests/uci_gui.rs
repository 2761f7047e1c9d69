//! `engine uci` driven the way Xiangqi GUIs (VinXiangQi, BHGUI and the like) drive an engine,
//! through the binary's pipes: the UCCI and UCI handshakes, options set before a game, a
//! `position fen … moves …` with a long game behind it, clocks given with every `go`, `stop`
//! in the middle of a search, `banmoves`, pondering, and a long analysis with four lines.
//! Every answer must come within the time the GUI gave.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use games::xiangqi::fen::format_move_with_base;
use games::xiangqi::{Xiangqi, START_FEN};
use games::Game;
use players::alphabeta::xiangqi::AlphaBeta;
use players::alphabeta::SearchLimits;
use players::timing::clock_move_time;

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

/// What a pipe may add to the time a move is given: the engine's start-up of a search, the
/// reading thread, a busy machine.
const SLACK: Duration = Duration::from_millis(700);

/// The GUI's end of the pipes.
struct Gui {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Gui {
    fn start(args: &[&str]) -> Gui {
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
        Gui {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`, which must come within
    /// `within`.
    fn until_within(&mut self, prefix: &str, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let l = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no '{prefix}' within {within:?} after {got:#?}"));
            let done = l.starts_with(prefix);
            got.push(l);
            if done {
                return got;
            }
        }
    }

    fn until(&mut self, prefix: &str) -> Vec<String> {
        self.until_within(prefix, Duration::from_secs(60))
    }

    /// Whatever arrived so far.
    fn drain(&mut self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    fn quit(mut self, farewell: Option<&str>) {
        self.send("quit");
        if let Some(bye) = farewell {
            assert_eq!(self.until(bye).last().unwrap(), bye);
        }
        assert!(self.child.wait().unwrap().success());
    }
}

/// The value after `key` in an `info` line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.find(|&w| w == key)?;
    words.next()
}

/// The first move of an `info` line's `pv`.
fn pv_head(line: &str) -> &str {
    line.split(" pv ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
}

/// The move of a `bestmove` line.
fn best(lines: &[String]) -> String {
    lines.last().unwrap().split(' ').nth(1).unwrap().to_string()
}

/// A game of `plies` moves, as a GUI's move list would carry it: alpha-beta at depth 2 against
/// itself from the start. The moves and the position they reach.
fn long_game(plies: usize) -> (Vec<String>, Xiangqi) {
    let mut game = Xiangqi::start();
    let mut ab = AlphaBeta::new(4);
    let mut moves = Vec::new();
    while moves.len() < plies && game.outcome().is_none() {
        let m = ab
            .search(&game, SearchLimits::depth(2), |_| {})
            .best
            .unwrap();
        moves.push(format_move_with_base(m, 0));
        game.play(m).unwrap();
    }
    assert!(
        game.outcome().is_none(),
        "the game goes on after {plies} plies"
    );
    (moves, game)
}

fn legal_in(game: &Xiangqi, text: &str) -> bool {
    game.parse_action(text).is_ok_and(|m| game.is_legal(m))
}

#[test]
fn a_ucci_gui_session() {
    let mut gui = Gui::start(&["--agent", "alphabeta"]);
    gui.send("ucci");
    let hello = gui.until_within("ucciok", Duration::from_secs(10));
    for option in [
        "option multipv type spin min 1 max 128 default 1",
        "option ponder type check default false",
        "option clearhash type button",
    ] {
        assert!(hello.iter().any(|l| l == option), "{option}: {hello:#?}");
    }
    gui.send("setoption usemillisec true");
    gui.send("setoption hashsize 32");
    gui.send("setoption ponder off");
    gui.send("setoption bookfiles book.dat");
    gui.send("isready");
    let ready = gui.until("readyok");
    // A UCCI option this engine lacks is named and the session goes on.
    assert_eq!(
        ready[0], "info string error: setoption: unknown option 'bookfiles'",
        "{ready:#?}"
    );
    gui.send("uccinewgame");

    // Seventy plies in, with the clock in milliseconds; one move banned.
    let (moves, game) = long_game(70);
    gui.send(&format!(
        "position fen {START_FEN} moves {}",
        moves.join(" ")
    ));
    let mut banned_game = game.clone();
    let banned = {
        let mut legal = Vec::new();
        banned_game.legal_actions(&mut legal);
        format_move_with_base(legal[0], 0)
    };
    gui.send(&format!("banmoves {banned}"));
    let sent = Instant::now();
    gui.send("go time 8000 increment 200 opptime 8000 oppincrement 200");
    let allowed = clock_move_time(
        Duration::from_millis(8000),
        Duration::from_millis(200),
        None,
    );
    let lines = gui.until_within("bestmove", allowed + SLACK);
    let answer = best(&lines);
    assert!(legal_in(&game, &answer), "{answer} in {}", game.to_text());
    assert_ne!(answer, banned, "a banned move is never the answer");
    assert!(sent.elapsed() < allowed + SLACK, "{:?}", sent.elapsed());
    banned_game
        .play(game.parse_action(&answer).unwrap())
        .unwrap();

    // Two lines at once, numbered because there are two (UCCI leaves a lone line bare).
    gui.send("setoption multipv 2");
    gui.send(&format!("position fen {}", banned_game.to_text()));
    gui.send("go depth 3");
    let lines = gui.until("bestmove");
    let numbered: Vec<&String> = lines.iter().filter(|l| l.contains(" multipv ")).collect();
    assert_eq!(numbered.len(), 6, "{lines:#?}");

    // `stop` in the middle of a long search answers at once.
    gui.send("go time 600000 increment 0");
    std::thread::sleep(Duration::from_millis(300));
    let stopped = Instant::now();
    gui.send("stop");
    gui.until_within("bestmove", SLACK);
    assert!(stopped.elapsed() < SLACK);
    gui.quit(Some("bye"));
}

#[test]
fn a_uci_gui_session() {
    let mut gui = Gui::start(&["--agent", "alphabeta"]);
    gui.send("uci");
    let hello = gui.until_within("uciok", Duration::from_secs(10));
    for option in [
        "option name MultiPV type spin default 1 min 1 max 128",
        "option name UCI_ShowWDL type check default false",
        "option name Ponder type check default false",
        "option name Clear Hash type button",
    ] {
        assert!(hello.iter().any(|l| l == option), "{option}: {hello:#?}");
    }
    gui.send("setoption name Hash value 32");
    gui.send("setoption name Ponder value true");
    gui.send("setoption name UCI_ShowWDL value true");
    gui.send("setoption name MultiPV value 3");
    gui.send("setoption name Skill Curve value 7");
    gui.send("isready");
    let ready = gui.until("readyok");
    assert_eq!(
        ready,
        [
            "info string error: setoption: unknown option 'Skill Curve'",
            "readyok"
        ]
    );
    gui.send("ucinewgame");

    // `go depth 8` with three lines: at each depth three distinct moves, each with its score,
    // its win/draw/loss and its line.
    gui.send("position startpos");
    gui.send("go depth 8");
    let lines = gui.until("bestmove");
    for depth in 1..=8 {
        let at: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with(&format!("info depth {depth} ")))
            .collect();
        let ks: Vec<&str> = at.iter().filter_map(|l| field(l, "multipv")).collect();
        assert_eq!(ks, ["1", "2", "3"], "depth {depth}: {at:#?}");
        let heads: std::collections::HashSet<&str> = at.iter().map(|l| pv_head(l)).collect();
        assert_eq!(heads.len(), 3, "depth {depth}: {at:#?}");
        for l in at {
            assert!(field(l, "cp").is_some() && field(l, "wdl").is_some(), "{l}");
        }
    }
    // The answer is line 1's move, with the reply it expects to ponder on.
    let last_first = lines
        .iter()
        .rev()
        .find(|l| field(l, "multipv") == Some("1"))
        .unwrap();
    let answer = lines.last().unwrap();
    assert!(
        answer.starts_with(&format!("bestmove {} ponder ", pv_head(last_first))),
        "{answer} after {last_first}"
    );

    // A game sixty plies on, the clocks running: the answer comes within the move's share.
    gui.send("setoption name MultiPV value 1");
    let (moves, game) = long_game(60);
    gui.send(&format!("position startpos moves {}", moves.join(" ")));
    let sent = Instant::now();
    gui.send("go wtime 12000 btime 12000 winc 100 binc 100");
    let allowed = clock_move_time(
        Duration::from_millis(12000),
        Duration::from_millis(100),
        None,
    );
    let lines = gui.until_within("bestmove", allowed + SLACK);
    assert!(sent.elapsed() < allowed + SLACK, "{:?}", sent.elapsed());
    let words: Vec<&str> = lines.last().unwrap().split(' ').collect();
    assert!(legal_in(&game, words[1]), "{words:?}");

    // Pondering on the reply it named: nothing until ponderhit, then an answer in time.
    if let [_, mine, "ponder", reply] = words[..] {
        gui.send(&format!(
            "position startpos moves {} {mine} {reply}",
            moves.join(" ")
        ));
        gui.send("go ponder wtime 11000 btime 12000 winc 100 binc 100");
        std::thread::sleep(Duration::from_millis(400));
        gui.send("isready");
        let meanwhile = gui.until("readyok");
        assert!(!meanwhile.iter().any(|l| l.starts_with("bestmove")));
        let hit = Instant::now();
        gui.send("ponderhit");
        let allowed = clock_move_time(
            Duration::from_millis(11000),
            Duration::from_millis(100),
            None,
        );
        let lines = gui.until_within("bestmove", allowed + SLACK);
        assert!(hit.elapsed() < allowed + SLACK);
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("bestmove")).count(),
            1
        );
    } else {
        panic!("no reply named: {words:?}");
    }

    // `stop` during a search with a long clock answers at once.
    gui.send("position startpos moves h2e2");
    gui.send("go wtime 600000 btime 600000");
    std::thread::sleep(Duration::from_millis(300));
    let stopped = Instant::now();
    gui.send("stop");
    gui.until_within("bestmove", SLACK);
    assert!(stopped.elapsed() < SLACK);
    assert!(gui.drain().is_empty());

    // Clear Hash between games, then a bad value: named, and the session goes on.
    gui.send("setoption name Clear Hash");
    gui.send("setoption name MultiPV value 500");
    let refused = gui.until("info string error");
    assert_eq!(
        refused.last().unwrap(),
        "info string error: setoption: MultiPV '500' is not 1..128"
    );
    gui.quit(None);
}

#[test]
fn a_long_analysis_with_the_shipped_network() {
    // The default player: the shipped network's tree search.
    let mut gui = Gui::start(&[]);
    gui.send("uci");
    gui.until_within("uciok", Duration::from_secs(30));
    gui.send("setoption name MultiPV value 4");
    gui.send("setoption name UCI_ShowWDL value true");
    gui.send("isready");
    gui.until("readyok");
    let (moves, _) = long_game(20);
    gui.send(&format!("position startpos moves {}", moves.join(" ")));
    gui.send("go infinite");
    std::thread::sleep(Duration::from_millis(3500));
    gui.send("isready");
    let lines = gui.until("readyok");
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{lines:#?}"
    );
    // Reports of four lines (each report starts at multipv 1), each line a different move
    // with its score, wdl and line.
    let mut reports: Vec<Vec<&String>> = Vec::new();
    for l in lines.iter().filter(|l| l.starts_with("info depth")) {
        match (field(l, "multipv"), reports.last_mut()) {
            (Some("1"), _) | (_, None) => reports.push(vec![l]),
            (_, Some(report)) => report.push(l),
        }
    }
    assert!(reports.len() >= 2, "two reports at least: {lines:#?}");
    for report in &reports {
        let ks: Vec<&str> = report.iter().filter_map(|l| field(l, "multipv")).collect();
        assert_eq!(ks, ["1", "2", "3", "4"], "{report:#?}");
        let heads: std::collections::HashSet<&str> = report.iter().map(|l| pv_head(l)).collect();
        assert_eq!(heads.len(), 4, "{report:#?}");
        assert!(report
            .iter()
            .all(|l| field(l, "wdl").is_some() && field(l, "score").is_some()));
    }
    let stopped = Instant::now();
    gui.send("stop");
    let end = gui.until_within("bestmove", Duration::from_secs(2));
    assert!(stopped.elapsed() < Duration::from_secs(2));
    let first = end
        .iter()
        .rev()
        .find(|l| field(l, "multipv") == Some("1"))
        .unwrap();
    assert_eq!(best(&end), pv_head(first), "{end:#?}");
    gui.quit(None);
}
