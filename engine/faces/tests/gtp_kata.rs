//! `kata-analyze` and `kata-genmove_analyze` in the Go face, searched with a fake network that
//! has ownership and score heads (no model file): every field of KataGo's lines, the ownership
//! of every point from the top row down and for the player to move, bad arguments refused.

use std::sync::Arc;
use std::time::Duration;

use eval::fake::FakeEvaluator;
use eval::Evaluator;
use faces::gtp::go::{Analysing, Dialect, Session};
use games::go::{GoRules, GoState};
use players::spec::{build, preloaded, AgentSpec};

const SIZE: usize = 5;

/// A `net` session on a 5 × 5 board whose network is `fake`; `analysed`: the session is given
/// the network for its auxiliary heads.
fn session(fake: FakeEvaluator, analysed: bool) -> Session {
    let net: Arc<dyn Evaluator<GoState>> = Arc::new(fake);
    let spec = AgentSpec::parse("net:visits=64,seed=1").unwrap();
    let agent = build::<GoState>(&spec, "net", 1, &preloaded(Some(net.clone()))).unwrap();
    let mut s = Session::new(GoRules::with_size(SIZE), agent).unwrap();
    s.set_network(analysed.then_some(net));
    s
}

/// The uniform fake's ownership for Black: the same ramp whatever the position.
fn ramp() -> Vec<f32> {
    let state = GoState::new(GoRules::with_size(SIZE)).unwrap();
    FakeEvaluator::new(1).with_aux().ownership_of(&state)
}

/// One candidate of a `kata-analyze` line: its keys and values, `pv` last.
type Fields = Vec<(String, String)>;

/// Splits a report into its candidates' fields and the ownership values, if any.
fn parse(report: &str) -> (Vec<Fields>, Option<Vec<f32>>) {
    let line = report.strip_suffix('\n').expect("a report ends its line");
    assert!(!line.contains('\n'), "one line: {report:?}");
    let (moves, ownership) = match line.split_once(" ownership ") {
        Some((m, o)) => (
            m,
            Some(o.split(' ').map(|x| x.parse::<f32>().unwrap()).collect()),
        ),
        None => (line, None),
    };
    let candidates = moves
        .strip_prefix("info ")
        .expect("starts with info")
        .split(" info ")
        .map(|c| {
            let (head, pv) = c.split_once(" pv ").expect("a pv");
            let words: Vec<&str> = head.split(' ').collect();
            let mut fields: Fields = words
                .chunks(2)
                .map(|kv| (kv[0].to_string(), kv[1].to_string()))
                .collect();
            fields.push(("pv".into(), pv.into()));
            fields
        })
        .collect();
    (candidates, ownership)
}

fn field<'a>(fields: &'a Fields, key: &str) -> &'a str {
    &fields
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no {key} in {fields:?}"))
        .1
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-4
}

#[test]
fn every_field_and_the_ownership_from_the_top_row() {
    let mut s = session(FakeEvaluator::new(8).with_aux(), true);
    assert_eq!(
        s.handle("3 kata-analyze b 5 ownership true").as_deref(),
        Some("=3\n")
    );
    assert_eq!(
        s.analysing,
        Some(Analysing {
            interval: Duration::from_millis(50),
            max_moves: None,
            dialect: Dialect::Kata { ownership: true },
        })
    );
    let (candidates, ownership) = parse(&s.analysis_report());
    assert!(!candidates.is_empty());
    let keys = [
        "move",
        "visits",
        "utility",
        "winrate",
        "scoreMean",
        "scoreStdev",
        "scoreLead",
        "prior",
        "lcb",
        "order",
        "pv",
    ];
    for (k, c) in candidates.iter().enumerate() {
        let names: Vec<&str> = c.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, keys);
        assert_eq!(field(c, "order"), k.to_string());
        let winrate: f32 = field(c, "winrate").parse().unwrap();
        assert!((0.0..=1.0).contains(&winrate));
        assert!(field(c, "visits").parse::<u32>().unwrap() > 0);
        assert!(field(c, "prior").parse::<f32>().unwrap() > 0.0);
        assert!(field(c, "lcb").parse::<f32>().unwrap() <= winrate);
        // The uniform fake scores 2.5 for Black in every position: a move's subtree that
        // reached no finished game has that mean and no spread.
        let lead: f32 = field(c, "scoreLead").parse().unwrap();
        let stdev: f32 = field(c, "scoreStdev").parse().unwrap();
        assert!(stdev >= 0.0);
        if stdev == 0.0 {
            assert!(close(lead, 2.5), "{c:?}");
        }
        // Passing twice ends the game on an empty board, White ahead by komi: where the
        // pass's subtree met that end (how many visits it had depends on the analysis's
        // time), the game's own margin pulls its mean below the network's 2.5.
        if field(c, "move") == "pass" && stdev > 0.0 {
            assert!(lead < 2.5, "{c:?}");
        }
        assert_eq!(field(c, "scoreMean"), field(c, "scoreLead"));
        assert!(field(c, "pv").starts_with(field(c, "move")));
    }
    let ownership = ownership.expect("ownership true asks for it");
    assert_eq!(ownership.len(), SIZE * SIZE);
    // KataGo's order: the top row (row 4) first, left to right, then down.
    let ramp = ramp();
    for (i, x) in ownership.iter().enumerate() {
        let (row, col) = (SIZE - 1 - i / SIZE, i % SIZE);
        assert!(close(*x, ramp[row * SIZE + col]), "point {i}: {x}");
    }
    s.analysing = None;

    // White to move: score and ownership for White.
    assert_eq!(s.handle("play b C3").as_deref(), Some("=\n\n"));
    assert_eq!(
        s.handle("kata-analyze ownership true").as_deref(),
        Some("=\n")
    );
    let (candidates, ownership) = parse(&s.analysis_report());
    // Mostly the network's 2.5 for Black, so about −2.5 for White (finished games aside).
    let lead: f32 = field(&candidates[0], "scoreLead").parse().unwrap();
    assert!((lead + 2.5).abs() < 0.25, "{candidates:?}");
    let ownership = ownership.unwrap();
    assert!(close(ownership[0], -ramp[(SIZE - 1) * SIZE]));
    assert!(close(ownership[SIZE * SIZE - 1], -ramp[SIZE - 1]));
}

/// A `net` session on a `size` × `size` board with the seeded fake (scores 10 × its value).
fn seeded_session(size: usize) -> Session {
    let net: Arc<dyn Evaluator<GoState>> = Arc::new(FakeEvaluator::new(8).seeded(4).with_aux());
    let spec = AgentSpec::parse("net:visits=200,seed=1").unwrap();
    let agent = build::<GoState>(&spec, "net", 1, &preloaded(Some(net.clone()))).unwrap();
    let mut s = Session::new(GoRules::with_size(size), agent).unwrap();
    s.set_network(Some(net));
    s
}

#[test]
fn scores_are_each_moves_subtree_mean_and_spread_at_9_and_13() {
    for size in [9, 13] {
        let mut s = seeded_session(size);
        assert_eq!(
            s.handle("kata-analyze B 50 ownership true").as_deref(),
            Some("=\n")
        );
        let report = s.analysis_report();
        let (candidates, ownership) = parse(&report);
        assert_eq!(ownership.unwrap().len(), size * size, "{size}");
        let mut spread = 0;
        for c in &candidates {
            let mean: f32 = field(c, "scoreMean").parse().unwrap();
            let stdev: f32 = field(c, "scoreStdev").parse().unwrap();
            let visits: u32 = field(c, "visits").parse().unwrap();
            // The seeded fake's scores lie in −10..10 (10 × a value).
            assert!((-10.0..=10.0).contains(&mean), "{c:?}");
            assert!((0.0..=10.0).contains(&stdev), "{c:?}");
            if visits == 1 {
                assert_eq!(stdev, 0.0, "one score has no spread: {c:?}");
            }
            spread += usize::from(stdev > 0.0);
        }
        assert!(spread > 0, "leaves of many values spread: {report}");
        s.analysing = None;
        // The move's own reports carry the whole board too.
        let reply = s.handle("kata-genmove_analyze B 5 ownership true").unwrap();
        let body = reply.strip_prefix("=\n").expect(&reply);
        let (infos, play) = body
            .strip_suffix("\n\n")
            .and_then(|b| b.rsplit_once('\n'))
            .expect(&reply);
        assert!(play.starts_with("play ") && !infos.is_empty(), "{reply}");
        for info in infos.lines() {
            let (_, ownership) = parse(&format!("{info}\n"));
            assert_eq!(ownership.unwrap().len(), size * size, "{size}");
        }
    }
}

#[test]
fn keywords_come_in_any_order_and_ownership_is_asked_for() {
    let mut s = session(FakeEvaluator::new(8).with_aux(), true);
    s.handle("kata-analyze maxmoves 2 ownership false interval 20 minmoves 1");
    assert_eq!(
        s.analysing,
        Some(Analysing {
            interval: Duration::from_millis(200),
            max_moves: Some(2),
            dialect: Dialect::Kata { ownership: false },
        })
    );
    let report = s.analysis_report();
    let (candidates, ownership) = parse(&report);
    assert!(candidates.len() <= 2);
    assert_eq!(ownership, None, "{report}");
}

#[test]
fn without_auxiliary_heads_scores_are_zero_and_ownership_comes_from_playouts() {
    for (fake, given) in [
        (FakeEvaluator::new(8), true),
        (FakeEvaluator::new(8).with_aux(), false),
    ] {
        let mut s = session(fake, given);
        s.handle("play b C3");
        s.handle("kata-analyze w 5 ownership true");
        let (candidates, ownership) = parse(&s.analysis_report());
        for c in &candidates {
            assert_eq!(field(c, "scoreLead"), "0");
            assert_eq!(field(c, "scoreStdev"), "0");
        }
        // Random continuations' estimate, for White to move: Black's stone in the centre is
        // more often Black's than not.
        let ownership = ownership.unwrap();
        assert_eq!(ownership.len(), SIZE * SIZE);
        assert!(ownership.iter().all(|x| (-1.0..=1.0).contains(x)));
        assert!(ownership[2 * SIZE + 2] < 0.0, "{ownership:?}");
    }
}

#[test]
fn genmove_analyze_reports_then_plays() {
    let mut s = session(FakeEvaluator::new(8).with_aux(), true);
    let reply = s
        .handle("9 kata-genmove_analyze b 10 ownership true")
        .unwrap();
    let body = reply.strip_prefix("=9\n").expect(&reply);
    let body = body.strip_suffix("\n\n").expect(&reply);
    let (infos, play) = body.rsplit_once('\n').expect(&reply);
    for info in infos.lines() {
        let (candidates, ownership) = parse(&format!("{info}\n"));
        assert_eq!(field(&candidates[0], "order"), "0");
        assert_eq!(ownership.unwrap().len(), SIZE * SIZE);
    }
    let mv = play.strip_prefix("play ").expect(&reply);
    // The move was played: White is to move, and Black's point is taken.
    let again = s.handle(&format!("play w {mv}")).unwrap();
    assert!(again.starts_with('?'), "{again}");
    assert!(s.analysing.is_none());
}

/// Over a driver (`Conversation`, as `engine gtp` runs it), the move's search reports every
/// interval while it runs, cannot be interrupted, and ends with `play MOVE` and a blank line.
#[test]
fn genmove_analyze_streams_reports_during_the_search_then_plays() {
    use faces::gtp::frame::Conversation;
    // 8 leaves a call, 5 ms a call: 256 visits take about 160 ms, reported every 20 ms.
    let fake = FakeEvaluator::new(8)
        .with_aux()
        .with_batch_cost(Duration::from_millis(5));
    let net: Arc<dyn Evaluator<GoState>> = Arc::new(fake);
    let spec = AgentSpec::parse("net:visits=256,seed=1").unwrap();
    let agent = build::<GoState>(&spec, "net", 1, &preloaded(Some(net.clone()))).unwrap();
    let mut s = Session::new(GoRules::with_size(SIZE), agent).unwrap();
    s.set_network(Some(net));
    assert_eq!(
        Conversation::handle(&mut s, "4 kata-genmove_analyze b 2").as_deref(),
        Some("=4\n")
    );
    assert!(s.ongoing() && !s.interruptible());
    let mut reports = Vec::new();
    while s.ongoing() {
        reports.push(Conversation::report(&mut s));
        assert!(reports.len() < 1000, "the move's search ends");
    }
    let last = reports.pop().unwrap();
    let (line, play) = last
        .strip_suffix("\n\n")
        .and_then(|l| l.rsplit_once("play "))
        .unwrap_or_else(|| panic!("{last:?}"));
    assert!(reports.len() >= 2, "{reports:?}");
    // Each report is a full line, the root's visits growing from one to the next.
    let mut before = 0;
    for report in reports.iter().map(String::as_str).chain([line]) {
        let (candidates, ownership) = parse(report);
        assert_eq!(ownership, None);
        let visits: u32 = candidates
            .iter()
            .map(|c| field(c, "visits").parse::<u32>().unwrap())
            .sum();
        assert!(visits > before, "{report}");
        before = visits;
    }
    // The move was played: Black's point is taken, and the game goes on.
    let again = s.handle(&format!("play w {play}")).unwrap();
    assert!(again.starts_with('?'), "{again}");
    assert_eq!(
        s.handle("genmove w").map(|r| r.starts_with("= ")),
        Some(true)
    );
}

#[test]
fn bad_arguments_get_a_syntax_error() {
    let mut s = session(FakeEvaluator::new(8).with_aux(), true);
    for (line, why) in [
        ("kata-analyze ownership maybe", "syntax error"),
        ("kata-analyze b 10 ownership", "syntax error"),
        ("kata-analyze b 10 frob 3", "syntax error"),
        ("kata-analyze maxmoves -1", "syntax error"),
        ("kata-analyze 0.5", "syntax error"),
        ("kata-analyze w", "not to move"),
        ("lz-analyze ownership true", "syntax error"),
        ("kata-genmove_analyze b frob", "syntax error"),
        ("kata-genmove_analyze b 10 ownership 1", "syntax error"),
    ] {
        let reply = s.handle(line).unwrap();
        assert!(
            reply.starts_with("? ") && reply.contains(why),
            "{line}: {reply}"
        );
        assert!(reply.ends_with("\n\n"), "{line}: {reply:?}");
        assert!(s.analysing.is_none(), "{line}");
    }
    assert_eq!(
        s.handle("showboard").map(|r| r.starts_with('=')),
        Some(true)
    );
}

#[test]
fn both_commands_are_listed() {
    let mut s = session(FakeEvaluator::new(8), false);
    let listed = s.handle("list_commands").unwrap();
    for command in ["kata-analyze", "kata-genmove_analyze", "lz-analyze"] {
        assert!(listed
            .lines()
            .any(|l| l.trim_start_matches("= ") == command));
        assert_eq!(
            s.handle(&format!("known_command {command}")).as_deref(),
            Some("= true\n\n")
        );
    }
}

#[test]
fn final_status_and_score_follow_the_networks_ownership() {
    // The uniform fake's ramp for Black: A1…A2 (points 0–5) White's at −0.56 or less, E4…E5
    // (19–24) Black's at 0.56 or more, the middle uncertain.
    let mut s = session(FakeEvaluator::new(8).with_aux(), true);
    for mv in ["b A1", "w E5", "b C3", "w B2"] {
        assert_eq!(s.handle(&format!("play {mv}")).as_deref(), Some("=\n\n"));
    }
    assert_eq!(
        s.handle("final_status_list dead").as_deref(),
        Some("= A1 E5\n\n")
    );
    assert_eq!(
        s.handle("final_status_list alive").as_deref(),
        Some("= C3 B2\n\n")
    );
    assert_eq!(s.handle("final_status_list seki").as_deref(), Some("=\n\n"));
    // C3 and B2 stay, every empty point reaches both: one point each, and komi.
    let komi = GoRules::with_size(SIZE).komi;
    assert_eq!(s.handle("final_score"), Some(format!("= W+{komi}\n\n")));
    // White to move: the same stones, seen from White's side.
    s.handle("play b pass");
    assert_eq!(
        s.handle("final_status_list dead").as_deref(),
        Some("= A1 E5\n\n")
    );
}
