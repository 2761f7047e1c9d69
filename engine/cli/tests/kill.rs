//! Killing `engine selfplay` with SIGKILL loses no finished shard and leaves no half file that a
//! reader accepts; a restarted run carries on beside the old shards.

mod common;

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
        let err = testkit::refused(&out, &[needle]);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `engine train` killed mid-run and started again finishes its iterations, keeping every
/// finished shard and model. Needs the trainer-bridge binary beside the engine's
/// (`cargo test --workspace` builds both).
#[test]
fn train_resumes_after_sigkill() {
    let engine = PathBuf::from(env!("CARGO_BIN_EXE_engine"));
    let trainer = engine.with_file_name("trainer-bridge");
    assert!(
        trainer.is_file(),
        "{} missing: run `cargo test --workspace`",
        trainer.display()
    );
    let dir = tmpdir("train");
    let run_dir = dir.join("run");
    let config = common::tiny_train_config(
        &dir,
        3,
        "iterations: 3, games_per_iteration: 6, gate_games: 2, gate_visits: 4, eval_games: 0",
    );
    let train = || {
        let mut c = Command::new(&engine);
        c.args(["train", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    };
    // Kill as soon as the first iteration's shards are being written.
    let mut child = train().spawn().unwrap();
    let shards_dir = run_dir.join("shards");
    let began = Instant::now();
    while (!shards_dir.exists() || finished_shards(&shards_dir).is_empty())
        && began.elapsed() < Duration::from_secs(300)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = finished_shards(&shards_dir);
    assert!(!kept.is_empty(), "no shard before the kill");

    let status = train().status().unwrap();
    assert!(status.success());
    let state = std::fs::read_to_string(run_dir.join("state.yaml")).unwrap();
    assert!(state.contains("iterations: 3"), "{state}");
    let after = finished_shards(&shards_dir);
    assert!(
        kept.iter().all(|p| after.contains(p)),
        "a finished shard was lost"
    );
    for p in &after {
        shards::Shard::read(p).unwrap();
    }
    for n in 0..=3 {
        assert!(
            run_dir.join(format!("models/{n:04}.onnx")).is_file(),
            "model {n}"
        );
    }
    assert!(run_dir.join("report.svg").is_file() && run_dir.join("best.onnx").is_file());
}

/// The processes whose command line contains `needle` (Linux: from /proc).
#[cfg(target_os = "linux")]
fn processes_with(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            // A zombie has an empty command line: it is gone but for its exit status.
            String::from_utf8_lossy(&cmd).contains(needle)
        })
        .collect()
}

/// `engine train` killed while `trainer-bridge fit` runs takes the fit with it: a restarted
/// loop must not find a second fit writing the same candidate.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_train_takes_its_fit_with_it() {
    let engine = PathBuf::from(env!("CARGO_BIN_EXE_engine"));
    assert!(engine.with_file_name("trainer-bridge").is_file());
    let dir = tmpdir("train-fit");
    let run_dir = dir.join("run");
    // A fit far longer than the test: it can only end by the engine's death.
    let config = common::tiny_train_config(
        &dir,
        100_000_000,
        "iterations: 1, games_per_iteration: 4, eval_games: 0",
    );
    let mut child = Command::new(&engine)
        .args(["train", "--config"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let marker = run_dir.join("shards").display().to_string();
    let fit_running = || !processes_with(&format!("fit\0{marker}")).is_empty();
    let began = Instant::now();
    while !fit_running() && began.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(fit_running(), "trainer-bridge fit never started");
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    while fit_running() && killed.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!fit_running(), "trainer-bridge fit outlived the engine");
    let _ = std::fs::remove_dir_all(&dir);
}
