//! Bad model files and impossible provider requests give typed errors, never a panic.
//!
//! Needs ONNX Runtime (provisioned automatically, see `infer::runtime`).

use std::path::{Path, PathBuf};

use candle_core::Device;
use eval::Evaluator;
use games::liuzhou::Liuzhou;
use games::{Encoding, Game, TensorShape};
use infer::{ModelError, OrtEvaluator, OrtOptions, Provider};
use trainer_bridge::{export_onnx, ModelMeta, Net, NetConfig};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tb-errors-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tiny() -> NetConfig {
    NetConfig {
        blocks: 1,
        channels: 4,
        ..NetConfig::default()
    }
}

fn write(path: &Path, game: &str, shape: TensorShape) {
    let (varmap, _) = Net::fresh(&tiny(), shape, &Device::Cpu).unwrap();
    let meta = ModelMeta {
        game: game.into(),
        shape,
        network: tiny(),
        generation: 0,
    };
    export_onnx(&varmap, &meta, path).unwrap();
}

fn load(path: &Path) -> Result<OrtEvaluator<Liuzhou>, ModelError> {
    OrtEvaluator::load(path, &Liuzhou::default(), &OrtOptions::default())
}

#[test]
fn missing_file() {
    let path = temp_dir("missing").join("nope.onnx");
    match load(&path) {
        Err(e @ ModelError::Missing { .. }) => assert!(e.to_string().contains("nope.onnx"), "{e}"),
        other => panic!("expected Missing, got {:?}", other.err()),
    }
}

#[test]
fn truncated_and_garbage_files() {
    testkit::onnx_runtime();
    let dir = temp_dir("truncated");
    let good = dir.join("good.onnx");
    write(&good, Liuzhou::NAME, Liuzhou::default().shape());
    let bytes = std::fs::read(&good).unwrap();
    for (name, content) in [
        ("half.onnx", bytes[..bytes.len() / 2].to_vec()),
        ("head.onnx", bytes[..40].to_vec()),
        ("empty.onnx", Vec::new()),
        ("text.onnx", b"this is not a model\n".to_vec()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        match load(&path) {
            // An empty protobuf is a valid, empty model: it fails on its missing metadata.
            Err(e @ (ModelError::Invalid { .. } | ModelError::Metadata { .. })) => {
                assert!(e.to_string().contains(name), "{e}")
            }
            other => panic!(
                "{name}: expected Invalid or Metadata, got {:?}",
                other.err()
            ),
        }
    }
    assert!(load(&good).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wrong_game_and_wrong_shape() {
    testkit::onnx_runtime();
    let dir = temp_dir("wrong");
    let shape = Liuzhou::default().shape();
    let other_game = dir.join("xiangqi.onnx");
    write(&other_game, "xiangqi", shape);
    match load(&other_game) {
        Err(e @ ModelError::WrongGame { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("xiangqi") && text.contains("liuzhou"),
                "{text}"
            );
        }
        other => panic!("expected WrongGame, got {:?}", other.err()),
    }
    let other_shape = dir.join("shape.onnx");
    write(
        &other_shape,
        Liuzhou::NAME,
        TensorShape {
            planes: shape.planes + 1,
            ..shape
        },
    );
    assert!(matches!(
        load(&other_shape),
        Err(ModelError::WrongShape { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The PyPI library is CPU-only: asking strictly for a GPU provider is an error naming it;
/// asking with fallback runs on the CPU and says so.
#[test]
fn gpu_providers_without_a_gpu_build() {
    testkit::onnx_runtime();
    let dir = temp_dir("provider");
    let path = dir.join("net.onnx");
    let proto = Liuzhou::default();
    write(&path, Liuzhou::NAME, proto.shape());
    for requested in [Provider::Cuda, Provider::TensorRt] {
        let strict = OrtOptions {
            provider: requested,
            allow_fallback: false,
            ..OrtOptions::default()
        };
        match OrtEvaluator::load(&path, &proto, &strict) {
            Err(e @ ModelError::Provider { .. }) => {
                assert!(e.to_string().contains(requested.as_str()), "{e}")
            }
            Ok(ev) => panic!("{requested}: strict request succeeded: {}", ev.describe()),
            Err(e) => panic!("{requested}: expected a Provider error, got {e}"),
        }
        let lenient = OrtOptions {
            allow_fallback: true,
            ..strict
        };
        let ev = OrtEvaluator::load(&path, &proto, &lenient).unwrap();
        let report = ev.model().provider();
        assert_eq!(report.requested, requested);
        assert_eq!(report.active, Provider::Cpu);
        assert!(!report.fallbacks.is_empty());
        assert!(ev.describe().contains("fell back"), "{}", ev.describe());
        // And it evaluates.
        let mut policy = vec![0.0; proto.shape().policy_size];
        let mut value = [0.0];
        ev.evaluate(&[&proto], &mut policy, &mut value).unwrap();
        assert!((-1.0..=1.0).contains(&value[0]));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wrong_output_buffer_sizes_are_errors() {
    testkit::onnx_runtime();
    let dir = temp_dir("buffers");
    let path = dir.join("net.onnx");
    let proto = Liuzhou::default();
    write(&path, Liuzhou::NAME, proto.shape());
    let ev = load(&path).unwrap();
    let mut policy = vec![0.0; 3];
    let mut value = [0.0];
    assert!(ev.evaluate(&[&proto], &mut policy, &mut value).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn impossible_batch_sizes_are_option_errors() {
    let dir = temp_dir("batch");
    let path = dir.join("net.onnx");
    let proto = Liuzhou::default();
    write(&path, Liuzhou::NAME, proto.shape());
    for batch_size in [0, usize::MAX] {
        let opts = OrtOptions {
            batch_size,
            ..OrtOptions::default()
        };
        assert!(matches!(
            OrtEvaluator::load(&path, &proto, &opts),
            Err(ModelError::Options(_))
        ));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
