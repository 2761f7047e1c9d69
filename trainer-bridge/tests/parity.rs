//! The ONNX model written by trainer-bridge, run through the engine's ONNX Runtime evaluator,
//! must compute what candle computes (policy logits and values within 1e-4, or 1e-5 of the
//! outputs' largest magnitude where that exceeds 10), for every board shape, and through the
//! `Game` trait for every game; a network with global pooling and the auxiliary heads does so
//! on every output (`ownership`, `score`, `wdl`, `reply_policy` besides `policy` and `value`),
//! and still loads and plays in the engine, which reads only the two.
//!
//! Needs ONNX Runtime: provisioned automatically (see `infer::runtime`), or from
//! `ORT_DYLIB_PATH`.

use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use candle_nn::VarMap;
use eval::Evaluator;
use games::{Encoding, TensorShape};
use infer::{OrtEvaluator, OrtModel, OrtOptions};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use trainer_bridge::{export_onnx, ModelMeta, Net, NetConfig};

const TOLERANCE: f32 = 1e-4;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tb-parity-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fresh network whose batch-norm statistics and affine parameters are far from their
/// initial 0/1, so the export of every one of them is exercised.
fn random_net(cfg: &NetConfig, shape: TensorShape, seed: u64) -> (VarMap, Net) {
    let (varmap, net) = Net::fresh(cfg, shape, &Device::Cpu).unwrap();
    let mut rng = SmallRng::seed_from_u64(seed);
    for (name, var) in varmap.data().lock().unwrap().iter() {
        let range = if name.ends_with("running_var") {
            0.3..2.0
        } else if is_bn(name) && name.ends_with("weight") {
            0.5..1.5
        } else if name.ends_with("running_mean") || is_bn(name) && name.ends_with("bias") {
            -0.5..0.5
        } else {
            continue;
        };
        let n = var.elem_count();
        let values: Vec<f32> = (0..n).map(|_| rng.gen_range(range.clone())).collect();
        var.set(&Tensor::from_vec(values, var.dims(), &Device::Cpu).unwrap())
            .unwrap();
    }
    (varmap, net)
}

/// Whether variable `name` belongs to a batch norm (`bn`, `bn1`, `gbn`, …).
fn is_bn(name: &str) -> bool {
    name.split('.').any(|part| part.contains("bn"))
}

fn write_model(varmap: &VarMap, game: &str, cfg: &NetConfig, shape: TensorShape, path: &Path) {
    let meta = ModelMeta {
        game: game.into(),
        shape,
        network: cfg.clone(),
        generation: 0,
    };
    export_onnx(varmap, &meta, path).unwrap();
}

/// candle's forward pass (inference mode) on `n` encoded inputs.
fn candle_forward(net: &Net, inputs: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
    let s = net.shape();
    let x = Tensor::from_slice(inputs, (n, s.planes, s.height, s.width), &Device::Cpu).unwrap();
    let trainer_bridge::net::Outputs {
        policy: p,
        value: v,
        ..
    } = net.forward_t(&x, false).unwrap();
    (
        p.flatten_all().unwrap().to_vec1().unwrap(),
        v.to_vec1().unwrap(),
    )
}

fn assert_close(what: &str, ours: &[f32], theirs: &[f32]) {
    assert_eq!(ours.len(), theirs.len(), "{what}: lengths");
    // A random network's logits reach the hundreds, and f32 sums taken in another order then
    // differ by more than 1e-4 anywhere in the output (seen: 1.2e-4 at a logit of 190, 1.0e-4
    // at 0.39 beside it). So the bound scales with the outputs' size; a wrong export is off by
    // about that size itself.
    let scale = theirs.iter().fold(10.0f32, |m, x| m.max(x.abs()));
    let tolerance = TOLERANCE.max(1e-5 * scale);
    let (i, diff) = ours
        .iter()
        .zip(theirs)
        .map(|(a, b)| (a - b).abs())
        .enumerate()
        .fold(
            (0, 0.0f32),
            |best, (i, d)| if d > best.1 { (i, d) } else { best },
        );
    assert!(
        diff <= tolerance,
        "{what}: largest difference {diff} (bound {tolerance}) at {i} (onnx {}, candle {})",
        ours[i],
        theirs[i]
    );
}

fn small_config() -> NetConfig {
    NetConfig {
        blocks: 2,
        channels: 16,
        policy_channels: 2,
        value_channels: 1,
        value_hidden: 32,
        ..NetConfig::default()
    }
}

/// Random inputs through the game-agnostic model: fewer states than a batch (a call of fewer
/// rows, padded to a multiple of 8), a whole batch, and more (several calls, the last short).
fn shape_parity(label: &str, shape: TensorShape) {
    let dir = temp_dir(label);
    let path = dir.join("net.onnx");
    let cfg = small_config();
    let (varmap, net) = random_net(&cfg, shape, 7);
    write_model(&varmap, "shape-test", &cfg, shape, &path);
    let opts = OrtOptions {
        batch_size: 32,
        ..OrtOptions::default()
    };
    let model = OrtModel::load(&path, &opts).unwrap();
    assert_eq!(model.info().shape, shape);
    assert_eq!(model.info().game, "shape-test");
    let mut rng = SmallRng::seed_from_u64(11);
    for n in [1, 5, 8, 19, 32, 41] {
        let inputs: Vec<f32> = (0..n * shape.input_len())
            .map(|_| {
                if rng.gen_bool(0.3) {
                    rng.gen_range(-1.0..2.0)
                } else {
                    0.0
                }
            })
            .collect();
        let mut policy = vec![0.0; n * shape.policy_size];
        let mut value = vec![0.0; n];
        model
            .evaluate_encoded(&inputs, &mut policy, &mut value)
            .unwrap();
        let (p, v) = candle_forward(&net, &inputs, n);
        assert_close(&format!("{label} n={n} policy"), &policy, &p);
        assert_close(&format!("{label} n={n} value"), &value, &v);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parity_6x6() {
    testkit::onnx_runtime();
    shape_parity(
        "6x6",
        TensorShape {
            planes: 15,
            height: 6,
            width: 6,
            policy_size: 216,
        },
    );
}

#[test]
fn parity_9x9() {
    testkit::onnx_runtime();
    shape_parity(
        "9x9",
        TensorShape {
            planes: 17,
            height: 9,
            width: 9,
            policy_size: 82,
        },
    );
}

#[test]
fn parity_10x9() {
    testkit::onnx_runtime();
    shape_parity(
        "10x9",
        TensorShape {
            planes: 15,
            height: 10,
            width: 9,
            policy_size: 8100,
        },
    );
}

/// A game's default network (its config's `network:` section) on positions from random play,
/// through `OrtEvaluator` and the `Game` trait's encoding.
fn game_parity<G: Encoding>(proto: G, config: &str) {
    let cfg = NetConfig::from_yaml_file(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(config),
    )
    .unwrap();
    let shape = proto.shape();
    let dir = temp_dir(G::NAME);
    let path = dir.join("net.onnx");
    let (varmap, net) = random_net(&cfg, shape, 3);
    write_model(&varmap, G::NAME, &cfg, shape, &path);
    let opts = OrtOptions {
        batch_size: 16,
        ..OrtOptions::default()
    };
    let evaluator = OrtEvaluator::load(&path, &proto, &opts).unwrap();
    let states = infer::bench::sample_states(&proto, 40, 5);
    for n in [1, 16, 40] {
        let refs: Vec<&G> = states[..n].iter().collect();
        let mut policy = vec![0.0; n * shape.policy_size];
        let mut value = vec![0.0; n];
        evaluator.evaluate(&refs, &mut policy, &mut value).unwrap();
        let mut inputs = vec![0.0; n * shape.input_len()];
        for (s, row) in refs.iter().zip(inputs.chunks_exact_mut(shape.input_len())) {
            s.encode(row);
        }
        let (p, v) = candle_forward(&net, &inputs, n);
        assert_close(&format!("{} n={n} policy", G::NAME), &policy, &p);
        assert_close(&format!("{} n={n} value", G::NAME), &value, &v);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parity_liuzhou() {
    testkit::onnx_runtime();
    game_parity(games::liuzhou::Liuzhou::default(), "configs/liuzhou.yaml");
}

#[test]
fn parity_xiangqi() {
    testkit::onnx_runtime();
    game_parity(games::xiangqi::Xiangqi::default(), "configs/xiangqi.yaml");
}

#[test]
fn parity_go_9x9() {
    testkit::onnx_runtime();
    let go = games::go::GoState::new(games::go::GoRules::default()).unwrap();
    game_parity(go, "configs/go.yaml");
}

/// Every part on: pooling blocks (the second of three), pooling policy and value heads, all
/// four auxiliary heads, and the soft policy head (trained, never exported: the model's outputs
/// stay those below).
fn pooling_config() -> NetConfig {
    NetConfig {
        blocks: 3,
        channels: 16,
        policy_channels: 4,
        value_channels: 8,
        value_hidden: 32,
        pool_every: 2,
        pool_channels: 5,
        policy_pool: true,
        value_pool: true,
        ownership: true,
        score: true,
        wdl: true,
        reply: true,
        soft_policy: true,
    }
}

/// Pooling in every block but plain heads, with ownership, score, a (fully connected) reply
/// policy and a (fully connected) soft policy head.
fn mixed_config() -> NetConfig {
    NetConfig {
        blocks: 2,
        channels: 12,
        policy_channels: 3,
        value_channels: 4,
        value_hidden: 16,
        pool_every: 1,
        pool_channels: 3,
        ownership: true,
        score: true,
        reply: true,
        soft_policy: true,
        ..NetConfig::default()
    }
}

/// Every output of the model at `path` on `n` inputs, by name, through ONNX Runtime directly.
fn ort_outputs(
    path: &Path,
    shape: TensorShape,
    inputs: &[f32],
    n: usize,
) -> std::collections::BTreeMap<String, Vec<f32>> {
    let env = infer::runtime::environment().unwrap();
    let mut session = ort::session::Session::builder(env)
        .unwrap()
        .with_intra_threads(1)
        .unwrap()
        .commit_from_file(path)
        .unwrap();
    let names: Vec<String> = session
        .outputs()
        .iter()
        .map(|o| o.name().to_string())
        .collect();
    let dims = [n, shape.planes, shape.height, shape.width];
    let tensor = ort::value::TensorRef::from_array_view((dims, inputs)).unwrap();
    let out = session.run(ort::inputs!["input" => tensor]).unwrap();
    names
        .into_iter()
        .map(|name| {
            let (_, values) = out[name.as_str()].try_extract_tensor::<f32>().unwrap();
            (name, values.to_vec())
        })
        .collect()
}

/// candle's outputs (inference mode) by their ONNX names.
fn candle_outputs(
    net: &Net,
    inputs: &[f32],
    n: usize,
) -> std::collections::BTreeMap<String, Vec<f32>> {
    let s = net.shape();
    let x = Tensor::from_slice(inputs, (n, s.planes, s.height, s.width), &Device::Cpu).unwrap();
    let out = net.forward_t(&x, false).unwrap();
    let flat = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let mut all = std::collections::BTreeMap::new();
    all.insert("policy".to_string(), flat(&out.policy));
    all.insert("value".to_string(), flat(&out.value));
    for (name, t) in [
        ("ownership", &out.ownership),
        ("score", &out.score),
        ("wdl", &out.wdl),
        ("reply_policy", &out.reply),
    ] {
        if let Some(t) = t {
            all.insert(name.to_string(), flat(t));
        }
    }
    all
}

/// The network of `cfg` for `shape`: every output of ONNX Runtime against candle's, with the
/// names and sizes the module docs of `onnx` give; then the engine's evaluator, which reads
/// `policy` and `value` only, on the same model. Returns the largest difference of each output.
fn pooling_parity(
    label: &str,
    game: &str,
    cfg: &NetConfig,
    shape: TensorShape,
) -> Vec<(String, f32)> {
    let dir = temp_dir(label);
    let path = dir.join("net.onnx");
    let (varmap, net) = random_net(cfg, shape, 5);
    write_model(&varmap, game, cfg, shape, &path);
    let mut rng = SmallRng::seed_from_u64(13);
    let n = 9;
    let inputs: Vec<f32> = (0..n * shape.input_len())
        .map(|_| f32::from(u8::from(rng.gen_bool(0.3))))
        .collect();
    let ours = ort_outputs(&path, shape, &inputs, n);
    let theirs = candle_outputs(&net, &inputs, n);
    let mut wanted = vec![("policy", shape.policy_size), ("value", 1)];
    let cells = shape.height * shape.width;
    for (on, name, size) in [
        (cfg.ownership, "ownership", cells),
        (cfg.score, "score", 1),
        (cfg.wdl, "wdl", 3),
        (cfg.reply, "reply_policy", shape.policy_size),
    ] {
        if on {
            wanted.push((name, size));
        }
    }
    let names: Vec<&str> = ours.keys().map(String::as_str).collect();
    let mut sorted: Vec<&str> = wanted.iter().map(|(n, _)| *n).collect();
    sorted.sort();
    assert_eq!(names, sorted, "{label}: the model's outputs");
    let mut diffs = Vec::new();
    for (name, size) in wanted {
        let (a, b) = (&ours[name], &theirs[name]);
        assert_eq!(a.len(), n * size, "{label} {name}: length");
        assert_close(&format!("{label} {name}"), a, b);
        let d = a
            .iter()
            .zip(b)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        diffs.push((name.to_string(), d));
    }
    if cfg.ownership {
        assert!(ours["ownership"].iter().all(|o| o.abs() <= 1.0 + 1e-6));
    }
    // The engine's reader: the same policy and values, the other outputs ignored.
    let model = OrtModel::load(&path, &OrtOptions::default()).unwrap();
    let mut policy = vec![0.0; n * shape.policy_size];
    let mut value = vec![0.0; n];
    model
        .evaluate_encoded(&inputs, &mut policy, &mut value)
        .unwrap();
    assert_close(
        &format!("{label} engine policy"),
        &policy,
        &theirs["policy"],
    );
    assert_close(&format!("{label} engine value"), &value, &theirs["value"]);
    eprintln!("{label}: largest |onnx − candle| {diffs:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    diffs
}

#[test]
fn pooling_and_auxiliary_heads_parity_go_9x9() {
    testkit::onnx_runtime();
    let go = games::go::GoState::new(games::go::GoRules::default()).unwrap();
    pooling_parity("pool-go9", "go", &pooling_config(), go.shape());
    pooling_parity("mixed-go9", "go", &mixed_config(), go.shape());
}

#[test]
fn pooling_and_auxiliary_heads_parity_go_13x13() {
    testkit::onnx_runtime();
    let shape = games::shape_of("go", Some(13)).unwrap();
    assert_eq!(shape.policy_size, 13 * 13 + 1);
    pooling_parity("pool-go13", "go", &pooling_config(), shape);
}

#[test]
fn pooling_and_auxiliary_heads_parity_liuzhou() {
    testkit::onnx_runtime();
    let shape = games::liuzhou::Liuzhou::default().shape();
    pooling_parity("pool-liuzhou", "liuzhou", &pooling_config(), shape);
    pooling_parity("mixed-liuzhou", "liuzhou", &mixed_config(), shape);
}

#[test]
fn pooling_and_auxiliary_heads_parity_xiangqi() {
    testkit::onnx_runtime();
    let shape = games::xiangqi::Xiangqi::default().shape();
    pooling_parity("pool-xiangqi", "xiangqi", &pooling_config(), shape);
}

/// A Go network with every part on plays through the engine's evaluator and the `Game` trait as
/// the plain one does: its policy and value agree with candle's on positions from random play,
/// and self-play searches through it.
#[test]
fn pooling_network_plays_go_through_the_engine() {
    testkit::onnx_runtime();
    let go = games::go::GoState::new(games::go::GoRules::default()).unwrap();
    let cfg = pooling_config();
    let shape = go.shape();
    let dir = temp_dir("pool-engine");
    let path = dir.join("net.onnx");
    let (varmap, net) = random_net(&cfg, shape, 3);
    write_model(&varmap, "go", &cfg, shape, &path);
    let evaluator = OrtEvaluator::load(&path, &go, &OrtOptions::default()).unwrap();
    let states = infer::bench::sample_states(&go, 20, 5);
    let refs: Vec<&games::go::GoState> = states.iter().collect();
    let n = refs.len();
    let mut policy = vec![0.0; n * shape.policy_size];
    let mut value = vec![0.0; n];
    evaluator.evaluate(&refs, &mut policy, &mut value).unwrap();
    let mut inputs = vec![0.0; n * shape.input_len()];
    for (s, row) in refs.iter().zip(inputs.chunks_exact_mut(shape.input_len())) {
        s.encode(row);
    }
    let (p, v) = candle_forward(&net, &inputs, n);
    assert_close("go engine policy", &policy, &p);
    assert_close("go engine value", &value, &v);
    // And it plays: two self-play games searched through it, written as a shard.
    let config = selfplay::SelfplayConfig {
        parallel_games: 2,
        full_visits: 8,
        cheap_visits: 4,
        full_fraction: 1.0,
        ..Default::default()
    };
    let out = dir.join("shards");
    let sink = selfplay::ShardSink {
        dir: &out,
        tag: "t",
        model: "pooling",
        config: "",
    };
    let summary = selfplay::run(&go, &evaluator, &config, 2, &sink, 1, |_| {}).unwrap();
    eprintln!("{summary:?}");
    let written = shards::newest_first(&out).unwrap();
    assert!(!written.is_empty());
    let shard = shards::Shard::read(&written[0]).unwrap();
    assert!(!shard.samples.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The shipped models load from their checkpoints and compute what their ONNX models do;
/// exported again, they give the same graph and metadata. Liuzhou's and Xiangqi's were written
/// before the pooling parts and auxiliary heads existed (their `network` metadata has none of
/// those keys), so they also show that such checkpoints keep loading; Go's has them.
#[test]
fn shipped_models_load_and_export_as_before() {
    testkit::onnx_runtime();
    use prost::Message;
    use trainer_bridge::onnx::proto::ModelProto;
    for game in ["liuzhou", "xiangqi", "go"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../models")
            .join(game);
        let ck =
            trainer_bridge::Checkpoint::read(&dir.join("best.safetensors"), &Device::Cpu).unwrap();
        let meta = ck.meta.clone().unwrap();
        assert_eq!(meta.network.has_new_parts(), game == "go", "{game}");
        let (varmap, net) =
            Net::from_checkpoint(&ck, &meta.network, meta.shape, &Device::Cpu).unwrap();
        let shipped = std::fs::read(dir.join("best.onnx")).unwrap();
        let again = trainer_bridge::onnx::model_bytes(&varmap, &meta).unwrap();
        let (a, b) = (
            ModelProto::decode(shipped.as_slice()).unwrap(),
            ModelProto::decode(again.as_slice()).unwrap(),
        );
        assert_eq!(a.graph, b.graph, "{game}: the graph exported again");
        assert_eq!(a.metadata_props, b.metadata_props, "{game}: metadata");
        // The shipped ONNX model against candle on the checkpoint.
        let n = 6;
        let shape = meta.shape;
        let mut rng = SmallRng::seed_from_u64(17);
        let inputs: Vec<f32> = (0..n * shape.input_len())
            .map(|_| f32::from(u8::from(rng.gen_bool(0.3))))
            .collect();
        let model = OrtModel::load(&dir.join("best.onnx"), &OrtOptions::default()).unwrap();
        let mut policy = vec![0.0; n * shape.policy_size];
        let mut value = vec![0.0; n];
        model
            .evaluate_encoded(&inputs, &mut policy, &mut value)
            .unwrap();
        let (p, v) = candle_forward(&net, &inputs, n);
        assert_close(&format!("shipped {game} policy"), &policy, &p);
        assert_close(&format!("shipped {game} value"), &value, &v);
    }
}

/// A Go network whose policy is per point and whose value head pools has no weight tied to the
/// board: its one ONNX model, written at 9 × 9, leaves the board's dims open (`any_size`), and
/// at 7, 13 and 19 computes every output as candle does with the same weights; the engine's
/// evaluator takes states of every size, several sizes in one call too; the int8 model made
/// from it runs at every size as well.
#[test]
fn one_go_network_plays_every_board_size() {
    testkit::onnx_runtime();
    let cfg = pooling_config();
    let go = |size| games::go::GoState::new(games::go::GoRules::with_size(size)).unwrap();
    let shape9 = go(9).shape();
    assert!(trainer_bridge::net::any_size(&cfg, shape9));
    assert!(!trainer_bridge::net::any_size(&mixed_config(), shape9));
    let dir = temp_dir("any-size");
    let path = dir.join("net.onnx");
    let (varmap, net) = random_net(&cfg, shape9, 21);
    write_model(&varmap, "go", &cfg, shape9, &path);
    let model = OrtModel::load(&path, &OrtOptions::default()).unwrap();
    assert!(model.info().any_size);
    assert_eq!(model.info().shape, shape9, "the board it was made for");

    let mut rng = SmallRng::seed_from_u64(8);
    for size in [7, 13, 19] {
        let shape = go(size).shape();
        let n = 3;
        let inputs: Vec<f32> = (0..n * shape.input_len())
            .map(|_| f32::from(u8::from(rng.gen_bool(0.3))))
            .collect();
        let ours = ort_outputs(&path, shape, &inputs, n);
        let x = Tensor::from_slice(&inputs, (n, shape.planes, size, size), &Device::Cpu).unwrap();
        let out = net.forward_t(&x, false).unwrap();
        let flat = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let theirs = [
            ("policy", flat(&out.policy)),
            ("value", flat(&out.value)),
            ("ownership", flat(out.ownership.as_ref().unwrap())),
            ("score", flat(out.score.as_ref().unwrap())),
            ("wdl", flat(out.wdl.as_ref().unwrap())),
            ("reply_policy", flat(out.reply.as_ref().unwrap())),
        ];
        for (name, values) in theirs {
            assert_close(&format!("{size}x{size} {name}"), &ours[name], &values);
        }
        assert_eq!(ours["policy"].len(), n * (size * size + 1));
        assert_eq!(ours["ownership"].len(), n * size * size);
    }

    // The engine's evaluator, loaded for a 13 × 13 game, takes 9 × 9 and 19 × 19 states as
    // well, each size in a call of its own, mixed in one call as they come.
    let evaluator = OrtEvaluator::load(&path, &go(13), &OrtOptions::default()).unwrap();
    assert!(Evaluator::<games::go::GoState>::fits(
        &evaluator,
        go(19).shape()
    ));
    let states: Vec<games::go::GoState> = [9, 13, 13, 19, 9]
        .iter()
        .map(|&size| infer::bench::sample_states(&go(size), 1, size as u64).remove(0))
        .collect();
    let refs: Vec<&games::go::GoState> = states.iter().collect();
    let sizes: Vec<usize> = refs.iter().map(|s| s.shape().policy_size).collect();
    let mut policy = vec![0.0; sizes.iter().sum()];
    let mut value = vec![0.0; refs.len()];
    evaluator.evaluate(&refs, &mut policy, &mut value).unwrap();
    let mut at = 0;
    for (state, (&ps, &v)) in refs.iter().zip(sizes.iter().zip(&value)) {
        let mut p1 = vec![0.0; ps];
        let mut v1 = [0.0];
        evaluator.evaluate(&[*state], &mut p1, &mut v1).unwrap();
        assert_close("one state alone, policy", &policy[at..at + ps], &p1);
        assert_close("one state alone, value", &[v], &v1);
        at += ps;
    }

    // int8, calibrated at 9 × 9, plays 19 × 19.
    let fp32 = trainer_bridge::quantize::Fp32Model::read(&path).unwrap();
    let calibration: Vec<f32> = (0..16 * shape9.input_len())
        .map(|_| f32::from(u8::from(rng.gen_bool(0.3))))
        .collect();
    let q = trainer_bridge::quantize::quantize(&fp32, &calibration).unwrap();
    let int8 = dir.join("net.int8.onnx");
    std::fs::write(&int8, &q.bytes).unwrap();
    let opts = OrtOptions {
        precision: infer::Precision::Int8,
        ..OrtOptions::default()
    };
    let model = OrtModel::load(&int8, &opts).unwrap();
    assert!(model.info().any_size);
    let evaluator = OrtEvaluator::from_model(model, &go(19)).unwrap();
    let big = infer::bench::sample_states(&go(19), 4, 3);
    let refs: Vec<&games::go::GoState> = big.iter().collect();
    let mut policy = vec![0.0; refs.len() * (19 * 19 + 1)];
    let mut value = vec![0.0; refs.len()];
    evaluator.evaluate(&refs, &mut policy, &mut value).unwrap();
    assert!(policy.iter().chain(&value).all(|x| x.is_finite()));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A network with a fully connected head stays the size it was made for: the engine refuses
/// it for another board, naming both shapes.
#[test]
fn a_network_with_dense_heads_plays_its_own_size_only() {
    testkit::onnx_runtime();
    let go = |size| games::go::GoState::new(games::go::GoRules::with_size(size)).unwrap();
    let cfg = small_config();
    let shape9 = go(9).shape();
    let dir = temp_dir("one-size");
    let path = dir.join("net.onnx");
    let (varmap, _) = random_net(&cfg, shape9, 2);
    write_model(&varmap, "go", &cfg, shape9, &path);
    let model = OrtModel::load(&path, &OrtOptions::default()).unwrap();
    assert!(!model.info().any_size);
    let err = match OrtEvaluator::from_model(model, &go(13)) {
        Ok(_) => panic!("a 9x9 network took a 13x13 game"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("9×9") || err.contains("9x9"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
