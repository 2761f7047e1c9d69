//! `engine match` end to end: the binary runs a short match, and bad agent specs are refused
//! with a message naming the key, and a non-zero exit.

use std::process::Command;

fn engine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine"));
    // The repository root, where configs/ lives.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

#[test]
fn a_short_match_reports_the_score() {
    let out = engine()
        .args([
            "match",
            "--game",
            "liuzhou",
            "--black",
            "mcts:visits=30",
            "--white",
            "random",
            "--games",
            "2",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("(2 games)"), "{text}");
    assert!(text.contains("95% confidence interval"), "{text}");
    // One game on each side: the split by colour names both.
    let by_colour = text
        .lines()
        .find(|l| l.starts_with("by colour: "))
        .unwrap_or_default();
    assert!(
        by_colour.contains("as Black ") && by_colour.contains("; as White "),
        "{text}"
    );
}

/// Two deterministic players from one start play two games over and over: the report says so,
/// and varied starts (`--openings`) make every game another.
#[test]
fn games_repeated_move_for_move_are_reported() {
    let run = |extra: &[&str]| {
        let out = engine()
            .args(["match", "--game", "liuzhou", "--black", "alphabeta:depth=2"])
            .args(["--white", "alphabeta:depth=2", "--games", "4"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let same = run(&[]);
    assert!(
        same.contains("warning: 2 of 4 games repeat an earlier one move for move"),
        "{same}"
    );
    let varied = run(&["--openings", "4"]);
    assert!(!varied.contains("repeat an earlier"), "{varied}");
}

#[test]
fn a_bad_agent_spec_names_the_key() {
    let out = engine()
        .args(["match", "--black", "mcts:visits=many", "--white", "random"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("visits") && err.contains("many"), "{err}");
}

#[test]
fn a_missing_model_is_an_error_not_a_panic() {
    let out = engine()
        .args([
            "match",
            "--black",
            "net:model=no/such/model.onnx",
            "--white",
            "random",
            "--games",
            "1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no/such/model.onnx"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn an_agent_kind_the_game_lacks_is_refused() {
    let out = engine()
        .args([
            "match",
            "--game",
            "go",
            "--black",
            "alphabeta:depth=2",
            "--white",
            "random",
        ])
        .output()
        .unwrap();
    let err = testkit::refused(&out, &[]);
    assert!(
        err.contains("unknown agent kind") && err.contains("go"),
        "{err}"
    );
}

#[test]
fn a_net_batch_above_the_model_s_is_refused() {
    let out = engine()
        .args([
            "match",
            "--black",
            "net:model=uniform,batch=100000",
            "--white",
            "random",
            "--games",
            "1",
        ])
        .output()
        .unwrap();
    let err = testkit::refused(&out, &[]);
    assert!(
        err.contains("batch=100000 is more than the model's batch size 64"),
        "{err}"
    );
}

/// A Go config for a small board, written where the test may write.
fn small_go_config(name: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, "game:\n  size: 5\n  move_cap: {moves: 60}\n").unwrap();
    path
}

#[test]
fn a_gtp_engine_plays_go_matches() {
    // The engine's own GTP face is the child: both ends of the protocol are checked.
    let config = small_go_config("match_gtp.yaml");
    let black = format!(
        "gtp:cmd={} gtp --agent playout",
        env!("CARGO_BIN_EXE_engine")
    );
    let out = engine()
        .args(["match", "--game", "go", "--white", "random", "--games", "2"])
        .args(["--black", &black, "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{err}");
    assert!(text.contains("(2 games)"), "{text}");
    for (spec, needle) in [
        ("gtp", "gtp needs cmd=COMMAND"),
        ("gtp:cmd=/nonexistent/gnugo", "cannot start"),
        ("gtp:cmd=x,timeout=0", "timeout '0'"),
        ("gtp:cmd=x,level=3", "unknown parameter 'level'"),
        ("gnugo", "unknown agent kind 'gnugo' for go"),
    ] {
        let out = engine()
            .args(["match", "--game", "go", "--white", "random", "--games", "1"])
            .args(["--black", spec])
            .output()
            .unwrap();
        testkit::refused(&out, &[needle]);
    }
}

#[test]
fn games_played_in_parallel_are_all_counted_and_reproducible() {
    let run = |parallel: &str| {
        let out = engine()
            .args([
                "match",
                "--black",
                "mcts:visits=20",
                "--white",
                "net:model=uniform,visits=20",
                "--games",
                "7",
                "--parallel",
                parallel,
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let three = run("3");
    assert!(three.contains("7 games, colours alternate"), "{three}");
    assert!(three.contains(", 3 at a time"), "{three}");
    assert!(three.contains("(7 games)"), "{three}");
    // Each pair reports its own searches.
    assert_eq!(three.matches("[black]: ").count(), 3, "{three}");
    // The same games again: which pair plays which game, and its seeds, are fixed.
    let result = |t: &str| {
        t.lines()
            .find(|l| l.contains("(7 games)"))
            .map(String::from)
    };
    assert_eq!(result(&three), result(&run("3")));

    let out = engine()
        .args([
            "match",
            "--black",
            "random",
            "--white",
            "random",
            "--parallel",
            "0",
        ])
        .output()
        .unwrap();
    testkit::refused(&out, &["--parallel"]);
}

/// `--pgn` saves every game of a Xiangqi match as PGN that the importer reads back, with the
/// colours' names and results; `--sgf` an SGF collection for Go.
#[test]
fn the_games_of_a_match_are_saved_as_records_that_read_back() {
    let dir = std::env::temp_dir().join(format!("match-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("games.pgn");
    let out = engine()
        .args(["match", "--game", "xiangqi", "--black", "alphabeta:depth=1"])
        .args([
            "--white",
            "random",
            "--games",
            "3",
            "--parallel",
            "2",
            "--pgn",
        ])
        .arg(&pgn)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&pgn).unwrap();
    let games: Vec<_> = games::xiangqi::pgn::read_pgn_games(text.as_bytes())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(games.len(), 3, "{text}");
    // Colours alternate: the first agent is Red in games 1 and 3.
    let red: Vec<_> = games.iter().map(|g| g.tag("Red").unwrap()).collect();
    assert!(
        red[0].starts_with("alphabeta") && red[2].starts_with("alphabeta"),
        "{red:?}"
    );
    assert!(red[1].starts_with("random"), "{red:?}");
    for g in &games {
        assert!(
            g.record.result.is_some(),
            "a finished game has its result: {text}"
        );
        assert!(!g.record.actions.is_empty());
    }

    let sgf = dir.join("games.sgf");
    let out = engine()
        .args(["match", "--game", "go", "--black", "random"])
        .args(["--white", "random", "--games", "2", "--sgf"])
        .arg(&sgf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&sgf).unwrap();
    let records = games::go::sgf::read_records(&text, &games::go::GoRules::default());
    assert_eq!(records.len(), 2, "{text}");
    assert!(records.iter().all(Result::is_ok), "{records:?}");

    // A record path that cannot be written fails before any game is played.
    let out = engine()
        .args([
            "match", "--black", "random", "--white", "random", "--games", "1",
        ])
        .args(["--record", "/no/such/dir/games.txt"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--record"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `engine ladder` plays every pairing and prints a rating table anchored at the first agent.
#[test]
fn a_ladder_rates_every_agent_of_its_panel() {
    let dir = std::env::temp_dir().join(format!("ladder-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("ladder.svg");
    let out = engine()
        .args(["ladder", "--game", "liuzhou", "--agents", "random"])
        .args(["mcts:visits=20", "alphabeta:depth=1", "--games", "2"])
        .args(["--openings", "2", "--plot"])
        .arg(&plot)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches(" vs ").count(), 3, "three pairings: {text}");
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("rank"))
        .collect();
    assert_eq!(table.len(), 4, "{text}");
    assert!(table
        .iter()
        .any(|l| l.contains("random[1]") && l.contains("anchor")));
    assert!(
        table[1..]
            .iter()
            .all(|l| l.contains("   4 ") || l.contains(" 4 ")),
        "{text}"
    );

    // The plot names every agent of the panel.
    let svg = std::fs::read_to_string(&plot).unwrap();
    for name in ["random[1]", "alphabeta"] {
        assert!(svg.contains(name), "{name} not in the plot");
    }
    std::fs::remove_dir_all(&dir).ok();

    let out = engine()
        .args(["ladder", "--agents", "random"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a panel of one is refused");
    let out = engine()
        .args(["ladder", "--agents", "random", "random", "--plot"])
        .arg(dir.join("missing").join("ladder.svg"))
        .output()
        .unwrap();
    testkit::refused(&out, &["--plot"]);
}

fn gnugo() -> Option<String> {
    testkit::gnugo("handicap match not played")
}

/// Runs `engine match --game go` with `args`; returns stdout, failing with both streams.
fn go_match(args: &[&str]) -> String {
    let out = engine()
        .args(["match", "--game", "go"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}\n{text}\n{err}");
    text
}

#[test]
fn a_handicap_match_against_gnu_go_keeps_the_colours() {
    let Some(gnugo) = gnugo() else { return };
    let gnugo = format!("gtp:cmd={gnugo} --mode gtp --level 1");
    // GNU Go takes the stones; then our search does, against GNU Go as White.
    for (black, white) in [
        (gnugo.as_str(), "mcts:visits=30"),
        ("mcts:visits=30", gnugo.as_str()),
    ] {
        let text = go_match(&[
            "--handicap",
            "3",
            "--games",
            "2",
            "--black",
            black,
            "--white",
            white,
        ]);
        assert!(
            text.contains("2 games, handicap 3: ")
                && text.contains("is Black with 3 stones in every game"),
            "{text}"
        );
        let score = text
            .lines()
            .find(|l| l.contains("(2 games)"))
            .unwrap_or_default();
        assert!(score.contains("(handicap 3, "), "{text}");
        assert!(score.contains("Black in every game)"), "{text}");
        let by_colour = text
            .lines()
            .find(|l| l.starts_with("by colour: "))
            .unwrap_or_default();
        assert!(
            by_colour.starts_with("by colour: as Black ") && !by_colour.contains("White"),
            "{text}"
        );
    }
}

#[test]
fn the_engine_s_own_gtp_face_takes_handicap_stones() {
    let engine_gtp = format!(
        "gtp:cmd={} gtp --agent playout",
        env!("CARGO_BIN_EXE_engine")
    );
    let text = go_match(&[
        "--handicap",
        "2",
        "--games",
        "2",
        "--black",
        &engine_gtp,
        "--white",
        "random",
    ]);
    assert!(text.contains("(handicap 2, "), "{text}");
    for (flags, needle) in [
        (["--handicap", "1"], "at least 2 stones, not 1"),
        (
            ["--handicap", "10"],
            "no fixed placement of 10 stones (at most 9)",
        ),
    ] {
        let out = engine()
            .args([
                "match", "--game", "go", "--black", "random", "--white", "random",
            ])
            .args(flags)
            .output()
            .unwrap();
        let err = testkit::refused(&out, &[]);
        assert!(
            err.contains(needle) && err.contains("--handicap"),
            "{flags:?}: {err}"
        );
    }
    let out = engine()
        .args([
            "match", "--game", "xiangqi", "--black", "random", "--white", "random",
        ])
        .args(["--handicap", "2"])
        .output()
        .unwrap();
    let err = testkit::refused(&out, &[]);
    assert!(err.contains("a handicap is for Go matches"), "{err}");
}

/// How a `uci:` spec names Fairy-Stockfish: by its bare name where Debian puts it (the engine
/// looks in /usr/games), else its path; `None` (the test then passes, unless
/// `ENGINE_REQUIRE_ORACLES=1`) when it is missing.
fn fairy_stockfish() -> Option<String> {
    if std::path::Path::new("/usr/games/fairy-stockfish").is_file() {
        return Some("fairy-stockfish".into());
    }
    let found = players::fairy::find_fairy_stockfish();
    if found.is_none() {
        let msg =
            "fairy-stockfish not found (apt-get install fairy-stockfish): uci match not played";
        if std::env::var("ENGINE_REQUIRE_ORACLES").is_ok_and(|v| v == "1") {
            panic!("{msg}, but ENGINE_REQUIRE_ORACLES=1");
        }
        eprintln!("SKIPPED: {msg}");
    }
    found.map(|p| p.to_string_lossy().into_owned())
}

#[test]
fn a_uci_engine_with_options_plays_a_xiangqi_match() {
    let Some(fsf) = fairy_stockfish() else { return };
    let white = format!("uci:cmd={fsf},option.UCI_Variant=xiangqi,go=depth 1");
    let out = engine()
        .args([
            "match",
            "--game",
            "xiangqi",
            "--black",
            "alphabeta:depth=3",
            "--games",
            "2",
        ])
        .args(["--white", &white])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{err}");
    assert!(
        text.contains("(2 games)") && text.contains("score "),
        "{text}"
    );
    // An option the engine does not have: one error line that names it, exit code 2.
    let bad = format!("uci:cmd={fsf},option.UCI_Variant=xiangqi,option.Frobnicate=1");
    let out = engine()
        .args([
            "match", "--game", "xiangqi", "--black", "random", "--games", "1",
        ])
        .args(["--white", &bad])
        .output()
        .unwrap();
    let err = testkit::refused(&out, &[]);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("--white") && lines[0].contains("option Frobnicate: refused"),
        "{err}"
    );
}

#[test]
fn uci_agents_of_this_engine_take_options_and_a_limit() {
    // The engine's own UCI face as the external engine: its refusal is named too.
    let ours = format!("uci:cmd={} uci", env!("CARGO_BIN_EXE_engine"));
    let good = format!("{ours},option.Hash=8,go=depth 1");
    let out = engine()
        .args([
            "match", "--game", "xiangqi", "--black", "random", "--games", "1",
        ])
        .args(["--white", &good])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (spec, needle) in [
        (format!("{ours},option.Frob=1"), "option Frob: refused"),
        (format!("{ours},go=ponder"), "go 'ponder' is not depth N"),
    ] {
        let out = engine()
            .args([
                "match", "--game", "xiangqi", "--black", "random", "--games", "1",
            ])
            .args(["--white", &spec])
            .output()
            .unwrap();
        testkit::refused(&out, &[needle]);
    }
}

#[test]
fn a_gtp_agent_takes_setup_commands() {
    let config = small_go_config("match_gtp_setup.yaml");
    let ours = format!(
        "gtp:cmd={} gtp --agent playout",
        env!("CARGO_BIN_EXE_engine")
    );
    let good = format!("{ours},setup=komi 7.5;clear_board");
    let text = go_match(&[
        "--black",
        &good,
        "--white",
        "random",
        "--games",
        "1",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(text.contains("(1 games)"), "{text}");
    let out = engine()
        .args(["match", "--game", "go", "--white", "random", "--games", "1"])
        .args(["--black", &format!("{ours},setup=komi 7.5;frobnicate 3")])
        .output()
        .unwrap();
    let err = testkit::refused(&out, &[]);
    assert!(
        err.contains("answered `frobnicate 3` with an error: unknown command"),
        "{err}"
    );
}
