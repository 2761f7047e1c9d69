//! `trainer-bridge init` writes a generation-0 checkpoint and model that load where they are
//! used: the checkpoint in candle, the model in the engine's evaluator.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use candle_core::Device;
use eval::Evaluator;
use games::liuzhou::Liuzhou;
use games::Encoding;
use infer::{OrtEvaluator, OrtOptions};
use safetensors::SafeTensors;
use trainer_bridge::{Net, NetConfig};

/// Runs `trainer-bridge init --game liuzhou` with `config`, `out` and `extra`; it must succeed.
fn init_liuzhou(config: &Path, out: &Path, extra: &[&str]) {
    let status = Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .args(["init", "--game", "liuzhou"])
        .args(extra)
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn init_writes_a_loadable_generation_zero() {
    testkit::onnx_runtime();
    let dir = std::env::temp_dir().join(format!("tb-init-{}", std::process::id()));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/liuzhou.yaml");
    let out = dir.join("models/liuzhou/0000");
    init_liuzhou(&config, &out, &[]);

    let cfg = NetConfig::from_yaml_file(&config).unwrap();
    let proto = Liuzhou::default();
    Net::load(
        &out.with_extension("safetensors"),
        &cfg,
        proto.shape(),
        &Device::Cpu,
    )
    .unwrap();
    let ev =
        OrtEvaluator::load(&out.with_extension("onnx"), &proto, &OrtOptions::default()).unwrap();
    assert_eq!(ev.model().info().generation, 0);
    assert_eq!(ev.model().info().game, "liuzhou");
    let mut policy = vec![0.0; proto.shape().policy_size];
    let mut value = [0.0];
    ev.evaluate(&[&proto], &mut policy, &mut value).unwrap();
    assert!(policy.iter().all(|p| p.is_finite()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn init_with_a_seed_writes_the_same_network_every_time() {
    let dir = std::env::temp_dir().join(format!("tb-init-seed-{}", std::process::id()));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/liuzhou.yaml");
    let write = |name: &str, seed: &str| {
        let out = dir.join(name);
        init_liuzhou(&config, &out, &["--seed", seed]);
        // The checkpoint's tensors by name (its metadata's order is a hash map's).
        let bytes = std::fs::read(out.with_extension("safetensors")).unwrap();
        let tensors: BTreeMap<String, Vec<u8>> = SafeTensors::deserialize(&bytes)
            .unwrap()
            .tensors()
            .into_iter()
            .map(|(name, view)| (name, view.data().to_vec()))
            .collect();
        (tensors, std::fs::read(out.with_extension("onnx")).unwrap())
    };
    let (a, b, c) = (write("a", "5"), write("b", "5"), write("c", "6"));
    assert!(a == b, "the same seed wrote different networks");
    assert!(
        a.0 != c.0 && a.1 != c.1,
        "another seed wrote the same network"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn init_refuses_an_unknown_game_and_a_missing_config() {
    let dir = std::env::temp_dir().join(format!("tb-init-bad-{}", std::process::id()));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/liuzhou.yaml");
    for (game, config) in [
        ("chess", config.clone()),
        ("liuzhou", dir.join("absent.yaml")),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
            .args(["init", "--game", game, "--config"])
            .arg(&config)
            .arg("--out")
            .arg(dir.join("m"))
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap();
        let stderr = testkit::refused(&out, &[]);
        assert!(stderr.starts_with("error: "), "{game}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!dir.join("m.onnx").exists());
}

fn init_with(args: &[&str], config: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .arg("init")
        .args(args)
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

/// `--board-size` is Go's, within its range; the message says which of the two is wrong.
#[test]
fn init_checks_the_board_size() {
    let dir = std::env::temp_dir().join(format!("tb-init-size-{}", std::process::id()));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/go.yaml");
    for (args, expect) in [
        (
            &["--game", "go", "--board-size", "30"][..],
            "--board-size 30: out of range for go (2..=19)",
        ),
        (
            &["--game", "go", "--board-size", "1"][..],
            "--board-size 1: out of range for go (2..=19)",
        ),
        (
            &["--game", "liuzhou", "--board-size", "9"][..],
            "--board-size 9: liuzhou has one board size",
        ),
        (
            &["--game", "chess"][..],
            "--game \"chess\": unknown game (known: liuzhou, xiangqi, go)",
        ),
    ] {
        let out = init_with(args, &config, &dir.join("m"));
        testkit::refused(&out, &[expect]);
    }
    assert!(!dir.join("m.onnx").exists());
    let out = init_with(
        &["--game", "go", "--board-size", "5"],
        &config,
        &dir.join("go5"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Network sizes out of range are refused at once, naming the key (`blocks: 100000` would
/// otherwise allocate for hours).
#[test]
fn init_refuses_network_sizes_out_of_range() {
    let dir = std::env::temp_dir().join(format!("tb-init-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("huge.yaml");
    std::fs::write(&config, "network:\n  blocks: 100000\n  channels: 48\n").unwrap();
    let started = std::time::Instant::now();
    let out = init_with(&["--game", "liuzhou"], &config, &dir.join("m"));
    testkit::refused(&out, &["network: `blocks` is 100000, outside 0..=64"]);
    assert!(started.elapsed().as_secs() < 30);
    assert!(!dir.join("m.onnx").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
