//! The strength levels through the binary: `engine levels` calibrates a small ladder end to end
//! and resumes from its kept pairings; every level of every game plays legal moves with the
//! shipped networks in `engine match`.

use std::path::PathBuf;
use std::process::{Command, Output};

use players::levels::{self, Table};

fn engine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine"));
    // The repository root, where configs/ and models/ live.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn stdout_of(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("levels-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_small_calibration_rates_its_players_writes_the_table_and_resumes() {
    let dir = temp_dir("ladder");
    let out = dir.join("levels.tsv");
    let run = || {
        engine()
            .args(["levels", "--game", "liuzhou", "--games", "2"])
            .args([
                "--anchors",
                "alphabeta-d2",
                "--levels",
                "beginner",
                "novice",
            ])
            .arg("--dir")
            .arg(&dir)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    };
    let text = stdout_of(&run());
    // random–alphabeta-d2, each level against both anchors, novice against beginner.
    assert_eq!(text.matches(" vs ").count(), 6, "{text}");
    assert!(text.contains("novice vs beginner"), "{text}");
    assert!(!text.contains("(kept)"), "{text}");
    let table = Table::parse(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let built_in = levels::table();
    assert_eq!(
        table.game("xiangqi"),
        built_in.game("xiangqi"),
        "other games kept"
    );
    let liuzhou = table.game("liuzhou").unwrap();
    let played = |key: &str| liuzhou.levels.iter().find(|l| l.key == key).unwrap();
    for key in ["beginner", "novice"] {
        let r = played(key).rating;
        assert_eq!(
            r.games, 6,
            "{key}: two anchors and the other level, two games each"
        );
        assert!(r.elo.is_finite() && r.half_width95 > 0.0, "{key}: {r:?}");
    }
    assert_eq!(
        liuzhou.anchors[0].rating.elo, 0.0,
        "random play anchors the scale"
    );
    assert_eq!(liuzhou.anchors[0].rating.games, 6);
    let unplayed = built_in.game("liuzhou").unwrap();
    assert_eq!(played("master"), unplayed.levels.last().unwrap());
    assert!(text.contains("beginner 入门"), "{text}");

    // Run again: every pairing is kept, the table comes out the same.
    let again = stdout_of(&run());
    assert_eq!(again.matches("(kept)").count(), 6, "{again}");
    let table_again = Table::parse(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(table_again, table);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_settings_are_refused_with_the_reason() {
    for (args, needle) in [
        (&["--levels", "grandmaster"][..], "no level \"grandmaster\""),
        (&["--anchors", "stockfish"][..], "no anchor \"stockfish\""),
        (&["--games", "3"][..], "even"),
    ] {
        let out = engine()
            .args(["levels", "--game", "liuzhou"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// Each level's spec as `engine match` plays it (the shipped networks; Go on 9 × 9), two games
/// against random play, each action checked legal by the match; a short cap keeps it quick.
#[test]
fn every_level_plays_legal_moves_with_the_shipped_networks() {
    for game in ["liuzhou", "xiangqi", "go"] {
        for level in levels::levels(game) {
            let out = engine()
                .args(["match", "--game", game, "--black", &level.spec])
                .args(["--white", "random", "--games", "2", "--max-actions", "30"])
                .output()
                .unwrap();
            let text = stdout_of(&out);
            assert!(text.contains("score"), "{game} {}: {text}", level.key);
        }
    }
}

/// `engine play --level` and `--elo` play a named level in the terminal; a level with
/// `--agent` or `--visits`, or an unknown one, is refused with exit code 2.
#[test]
fn engine_play_takes_a_level_by_name_or_by_elo() {
    use std::io::Write;
    let play = |args: &[&str]| {
        let mut child = engine()
            .arg("play")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A refused command may exit before it reads its input.
        let _ = child.stdin.take().unwrap().write_all(b"quit\n");
        child.wait_with_output().unwrap()
    };
    let xiangqi = levels::levels("xiangqi");
    let weakest = &xiangqi[0];
    let out = play(&[
        "--game",
        "xiangqi",
        "--human",
        "red",
        "--level",
        &weakest.key,
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout_of(&out).contains("Red"), "{out:?}");
    let strongest = xiangqi.last().unwrap();
    let elo = format!("{}", strongest.rating.elo + 500.0);
    let out = play(&["--game", "xiangqi", "--human", "red", "--elo", &elo]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("({})", strongest.key)), "{err}");
    testkit::refused(
        &play(&["--game", "go", "--level", "x", "--visits", "3"]),
        &["--visits"],
    );
    testkit::refused(
        &play(&["--game", "go", "--level", "nope"]),
        &["--level", "nope"],
    );
    testkit::refused(&play(&["--game", "go", "--elo", "nan"]), &["--elo", "NaN"]);
}
