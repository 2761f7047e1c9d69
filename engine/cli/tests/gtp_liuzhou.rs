//! Liuzhou over GTP end to end: `engine match` refereeing the built engine's own `engine gtp
//! --game liuzhou` (its games must be the games the same agents play directly), a program whose
//! answers the rules refuse losing by forfeit, and the dialect through pipes.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

fn engine(args: &[&str]) -> Output {
    let out = Command::new(ENGINE)
        .args(args)
        .output()
        .expect("run the engine");
    assert!(
        out.status.success(),
        "{args:?}\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gtp_liuzhou_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The games of a record file as their result and actions (the players' names left out).
fn games(record: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(record).unwrap();
    let mut games = Vec::new();
    let (mut result, mut actions) = (String::new(), String::new());
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("[Result \"") {
            if !result.is_empty() {
                games.push((std::mem::take(&mut result), std::mem::take(&mut actions)));
            }
            result = r.trim_end_matches("\"]").to_string();
        } else if !line.starts_with('[') && line.contains(". ") {
            actions += line.split_once(". ").unwrap().1;
            actions.push(' ');
        }
    }
    games.push((result, actions));
    games
}

/// The result line (`… N wins, N draws, N losses (N games)`) from its counts on.
fn tally(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains(" wins, "))
        .unwrap_or_else(|| panic!("{text}"));
    let at = line.rfind(": ").unwrap();
    line[at + 2..].to_string()
}

#[test]
fn a_match_over_gtp_ends_as_the_same_agents_played_directly() {
    let dir = scratch("same");
    let over_gtp = dir.join("gtp.txt");
    let direct = dir.join("direct.txt");
    let black = format!("gtp:cmd={ENGINE} gtp --game liuzhou --agent random --seed 3");
    let white = format!("gtp:cmd={ENGINE} gtp --game liuzhou --agent alphabeta:depth=1");
    let record = over_gtp.to_str().unwrap();
    let a = engine(&[
        "match", "--game", "liuzhou", "--black", &black, "--white", &white, "--games", "4",
        "--record", record,
    ]);
    let record = direct.to_str().unwrap();
    let b = engine(&[
        "match",
        "--game",
        "liuzhou",
        "--black",
        "random:seed=3",
        "--white",
        "alphabeta:depth=1",
        "--games",
        "4",
        "--record",
        record,
    ]);
    assert_eq!(tally(&a), tally(&b));
    let (g, d) = (games(&over_gtp), games(&direct));
    assert_eq!(g.len(), 4);
    assert_eq!(g, d, "the same games, action for action");
    // The games were played out: placements, marks or removals, steps.
    assert!(g.iter().all(|(_, actions)| actions.contains('-')), "{g:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Liuzhou GTP program that answers every `genmove` with `answer`.
fn fake_program(dir: &Path, answer: &str) -> String {
    let path = dir.join(format!("answers_{}.sh", answer.replace(' ', "_")));
    let script = format!(
        "while IFS= read -r line; do case \"$line\" in \
         name) printf '= stubborn\\n\\n' ;; \
         genmove*) printf '= {answer}\\n\\n' ;; \
         quit) printf '=\\n\\n'; exit 0 ;; \
         *) printf '=\\n\\n' ;; esac; done\n"
    );
    std::fs::write(&path, script).unwrap();
    format!("gtp:cmd=sh {}", path.display())
}

#[test]
fn an_illegal_or_unreadable_answer_loses_the_game_for_its_sender() {
    let dir = scratch("forfeit");
    // `a1` is legal only while a1 is empty: the program's second placement is refused.
    for (answer, why, games_lost) in [
        (
            "z9",
            "answered `genmove b` with \"z9\", not an action",
            "2 losses",
        ),
        ("a1", "answered `genmove", "2 losses"),
    ] {
        let record = dir.join(format!("{answer}.txt"));
        let out = engine(&[
            "match",
            "--game",
            "liuzhou",
            "--black",
            &fake_program(&dir, answer),
            "--white",
            "random:seed=2",
            "--games",
            "2",
            "--record",
            record.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            tally(&out).starts_with(&format!("0 wins, 0 draws, {games_lost}")),
            "{text}"
        );
        assert!(text.contains("endings: forfeit 2"), "{text}");
        for (game, colour) in [(1, "Black"), (2, "White")] {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("game {game}: ")))
                .unwrap_or_else(|| panic!("{text}"));
            assert!(
                line.contains(&format!("({colour}) forfeited: stubborn: ")),
                "{line}"
            );
        }
        assert!(text.contains(why), "{text}");
        let saved = std::fs::read_to_string(&record).unwrap();
        assert!(saved.contains("[Ending \"Black forfeited: "), "{saved}");
        assert!(saved.contains("[Ending \"White forfeited: "), "{saved}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_dialect_answers_through_pipes_and_help_names_it() {
    let mut child = Command::new(ENGINE)
        .args(["gtp", "--game", "liuzhou", "--agent", "alphabeta:depth=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str| {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut answer = Vec::new();
        loop {
            let mut l = String::new();
            assert!(stdout.read_line(&mut l).unwrap() > 0, "engine closed");
            if l.trim_end().is_empty() {
                break;
            }
            answer.push(l.trim_end().to_string());
        }
        answer.join("\n")
    };
    assert_eq!(ask("1 protocol_version"), "=1 2");
    assert_eq!(ask("boardsize 9"), "? unacceptable size");
    assert_eq!(ask("play b c3"), "=");
    let reply = ask("genmove w");
    assert!(reply.starts_with("= ") && reply.len() == 4, "{reply}");
    assert_eq!(ask("liuzhou-to-move"), "= black");
    assert_eq!(ask("2 liuzhou-set-lfen 6/6/6/6/6/B4W w move 0 50 36"), "=2");
    assert_eq!(ask("final_score"), "= 0");
    assert_eq!(ask("genmove w"), "? the game is over");
    assert_eq!(ask("quit"), "=");
    assert!(child.wait().unwrap().success());

    let help = String::from_utf8(engine(&["gtp", "--help"]).stdout).unwrap();
    assert!(
        help.contains("--game") && help.contains("liuzhou"),
        "{help}"
    );
    // Go stays the default: Go's boardsize answers.
    let out = Command::new(ENGINE)
        .args(["gtp", "--agent", "random"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut go = out;
    writeln!(go.stdin.as_mut().unwrap(), "boardsize 19\nplay b D4\nquit").unwrap();
    let got = go.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&got.stdout), "=\n\n=\n\n=\n\n");
}

#[test]
fn another_game_s_config_or_flags_are_refused() {
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let go = configs.join("go.yaml");
    for (args, needle) in [
        (
            vec!["--config", go.to_str().unwrap()],
            "this file is for go, not liuzhou",
        ),
        (vec!["--size", "9"], "--size and --komi are for Go"),
        (vec!["--agent", "katago"], "katago"),
    ] {
        let out = Command::new(ENGINE)
            .args(["gtp", "--game", "liuzhou"])
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        testkit::refused(&out, &[needle]);
    }
    let out = Command::new(ENGINE)
        .args(["gtp", "--game", "xiangqi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    testkit::refused(&out, &["engine uci"]);
}
