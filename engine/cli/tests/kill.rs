//! Killing `engine selfplay` with SIGKILL loses no finished shard and leaves no half file that a
//! reader accepts; a restarted run carries on beside the old shards.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-kill-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn finished_shards(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("safetensors"))
        .collect();
    v.sort();
    v
}

#[test]
fn selfplay_survives_sigkill() {
    let dir = tmpdir("selfplay");
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        "game: {lose_below: 1}\nselfplay: {parallel_games: 8, full_visits: 16, cheap_visits: 4, positions_per_shard: 40}\n",
    )
    .unwrap();
    let out = dir.join("shards");
    let engine = env!("CARGO_BIN_EXE_engine");
    let mut child = Command::new(engine)
        .args([
            "selfplay", "--model", "uniform", "--games", "100000", "--config",
        ])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while (!out.exists() || finished_shards(&out).len() < 3)
        && began.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let before = finished_shards(&out);
    assert!(
        before.len() >= 3,
        "only {} shards after {:?}",
        before.len(),
        began.elapsed()
    );
    for p in &before {
        shards::Shard::read(p).unwrap_or_else(|e| panic!("a finished shard does not read: {e}"));
    }
    // Anything else in the directory is a temporary file that readers ignore.
    for e in std::fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(
            name.ends_with(".safetensors") || (name.starts_with('.') && name.ends_with(".tmp")),
            "{name}"
        );
    }
    assert!(shards::read_newest(&out, "liuzhou", 1000).unwrap().len() == before.len());

    // A new run adds its shards beside the old ones.
    let status = Command::new(engine)
        .args(["selfplay", "--model", "uniform", "--games", "3", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let after = finished_shards(&out);
    assert!(after.len() > before.len());
    assert!(before.iter().all(|p| after.contains(p)));
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let engine = env!("CARGO_BIN_EXE_engine");
    let dir = tmpdir("bad");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "perft".into(),
                "--depth".into(),
                "2".into(),
                "--position".into(),
                "6/6 b".into(),
            ],
            "LFEN",
        ),
        (
            vec![
                "perft".into(),
                "--depth".into(),
                "1".into(),
                "--lose-below".into(),
                "0".into(),
            ],
            "lose_below",
        ),
        (
            vec![
                "selfplay".into(),
                "--model".into(),
                "uniform".into(),
                "--out".into(),
                dir.to_string_lossy().into(),
                "--config".into(),
                "/nonexistent.yaml".into(),
            ],
            "nonexistent",
        ),
    ];
    let bad_config = dir.join("bad.yaml");
    std::fs::write(&bad_config, "selfplay: {parallel_gmes: 3}\n").unwrap();
    let mut cases = cases;
    cases.push((
        vec![
            "selfplay".into(),
            "--model".into(),
            "uniform".into(),
            "--out".into(),
            dir.to_string_lossy().into(),
            "--config".into(),
            bad_config.to_string_lossy().into(),
        ],
        "parallel_gmes",
    ));
    for (args, needle) in cases {
        let out = Command::new(engine).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
