//! `fit` learns from shards: losses fall on self-play data, the outputs load, bad inputs are
//! typed errors.

use std::path::PathBuf;

use candle_core::Device;
use games::liuzhou::Liuzhou;
use games::Game;
use trainer_bridge::fit::{fit, FitConfig, FitJob};
use trainer_bridge::{Net, NetConfig};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fit-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tiny_net() -> NetConfig {
    NetConfig {
        blocks: 1,
        channels: 16,
        ..NetConfig::default()
    }
}

/// Shards from a few self-play games with the fake evaluator.
fn make_shards(dir: &std::path::Path) {
    let config = selfplay::SelfplayConfig {
        parallel_games: 8,
        full_visits: 16,
        cheap_visits: 4,
        full_fraction: 1.0,
        positions_per_shard: 300,
        ..Default::default()
    };
    let sink = selfplay::ShardSink {
        dir,
        tag: "t",
        model: "fake",
        config: "",
    };
    let ev = infer::fake::FakeEvaluator::new(16);
    selfplay::run(&Liuzhou::default(), &ev, &config, 8, &sink, 3, |_| {}).unwrap();
}

#[test]
fn losses_fall_and_outputs_are_written() {
    let dir = tmpdir("learn");
    let shards = dir.join("shards");
    make_shards(&shards);
    let shape = Liuzhou::default().shape();
    let (varmap, _) = Net::fresh(&tiny_net(), shape, &Device::Cpu).unwrap();
    let start = dir.join("0000.safetensors");
    Net::save(&varmap, &start).unwrap();
    let config = FitConfig {
        steps: 60,
        batch_size: 64,
        learning_rate: 3e-3,
        final_learning_rate: 1e-3,
        ..FitConfig::default()
    };
    let log = dir.join("losses.jsonl");
    let mut steps = 0;
    let report = fit(FitJob {
        shards_dir: &shards,
        model: &start,
        network: &tiny_net(),
        config: &config,
        out: &dir.join("0001"),
        generation: 1,
        log: Some(&log),
        on_step: &mut |_, _| steps += 1,
    })
    .unwrap();
    assert_eq!(steps, 60);
    assert!(
        report.last_loss.0 < report.first_loss.0,
        "policy loss {:?}",
        (report.first_loss, report.last_loss)
    );
    assert!(
        report.last_loss.1 < report.first_loss.1,
        "value loss {:?}",
        (report.first_loss, report.last_loss)
    );
    assert!(dir.join("0001.safetensors").is_file() && dir.join("0001.onnx").is_file());
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 60);
    // The new checkpoint loads for the same network and shape: fitting resumes from it.
    Net::load(
        &dir.join("0001.safetensors"),
        &tiny_net(),
        shape,
        &Device::Cpu,
    )
    .unwrap();
}

#[test]
fn missing_shards_and_mismatched_checkpoints_are_errors() {
    let dir = tmpdir("bad");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("junk.safetensors"), b"not a shard").unwrap();
    let shape = Liuzhou::default().shape();
    let (varmap, _) = Net::fresh(&tiny_net(), shape, &Device::Cpu).unwrap();
    let start = dir.join("0000.safetensors");
    Net::save(&varmap, &start).unwrap();
    let config = FitConfig {
        steps: 1,
        batch_size: 4,
        ..FitConfig::default()
    };
    let job = |shards: &std::path::Path, net: &NetConfig| {
        fit(FitJob {
            shards_dir: shards,
            model: &start,
            network: net,
            config: &config,
            out: &dir.join("x"),
            generation: 1,
            log: None,
            on_step: &mut |_, _| {},
        })
    };
    let err = job(&empty, &tiny_net()).unwrap_err().to_string();
    assert!(err.contains("no readable shard"), "{err}");
    let shards = dir.join("shards");
    make_shards(&shards);
    let bigger = NetConfig {
        channels: 32,
        ..tiny_net()
    };
    let err = job(&shards, &bigger).unwrap_err().to_string();
    assert!(err.contains("0000.safetensors"), "{err}");
    assert!(!dir.join("x.onnx").exists());
}
