//! The ONNX model written by trainer-bridge, run through the engine's ONNX Runtime evaluator,
//! must compute what candle computes (policy logits and values within 1e-4, or 1e-5 of the
//! outputs' largest magnitude where that exceeds 10), for every board shape, and through the
//! `Game` trait for every game.
//!
//! Needs ONNX Runtime: provisioned automatically (see `infer::runtime`), or from
//! `ORT_DYLIB_PATH`.

use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use candle_nn::VarMap;
use eval::Evaluator;
use games::{Game, TensorShape};
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
        } else if name.contains(".bn") && name.ends_with("weight") {
            0.5..1.5
        } else if name.ends_with("running_mean") || name.contains(".bn") && name.ends_with("bias") {
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
    let (p, v) = net.forward_t(&x, false).unwrap();
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
fn game_parity<G: Game>(proto: G, config: &str) {
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
    game_parity(games::liuzhou::Liuzhou::default(), "configs/liuzhou.yaml");
}

#[test]
fn parity_xiangqi() {
    game_parity(games::xiangqi::Xiangqi::default(), "configs/xiangqi.yaml");
}

#[test]
fn parity_go_9x9() {
    let go = games::go::GoState::new(games::go::GoRules::default()).unwrap();
    game_parity(go, "configs/go.yaml");
}
