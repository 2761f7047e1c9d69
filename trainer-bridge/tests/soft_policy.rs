//! The soft policy head (`network.soft_policy`) is a training target only: a checkpoint with
//! it loads, exports exactly the ONNX graph and weights it would without it (only the `network`
//! metadata says the head is there), quantises to int8, and the head can be turned on in a
//! checkpoint without it, the policy and the value unchanged.

use std::path::PathBuf;

use candle_core::{Device, Tensor};
use games::TensorShape;
use trainer_bridge::onnx::model_bytes;
use trainer_bridge::quantize::{self, Fp32Model};
use trainer_bridge::{Checkpoint, ModelMeta, Net, NetConfig};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("soft-policy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn meta(game: &str, shape: TensorShape, network: &NetConfig) -> ModelMeta {
    ModelMeta {
        game: game.into(),
        shape,
        network: network.clone(),
        generation: 3,
    }
}

fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .flatten_all()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar()
        .unwrap()
}

/// For Go with a per-point pooling policy (the head a 1×1 convolution and a pass logit) and
/// Liuzhou with the plain fully connected one.
#[test]
fn a_checkpoint_with_the_soft_head_exports_the_model_without_it() {
    testkit::onnx_runtime();
    let dir = tmpdir("export");
    let go = NetConfig {
        blocks: 2,
        channels: 16,
        policy_channels: 4,
        value_channels: 4,
        value_hidden: 16,
        pool_every: 2,
        pool_channels: 4,
        policy_pool: true,
        value_pool: true,
        ownership: true,
        ..NetConfig::default()
    };
    let liuzhou = NetConfig {
        blocks: 1,
        channels: 8,
        value_hidden: 8,
        ..NetConfig::default()
    };
    for (game, shape, without, outputs) in [
        (
            "go",
            games::shape_of("go", Some(7)).unwrap(),
            go,
            &["policy", "value", "ownership"][..],
        ),
        (
            "liuzhou",
            games::shape_of("liuzhou", None).unwrap(),
            liuzhou,
            &["policy", "value"][..],
        ),
    ] {
        let with = NetConfig {
            soft_policy: true,
            ..without.clone()
        };
        assert!(with.summary().contains("soft policy"), "{}", with.summary());
        // A checkpoint without the head, grown to have it.
        let plain_path = dir.join(format!("{game}-0.safetensors"));
        let (plain_vars, plain) = Net::seeded(&without, shape, &Device::Cpu, 3).unwrap();
        Net::save(&plain_vars, &meta(game, shape, &without), &plain_path).unwrap();
        let grown = Checkpoint::read(&plain_path, &Device::Cpu)
            .unwrap()
            .grown_to(&with, 7)
            .unwrap();
        assert_eq!(grown.meta.as_ref().unwrap().network, with);
        let (grown_vars, _) = Net::from_checkpoint(&grown, &with, shape, &Device::Cpu).unwrap();
        let path = dir.join(format!("{game}-1.safetensors"));
        Net::save(&grown_vars, &meta(game, shape, &with), &path).unwrap();

        // It loads; its policy and value are the plain network's; it has the soft head.
        let (vars, net) = Net::load(&path, &with, shape, &Device::Cpu).unwrap();
        let names: Vec<String> = vars.data().lock().unwrap().keys().cloned().collect();
        assert!(
            names.iter().any(|n| n.starts_with("soft_policy.")),
            "{names:?}"
        );
        // The config without the head cannot read it: the difference is named.
        let e = Net::load(&path, &without, shape, &Device::Cpu)
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("network.soft_policy: 1 in the checkpoint, 0 in the config"),
            "{e}"
        );
        let x = Tensor::randn(
            0f32,
            1.0,
            (3, shape.planes, shape.height, shape.width),
            &Device::Cpu,
        )
        .unwrap();
        let (a, b) = (
            plain.forward_t(&x, false).unwrap(),
            net.forward_t(&x, false).unwrap(),
        );
        assert_eq!(max_diff(&a.policy, &b.policy), 0.0, "{game}");
        assert_eq!(max_diff(&a.value, &b.value), 0.0, "{game}");
        assert!(a.soft_policy.is_none());
        assert_eq!(b.soft_policy.unwrap().dims(), &[3, shape.policy_size]);

        // The same ONNX bytes as the network without the head, metadata aside; with its own
        // metadata, only the `network` key says it was trained with one.
        let plain_meta = meta(game, shape, &without);
        assert!(
            model_bytes(&vars, &plain_meta).unwrap()
                == model_bytes(&plain_vars, &plain_meta).unwrap(),
            "{game}: the soft head changed the exported model"
        );
        let fp32 = Fp32Model::read(&path).unwrap();
        assert!(
            fp32.bytes == model_bytes(&plain_vars, &meta(game, shape, &with)).unwrap(),
            "{game}: exported from the checkpoint"
        );
        let network = serde_json::to_string(&fp32.meta.network).unwrap();
        assert!(network.contains(r#""soft_policy":1"#), "{network}");
        let plain_json = serde_json::to_string(&without).unwrap();
        assert!(!plain_json.contains("soft_policy"), "{plain_json}");

        // The int8 model: the same outputs, none of them the soft head.
        let n = 16;
        let inputs: Vec<f32> = (0..n * shape.input_len())
            .map(|i| f32::from(u8::from((i * 7919) % 5 == 0)))
            .collect();
        let int8 = quantize::quantize(&fp32, &inputs).unwrap();
        let agreement =
            quantize::output_agreement(&fp32.bytes, &int8.bytes, shape, &inputs).unwrap();
        let names: Vec<&str> = agreement.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, outputs, "{game}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
