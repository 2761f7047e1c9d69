//! `engine train` end to end on a tiny network: what each iteration measures.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A best model that the gate kept is not measured again against the fixed opponents: its
/// agents' seeds are fixed, so the games would be the same. A promoted one is measured.
#[test]
fn an_unchanged_best_keeps_its_scores_and_a_new_one_is_measured() {
    // Every candidate promoted: each iteration measures.
    let promoted = train_and_check_scores("always", 0.0);
    assert!(promoted.iter().all(|&p| p), "{promoted:?}");
    // Tiny networks rarely win both gate games: mostly carried over. The first candidate
    // replaces the untrained model 0000 without a gate, whatever the threshold.
    let promoted = train_and_check_scores("rarely", 1.0);
    assert!(promoted[0], "{promoted:?}");
}

/// Runs four iterations with `gate_threshold`, checks that an iteration's scores were carried
/// over exactly when the best was kept, and returns whether each iteration promoted.
fn train_and_check_scores(name: &str, gate_threshold: f64) -> Vec<bool> {
    let engine = PathBuf::from(env!("CARGO_BIN_EXE_engine"));
    let trainer = engine.with_file_name("trainer-bridge");
    assert!(
        trainer.is_file(),
        "{} missing: run `cargo test --workspace`",
        trainer.display()
    );
    let dir = std::env::temp_dir().join(format!("engine-train-loop-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run_dir = dir.join("run");
    let config = common::tiny_train_config(
        &dir,
        3,
        &format!(
            "iterations: 4, games_per_iteration: 4, gate_games: 2, gate_visits: 4, \
             gate_threshold: {gate_threshold}, eval_games: 2, eval_visits: 4, eval_mcts_playouts: 8, \
             match_parallel: 2"
        ),
    );
    let (ok, log) = train(&config);
    assert!(ok, "{log}");
    let state = std::fs::read_to_string(run_dir.join("state.yaml")).unwrap();
    let promoted: Vec<bool> = state
        .lines()
        .filter_map(|l| l.trim().strip_prefix("promoted: "))
        .map(|v| v == "true")
        .collect();
    assert_eq!(promoted.len(), 4, "{state}");
    assert!(
        log.contains("iteration 0: candidate 0001 promoted without a gate"),
        "{log}"
    );
    let scores = |what: &str| -> Vec<f64> {
        state
            .lines()
            .filter_map(|l| l.trim().strip_prefix(what))
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let (vs_random, vs_mcts) = (scores("vs_random: "), scores("vs_mcts: "));
    for i in 0..4 {
        let carried = log
            .lines()
            .any(|l| l.contains(&format!("iteration {i}: best")) && l.contains("carried over"));
        // The first iteration measures; later ones carry over exactly when the gate kept the best.
        assert_eq!(carried, i > 0 && !promoted[i], "iteration {i}: {log}");
        if carried {
            assert_eq!(vs_random[i], vs_random[i - 1]);
            assert_eq!(vs_mcts[i], vs_mcts[i - 1]);
        }
    }
    // Every best is rated on the ladder; a promoted one also met the best before it.
    assert_eq!(state.matches("rating: ").count(), 4, "{state}");
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Rating ladder") && report.contains("| model 0000 |"),
        "{report}"
    );
    if let Some(i) = promoted.iter().position(|&p| p) {
        let pairing = format!("a: model {:04}\n  b: model 0000", i + 1);
        assert!(state.contains(&pairing), "{pairing:?} in {state}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    promoted
}

/// A run given bootstrap shards fits its model 0000 on them and keeps them in the replay
/// window beside self-play.
#[test]
fn a_run_starts_from_a_network_fitted_on_bootstrap_shards() {
    let engine = PathBuf::from(env!("CARGO_BIN_EXE_engine"));
    let dir = std::env::temp_dir().join(format!("engine-train-boot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let boot = dir.join("boot");
    let run_dir = dir.join("run");
    let config = common::tiny_train_config(
        &dir,
        3,
        &format!(
            "iterations: 1, games_per_iteration: 4, gate_games: 2, gate_visits: 4, \
             eval_games: 2, eval_visits: 4, eval_mcts_playouts: 8, \
             bootstrap_shards: {}, bootstrap_fit_steps: 3, bootstrap_samples: 100000",
            boot.display()
        ),
    );
    let out = Command::new(&engine)
        .args([
            "bootstrap",
            "--game",
            "liuzhou",
            "--teacher",
            "mcts:visits=16",
            "--opponent",
            "random",
            "--games",
            "4",
            "--config",
        ])
        .arg(&config)
        .arg("--out")
        .arg(&boot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (ok, log) = train(&config);
    assert!(ok, "{log}");
    assert!(log.contains("model 0000: 3 steps on"), "{log}");
    assert!(log.contains("bootstrap positions from"), "{log}");
    // A fitted model 0000 defends at the gate like any best.
    assert!(log.contains("iteration 0: candidate 0001 scored"), "{log}");
    let models = run_dir.join("models");
    assert!(models.join("0000.onnx").is_file() && !models.join("fresh.onnx").exists());
    let kept = std::fs::read_dir(run_dir.join("shards"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().contains("-bootstrap-")
        })
        .count();
    assert!(kept >= 1, "no bootstrap shard in the run's window");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Go with `train.other_boards`: each iteration plays its share of games on the other boards
/// (shards tagged `i0000b7` and `i0000b19`, 7 × 7 and 19 × 19 planes) and fits a network of
/// any size on every board; a
/// network with fully connected heads, and a game of one board, are refused before the run
/// directory is made.
#[test]
fn go_self_play_mixes_boards_for_a_network_of_any_size() {
    let engine = PathBuf::from(env!("CARGO_BIN_EXE_engine"));
    let dir = std::env::temp_dir().join(format!("engine-train-boards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run_dir = dir.join("run");
    let write = |name: &str, network: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "game: {{name: go, size: 5}}\ninference: {{batch_size: 16, intra_threads: 1}}\n\
                 network: {{{network}}}\n\
                 selfplay: {{parallel_games: 4, full_visits: 8, cheap_visits: 2, \
                 positions_per_shard: 60}}\n\
                 fit: {{steps: 3, batch_size: 16}}\n\
                 train: {{run_dir: {}, iterations: 1, games_per_iteration: 4, gate_games: 2, \
                 gate_visits: 4, eval_games: 2, eval_visits: 4, eval_mcts_playouts: 8, \
                 bootstrap_shards: null, bootstrap_fit_steps: 0, bootstrap_samples: 0, \
                 other_boards: [[7, 0.5], [19, 0.25]]}}\n",
                run_dir.display()
            ),
        )
        .unwrap();
        path
    };
    let any = write(
        "any.yaml",
        "blocks: 1, channels: 8, value_hidden: 8, pool_every: 1, pool_channels: 4, \
         policy_pool: 1, value_pool: 1",
    );
    let plain = write("plain.yaml", "blocks: 1, channels: 8, value_hidden: 8");
    let train = |config: &Path, game: &str| {
        Command::new(&engine)
            .args(["train", "--game", game, "--config"])
            .arg(config)
            .env("RUST_LOG", "info")
            .output()
            .unwrap()
    };
    let refused = train(&plain, "go");
    testkit::refused(&refused, &["train.other_boards", "value_pool"]);
    assert!(!run_dir.exists());

    let out = train(&any, "go");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("self-play 7x7"), "{log}");
    let shards: Vec<String> = std::fs::read_dir(run_dir.join("shards"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for tag in ["-i0000-", "-i0000b7-", "-i0000b19-"] {
        assert!(
            shards.iter().any(|s| s.contains(tag)),
            "{tag} in {shards:?}"
        );
    }
    let seven = shards.iter().find(|s| s.contains("-i0000b7-")).unwrap();
    let (meta, _) = shards::ShardMeta::read(&run_dir.join("shards").join(seven)).unwrap();
    assert_eq!((meta.height, meta.width, meta.policy_size), (7, 7, 50));
    let nineteen = shards.iter().find(|s| s.contains("-i0000b19-")).unwrap();
    let (meta, _) = shards::ShardMeta::read(&run_dir.join("shards").join(nineteen)).unwrap();
    assert_eq!((meta.height, meta.width, meta.policy_size), (19, 19, 362));
    assert!(log.contains("self-play 19x19"), "{log}");
    assert!(log.contains("window by board"), "{log}");
    assert!(run_dir.join("models/0001.onnx").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// With `selfplay_precision: auto` and `fit.int8`, self-play plays the best model's int8 file
/// once it has one (model 0000, fresh, has none), and the gate still plays fp32.
#[test]
fn self_play_plays_the_best_models_int8_file_where_fit_wrote_one() {
    let dir = std::env::temp_dir().join(format!("engine-train-int8-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run_dir = dir.join("run");
    let config = common::tiny_train_config(
        &dir,
        3,
        "iterations: 2, games_per_iteration: 4, gate_games: 2, gate_visits: 4, \
         gate_threshold: 0.0, eval_games: 0, selfplay_precision: auto",
    );
    // Without fit.int8 there would be no int8 file to play: refused before anything is written.
    let (ok, log) = train(&config);
    assert!(!ok && log.contains("set fit.int8: true"), "{log}");
    assert!(!run_dir.exists());
    with_int8_fits(&config);
    let (ok, log) = train(&config);
    assert!(ok, "{log}");
    let models = run_dir.join("models");
    assert!(models.join("0001.int8.onnx").is_file(), "{log}");
    assert!(!models.join("0000.int8.onnx").exists(), "{log}");
    // Which arithmetic each network was loaded in, in the order they were loaded.
    let loads: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("liuzhou generation"))
        .map(|l| {
            if l.contains(", int8,") {
                "int8"
            } else {
                "fp32"
            }
        })
        .collect();
    // Iteration 0's self-play (model 0000) and gate in fp32; iteration 1's self-play
    // (model 0001, promoted) in int8; its gate in fp32 again.
    let first_int8 = loads.iter().position(|&p| p == "int8");
    assert!(first_int8.is_some_and(|k| k > 0), "{loads:?}\n{log}");
    assert!(log.contains("0001.int8.onnx (liuzhou generation"), "{log}");
    assert_eq!(loads.last(), Some(&"fp32"), "{loads:?}\n{log}");

    // A run from that model brings its int8 file: its first self-play is in int8.
    let from = models.join("0001.safetensors");
    let second = dir.join("second");
    std::fs::create_dir_all(&second).unwrap();
    let config = common::tiny_train_config(
        &second,
        3,
        &format!(
            "iterations: 1, games_per_iteration: 4, gate_games: 2, gate_visits: 4, \
             eval_games: 0, selfplay_precision: auto, init_from: {}",
            from.display()
        ),
    );
    with_int8_fits(&config);
    let (ok, log) = train(&config);
    assert!(ok, "{log}");
    let first = log
        .lines()
        .find(|l| l.contains("iteration 0: self-play with onnx"));
    assert!(first.is_some_and(|l| l.contains("0000.int8.onnx")), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `engine train --config CONFIG` with the info log: whether it succeeded, and its log.
fn train(config: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["train", "--config"])
        .arg(config)
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), log)
}

/// Makes a `common::tiny_train_config` file's fits write each candidate's int8 file.
fn with_int8_fits(config: &Path) {
    let text = std::fs::read_to_string(config).unwrap();
    std::fs::write(config, text.replace("fit: {", "fit: {int8: true, ")).unwrap();
}
