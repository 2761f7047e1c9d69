//! `engine import` and `engine bootstrap` end to end: records and a teacher's games become
//! shards that `trainer-bridge fit` reads, and bad input exits 2 naming the place.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn engine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine"));
    // The repository root, where configs/ lives.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn records(name: &str) -> String {
    format!("{}/../teach/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("learn-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn shards_in(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "safetensors")
        })
        .count()
}

#[test]
fn go_records_are_imported_listed_and_counted() {
    let out_dir = fresh_dir("sgf");
    let out = engine()
        .args(["import", "--game", "go", "--list", "--out"])
        .arg(&out_dir)
        .arg(records("ok"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("moves="), "{stdout}");
    assert!(stdout.contains(" final="), "{stdout}");
    let last = stdout.lines().last().unwrap();
    assert!(last.starts_with("imported "), "{last}");
    assert!(last.contains(" positions; skipped "), "{last}");
    assert!(shards_in(&out_dir) >= 1);
    std::fs::remove_dir_all(&out_dir).unwrap();
}

#[test]
fn a_bad_record_is_skipped_or_with_strict_stops_with_exit_2() {
    let out_dir = fresh_dir("bad");
    let bad = records("bad/illegal.sgf");
    let out = engine()
        .args(["import", "--game", "go", "--out"])
        .arg(&out_dir)
        .args([&bad, &records("ok/small.sgf")])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("illegal.sgf: game 1, move "), "{stdout}");
    let strict = engine()
        .args(["import", "--game", "go", "--strict", "--out"])
        .arg(&out_dir)
        .arg(&bad)
        .output()
        .unwrap();
    testkit::refused(&strict, &["illegal.sgf"]);
    // Liuzhou has no record format: said in one line, exit 2.
    let none = engine()
        .args(["import", "--game", "liuzhou", "--out"])
        .arg(&out_dir)
        .arg(&bad)
        .output()
        .unwrap();
    testkit::refused(&none, &["liuzhou has no game-record format"]);
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn xiangqi_pgn_in_gbk_is_imported() {
    let dir = fresh_dir("pgn");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = "[Game \"Chinese Chess\"]\n[Result \"1-0\"]\n1. 炮二平五 马８进７ 2. 马二进三 车９平８ 1-0\n";
    let (gbk, _, _) = encoding_rs::GBK.encode(pgn);
    std::fs::write(dir.join("game.pgn"), &gbk).unwrap();
    let out_dir = dir.join("shards");
    let out = engine()
        .args(["import", "--game", "xiangqi", "--list", "--out"])
        .arg(&out_dir)
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("#1 moves=4 result=1-0"), "{stdout}");
    assert!(
        stdout.ends_with("imported 1 games, 4 positions; skipped 0 games\n"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bootstrap_writes_shards_from_an_agent_teacher_and_resumes() {
    let out_dir = fresh_dir("boot");
    let run = || {
        engine()
            .args([
                "bootstrap",
                "--game",
                "liuzhou",
                "--teacher",
                "mcts:visits=20",
                "--opponent",
                "random",
                "--games",
                "2",
                "--out",
            ])
            .arg(&out_dir)
            .output()
            .unwrap()
    };
    let out = run();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("positions ("), "{stdout}");
    assert!(shards_in(&out_dir) >= 1);
    // Started again, the finished shards are kept and nothing is played twice.
    let again = run();
    let (stdout, _) = text(&again);
    assert!(stdout.starts_with("0 games"), "{stdout}");
    let bad = engine()
        .args([
            "bootstrap",
            "--game",
            "liuzhou",
            "--teacher",
            "mcts:visits=x",
            "--games",
            "1",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    testkit::refused(&bad, &["--teacher"]);
    std::fs::remove_dir_all(&out_dir).unwrap();
}
