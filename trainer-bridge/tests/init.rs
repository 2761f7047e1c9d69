//! `trainer-bridge init` writes a generation-0 checkpoint and model that load where they are
//! used: the checkpoint in candle, the model in the engine's evaluator.

use std::path::Path;
use std::process::Command;

use candle_core::Device;
use games::liuzhou::Liuzhou;
use games::Game;
use infer::{Evaluator, OrtEvaluator, OrtOptions};
use trainer_bridge::{Net, NetConfig};

#[test]
fn init_writes_a_loadable_generation_zero() {
    let dir = std::env::temp_dir().join(format!("tb-init-{}", std::process::id()));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/liuzhou.yaml");
    let out = dir.join("models/liuzhou/0000");
    let status = Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .args(["init", "--game", "liuzhou", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());

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
        assert!(!out.status.success(), "{game}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("Error"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!dir.join("m.onnx").exists());
}
