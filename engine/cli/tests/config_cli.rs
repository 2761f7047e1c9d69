//! Bad configs and arguments of `engine selfplay` and `engine train` fail at startup: exit code
//! 2, a message naming the file, section and key (or the flag or path), and nothing created.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LIUZHOU_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/liuzhou.yaml");
const SHIPPED_MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/liuzhou/best");

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-config-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn engine(args: &[&str], extra: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .args(extra)
        .output()
        .unwrap()
}

/// Exit code 2, no panic, and every needle in stderr; returns stderr.
fn fails_with(out: &Output, needles: &[&str]) -> String {
    let err = testkit::refused(out, needles);
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The shipped Liuzhou config with `from` replaced by `to` (which must occur).
fn variant(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(LIUZHOU_CONFIG).unwrap();
    assert!(text.contains(from), "{from:?} not in the shipped config");
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    path
}

fn selfplay(config: &Path, out: &Path) -> Output {
    let args = ["selfplay", "--model", "uniform", "--games", "1", "--config"];
    engine(&args, &[config, Path::new("--out"), out])
}

#[test]
fn selfplay_refuses_misshapen_configs_and_out_of_range_values() {
    let dir = tmpdir("selfplay");
    let out = dir.join("shards");
    let shaped = [
        ("empty", "", "the file is empty"),
        ("scalar", "hello\n", "the document is a single value"),
        ("list", "- 1\n", "the document is a list"),
        (
            "typo",
            "selfpaly:\n  c_puct: 2\n",
            "unknown section `selfpaly`",
        ),
    ];
    for (name, text, needle) in shaped {
        let path = dir.join(format!("{name}.yaml"));
        std::fs::write(&path, text).unwrap();
        fails_with(&selfplay(&path, &out), &[&format!("{name}.yaml"), needle]);
    }
    let ranged = [
        (
            "c_puct: 1.5",
            "c_puct: .inf",
            "`c_puct` is inf; allowed: a finite number > 0",
        ),
        ("c_puct: 1.5", "c_puct: -3", "`c_puct` is -3"),
        (
            "dirichlet_alpha: 0.3",
            "dirichlet_alpha: 0",
            "`dirichlet_alpha` is 0",
        ),
        (
            "dirichlet_alpha: 0.3",
            "dirichlet_alpha: -1",
            "`dirichlet_alpha` is -1",
        ),
        (
            "dirichlet_epsilon: 0.25",
            "dirichlet_epsilon: 2",
            "`dirichlet_epsilon` is 2; allowed: 0 to 1",
        ),
        (
            "resign_threshold: -0.95",
            "resign_threshold: 5",
            "`resign_threshold` is 5",
        ),
    ];
    for (i, (from, to, needle)) in ranged.into_iter().enumerate() {
        let path = variant(&dir, &format!("sp{i}"), from, to);
        let name = format!("sp{i}.yaml: section `selfplay`: ");
        fails_with(&selfplay(&path, &out), &[&name, needle]);
    }
    let path = variant(&dir, "batch", "batch_size: 64", "batch_size: 0");
    let needle = "batch.yaml: section `inference`: `batch_size` is 0; allowed: 1 to 65536";
    fails_with(&selfplay(&path, &out), &[needle]);
    assert!(!out.exists(), "a refused config created --out");
}

#[test]
fn selfplay_refuses_an_unusable_out_before_playing() {
    let dir = tmpdir("out");
    let file = dir.join("f.txt");
    std::fs::write(&file, "x").unwrap();
    let config = Path::new(LIUZHOU_CONFIG);
    let err = fails_with(
        &selfplay(config, &file),
        &["f.txt: exists and is not a directory"],
    );
    assert!(err.contains("--out"), "{err}");
    let nope = Path::new("/proc/nope");
    fails_with(&selfplay(config, nope), &["/proc/nope: cannot create it"]);
    // No game was played: the summary line never appeared.
    assert!(!String::from_utf8_lossy(&selfplay(config, nope).stdout).contains("games"));
}

fn train(config: &Path, run_dir: &Path, trainer: &str) -> Output {
    let args = [
        "train",
        "--iterations",
        "1",
        "--trainer",
        trainer,
        "--config",
    ];
    engine(&args, &[config, Path::new("--run-dir"), run_dir])
}

#[test]
fn train_checks_its_whole_config_before_creating_anything() {
    let dir = tmpdir("train");
    let run = dir.join("run");
    let cases = [
        (
            "gate_visits: 64",
            "gate_visits: 0",
            "`gate_visits` is 0; allowed: 1 or more",
        ),
        ("eval_visits: 200", "eval_visits: 0", "`eval_visits` is 0"),
        (
            "eval_mcts_playouts: 800",
            "eval_mcts_playouts: 0",
            "`eval_mcts_playouts` is 0",
        ),
        (
            "gate_temperature: 0.3",
            "gate_temperature: .nan",
            "`gate_temperature` is NaN",
        ),
        (
            "gate_temperature: 0.3",
            "gate_temperature: -2",
            "`gate_temperature` is -2",
        ),
        ("network:", "networkk:", "unknown section `networkk`"),
        (
            "c_puct: 1.5",
            "c_puct: 0",
            "section `selfplay`: `c_puct` is 0",
        ),
    ];
    for (i, (from, to, needle)) in cases.into_iter().enumerate() {
        let path = variant(&dir, &format!("t{i}"), from, to);
        fails_with(
            &train(&path, &run, "/bin/true"),
            &[&format!("t{i}.yaml: "), needle],
        );
        assert!(!run.exists(), "{to}: the run directory was created");
    }
    // A network section that is not a mapping of sizes replaces the built-in one, and is
    // refused before trainer-bridge is asked to make anything.
    let path = dir.join("nonet.yaml");
    std::fs::write(&path, "network: 3\n").unwrap();
    let needle = "nonet.yaml: section `network`: must be a mapping of sizes";
    fails_with(&train(&path, &run, "/bin/true"), &[needle]);
    assert!(!run.exists());
    // A flag's bad value is named by the flag.
    let config = Path::new(LIUZHOU_CONFIG);
    let args = ["train", "--minutes", "nan", "--config"];
    let out = engine(&args, &[config, Path::new("--run-dir"), &run]);
    fails_with(&out, &["--minutes: `time_limit_minutes` is NaN"]);
    let needle = "trainer-bridge not found at \"/nonexistent/tb\"";
    fails_with(&train(config, &run, "/nonexistent/tb"), &[needle]);
    assert!(!run.exists());
}

#[test]
fn a_trainer_that_writes_no_model_leaves_no_initialised_state() {
    let dir = tmpdir("noinit");
    let run = dir.join("run");
    let config = Path::new(LIUZHOU_CONFIG);
    let needle = "trainer-bridge init reported success but did not write";
    fails_with(
        &train(config, &run, "/bin/true"),
        &[needle, "0000.safetensors"],
    );
    assert!(!run.exists(), "an empty run directory was left behind");

    // A state saved by an older engine after such an init: the run is initialised again.
    std::fs::create_dir_all(&run).unwrap();
    let stale = "iterations: 0\nbest: 0\ninitialised: true\nelapsed_seconds: 0\nhistory: []\n";
    std::fs::write(run.join("state.yaml"), stale).unwrap();
    let out = train(config, &run, "/bin/true");
    fails_with(&out, &["0000.onnx is missing: initialising again", needle]);

    // Later in a run a missing model is damage, said so.
    let later = "iterations: 2\nbest: 1\ninitialised: true\nelapsed_seconds: 0\nhistory: []\n";
    std::fs::write(run.join("state.yaml"), later).unwrap();
    let needle = "says model 0001 is the best after 2 iterations, but";
    fails_with(
        &train(config, &run, "/bin/true"),
        &[needle, "0001.onnx is missing"],
    );
}

#[test]
fn resuming_with_another_network_names_both_shapes() {
    let dir = tmpdir("resume");
    let run = dir.join("run");
    let models = run.join("models");
    std::fs::create_dir_all(&models).unwrap();
    for ext in ["onnx", "safetensors"] {
        std::fs::copy(
            format!("{SHIPPED_MODEL}.{ext}"),
            models.join(format!("0000.{ext}")),
        )
        .unwrap();
    }
    let state = "iterations: 0\nbest: 0\ninitialised: true\nelapsed_seconds: 0\nhistory: []\n";
    std::fs::write(run.join("state.yaml"), state).unwrap();
    let config = variant(&dir, "c32", "channels: 48", "channels: 32");
    let out = train(&config, &run, "/bin/true");
    fails_with(
        &out,
        &[
            "c32.yaml: section `network` {\"blocks\":4,\"channels\":32,",
            "{\"blocks\":4,\"channels\":48,",
            "`channels` is 32 in the config but 48 in the run",
        ],
    );
    // Nothing was played.
    assert_eq!(
        std::fs::read_dir(run.join("shards")).map_or(0, |d| d.count()),
        0
    );
}

/// A config that names its game is enough: `--game` defaults to it.
#[test]
fn the_game_comes_from_the_config_when_not_given() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_engine"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args([
            "match",
            "--config",
            "configs/go.yaml",
            "--black",
            "random",
            "--white",
            "random",
            "--games",
            "1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("go: "), "{text}");
}

/// `engine config show --config FILE`: the built-in config with the file's one key changed, and
/// nothing else; the merged config is checked as a whole, errors naming the file.
#[test]
fn a_partial_config_changes_only_the_key_it_names() {
    let dir = tmpdir("partial");
    let partial = dir.join("partial.yaml");
    std::fs::write(&partial, "# one key\nselfplay:\n  c_puct: 2.5\n").unwrap();
    let out = engine(&["config", "show", "--game", "go", "--config"], &[&partial]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: serde_yaml::Value = serde_yaml::from_slice(&out.stdout).unwrap();
    let mut expected: serde_yaml::Value =
        serde_yaml::from_str(setup::config::built_in("go").unwrap()).unwrap();
    expected["selfplay"]["c_puct"] = serde_yaml::Value::from(2.5);
    assert_eq!(shown, expected);

    // Without --game, the file's game decides; with neither, Liuzhou.
    std::fs::write(&partial, "game: {name: xiangqi}\n").unwrap();
    let out = engine(&["config", "show", "--config"], &[&partial]);
    let shown: serde_yaml::Value = serde_yaml::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["train"]["run_dir"], "runs/xiangqi");

    // A misspelt key inside a section, in a file of one key, named with its place.
    std::fs::write(&partial, "selfplay:\n  c_putc: 2.5\n").unwrap();
    let out = engine(&["config", "show", "--config"], &[&partial]);
    fails_with(
        &out,
        &[
            "partial.yaml",
            "section `selfplay`",
            "unknown field `c_putc`",
        ],
    );
    fails_with(
        &selfplay(&partial, &dir.join("shards")),
        &[
            "partial.yaml",
            "section `selfplay`",
            "unknown field `c_putc`",
        ],
    );
    assert!(!dir.join("shards").exists());
}

#[test]
fn config_show_prints_each_built_in_config_as_shipped() {
    for game in ["liuzhou", "xiangqi", "go"] {
        let out = engine(&["config", "show", "--game", game], &[]);
        assert!(out.status.success());
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../configs")
            .join(format!("{game}.yaml"));
        // Comments and all: the file a user copies to start their own.
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(file).unwrap()
        );
    }
    let out = engine(&["config", "show", "--serve"], &[]);
    let shown: serde_yaml::Value = serde_yaml::from_slice(&out.stdout).unwrap();
    assert!(shown["serve"]["addr"].is_string(), "{shown:?}");
}
