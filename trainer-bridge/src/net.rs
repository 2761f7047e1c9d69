//! The policy/value ResNet.
//!
//! Variable names (safetensors keys, and the ONNX exporter's source) are part of the checkpoint
//! format: `stem.conv`, `stem.bn`, `blocks.{i}.conv1|bn1|conv2|bn2`, `policy.conv|bn|fc`,
//! `value.conv|bn|fc1|fc2`; convolutions are bias-free (batch norm follows each one).

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Module, ModuleT, Tensor};
use candle_nn::{BatchNorm, Conv2d, Conv2dConfig, Linear, VarBuilder, VarMap};
use games::TensorShape;

use crate::NetConfig;

/// Batch-norm epsilon, shared with the ONNX exporter.
pub const BN_EPS: f64 = 1e-5;

/// Why a network could not be built, loaded or saved.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("network config: {0}")]
    Config(String),
    #[error("{path}: {reason}")]
    Checkpoint { path: PathBuf, reason: String },
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
}

struct ConvBn {
    conv: Conv2d,
    bn: BatchNorm,
}

impl ConvBn {
    fn new(
        cin: usize,
        cout: usize,
        k: usize,
        vb: VarBuilder,
        conv: &str,
        bn: &str,
    ) -> candle_core::Result<Self> {
        let cfg = Conv2dConfig {
            padding: k / 2,
            ..Default::default()
        };
        Ok(ConvBn {
            conv: candle_nn::conv2d_no_bias(cin, cout, k, cfg, vb.pp(conv))?,
            bn: candle_nn::batch_norm(cout, BN_EPS, vb.pp(bn))?,
        })
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> candle_core::Result<Tensor> {
        self.bn.forward_t(&self.conv.forward(x)?, train)
    }
}

struct Block {
    a: ConvBn,
    b: ConvBn,
}

/// The policy/value network: stem conv3×3 + BN + ReLU, `blocks` residual blocks, a policy head
/// (conv1×1 + BN + ReLU + fully connected → logits) and a value head (conv1×1 + BN + ReLU + fc +
/// ReLU + fc + tanh).
pub struct Net {
    stem: ConvBn,
    blocks: Vec<Block>,
    policy_conv: ConvBn,
    policy_fc: Linear,
    value_conv: ConvBn,
    value_fc1: Linear,
    value_fc2: Linear,
    shape: TensorShape,
    config: NetConfig,
}

impl Net {
    /// Builds the network's variables in `vb` (fresh random ones with a `VarMap`-backed builder,
    /// or existing ones from a checkpoint).
    pub fn new(vb: VarBuilder, config: &NetConfig, shape: TensorShape) -> Result<Net, NetError> {
        config.validate().map_err(NetError::Config)?;
        let c = config.channels;
        let cells = shape.height * shape.width;
        let stem = ConvBn::new(shape.planes, c, 3, vb.pp("stem"), "conv", "bn")?;
        let blocks = (0..config.blocks)
            .map(|i| {
                let vb = vb.pp(format!("blocks.{i}"));
                Ok(Block {
                    a: ConvBn::new(c, c, 3, vb.clone(), "conv1", "bn1")?,
                    b: ConvBn::new(c, c, 3, vb, "conv2", "bn2")?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        let p = vb.pp("policy");
        let policy_conv = ConvBn::new(c, config.policy_channels, 1, p.clone(), "conv", "bn")?;
        let policy_fc = candle_nn::linear(
            config.policy_channels * cells,
            shape.policy_size,
            p.pp("fc"),
        )?;
        let v = vb.pp("value");
        let value_conv = ConvBn::new(c, config.value_channels, 1, v.clone(), "conv", "bn")?;
        let value_fc1 = candle_nn::linear(
            config.value_channels * cells,
            config.value_hidden,
            v.pp("fc1"),
        )?;
        let value_fc2 = candle_nn::linear(config.value_hidden, 1, v.pp("fc2"))?;
        Ok(Net {
            stem,
            blocks,
            policy_conv,
            policy_fc,
            value_conv,
            value_fc1,
            value_fc2,
            shape,
            config: config.clone(),
        })
    }

    /// A network with fresh random weights, and the `VarMap` that owns them (for an optimiser,
    /// saving, or export).
    pub fn fresh(
        config: &NetConfig,
        shape: TensorShape,
        device: &Device,
    ) -> Result<(VarMap, Net), NetError> {
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
        let net = Net::new(vb, config, shape)?;
        Ok((varmap, net))
    }

    /// Loads a safetensors checkpoint written by [`Net::save`] for this config and shape.
    pub fn load(
        path: &Path,
        config: &NetConfig,
        shape: TensorShape,
        device: &Device,
    ) -> Result<(VarMap, Net), NetError> {
        let (mut varmap, net) = Net::fresh(config, shape, device)?;
        varmap.load(path).map_err(|e| NetError::Checkpoint {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        Ok((varmap, net))
    }

    /// Writes the variables (running batch-norm statistics included) as safetensors, through a
    /// temporary file renamed into place.
    pub fn save(varmap: &VarMap, path: &Path) -> Result<(), NetError> {
        let err = |reason: String| NetError::Checkpoint {
            path: path.to_owned(),
            reason,
        };
        let tmp = tmp_path(path);
        varmap.save(&tmp).map_err(|e| err(e.to_string()))?;
        std::fs::rename(&tmp, path).map_err(|e| err(e.to_string()))
    }

    /// The game's tensor shape this network was built for.
    pub fn shape(&self) -> TensorShape {
        self.shape
    }

    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Runs a batch `x` of shape (N, planes, height, width). Returns policy logits (N,
    /// policy_size) and values (N) in [−1, 1]. `train` selects batch statistics (and updates the
    /// running ones) instead of the running statistics.
    pub fn forward_t(&self, x: &Tensor, train: bool) -> candle_core::Result<(Tensor, Tensor)> {
        let mut h = self.stem.forward_t(x, train)?.relu()?;
        for block in &self.blocks {
            let y = block.a.forward_t(&h, train)?.relu()?;
            let y = block.b.forward_t(&y, train)?;
            h = (y + h)?.relu()?;
        }
        let p = self
            .policy_conv
            .forward_t(&h, train)?
            .relu()?
            .flatten_from(1)?;
        let policy = self.policy_fc.forward(&p)?;
        let v = self
            .value_conv
            .forward_t(&h, train)?
            .relu()?
            .flatten_from(1)?;
        let v = self.value_fc1.forward(&v)?.relu()?;
        let value = self.value_fc2.forward(&v)?.tanh()?.squeeze(1)?;
        Ok((policy, value))
    }
}

/// `path` with `.tmp` appended, in the same directory so that the rename is atomic.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: TensorShape = TensorShape {
        planes: 5,
        height: 6,
        width: 6,
        policy_size: 40,
    };

    fn small() -> NetConfig {
        NetConfig {
            blocks: 2,
            channels: 8,
            ..NetConfig::default()
        }
    }

    #[test]
    fn forward_shapes_and_value_range() {
        let (_, net) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 3.0, (3, 5, 6, 6), &Device::Cpu).unwrap();
        for train in [false, true] {
            let (p, v) = net.forward_t(&x, train).unwrap();
            assert_eq!(p.dims(), &[3, 40]);
            assert_eq!(v.dims(), &[3]);
            for v in v.to_vec1::<f32>().unwrap() {
                assert!((-1.0..=1.0).contains(&v), "{v}");
            }
        }
    }

    #[test]
    fn save_and_load_round_trip() {
        let dir = std::env::temp_dir().join(format!("tb-net-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("net.safetensors");
        let (varmap, net) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 1.0, (2, 5, 6, 6), &Device::Cpu).unwrap();
        // A training pass moves the running statistics; they must survive the round trip.
        net.forward_t(&x, true).unwrap();
        Net::save(&varmap, &path).unwrap();
        let (_, loaded) = Net::load(&path, &small(), SHAPE, &Device::Cpu).unwrap();
        let (p0, v0) = net.forward_t(&x, false).unwrap();
        let (p1, v1) = loaded.forward_t(&x, false).unwrap();
        let dp = (p0 - p1)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        let dv = (v0 - v1)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert_eq!((dp, dv), (0.0, 0.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn loading_a_checkpoint_of_another_shape_fails() {
        let dir = std::env::temp_dir().join(format!("tb-net-shape-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("net.safetensors");
        let (varmap, _) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        Net::save(&varmap, &path).unwrap();
        let other = TensorShape {
            policy_size: 41,
            ..SHAPE
        };
        assert!(matches!(
            Net::load(&path, &small(), other, &Device::Cpu),
            Err(NetError::Checkpoint { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
