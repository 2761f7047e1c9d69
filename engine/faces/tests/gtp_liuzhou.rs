//! Liuzhou's GTP dialect (`faces::gtp::liuzhou`), command by command as docs/liuzhou.md states
//! it: each command's answer, each error case, and that a refused command leaves the position
//! as it was.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use faces::gtp::liuzhou::{Session, COMMANDS};
use faces::gtp::GtpConfig;
use games::liuzhou::{Liuzhou, Rules, START_LFEN};
use games::{Agent, AgentError, Decision, Game};
use players::spec::AgentSpec;

fn session() -> Session {
    Session::new(Rules::default(), random()).unwrap()
}

/// Random play, built by the one builder.
fn random() -> Box<dyn Agent<Liuzhou>> {
    players::spec::build_text("random:seed=1", 1).unwrap()
}

fn ask(s: &mut Session, line: &str) -> String {
    s.handle(line)
        .unwrap_or_else(|| panic!("no answer to {line:?}"))
}

/// The text of a success, without `= ` and the blank line.
fn ok(s: &mut Session, line: &str) -> String {
    let reply = ask(s, line);
    assert!(
        reply.starts_with('=') && reply.ends_with("\n\n"),
        "{line}: {reply:?}"
    );
    reply[1..reply.len() - 2].trim_start().to_string()
}

/// The reason of a failure; the position is checked to be the one before it.
fn refused(s: &mut Session, line: &str) -> String {
    let before = s.state().lfen();
    let reply = ask(s, line);
    assert!(
        reply.starts_with("? ") && reply.ends_with("\n\n"),
        "{line}: {reply:?}"
    );
    assert_eq!(s.state().lfen(), before, "{line} changed the position");
    reply[2..reply.len() - 2].to_string()
}

fn lfen(s: &mut Session) -> String {
    ok(s, "liuzhou-lfen")
}

/// Black wins (White has no stone after placement), White wins, a draw (36 actions without a
/// capture).
const BLACK_WON: &str = "6/6/6/6/6/B5 w move 0 20 3";
const WHITE_WON: &str = "6/6/6/6/6/W5 b move 0 20 3";
const DRAWN: &str = "6/6/6/6/6/B4W w move 0 50 36";

#[test]
fn the_administrative_commands_answer_as_gtp_2() {
    let mut s = session();
    assert_eq!(ok(&mut s, "protocol_version"), "2");
    assert_eq!(ok(&mut s, "name"), "engine");
    assert_eq!(ok(&mut s, "version"), env!("CARGO_PKG_VERSION"));
    let listed = ok(&mut s, "list_commands");
    let listed: Vec<&str> = listed.lines().collect();
    assert_eq!(listed, COMMANDS);
    for cmd in [
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
        "liuzhou-to-move",
        "liuzhou-legal",
        "liuzhou-lfen",
        "liuzhou-set-lfen",
        "final_score",
        "time_settings",
        "time_left",
    ] {
        assert_eq!(ok(&mut s, &format!("known_command {cmd}")), "true", "{cmd}");
    }
    for cmd in ["showboard", "loadsgf", "frob", "kgs-genmove_cleanup"] {
        assert_eq!(
            ok(&mut s, &format!("known_command {cmd}")),
            "false",
            "{cmd}"
        );
    }
    assert_eq!(refused(&mut s, "frobnicate"), "unknown command");
    assert_eq!(refused(&mut s, "showboard"), "unknown command");
    assert!(refused(&mut s, "known_command").starts_with("syntax error"));
    assert!(refused(&mut s, "name please").starts_with("syntax error"));
    assert!(!s.quit);
    assert_eq!(ok(&mut s, "quit"), "");
    assert!(s.quit);
}

#[test]
fn numeric_ids_are_echoed_on_answers_and_errors() {
    let mut s = session();
    assert_eq!(ask(&mut s, "7 protocol_version"), "=7 2\n\n");
    assert_eq!(ask(&mut s, "8 play b c3"), "=8\n\n");
    assert_eq!(ask(&mut s, "9 play b d4"), "?9 illegal move\n\n");
    assert_eq!(ask(&mut s, "10 frob"), "?10 unknown command\n\n");
    assert_eq!(ask(&mut s, "11 liuzhou-to-move"), "=11 white\n\n");
    let reply = ask(&mut s, "12 genmove w");
    assert!(
        reply.starts_with("=12 ") && reply.ends_with("\n\n"),
        "{reply:?}"
    );
    assert_eq!(
        ask(&mut s, "13 final_score"),
        "?13 the game is not over\n\n"
    );
    assert_eq!(ask(&mut s, "14"), "?14 syntax error: no command\n\n");
    // No command, no answer: empty lines and comments.
    assert_eq!(s.handle(""), None);
    assert_eq!(s.handle("   # a comment"), None);
    assert_eq!(
        ask(&mut s, "15 liuzhou-to-move # whose turn"),
        "=15 black\n\n"
    );
}

#[test]
fn boardsize_is_six_and_nothing_else() {
    let mut s = session();
    ok(&mut s, "play b c3");
    assert_eq!(ok(&mut s, "boardsize 6"), "");
    assert_eq!(lfen(&mut s), START_LFEN, "a new game");
    ok(&mut s, "play b c3");
    for size in ["7", "5", "9", "19", "0"] {
        let why = refused(&mut s, &format!("boardsize {size}"));
        assert_eq!(why, "unacceptable size", "{size}");
    }
    assert!(refused(&mut s, "boardsize six").starts_with("syntax error"));
    assert!(refused(&mut s, "boardsize").starts_with("syntax error"));
}

#[test]
fn clear_board_is_the_start_position() {
    let mut s = session();
    ok(&mut s, "play b c3");
    ok(&mut s, "genmove w");
    assert_eq!(ok(&mut s, "clear_board"), "");
    assert_eq!(lfen(&mut s), "6/6/6/6/6/6 b place 0 0 0");
    assert_eq!(refused(&mut s, "undo"), "cannot undo");
    ok(&mut s, &format!("liuzhou-set-lfen {DRAWN}"));
    ok(&mut s, "clear_board");
    assert_eq!(lfen(&mut s), START_LFEN);
    assert!(refused(&mut s, "clear_board now").starts_with("syntax error"));
}

#[test]
fn komi_is_accepted_and_ignored() {
    let mut s = session();
    ok(&mut s, "play b c3");
    let before = lfen(&mut s);
    for k in ["7.5", "0", "-3"] {
        assert_eq!(ok(&mut s, &format!("komi {k}")), "");
    }
    assert_eq!(lfen(&mut s), before);
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "white");
    assert!(refused(&mut s, "komi lots").starts_with("syntax error"));
    assert!(refused(&mut s, "komi").starts_with("syntax error"));
}

#[test]
fn play_takes_the_colour_to_act_and_a_legal_action_only() {
    let mut s = session();
    assert_eq!(ok(&mut s, "play b c3"), "");
    assert_eq!(lfen(&mut s), "6/6/6/2B3/6/6 w place 0 1 0");
    // Not Black's turn; an occupied point; a selection or a step during placement.
    for line in [
        "play b d4",
        "play black d4",
        "play w c3",
        "play w xc3",
        "play w c3-c4",
    ] {
        assert_eq!(refused(&mut s, line), "illegal move", "{line}");
    }
    // Not in the notation, or no colour: syntax errors, nothing played.
    for line in [
        "play w z9",
        "play w c7",
        "play w c3-e5",
        "play w",
        "play w d4 e4",
    ] {
        assert!(refused(&mut s, line).starts_with("syntax error"), "{line}");
    }
    let why = refused(&mut s, "play red d4");
    assert!(why.starts_with("syntax error: invalid color"), "{why}");
    // Colour words and actions in any case.
    assert_eq!(ok(&mut s, "play WHITE D4"), "");
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "black");
}

/// Black completes a square at a1 b1 a2 b2 and owes a mark: Black acts twice in a row.
#[test]
fn the_same_colour_acts_again_while_it_owes_a_selection() {
    let mut s = session();
    for (i, a) in ["a1", "d4", "b1", "e4", "a2", "f4", "b2"]
        .iter()
        .enumerate()
    {
        let c = if i % 2 == 0 { "b" } else { "w" };
        assert_eq!(ok(&mut s, &format!("play {c} {a}")), "", "{a}");
    }
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "black");
    let mut legal: Vec<String> = ok(&mut s, "liuzhou-legal")
        .split_whitespace()
        .map(String::from)
        .collect();
    legal.sort();
    assert_eq!(legal, ["xd4", "xe4", "xf4"]);
    assert_eq!(refused(&mut s, "play w c1"), "illegal move");
    assert_eq!(refused(&mut s, "play b c1"), "illegal move");
    assert_eq!(ok(&mut s, "play b xe4"), "");
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "white");
    assert_eq!(lfen(&mut s), "6/6/3WwW/6/BB4/BB4 w place 0 8 0");

    // genmove asks the same colour again while it acts.
    ok(&mut s, "undo");
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "black");
    let mark = ok(&mut s, "genmove b");
    assert!(["xd4", "xe4", "xf4"].contains(&mark.as_str()), "{mark}");
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "white");
}

#[test]
fn genmove_plays_for_the_colour_to_act() {
    let mut s = session();
    let first = ok(&mut s, "genmove b");
    let start = Liuzhou::default();
    let action = start.parse_action(&first).unwrap();
    assert!(start.is_legal(action), "{first}");
    let mut after = start.clone();
    after.play(action).unwrap();
    assert_eq!(lfen(&mut s), after.lfen(), "the action is applied");
    let why = refused(&mut s, "genmove b");
    assert_eq!(why, "it is white's turn, not black's");
    assert!(refused(&mut s, "genmove red").starts_with("syntax error: invalid color"));
    assert!(refused(&mut s, "genmove").starts_with("syntax error"));
    assert!(!ok(&mut s, "genmove white").is_empty());
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "black");
}

#[test]
fn nothing_is_played_once_the_game_is_over() {
    let mut s = session();
    for position in [BLACK_WON, WHITE_WON, DRAWN] {
        ok(&mut s, &format!("liuzhou-set-lfen {position}"));
        for colour in ["b", "w"] {
            assert_eq!(
                refused(&mut s, &format!("genmove {colour}")),
                "the game is over"
            );
        }
        assert_eq!(ok(&mut s, "liuzhou-legal"), "", "{position}");
        assert_eq!(refused(&mut s, "play w a1-a2"), "illegal move");
        assert_eq!(refused(&mut s, "play b f1-f2"), "illegal move");
    }
}

#[test]
fn genmove_answers_resign_when_the_agent_resigns() {
    struct Resigner;
    impl Agent<Liuzhou> for Resigner {
        fn name(&self) -> String {
            "resigner".into()
        }
        fn select_action(&mut self, _: &Liuzhou) -> Result<games::liuzhou::Action, AgentError> {
            unreachable!("decide resigns")
        }
        fn decide(&mut self, _: &Liuzhou) -> Result<Decision<games::liuzhou::Action>, AgentError> {
            Ok(Decision::Resign)
        }
    }
    let mut s = Session::new(Rules::default(), Box::new(Resigner)).unwrap();
    ok(&mut s, "play b c3");
    let before = lfen(&mut s);
    assert_eq!(ask(&mut s, "3 genmove w"), "=3 resign\n\n");
    assert_eq!(lfen(&mut s), before, "a resignation plays nothing");
}

#[test]
fn undo_takes_back_the_last_action() {
    let mut s = session();
    assert_eq!(refused(&mut s, "undo"), "cannot undo");
    ok(&mut s, "play b c3");
    let after_c3 = lfen(&mut s);
    ok(&mut s, "genmove w");
    assert_eq!(ok(&mut s, "undo"), "");
    assert_eq!(lfen(&mut s), after_c3);
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "white");
    assert_eq!(ok(&mut s, "undo"), "");
    assert_eq!(lfen(&mut s), START_LFEN);
    assert_eq!(refused(&mut s, "undo"), "cannot undo");
    // A refused command is nothing to undo.
    ok(&mut s, "play b c3");
    refused(&mut s, "play b d4");
    ok(&mut s, "undo");
    assert_eq!(lfen(&mut s), START_LFEN);
    assert!(refused(&mut s, "undo 2").starts_with("syntax error"));
}

#[test]
fn to_move_legal_and_lfen_describe_the_position() {
    let mut s = session();
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "black");
    assert_eq!(lfen(&mut s), START_LFEN);
    let legal = ok(&mut s, "liuzhou-legal");
    assert_eq!(legal.split(' ').count(), 36, "{legal}");
    assert!(legal.split(' ').any(|a| a == "c3"));
    // In the movement phase: steps, every one legal, and each plays.
    let position = "BWBWBW/WBWBWB/BWBWBW/WBWBWB/BWBW2/WB4 w move 0 40 2";
    ok(&mut s, &format!("liuzhou-set-lfen {position}"));
    let state = Liuzhou::from_lfen(position, Rules::default()).unwrap();
    let mut expected = Vec::new();
    state.legal_actions(&mut expected);
    let mut expected: Vec<String> = expected.iter().map(|&a| state.format_action(a)).collect();
    let mut listed: Vec<String> = ok(&mut s, "liuzhou-legal")
        .split(' ')
        .map(String::from)
        .collect();
    expected.sort();
    listed.sort();
    assert_eq!(listed, expected);
    assert!(listed.iter().all(|a| a.contains('-')), "{listed:?}");
    assert_eq!(ok(&mut s, "liuzhou-to-move"), "white");
    assert_eq!(ok(&mut s, &format!("play w {}", listed[0])), "");
    for cmd in ["liuzhou-to-move x", "liuzhou-legal x", "liuzhou-lfen x"] {
        assert!(refused(&mut s, cmd).starts_with("syntax error"), "{cmd}");
    }
}

#[test]
fn set_lfen_sets_the_position_or_leaves_it() {
    let mut s = session();
    ok(&mut s, "play b c3");
    let position = "6/6/3W2/2B3/6/6 b place 0 2 0";
    assert_eq!(ok(&mut s, &format!("liuzhou-set-lfen {position}")), "");
    assert_eq!(lfen(&mut s), position);
    assert_eq!(refused(&mut s, "undo"), "cannot undo", "history cleared");
    for bad in [
        "",
        "garbage",
        "6/6/6/6/6 b place 0 0 0",
        "6/6/6/6/6/7 b place 0 0 0",
        "6/6/6/6/6/6 x place 0 0 0",
        "6/6/6/6/6/6 b dance 0 0 0",
        "6/6/6/6/6/6 b place 1 0 0",
        "6/6/6/6/6/6 b place 0 0",
        "6/6/6/6/6/6 b place 0 0 zero",
        "6/6/6/6/6/Q5 b place 0 0 0",
    ] {
        let why = refused(&mut s, &format!("liuzhou-set-lfen {bad}"));
        assert!(why.starts_with("syntax error"), "{bad:?}: {why}");
        assert_eq!(lfen(&mut s), position, "{bad:?}");
    }
    // The position plays on from there.
    assert_eq!(ok(&mut s, "play b c4"), "");
}

#[test]
fn final_score_names_the_winner_or_a_draw_once_the_game_is_over() {
    let mut s = session();
    assert_eq!(refused(&mut s, "final_score"), "the game is not over");
    for (position, score) in [(BLACK_WON, "B+"), (WHITE_WON, "W+"), (DRAWN, "0")] {
        ok(&mut s, &format!("liuzhou-set-lfen {position}"));
        assert_eq!(ok(&mut s, "final_score"), score, "{position}");
    }
    // A capture that ends the game: White takes Black's last stone.
    ok(&mut s, "liuzhou-set-lfen 6/6/6/6/W5/BW4 w capture 1 60 5");
    assert_eq!(refused(&mut s, "final_score"), "the game is not over");
    assert_eq!(ok(&mut s, "play w xa1"), "");
    assert_eq!(ok(&mut s, "final_score"), "W+");
    assert!(refused(&mut s, "final_score now").starts_with("syntax error"));
}

/// Records the time each decision was given.
struct Timed {
    inner: Box<dyn Agent<Liuzhou>>,
    given: Arc<Mutex<Vec<Option<Duration>>>>,
    next: Option<Duration>,
}

impl Agent<Liuzhou> for Timed {
    fn name(&self) -> String {
        "timed".into()
    }
    fn set_move_time(&mut self, time: Option<Duration>) {
        self.next = time;
    }
    fn select_action(&mut self, state: &Liuzhou) -> Result<games::liuzhou::Action, AgentError> {
        self.given.lock().unwrap().push(self.next);
        self.inner.select_action(state)
    }
}

#[test]
fn time_settings_and_time_left_limit_genmove() {
    let given = Arc::new(Mutex::new(Vec::new()));
    let agent = Timed {
        inner: random(),
        given: given.clone(),
        next: None,
    };
    let mut s = Session::new(Rules::default(), Box::new(agent)).unwrap();
    ok(&mut s, "genmove b");
    assert_eq!(ok(&mut s, "time_settings 100 0 0"), "");
    ok(&mut s, "genmove w");
    assert_eq!(ok(&mut s, "time_left b 20 0"), "");
    ok(&mut s, "genmove b");
    // Byo-yomi: 10 seconds for 5 actions.
    ok(&mut s, "time_settings 0 10 5");
    ok(&mut s, "genmove w");
    let secs: Vec<Option<f64>> = given
        .lock()
        .unwrap()
        .iter()
        .map(|t| t.map(|t| (t.as_secs_f64() * 100.0).round() / 100.0))
        .collect();
    // No limit; a fortieth of 100 s; of 20 s; a fifth of a 10 s period (each less a fifth and
    // 0.1 s for the pipe).
    assert_eq!(secs, [None, Some(1.9), Some(0.3), Some(1.5)]);
    for (line, why) in [
        (
            "time_settings a b c",
            "main time \"a\" is not a whole number",
        ),
        ("time_settings 300 -1 5", "byo-yomi time \"-1\""),
        ("time_settings 300 30", "takes 3 argument(s)"),
        ("time_left b x 1", "time \"x\" is not a whole number"),
        ("time_left b 1 1.5", "stones \"1.5\""),
        ("time_left red 1 1", "invalid color \"red\""),
    ] {
        let why_given = refused(&mut s, line);
        assert!(
            why_given.starts_with("syntax error") && why_given.contains(why),
            "{line}: {why_given}"
        );
    }
}

#[test]
fn a_search_that_only_the_clock_limits_answers_in_time() {
    let config = GtpConfig {
        agent: "mcts:time=1000".into(),
        ..GtpConfig::default()
    };
    let doc = serde_yaml::Value::Null;
    let agent =
        faces::gtp::liuzhou::make_agent(&config, &Liuzhou::default(), &doc, "x.yaml".as_ref())
            .unwrap();
    let mut s = Session::new(Rules::default(), agent).unwrap();
    // Four seconds in all: a fortieth each, at least 0.05 s.
    ok(&mut s, "time_settings 4 0 0");
    let t0 = Instant::now();
    let action = ok(&mut s, "genmove b");
    assert!(Liuzhou::default().parse_action(&action).is_ok(), "{action}");
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}

#[test]
fn the_config_section_fills_in_what_the_agent_spec_leaves_out() {
    let spec = |agent: &str| {
        GtpConfig {
            agent: agent.into(),
            ..GtpConfig::default()
        }
        .spec()
    };
    assert_eq!(
        spec("net").unwrap(),
        AgentSpec::parse("net:visits=400,threads=1,seed=1,resign=-0.9").unwrap()
    );
    assert_eq!(
        spec("mcts:visits=50,seed=9").unwrap(),
        AgentSpec::parse("mcts:visits=50,seed=9,threads=1,resign=-0.9").unwrap()
    );
    // A clock alone stays a clock alone.
    assert_eq!(
        spec("mcts:time=2").unwrap(),
        AgentSpec::parse("mcts:time=2,threads=1,seed=1,resign=-0.9").unwrap()
    );
    assert_eq!(
        spec("random").unwrap(),
        AgentSpec::parse("random:seed=1").unwrap()
    );
    assert_eq!(
        spec("alphabeta:depth=1").unwrap(),
        AgentSpec::Other("alphabeta:depth=1".into())
    );
    let never = GtpConfig {
        agent: "net".into(),
        model: Some("m.onnx".into()),
        resign_threshold: -1.0,
        visits: 30,
        ..GtpConfig::default()
    };
    assert_eq!(
        never.spec().unwrap(),
        AgentSpec::parse("net:visits=30,threads=1,seed=1,model=m.onnx").unwrap()
    );
    let e = format!("{:#}", spec("mcts:visits=many").unwrap_err());
    assert!(e.contains("gtp.agent") && e.contains("many"), "{e}");
}

/// Random lines of real commands with plausible and absurd arguments: every answer is one
/// well-formed response, and the position is always one the rules read back.
#[test]
fn every_line_gets_one_well_formed_answer() {
    use rand::rngs::SmallRng;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    let mut rng = SmallRng::seed_from_u64(5);
    let mut s = session();
    let words: Vec<&str> = COMMANDS.iter().copied().chain(["frob", "", "#"]).collect();
    let args = [
        "b",
        "w",
        "black",
        "WHITE",
        "x",
        "c3",
        "xc3",
        "c3-c4",
        "a1-a2",
        "z9",
        "6",
        "7",
        "0",
        "-1",
        "7.5",
        "resign",
        "pass",
        "6/6/6/6/6/6",
        "place",
        "move",
        "\u{1F600}",
    ];
    for _ in 0..3_000 {
        let mut line = String::new();
        if rng.gen_bool(0.3) {
            line.push_str(&format!("{} ", rng.gen_range(0..1000)));
        }
        line.push_str(words.choose(&mut rng).unwrap());
        for _ in 0..rng.gen_range(0..4) {
            line.push(' ');
            line.push_str(args.choose(&mut rng).unwrap());
        }
        if let Some(reply) = s.handle(&line) {
            assert!(
                (reply.starts_with('=') || reply.starts_with('?')) && reply.ends_with("\n\n"),
                "{line:?} -> {reply:?}"
            );
            assert!(!reply[..reply.len() - 2].contains("\n\n"), "{reply:?}");
        }
        s.quit = false;
        let text = s.state().lfen();
        assert_eq!(
            Liuzhou::from_lfen(&text, Rules::default()).unwrap().lfen(),
            text
        );
    }
}

#[test]
fn the_shipped_config_s_gtp_section_is_the_default_one() {
    let (doc, path) = setup::config::read("liuzhou", None).unwrap();
    let section: GtpConfig = setup::config::section(&doc, "gtp", &path).unwrap();
    assert_eq!(section, GtpConfig::default());
    let bad = setup::config::parse("gtp: {agnet: mcts}\n", "x.yaml".as_ref()).unwrap();
    let e = setup::config::section::<GtpConfig>(&bad, "gtp", "x.yaml".as_ref())
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.yaml") && e.contains("agnet"), "{e}");
}
