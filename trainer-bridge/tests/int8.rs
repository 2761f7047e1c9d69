//! The int8 model (`trainer-bridge quantize`, `fit` with `fit.int8: true`): how close it stays
//! to the fp32 model on positions it was not calibrated on, that ONNX Runtime runs it with
//! integer kernels, and how the engine finds it (`inference.precision: int8`).
//!
//! The accuracy bounds, for the shipped Liuzhou network on positions of its own self-play
//! (16 visits a move), calibrated on 8 games and compared on 8 others with every position of
//! the calibration games left out: mean |Δ| of the policy's probabilities per entry ≤ 1e-3
//! (216 entries), mean total variation distance between the two policies ≤ 0.08, mean |Δ| of
//! the value ≤ 0.02, the same most likely action in ≥ 80 % of positions. Measured on the
//! 2-core development machine (AMD EPYC, AVX2): 2.8e-4, 0.030, 0.006 and 92 %.
//!
//! Needs ONNX Runtime: provisioned automatically (see `infer::runtime`), or from
//! `ORT_DYLIB_PATH`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use games::liuzhou::Liuzhou;
use games::Encoding;
use infer::{ModelError, OrtEvaluator, OrtOptions, Precision};
use prost::Message;
use trainer_bridge::quantize::{self, Fp32Model};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tb-int8-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn shipped(ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../models/liuzhou/best.{ext}"))
}

/// The shipped network and checkpoint copied into `dir` (as `best.onnx`, `best.safetensors`).
fn copy_shipped(dir: &Path) -> PathBuf {
    for ext in ["onnx", "safetensors"] {
        std::fs::copy(shipped(ext), dir.join(format!("best.{ext}"))).unwrap();
    }
    dir.join("best.onnx")
}

/// Self-play shards of `games` games in `dir`: the network at `model` at 16 visits a move,
/// or uniform priors without one.
fn selfplay(dir: &Path, model: Option<&Path>, games: usize, seed: u64) {
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
        model: "test",
        config: "",
    };
    let start = Liuzhou::default();
    let opts = OrtOptions {
        batch_size: 16,
        ..Default::default()
    };
    let ev: Box<dyn eval::Evaluator<Liuzhou>> = match model {
        Some(m) => Box::new(OrtEvaluator::load(m, &start, &opts).unwrap()),
        None => Box::new(eval::fake::FakeEvaluator::new(16)),
    };
    selfplay::run(&start, ev.as_ref(), &config, games, &sink, seed, |_| {}).unwrap();
}

/// The encoded positions of every shard in `dir`.
fn positions(dir: &Path, meta: &trainer_bridge::ModelMeta) -> Vec<Vec<f32>> {
    let all = quantize::calibration_inputs(dir, meta, quantize::MAX_SAMPLES).unwrap();
    all.chunks_exact(meta.shape.input_len())
        .map(|p| p.to_vec())
        .collect()
}

fn key(p: &[f32]) -> Vec<u32> {
    p.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn shipped_liuzhou_int8_stays_close_to_fp32_on_held_out_positions() {
    testkit::onnx_runtime();
    let dir = tmpdir("accuracy");
    let model = copy_shipped(&dir);
    let (calib, held) = (dir.join("calibration"), dir.join("held-out"));
    selfplay(&calib, Some(&model), 8, 3);
    selfplay(&held, Some(&model), 8, 4);

    let fp32 = Fp32Model::read(&model).unwrap();
    let inputs = quantize::calibration_inputs(&calib, &fp32.meta, 1024).unwrap();
    let made = quantize::quantize(&fp32, &inputs).unwrap();
    assert_eq!(made.positions * fp32.meta.shape.input_len(), inputs.len());

    // Held out: the other games' positions, less any that the calibration games also reached
    // (the first placements of a game are often the same).
    let seen: HashSet<Vec<u32>> = positions(&calib, &fp32.meta)
        .iter()
        .map(|p| key(p))
        .collect();
    let held: Vec<f32> = positions(&held, &fp32.meta)
        .into_iter()
        .filter(|p| !seen.contains(&key(p)))
        .flatten()
        .collect();
    let agree = quantize::agreement(&fp32.bytes, &made.bytes, fp32.meta.shape, &held).unwrap();
    eprintln!(
        "{} calibration positions; held out: {agree:?}",
        made.positions
    );
    assert!(agree.positions >= 200, "{agree:?}");
    assert!(agree.policy_mean <= 1e-3, "policy mean |Δ|: {agree:?}");
    assert!(
        agree.policy_tv_mean <= 0.08,
        "policy total variation: {agree:?}"
    );
    assert!(agree.value_mean <= 0.02, "value mean |Δ|: {agree:?}");
    assert!(agree.top1 >= 0.8, "same top action: {agree:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The op types of the graph ONNX Runtime runs for the model at `path`, after its
/// optimisations (on the CPU).
fn optimised_ops(path: &Path, dir: &Path) -> Vec<String> {
    let out = dir.join("optimised.onnx");
    let env = infer::runtime::environment().unwrap();
    let _session = ort::session::Session::builder(env)
        .unwrap()
        .with_optimization_level(ort::session::builder::GraphOptimizationLevel::All)
        .unwrap()
        .with_optimized_model_path(&out)
        .unwrap()
        .commit_from_file(path)
        .unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let model = trainer_bridge::onnx::proto::ModelProto::decode(bytes.as_slice()).unwrap();
    model
        .graph
        .unwrap()
        .node
        .into_iter()
        .map(|n| n.op_type)
        .collect()
}

#[test]
fn onnx_runtime_runs_every_layer_with_integer_kernels() {
    testkit::onnx_runtime();
    let dir = tmpdir("kernels");
    let model = copy_shipped(&dir);
    selfplay(&dir.join("shards"), None, 4, 5);
    let fp32 = Fp32Model::read(&model).unwrap();
    let inputs = quantize::calibration_inputs(&dir.join("shards"), &fp32.meta, 256).unwrap();
    let int8 = quantize::int8_path(&model);
    std::fs::write(&int8, quantize::quantize(&fp32, &inputs).unwrap().bytes).unwrap();

    let ops = optimised_ops(&int8, &dir);
    let count = |op: &str| ops.iter().filter(|o| *o == op).count();
    let blocks = fp32.meta.network.blocks;
    // The stem, two per block, the policy and the value head's 1×1: all integer.
    assert_eq!(count("QLinearConv"), 2 * blocks + 3, "{ops:?}");
    assert_eq!(count("QLinearAdd"), blocks, "{ops:?}");
    // The policy layer and the value head's two.
    assert_eq!(count("QGemm"), 3, "{ops:?}");
    // Nothing left in float but the input's quantisation, layout changes and the value's tanh.
    for op in [
        "Conv",
        "FusedConv",
        "Gemm",
        "FusedGemm",
        "Add",
        "DequantizeLinear",
    ] {
        assert_eq!(count(op), 0, "{op} in {ops:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn precision_int8_loads_the_model_beside_and_refuses_a_missing_or_stale_one() {
    testkit::onnx_runtime();
    let dir = tmpdir("engine");
    let model = copy_shipped(&dir);
    let start = Liuzhou::default();
    let int8_opts = OrtOptions {
        batch_size: 8,
        precision: Precision::Int8,
        ..Default::default()
    };

    // None yet: the error names the file looked for and the command that makes it.
    let e = OrtEvaluator::load(&model, &start, &int8_opts)
        .err()
        .unwrap();
    assert!(matches!(e, ModelError::MissingInt8 { .. }), "{e}");
    // `auto` plays the fp32 model where there is no int8 one.
    let auto_opts = OrtOptions {
        precision: Precision::Auto,
        ..int8_opts.clone()
    };
    let auto = OrtEvaluator::load(&model, &start, &auto_opts).unwrap();
    assert_eq!(auto.model().path(), model);
    assert_eq!(auto.model().info().precision, Precision::Fp32);
    let text = e.to_string();
    assert!(
        text.contains(&dir.join("best.int8.onnx").display().to_string()),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "trainer-bridge quantize --model {}",
            model.display()
        )),
        "{text}"
    );

    // The command line, from the checkpoint: the int8 model lands beside the fp32 one.
    let shards = dir.join("shards");
    selfplay(&shards, None, 4, 6);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .arg("quantize")
        .arg("--model")
        .arg(dir.join("best.safetensors"))
        .arg("--shards")
        .arg(&shards)
        .args(["--samples", "200"])
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("calibrated on 200 positions"), "{stdout}");
    let int8 = dir.join("best.int8.onnx");
    assert_eq!(
        stdout.lines().last(),
        Some(int8.display().to_string().as_str())
    );

    let ev = OrtEvaluator::load(&model, &start, &int8_opts).unwrap();
    assert_eq!(ev.model().path(), int8);
    assert_eq!(ev.model().info().precision, Precision::Int8);
    let fp32 = OrtEvaluator::load(&model, &start, &OrtOptions::default()).unwrap();
    assert_eq!(fp32.model().info().precision, Precision::Fp32);
    assert_eq!(ev.model().info().generation, fp32.model().info().generation);
    // `auto` plays the int8 model on the CPU, and the fp32 one with a GPU provider asked.
    let auto = OrtEvaluator::load(&model, &start, &auto_opts).unwrap();
    assert_eq!(auto.model().path(), int8);
    assert_eq!(auto.model().info().precision, Precision::Int8);
    let on_gpu = OrtOptions {
        provider: infer::Provider::Cuda,
        ..auto_opts.clone()
    };
    let auto = OrtEvaluator::load(&model, &start, &on_gpu).unwrap();
    assert_eq!(auto.model().path(), model);
    assert_eq!(auto.model().info().precision, Precision::Fp32);
    // Named directly, the int8 file loads whatever the precision asked.
    let direct = OrtEvaluator::load(&int8, &start, &OrtOptions::default()).unwrap();
    assert_eq!(direct.model().info().precision, Precision::Int8);
    // Both evaluate the start position alike.
    let (mut p8, mut v8) = (vec![0.0; 216], vec![0.0]);
    let (mut p32, mut v32) = (vec![0.0; 216], vec![0.0]);
    eval::Evaluator::evaluate(&ev, &[&start], &mut p8, &mut v8).unwrap();
    eval::Evaluator::evaluate(&fp32, &[&start], &mut p32, &mut v32).unwrap();
    assert!((v8[0] - v32[0]).abs() < 0.05, "{v8:?} {v32:?}");

    // An fp32 model asked for as int8 by name of its own is refused.
    std::fs::copy(&model, dir.join("plain.int8.onnx")).unwrap();
    let e = OrtEvaluator::load(&dir.join("plain.int8.onnx"), &start, &int8_opts)
        .err()
        .unwrap();
    assert!(matches!(e, ModelError::WrongPrecision { .. }), "{e}");

    // The fp32 model replaced by another: its int8 model is stale.
    let network = Fp32Model::read(&model).unwrap().meta.network;
    let (varmap, _) =
        trainer_bridge::Net::fresh(&network, start.shape(), &candle_core::Device::Cpu).unwrap();
    let meta = trainer_bridge::ModelMeta {
        game: "liuzhou".into(),
        shape: start.shape(),
        network,
        generation: 127,
    };
    trainer_bridge::write_model(&varmap, &meta, &dir.join("other")).unwrap();
    std::fs::copy(dir.join("other.onnx"), &model).unwrap();
    let e = OrtEvaluator::load(&model, &start, &int8_opts)
        .err()
        .unwrap();
    assert!(matches!(e, ModelError::StaleInt8 { .. }), "{e}");
    assert!(
        e.to_string().contains("trainer-bridge quantize --model"),
        "{e}"
    );
    // `auto` passes a stale int8 model over and plays the fp32 one.
    let auto = OrtEvaluator::load(&model, &start, &auto_opts).unwrap();
    assert_eq!(auto.model().path(), model);
    assert_eq!(auto.model().info().precision, Precision::Fp32);
    assert_eq!(auto.model().info().generation, 127);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fit_writes_the_int8_model_when_the_config_asks() {
    testkit::onnx_runtime();
    let dir = tmpdir("fit");
    let shards = dir.join("shards");
    selfplay(&shards, None, 8, 7);
    let config = dir.join("config.yaml");
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/liuzhou/recipe/fit.yaml"),
    )
    .unwrap();
    // The shipped network's own config (int8 on), for a short run.
    assert!(base.contains("  int8: true"), "{base}");
    std::fs::write(
        &config,
        base.replace("  steps: 1000", "  steps: 2")
            .replace("  batch_size: 256", "  batch_size: 16"),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .arg("fit")
        .arg(&shards)
        .arg("--model")
        .arg(shipped("safetensors"))
        .arg("--out")
        .arg(&dir)
        .args(["--name", "0127", "--config"])
        .arg(&config)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let int8 = dir.join("0127.int8.onnx");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().last(),
        Some(int8.display().to_string().as_str())
    );
    let opts = OrtOptions {
        precision: Precision::Int8,
        ..Default::default()
    };
    // Found from the fp32 model, and quantised from it (not stale).
    let ev = OrtEvaluator::load(&dir.join("0127.onnx"), &Liuzhou::default(), &opts).unwrap();
    assert_eq!(ev.model().path(), int8);
    assert_eq!(ev.model().info().generation, 127);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Self-play shards of `games` Go 9×9 games in `dir` with uniform priors (16 visits a move).
fn selfplay_go(dir: &Path, games: usize, seed: u64) {
    let config = selfplay::SelfplayConfig {
        parallel_games: 8,
        full_visits: 16,
        cheap_visits: 4,
        full_fraction: 1.0,
        positions_per_shard: 400,
        ..Default::default()
    };
    let sink = selfplay::ShardSink {
        dir,
        tag: "t",
        model: "test",
        config: "",
    };
    let start = games::go::GoState::new(games::go::GoRules::default()).unwrap();
    let ev = eval::fake::FakeEvaluator::new(16).seeded(seed);
    selfplay::run(&start, &ev, &config, games, &sink, seed, |_| {}).unwrap();
}

/// `network` for Go 9×9, fitted for a few steps on the shards in `train` from a seeded start;
/// returns its fp32 ONNX model's path.
fn fitted_go(dir: &Path, train: &Path, network: &trainer_bridge::NetConfig) -> PathBuf {
    use trainer_bridge::{fit, Checkpoint, ModelMeta, Net};
    let shape = games::shape_of("go", Some(9)).unwrap();
    let (varmap, _) = Net::seeded(network, shape, &candle_core::Device::Cpu, 3).unwrap();
    let start = dir.join("start.safetensors");
    let meta = ModelMeta {
        game: "go".into(),
        shape,
        network: network.clone(),
        generation: 0,
    };
    Net::save(&varmap, &meta, &start).unwrap();
    let checkpoint = Checkpoint::read(&start, &candle_core::Device::Cpu).unwrap();
    let config = fit::FitConfig {
        steps: 60,
        batch_size: 32,
        ..Default::default()
    };
    let report = fit::fit(fit::FitJob {
        shards_dir: train,
        checkpoint: &checkpoint,
        teacher: None,
        network,
        config: &config,
        out: &dir.join("fitted"),
        generation: 1,
        log: None,
        on_step: &mut |_, _| {},
    })
    .unwrap();
    report.onnx
}

/// A Go network with every pooling part and auxiliary head on: its int8 model stays close to
/// the fp32 one on every output, on positions it was not calibrated on, much as the plain
/// network of the same tower does (both fitted briefly on the same self-play from uniform
/// priors). Measured on a 2-core Intel Xeon (AVX-512, VNNI, AMX), 424 held-out positions:
/// policy total variation 0.012 (plain 0.012), top-1 91 % (96 %), value mean |Δ| 0.015 (0.012),
/// ownership 0.016, score 0.022, wdl 0.004, reply 0.014; the test prints them.
#[test]
fn pooling_go_network_int8_stays_close_on_every_output() {
    testkit::onnx_runtime();
    let dir = tmpdir("pooling");
    let (train, calib, held) = (dir.join("train"), dir.join("calib"), dir.join("held"));
    selfplay_go(&train, 8, 1);
    selfplay_go(&calib, 4, 2);
    selfplay_go(&held, 4, 3);
    let pooling = trainer_bridge::NetConfig {
        blocks: 4,
        channels: 32,
        policy_channels: 8,
        value_channels: 8,
        value_hidden: 32,
        pool_every: 2,
        pool_channels: 8,
        policy_pool: true,
        value_pool: true,
        ownership: true,
        score: true,
        wdl: true,
        reply: true,
        soft_policy: false,
    };
    let mut results = Vec::new();
    for (label, network) in [("plain", pooling.plain()), ("pooling", pooling.clone())] {
        let sub = dir.join(label);
        std::fs::create_dir_all(&sub).unwrap();
        let onnx = fitted_go(&sub, &train, &network);
        let fp32 = Fp32Model::read(&onnx).unwrap();
        let inputs = quantize::calibration_inputs(&calib, &fp32.meta, 1024).unwrap();
        let made = quantize::quantize(&fp32, &inputs).unwrap();
        let seen: HashSet<Vec<u32>> = positions(&calib, &fp32.meta)
            .iter()
            .map(|p| key(p))
            .collect();
        let held: Vec<f32> = positions(&held, &fp32.meta)
            .into_iter()
            .filter(|p| !seen.contains(&key(p)))
            .flatten()
            .collect();
        let all =
            quantize::output_agreement(&fp32.bytes, &made.bytes, fp32.meta.shape, &held).unwrap();
        eprintln!(
            "{label}: {} held-out positions: {all:#?}",
            held.len() / fp32.meta.shape.input_len()
        );
        // The engine loads the int8 model beside the fp32 one and plays it.
        std::fs::write(quantize::int8_path(&onnx), &made.bytes).unwrap();
        let ops = optimised_ops(&quantize::int8_path(&onnx), &sub);
        let mut counts = std::collections::BTreeMap::new();
        for op in &ops {
            *counts.entry(op.as_str()).or_insert(0) += 1;
        }
        eprintln!("{label}: ops after ONNX Runtime's optimisation: {counts:?}");
        if network.has_new_parts() {
            // Every convolution of the tower and the heads' 1×1s run on integers (a pooling
            // block's first convolution as two); left in float: the three one-channel output
            // convolutions (policy, reply, ownership) and the six layers that read pooled
            // features (two blocks', the policy head's biases, two pass logits, value.fc1).
            // The stem, two a block and one more a pooling block, and three 1×1s (policy, its
            // pooled branch, value).
            let convs = 1 + 2 * network.blocks + network.pooling_blocks() + 3;
            assert_eq!(counts["QLinearConv"], convs, "{counts:?}");
            assert_eq!(counts["Conv"], 3, "{counts:?}");
            assert_eq!(counts["Gemm"], 6, "{counts:?}");
        }
        let go = games::go::GoState::new(games::go::GoRules::default()).unwrap();
        let opts = OrtOptions {
            precision: Precision::Int8,
            ..Default::default()
        };
        let ev = OrtEvaluator::load(&onnx, &go, &opts).unwrap();
        assert_eq!(ev.model().info().precision, Precision::Int8);
        let (mut p, mut v) = (vec![0.0; 82], vec![0.0]);
        eval::Evaluator::evaluate(&ev, &[&go], &mut p, &mut v).unwrap();
        assert!(v[0].is_finite() && p.iter().all(|x| x.is_finite()));
        results.push(all);
    }
    let (plain, pooled) = (&results[0], &results[1]);
    let get = |all: &[quantize::OutputAgreement], name: &str| {
        all.iter().find(|a| a.name == name).unwrap().clone()
    };
    let names: Vec<&str> = pooled.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "policy",
            "value",
            "ownership",
            "score",
            "wdl",
            "reply_policy"
        ]
    );
    for (name, mean_bound, top1_bound) in [
        ("policy", 0.08, 0.8),
        ("value", 0.02, 0.0),
        ("ownership", 0.03, 0.0),
        ("wdl", 0.02, 0.9),
        ("reply_policy", 0.08, 0.8),
    ] {
        let a = get(pooled, name);
        assert!(a.mean <= mean_bound, "{a:?}");
        assert!(a.top1.unwrap_or(1.0) >= top1_bound, "{a:?}");
    }
    // The score is unbounded: its error against its own spread.
    let score = get(pooled, "score");
    assert!(score.mean <= 0.05, "{score:?}");
    // The pooling network loses no more than twice what the plain one does to int8.
    for name in ["policy", "value"] {
        let (a, b) = (get(pooled, name), get(plain, name));
        assert!(
            a.mean <= 2.0 * b.mean + 0.005,
            "{name}: {a:?} against plain {b:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
