//! The options a GUI sets (`MultiPV`, `UCI_ShowWDL`, `Ponder`, `Clear Hash`) through a session
//! in memory: each command handled as the input loop would, each search waited for.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::*;

/// An output the session writes into and the test reads back.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Gui {
    session: Session,
    out: Sink,
}

impl Gui {
    /// A session of `agent` (`alphabeta` or `mcts`) with a small table.
    fn open(agent: &str) -> Gui {
        let out = Sink::default();
        let start = Start {
            hash_mb: 4,
            agent: agent.into(),
            model: None,
            visits: 64,
            config: (serde_yaml::Value::Null, PathBuf::new()),
        };
        let session = Session::open(Box::new(out.clone()), start).unwrap();
        Gui { session, out }
    }

    /// Handles `line` as the input loop does: an error is said as `info string error: …`.
    fn send(&mut self, line: &str) {
        match parse_command(line) {
            Ok(cmd) => {
                if let Err(e) = self.session.handle(cmd) {
                    say(&self.session.out, &format!("info string error: {e}"));
                }
            }
            Err(e) => say(&self.session.out, &format!("info string error: {e}")),
        }
    }

    /// Waits for the running search to end by itself.
    fn wait(&mut self) {
        self.session.finish_search(false);
    }

    /// The lines written since the last call.
    fn lines(&mut self) -> Vec<String> {
        let bytes = std::mem::take(&mut *self.out.0.lock().unwrap());
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The value after `key` in an `info` line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.find(|&w| w == key)?;
    words.next()
}

/// The moves after `pv`.
fn pv(line: &str) -> Vec<&str> {
    line.split(" pv ").nth(1).unwrap_or("").split(' ').collect()
}

#[test]
fn the_handshakes_list_the_gui_options() {
    let mut gui = Gui::open("alphabeta");
    gui.send("uci");
    let uci = gui.lines();
    for want in [
        "option name MultiPV type spin default 1 min 1 max 128",
        "option name UCI_ShowWDL type check default false",
        "option name Ponder type check default false",
        "option name Clear Hash type button",
    ] {
        assert!(uci.iter().any(|l| l == want), "{want} in {uci:#?}");
    }
    gui.send("ucci");
    let ucci = gui.lines();
    for want in [
        "option multipv type spin min 1 max 128 default 1",
        "option ponder type check default false",
        "option clearhash type button",
    ] {
        assert!(ucci.iter().any(|l| l == want), "{want} in {ucci:#?}");
    }
    assert!(!ucci.iter().any(|l| l.contains("UCI_ShowWDL")));
}

#[test]
fn multipv_3_gives_three_distinct_lines_at_each_depth() {
    let mut gui = Gui::open("alphabeta");
    gui.send("setoption name MultiPV value 3");
    gui.send("position startpos moves h2e2 h9g7");
    gui.send("go depth 5");
    gui.wait();
    let out = gui.lines();
    let infos: Vec<&String> = out.iter().filter(|l| l.starts_with("info depth")).collect();
    for depth in 1..=5 {
        let at: Vec<&&String> = infos
            .iter()
            .filter(|l| field(l, "depth") == Some(&depth.to_string()))
            .collect();
        assert_eq!(at.len(), 3, "depth {depth}: {at:#?}");
        let ks: Vec<&str> = at.iter().filter_map(|l| field(l, "multipv")).collect();
        assert_eq!(ks, ["1", "2", "3"], "depth {depth}");
        let firsts: HashSet<&str> = at.iter().map(|l| pv(l)[0]).collect();
        assert_eq!(
            firsts.len(),
            3,
            "three different moves at depth {depth}: {at:#?}"
        );
        // Each line's score is exact: the best first.
        let scores: Vec<i32> = at
            .iter()
            .map(|l| field(l, "cp").unwrap().parse().unwrap())
            .collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    }
    let best = out.last().unwrap();
    let last_first = infos
        .iter()
        .rev()
        .find(|l| field(l, "multipv") == Some("1"));
    assert_eq!(
        best,
        &format!("bestmove {}", pv(last_first.unwrap())[0]),
        "bestmove is multipv 1's move"
    );
}

#[test]
fn multipv_takes_its_lines_after_banned_moves_and_stops_at_the_legal_ones() {
    let mut gui = Gui::open("alphabeta");
    gui.send("ucci");
    gui.send("setoption multipv 4");
    gui.lines();
    // Red's king has three moves (e1e0, e1e2, e1f1; e1d1 would face the other king); with
    // one banned there are two lines, from the two others.
    gui.send("position fen 3k5/9/9/9/9/9/9/9/4K4/9 w - - 0 1");
    gui.send("banmoves e1e2");
    assert_eq!(gui.lines(), Vec::<String>::new());
    gui.send("go depth 3");
    gui.wait();
    let out = gui.lines();
    let infos: Vec<&String> = out.iter().filter(|l| l.starts_with("info depth")).collect();
    assert_eq!(
        infos.len(),
        6,
        "two lines at each of three depths: {out:#?}"
    );
    for (l, k) in infos.iter().zip(["1", "2"].iter().cycle()) {
        assert_eq!(field(l, "multipv"), Some(*k), "{l}");
        assert!(["e1e0", "e1f1"].contains(&pv(l)[0]), "{l}");
    }
}

#[test]
fn show_wdl_adds_win_draw_loss_per_mille() {
    let mut gui = Gui::open("alphabeta");
    gui.send("setoption name UCI_ShowWDL value true");
    gui.send("setoption name MultiPV value 2");
    gui.send("go depth 3");
    gui.wait();
    let out = gui.lines();
    let infos: Vec<&String> = out.iter().filter(|l| l.starts_with("info depth")).collect();
    assert_eq!(infos.len(), 6);
    for l in infos {
        let cp: i32 = field(l, "cp").unwrap().parse().unwrap();
        let at = l.find(" wdl ").expect("a wdl field");
        assert!(at > l.find(" score ").unwrap() && at < l.find(" nodes ").unwrap());
        let wdl: Vec<u32> = l[at + 5..]
            .split(' ')
            .take(3)
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(wdl, wdl::from_score(cp), "{l}");
        assert_eq!(wdl.iter().sum::<u32>(), 1000);
    }
    gui.send("setoption name UCI_ShowWDL value false");
    gui.send("go depth 2");
    gui.wait();
    assert!(gui.lines().iter().all(|l| !l.contains(" wdl ")));
}

#[test]
fn the_tree_search_reports_its_most_visited_moves() {
    let mut gui = Gui::open("mcts");
    gui.send("setoption name MultiPV value 4");
    gui.send("setoption name UCI_ShowWDL value true");
    gui.send("go nodes 400");
    gui.wait();
    let out = gui.lines();
    let infos: Vec<&String> = out.iter().filter(|l| l.starts_with("info depth")).collect();
    // A busy machine may give a report a second in as well: the final one is the last four.
    assert_eq!(infos.len() % 4, 0, "{out:#?}");
    let infos = &infos[infos.len() - 4..];
    let ks: Vec<&str> = infos.iter().filter_map(|l| field(l, "multipv")).collect();
    assert_eq!(ks, ["1", "2", "3", "4"], "{out:#?}");
    let firsts: HashSet<&str> = infos.iter().map(|l| pv(l)[0]).collect();
    assert_eq!(firsts.len(), 4);
    assert!(infos
        .iter()
        .all(|l| l.contains(" wdl ") && l.contains(" cp ")));
    assert_eq!(
        out.last().unwrap(),
        &format!("bestmove {}", pv(infos[0])[0])
    );
}

#[test]
fn ponder_names_the_reply_and_waits_for_ponderhit_or_stop() {
    let mut gui = Gui::open("alphabeta");
    gui.send("setoption name Ponder value true");
    gui.send("position startpos");
    gui.send("go depth 4");
    gui.wait();
    let best = gui.lines().last().unwrap().clone();
    let words: Vec<&str> = best.split(' ').collect();
    assert_eq!(
        (words[0], words.get(2)),
        ("bestmove", Some(&"ponder")),
        "{best}"
    );
    let (mine, reply) = (words[1], words[3]);

    // Pondering on the expected reply: no answer until the GUI says.
    gui.send(&format!("position startpos moves {mine} {reply}"));
    gui.send("go ponder wtime 2000 btime 2000");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!gui.lines().iter().any(|l| l.starts_with("bestmove")));
    // The reply came: one bestmove, within the clock's share of 2 s.
    let hit = std::time::Instant::now();
    gui.send("ponderhit");
    gui.wait();
    assert!(
        hit.elapsed() < Duration::from_millis(1500),
        "{:?}",
        hit.elapsed()
    );
    let after = gui.lines();
    assert_eq!(
        after.iter().filter(|l| l.starts_with("bestmove")).count(),
        1,
        "{after:#?}"
    );

    // Another reply came: `stop` ends the ponder search with its bestmove.
    gui.send("go ponder");
    std::thread::sleep(Duration::from_millis(100));
    gui.send("stop");
    let stopped = gui.lines();
    assert_eq!(
        stopped.iter().filter(|l| l.starts_with("bestmove")).count(),
        1
    );
    gui.send("ponderhit");
    assert!(gui.lines()[0].starts_with("info string error: ponderhit"));
    // With the option off, bestmove stands alone.
    gui.send("setoption name Ponder value false");
    gui.send("go depth 3");
    gui.wait();
    assert_eq!(gui.lines().last().unwrap().split(' ').count(), 2);
}

#[test]
fn clear_hash_forgets_what_alpha_beta_learned() {
    fn nodes(gui: &mut Gui) -> u64 {
        gui.send("go depth 6");
        gui.wait();
        let out = gui.lines();
        let last = out
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth"))
            .unwrap();
        field(last, "nodes").unwrap().parse().unwrap()
    }
    let mut gui = Gui::open("alphabeta");
    let fresh = nodes(&mut gui);
    let warm = nodes(&mut gui);
    assert!(
        warm < fresh,
        "the table helps a second search: {warm} vs {fresh}"
    );
    gui.send("setoption name Clear Hash");
    assert_eq!(
        nodes(&mut gui),
        fresh,
        "an empty table searches as the first time"
    );
    // UCCI's spelling does the same.
    gui.send("setoption clearhash");
    assert_eq!(nodes(&mut gui), fresh);
}

#[test]
fn bad_options_are_named_and_the_session_goes_on() {
    let mut gui = Gui::open("alphabeta");
    for (line, said) in [
        (
            "setoption name MultiPV value 0",
            "MultiPV '0' is not 1..128",
        ),
        (
            "setoption name MultiPV value lots",
            "MultiPV 'lots' is not 1..128",
        ),
        (
            "setoption name UCI_ShowWDL value maybe",
            "UCI_ShowWDL 'maybe' is not true or false",
        ),
        (
            "setoption name Ponder value 2",
            "Ponder '2' is not true or false",
        ),
        (
            "setoption name Contempt value 10",
            "unknown option 'Contempt'",
        ),
        ("setoption ponder yes", "ponder 'yes' is not true or false"),
    ] {
        gui.send(line);
        let out = gui.lines();
        assert_eq!(
            out,
            [format!("info string error: setoption: {said}")],
            "{line}"
        );
    }
    gui.send("isready");
    assert_eq!(gui.lines(), ["readyok"]);
    gui.send("go depth 2");
    gui.wait();
    let out = gui.lines();
    assert!(out.last().unwrap().starts_with("bestmove "));
    assert!(out.iter().any(|l| field(l, "multipv") == Some("1")));
}

#[test]
fn a_network_with_a_wdl_head_gives_the_wdl_itself() {
    // The fake network's wdl head has no draws; the score model always has some near 0.
    for (heads, draws) in [(true, false), (false, true)] {
        let mut gui = Gui::open("alphabeta");
        let fake = eval::fake::FakeEvaluator::new(8).seeded(3);
        let fake = if heads { fake.with_aux() } else { fake };
        gui.session.net = Some(("fake".into(), Arc::new(fake)));
        gui.send("setoption name Agent value net");
        gui.send("setoption name MultiPV value 3");
        gui.send("setoption name UCI_ShowWDL value true");
        gui.send("go nodes 300");
        gui.wait();
        let out = gui.lines();
        let infos: Vec<&String> = out.iter().filter(|l| l.starts_with("info depth")).collect();
        assert_eq!(infos.len(), 3, "{out:#?}");
        for l in infos {
            let d: u32 = field(l, "wdl")
                .map(|_| {
                    let at = l.find(" wdl ").unwrap();
                    l[at + 5..].split(' ').nth(1).unwrap().parse().unwrap()
                })
                .unwrap();
            assert_eq!(d > 0, draws, "heads {heads}: {l}");
        }
    }
}

#[test]
fn the_strength_options_play_a_named_level() {
    let (lo, hi) = strength::elo_range();
    let all = players::levels::levels("xiangqi");
    let mut gui = Gui::open("alphabeta");
    gui.send("uci");
    let hello = gui.lines();
    for want in [
        "option name UCI_LimitStrength type check default false".to_string(),
        format!("option name UCI_Elo type spin default {hi} min {lo} max {hi}"),
        "option name Skill Level type spin default 20 min 0 max 20".to_string(),
    ] {
        assert!(hello.contains(&want), "{want} in {hello:#?}");
    }

    // An alpha-beta level searches to its own depth, whatever the clock allows.
    let level = all
        .iter()
        .find(|l| l.spec.starts_with("alphabeta:depth="))
        .expect("an alpha-beta level");
    let depth: u32 = level.spec["alphabeta:depth=".len()..].parse().unwrap();
    gui.send(&format!(
        "setoption name UCI_Elo value {}",
        level.rating.elo.round()
    ));
    gui.send("setoption name UCI_LimitStrength value true");
    let said = gui.lines();
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].starts_with(&format!("info string plays the level {} ", level.key)),
        "{said:#?}"
    );
    gui.send("go wtime 60000 btime 60000");
    gui.wait();
    let out = gui.lines();
    let deepest = out
        .iter()
        .filter_map(|l| field(l, "depth")?.parse::<u32>().ok())
        .max();
    assert_eq!(deepest, Some(depth), "{out:#?}");
    assert!(out.last().unwrap().starts_with("bestmove "));

    // Full strength again: alpha-beta deepens past the level's depth.
    gui.send("setoption name UCI_LimitStrength value false");
    gui.send(&format!("go depth {}", depth + 1));
    gui.wait();
    assert!(gui
        .lines()
        .iter()
        .any(|l| l.starts_with(&format!("info depth {} ", depth + 1))));

    // A level that plays the network needs one; without, nothing changes.
    let weakest = &all[0];
    gui.send("setoption name Skill Level value 0");
    if weakest.spec.starts_with("net") {
        let out = gui.lines();
        assert!(out[0].contains("set the Model option"), "{out:#?}");
        gui.send("uci");
        assert!(gui
            .lines()
            .contains(&"option name Skill Level type spin default 20 min 0 max 20".to_string()));
        // With a network, Skill Level 0 plays the weakest level: its few visits.
        gui.session.net = Some((
            "fake".into(),
            Arc::new(eval::fake::FakeEvaluator::new(8).seeded(1)),
        ));
        gui.send("setoption name Skill Level value 0");
        assert!(gui.lines()[0].contains(&weakest.key));
        gui.send("go movetime 2000");
        gui.wait();
        let out = gui.lines();
        let visits: u64 = field(&out[0], "nodes").unwrap().parse().unwrap();
        assert!(visits <= 32, "{out:#?}");
        assert!(out.last().unwrap().starts_with("bestmove "));
    }

    for (line, said) in [
        (
            "setoption name UCI_Elo value 99999".to_string(),
            format!("UCI_Elo '99999' is not {lo}..{hi}"),
        ),
        (
            "setoption name Skill Level value 21".to_string(),
            "Skill Level '21' is not 0..20".to_string(),
        ),
    ] {
        gui.send(&line);
        assert_eq!(
            gui.lines(),
            [format!("info string error: setoption: {said}")]
        );
    }
}

#[test]
fn the_repetition_rule_option_judges_the_gui_game() {
    let mut gui = Gui::open("alphabeta");
    gui.send("uci");
    assert!(gui.lines().contains(
        &"option name Repetition Rule type combo default Asian var Asian var Simple".into()
    ));
    assert_eq!(gui.session.game.repetition_rule(), RepetitionRule::Asian);
    gui.send("setoption name Repetition Rule value simple");
    assert_eq!(gui.lines(), Vec::<String>::new());
    assert_eq!(gui.session.game.repetition_rule(), RepetitionRule::Simple);
    // The positions and games the GUI sets up after it keep the rule.
    gui.send("position startpos moves h2e2 h9g7");
    assert_eq!(gui.session.game.repetition_rule(), RepetitionRule::Simple);
    gui.send("ucinewgame");
    assert_eq!(gui.session.game.repetition_rule(), RepetitionRule::Simple);
    gui.send("setoption name Repetition Rule value Chinese");
    assert_eq!(
        gui.lines(),
        [
            "info string error: setoption: Repetition Rule: unknown repetition rule 'Chinese' \
          (expected Asian or Simple)"
        ]
    );
    gui.send("ucci");
    gui.lines();
    gui.send("setoption repetitionrule Asian");
    assert_eq!(gui.session.game.repetition_rule(), RepetitionRule::Asian);
}
