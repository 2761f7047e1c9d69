//! The policy/value ResNet.
//!
//! Variable names (safetensors keys, and the ONNX exporter's source) are part of the checkpoint
//! format: `stem.conv`, `stem.bn`, `blocks.{i}.conv1|bn1|conv2|bn2`, `policy.conv|bn|fc`,
//! `value.conv|bn|fc1|fc2`; convolutions are bias-free (batch norm follows each one).
//!
//! The KataGo-style parts, each chosen by a [`NetConfig`] key that is off by default (so a
//! network without them has exactly the variables above), add:
//! - a global-pooling block (`pool_every`): after the block's first convolution, batch norm and
//!   ReLU, its last G (`pool_channels`) channels are pooled over the board (mean, mean scaled by
//!   (width − 14)/10, max: [`global_pool`]) and `blocks.{i}.pool.fc` maps the 3·G pooled values
//!   to a bias for each of the other channels, which alone feed the second convolution
//!   (`conv2` then reads channels − G channels);
//! - a pooling policy head (`policy_pool`): `policy.gconv|gbn` (G channels) are pooled and
//!   `policy.gfc` maps them to biases of the policy channels. Where the policy is one entry a
//!   point, row-major, then pass (Go: `policy_size` = height × width + 1), the points' logits
//!   are a 1×1 convolution `policy.out` of the policy channels and the pass logit is
//!   `policy.pass` of the pooled values: no weight depends on the board's size. Otherwise (Liuzhou,
//!   Xiangqi: moves, not points) `policy.fc` reads the biased channels as before;
//! - a pooling value head (`value_pool`): `value.fc1` reads the value channels pooled (3 ×
//!   `value_channels` values) instead of flattened;
//! - auxiliary outputs: `ownership` (`ownership.conv`, a 1×1 convolution with bias of the value
//!   channels, then tanh), `score` (`value.score`) and `wdl` (`value.wdl`, three logits) from the
//!   value head's hidden layer, and the opponent's reply policy (`reply.fc`, or `reply.out` and
//!   `reply.pass`: the policy's form, on the policy head's channels);
//! - a soft policy head (`soft_policy`: `soft_policy.fc`, or `soft_policy.out` and
//!   `soft_policy.pass`, the policy's form on the policy head's channels), KataGo's auxiliary
//!   soft policy: a training target only, never exported (see [`crate::fit`]).
//!
//! A checkpoint is a safetensors file of those F32 variables whose string metadata says what
//! it is for, as the ONNX model's does: `format` (`trainer-bridge-checkpoint`), `version`
//! ([`CHECKPOINT_VERSION`]), `game`, `planes`, `height`, `width`, `policy_size`, `network` (the
//! [`NetConfig`] as JSON), `generation` and `crc32`, the CRC-32 of each tensor's bytes (as in
//! shards: [`shards::checksum`]), checked when the checkpoint is read. Checkpoints of version 1
//! (no `crc32`) and those written before the metadata existed still load, with a warning that
//! their bytes could not be checked; for the latter only the tensors' shapes are checked.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Module, Tensor, Var};
use candle_nn::init::{Init, NormalOrUniform};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::{BatchNorm, Conv2d, Conv2dConfig, Linear, VarBuilder, VarMap};
use games::TensorShape;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use crate::kernels::{bn_relu, BnMode};
use crate::{kernels, ModelMeta, NetConfig};

/// The `format` metadata value of a checkpoint.
pub const CHECKPOINT_FORMAT: &str = "trainer-bridge-checkpoint";
/// Bumped when the checkpoint's layout changes meaning. Version 1 is version 2 without the
/// `crc32` metadata; both are read.
pub const CHECKPOINT_VERSION: u32 = 2;

/// Batch-norm epsilon, shared with the ONNX exporter.
pub const BN_EPS: f64 = 1e-5;

/// Why a network could not be built, loaded or saved.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("network config: {0}")]
    Config(String),
    /// The file could not be read or written.
    #[error("{path}: {reason}")]
    Checkpoint { path: PathBuf, reason: String },
    /// The file is not a checkpoint at all (damaged, or some other file).
    #[error("{path}: not a valid safetensors checkpoint: {reason}")]
    NotCheckpoint { path: PathBuf, reason: String },
    /// A tensor's bytes are not those written: the file was damaged after it was written.
    #[error("{path}: damaged checkpoint: {reason}")]
    Damaged {
        path: PathBuf,
        reason: shards::ChecksumError,
    },
    /// The checkpoint is for another game or board than the data.
    #[error("{path}: {reason}")]
    WrongShape { path: PathBuf, reason: String },
    /// The checkpoint's tensors do not fit the configured network.
    #[error(
        "{path}: tensor `{tensor}` is {found} in the checkpoint, but the config's `network` \
         section asks for {wanted}: the `network` section differs from the checkpoint's{detail}"
    )]
    NetworkMismatch {
        path: PathBuf,
        tensor: String,
        found: String,
        wanted: String,
        /// The differing keys, when the checkpoint records its network.
        detail: String,
    },
    /// Weights that would make every output NaN: never loaded, never written.
    #[error("{place}: tensor `{tensor}` holds non-finite values (NaN or infinity)")]
    NonFinite { place: String, tensor: String },
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

    /// Convolution, batch norm, `skip` added if given, ReLU; channels-last in and out.
    /// `train`: batch statistics, and the running ones updated.
    fn forward_t(
        &self,
        x: &Tensor,
        skip: Option<&Tensor>,
        train: bool,
    ) -> candle_core::Result<Tensor> {
        let z = kernels::conv(x, self.conv.weight())?;
        let (gamma, beta) = self
            .bn
            .weight_and_bias()
            .expect("batch norms are built affine");
        let (running_mean, running_var) = (self.bn.running_mean(), self.bn.running_var());
        let mode = if train {
            BnMode::Train { eps: BN_EPS as f32 }
        } else {
            BnMode::Eval {
                mean: running_mean.to_vec1()?,
                rstd: running_var
                    .to_vec1::<f32>()?
                    .iter()
                    .map(|v| 1.0 / (v + BN_EPS as f32).sqrt())
                    .collect(),
            }
        };
        let (y, stats) = bn_relu(&z, gamma, beta, skip, mode)?;
        if let Some(stats) = stats {
            // As candle's BatchNorm: an exponential average with the batch's mean and its
            // unbiased variance.
            let m = self.bn.momentum() as f32;
            let n = stats.rows as f32;
            let unbiased = n / (n - 1.0).max(1.0);
            let blend = |running: &Tensor, batch: &[f32], scale: f32| -> candle_core::Result<()> {
                let old = running.to_vec1::<f32>()?;
                let new: Vec<f32> = old
                    .iter()
                    .zip(batch)
                    .map(|(r, b)| r * (1.0 - m) + b * scale * m)
                    .collect();
                Var::from_tensor(running)?.set(&Tensor::new(new, running.device())?)
            };
            blend(running_mean, &stats.mean, 1.0)?;
            blend(running_var, &stats.var, unbiased)?;
        }
        Ok(y)
    }
}

struct Block {
    a: ConvBn,
    b: ConvBn,
    /// In a global-pooling block: the layer from the pooled last G channels of `a`'s output to
    /// biases of its other channels.
    pool: Option<Linear>,
}

/// How a policy head turns its channels into logits.
enum PolicyOut {
    /// A fully connected layer over the channels, flattened channels-first.
    Dense(Linear),
    /// One logit a point from a 1×1 convolution, then pass from the pooled features.
    Points { conv: Conv2d, pass: Linear },
}

impl PolicyOut {
    fn new(
        form: PolicyForm,
        channels: usize,
        shape: TensorShape,
        vb: VarBuilder,
        prefix: &str,
    ) -> candle_core::Result<Self> {
        let cells = shape.height * shape.width;
        Ok(match form {
            PolicyForm::Dense => PolicyOut::Dense(candle_nn::linear(
                channels * cells,
                shape.policy_size,
                vb.pp(format!("{prefix}.fc")),
            )?),
            PolicyForm::Points { pooled } => PolicyOut::Points {
                conv: candle_nn::conv2d_no_bias(
                    channels,
                    1,
                    1,
                    Conv2dConfig::default(),
                    vb.pp(format!("{prefix}.out")),
                )?,
                pass: candle_nn::linear(pooled, 1, vb.pp(format!("{prefix}.pass")))?,
            },
        })
    }

    /// Logits (N, policy_size) from channels-last features `p` and the pooled features.
    fn forward(&self, p: &Tensor, pooled: Option<&Tensor>) -> candle_core::Result<Tensor> {
        match self {
            PolicyOut::Dense(fc) => fc.forward(&p.permute((0, 3, 1, 2))?.flatten_from(1)?),
            PolicyOut::Points { conv, pass } => {
                let points = kernels::conv(p, conv.weight())?.flatten_from(1)?;
                let pooled = pooled.expect("a per-point policy head pools");
                Tensor::cat(&[&points, &pass.forward(pooled)?], 1)
            }
        }
    }
}

/// The form of a network's policy (and reply policy) output layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyForm {
    /// A fully connected layer over the policy channels.
    Dense,
    /// Per point: a 1×1 convolution for the points and a pass logit from `pooled` pooled
    /// features.
    Points { pooled: usize },
}

impl PolicyForm {
    /// The form `config` gives a game of `shape`: per point where the head pools and the
    /// policy is one entry a point then pass.
    pub fn of(config: &NetConfig, shape: TensorShape) -> PolicyForm {
        if config.policy_pool && shape.policy_size == shape.height * shape.width + 1 {
            PolicyForm::Points {
                pooled: 3 * config.pool_channels,
            }
        } else {
            PolicyForm::Dense
        }
    }
}

/// Whether a network of `config` built for `shape` has no weight tied to the board's size: its
/// policy is per point and its value head pools. Such a network plays every board of its game
/// whose policy is one entry a point then pass (Go of any size), and its ONNX model leaves the
/// board's dims open.
pub fn any_size(config: &NetConfig, shape: TensorShape) -> bool {
    config.value_pool && PolicyForm::of(config, shape) != PolicyForm::Dense
}

/// Global pooling of channels-last `x` (N, H, W, C) over the board: (N, 3·C), the channels'
/// means, the means times `width_scale` ([`width_scale`]) and the channels' maxima, in that
/// order (KataGo's).
///
/// This step pools over the whole plane of the board the network was built for, and the scale
/// is that board's. A network that plays smaller boards inside its planes (Go of size s in a
/// 19×19 input) needs a mask of the points on the board: the mean then becomes Σ(x·mask)/Σmask,
/// the maximum max(x + (mask − 1)) (the pooled channels follow a ReLU, so they are ≥ 0 and a
/// point off the board at −1 never wins), and the scale ([`width_scale`]) takes √Σmask as
/// the width, each sample its own. The weights do not change: only this function and its ONNX
/// form gain the mask as an input.
pub fn global_pool(x: &Tensor, width_scale: f64) -> candle_core::Result<Tensor> {
    kernels::global_pool(x, 0, width_scale as f32)
}

/// KataGo's size feature, (width − 14)/10, the width the square root of the board's points
/// (its side on a square board).
pub fn width_scale(shape: TensorShape) -> f64 {
    board_width_scale(shape.height, shape.width)
}

/// [`width_scale`] of a board of `height` × `width` points: the forward pass takes it from its
/// input, so a network that plays any size ([`NetConfig::any_size`]) scales for the board it
/// is given.
pub fn board_width_scale(height: usize, width: usize) -> f64 {
    (((height * width) as f64).sqrt() - 14.0) / 10.0
}

/// `x` (N, H, W, C) plus a bias (N, C) for each sample's channels.
fn add_channel_bias(x: &Tensor, bias: &Tensor) -> candle_core::Result<Tensor> {
    kernels::add_bias(x, bias)
}

/// What a forward pass computes, by name (the ONNX model's outputs of the same names).
#[derive(Debug)]
pub struct Outputs {
    /// Policy logits (N, policy_size).
    pub policy: Tensor,
    /// Values (N) in [−1, 1], the mover's view.
    pub value: Tensor,
    /// Each point's final owner (N, height × width), row-major, in [−1, 1], the mover's view.
    pub ownership: Option<Tensor>,
    /// Final score margin (N), the mover's view, unbounded.
    pub score: Option<Tensor>,
    /// Win, draw and loss logits for the mover (N, 3).
    pub wdl: Option<Tensor>,
    /// Logits of the opponent's reply (N, policy_size).
    pub reply: Option<Tensor>,
    /// Logits of the soft policy head (N, policy_size): trained against the softened policy
    /// target; no ONNX output.
    pub soft_policy: Option<Tensor>,
}

/// The policy/value network: stem conv3×3 + BN + ReLU, `blocks` residual blocks, a policy head
/// (conv1×1 + BN + ReLU + fully connected → logits) and a value head (conv1×1 + BN + ReLU + fc +
/// ReLU + fc + tanh), with the pooling parts and auxiliary heads its config turns on (see the
/// module docs).
pub struct Net {
    stem: ConvBn,
    blocks: Vec<Block>,
    policy_conv: ConvBn,
    /// A pooling policy head's pooled branch and its layer to the policy channels' biases.
    policy_pool: Option<(ConvBn, Linear)>,
    policy_out: PolicyOut,
    reply_out: Option<PolicyOut>,
    soft_policy_out: Option<PolicyOut>,
    value_conv: ConvBn,
    value_fc1: Linear,
    value_fc2: Linear,
    wdl: Option<Linear>,
    score: Option<Linear>,
    ownership: Option<Conv2d>,
    shape: TensorShape,
    config: NetConfig,
}

impl Net {
    /// Builds the network's variables in `vb` (fresh random ones with a `VarMap`-backed builder,
    /// or existing ones from a checkpoint).
    pub fn new(vb: VarBuilder, config: &NetConfig, shape: TensorShape) -> Result<Net, NetError> {
        config.validate().map_err(NetError::Config)?;
        let c = config.channels;
        let g = config.pool_channels;
        let cells = shape.height * shape.width;
        let stem = ConvBn::new(shape.planes, c, 3, vb.pp("stem"), "conv", "bn")?;
        let blocks = (0..config.blocks)
            .map(|i| {
                let vb = vb.pp(format!("blocks.{i}"));
                let pools = config.pools_in_block(i);
                let kept = if pools { c - g } else { c };
                Ok(Block {
                    a: ConvBn::new(c, c, 3, vb.clone(), "conv1", "bn1")?,
                    pool: if pools {
                        Some(candle_nn::linear(3 * g, kept, vb.pp("pool.fc"))?)
                    } else {
                        None
                    },
                    b: ConvBn::new(kept, c, 3, vb, "conv2", "bn2")?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        let p = vb.pp("policy");
        let pc = config.policy_channels;
        let policy_conv = ConvBn::new(c, pc, 1, p.clone(), "conv", "bn")?;
        let policy_pool = if config.policy_pool {
            Some((
                ConvBn::new(c, g, 1, p.clone(), "gconv", "gbn")?,
                candle_nn::linear(3 * g, pc, p.pp("gfc"))?,
            ))
        } else {
            None
        };
        let form = PolicyForm::of(config, shape);
        let policy_out = PolicyOut::new(form, pc, shape, vb.clone(), "policy")?;
        let reply_out = if config.reply {
            Some(PolicyOut::new(form, pc, shape, vb.clone(), "reply")?)
        } else {
            None
        };
        let soft_policy_out = if config.soft_policy {
            Some(PolicyOut::new(form, pc, shape, vb.clone(), "soft_policy")?)
        } else {
            None
        };
        let v = vb.pp("value");
        let vc = config.value_channels;
        let value_conv = ConvBn::new(c, vc, 1, v.clone(), "conv", "bn")?;
        let value_in = if config.value_pool {
            3 * vc
        } else {
            vc * cells
        };
        let value_fc1 = candle_nn::linear(value_in, config.value_hidden, v.pp("fc1"))?;
        let value_fc2 = candle_nn::linear(config.value_hidden, 1, v.pp("fc2"))?;
        let hidden = config.value_hidden;
        let wdl = if config.wdl {
            Some(candle_nn::linear(hidden, 3, v.pp("wdl"))?)
        } else {
            None
        };
        let score = if config.score {
            Some(candle_nn::linear(hidden, 1, v.pp("score"))?)
        } else {
            None
        };
        let ownership = if config.ownership {
            Some(candle_nn::conv2d(
                vc,
                1,
                1,
                Conv2dConfig::default(),
                vb.pp("ownership.conv"),
            )?)
        } else {
            None
        };
        Ok(Net {
            stem,
            blocks,
            policy_conv,
            policy_pool,
            policy_out,
            reply_out,
            soft_policy_out,
            value_conv,
            value_fc1,
            value_fc2,
            wdl,
            score,
            ownership,
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

    /// A network with fresh random weights drawn from `seed`: the same seed gives the same
    /// network (candle's own CPU generator cannot be seeded), with the distributions candle's
    /// layers ask for.
    pub fn seeded(
        config: &NetConfig,
        shape: TensorShape,
        device: &Device,
        seed: u64,
    ) -> Result<(VarMap, Net), NetError> {
        let varmap = VarMap::new();
        let backend: Box<dyn SimpleBackend> = Box::new(SeededInit {
            map: varmap.clone(),
            seed,
        });
        let vb = VarBuilder::from_backend(backend, DType::F32, device.clone());
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
        Net::from_checkpoint(&Checkpoint::read(path, device)?, config, shape, device)
    }

    /// A network for `config` and `shape` with the weights of `checkpoint`, which must hold
    /// exactly the tensors that network has, with the same shapes.
    pub fn from_checkpoint(
        checkpoint: &Checkpoint,
        config: &NetConfig,
        shape: TensorShape,
        device: &Device,
    ) -> Result<(VarMap, Net), NetError> {
        if let Some(reason) = checkpoint.shape_mismatch(shape) {
            return Err(NetError::WrongShape {
                path: checkpoint.path.clone(),
                reason,
            });
        }
        let (varmap, net) = Net::fresh(config, shape, device)?;
        {
            let vars = varmap.data().lock().expect("varmap lock poisoned");
            let mismatch =
                |tensor: &str, found: String, wanted: String| NetError::NetworkMismatch {
                    path: checkpoint.path.clone(),
                    tensor: tensor.into(),
                    found,
                    wanted,
                    detail: checkpoint.network_diff(config),
                };
            // Sorted, so that the tensor named is the same on every run.
            let wanted: BTreeMap<&String, _> = vars.iter().collect();
            for (name, var) in &wanted {
                match checkpoint.tensors.get(*name) {
                    None => {
                        return Err(mismatch(
                            name,
                            "missing".into(),
                            format!("{:?}", var.dims()),
                        ))
                    }
                    Some(t) if t.dims() != var.dims() => {
                        return Err(mismatch(
                            name,
                            format!("{:?}", t.dims()),
                            format!("{:?}", var.dims()),
                        ))
                    }
                    Some(t) => var.set(t)?,
                }
            }
            let extra: BTreeMap<_, _> = checkpoint
                .tensors
                .iter()
                .filter(|(name, _)| !vars.contains_key(*name))
                .collect();
            if let Some((name, t)) = extra.into_iter().next() {
                return Err(mismatch(
                    name,
                    format!("{:?}", t.dims()),
                    "no such tensor".into(),
                ));
            }
        }
        Ok((varmap, net))
    }

    /// Writes the variables (running batch-norm statistics included) and `meta` as a
    /// safetensors checkpoint, through a temporary file renamed into place. Non-finite weights
    /// are refused and nothing is written.
    pub fn save(varmap: &VarMap, meta: &ModelMeta, path: &Path) -> Result<(), NetError> {
        let bytes = Net::checkpoint_bytes(varmap, meta)?;
        shards::write_atomically(path, &bytes).map_err(|e| NetError::Checkpoint {
            path: path.to_owned(),
            reason: match e {
                shards::ShardError::Io { error, .. } => format!("cannot write: {error}"),
                e => e.to_string(),
            },
        })
    }

    /// The bytes [`Net::save`] writes.
    pub fn checkpoint_bytes(varmap: &VarMap, meta: &ModelMeta) -> Result<Vec<u8>, NetError> {
        use safetensors::View;
        let vars = varmap.data().lock().expect("varmap lock poisoned");
        let mut tensors: Vec<(&String, &Tensor)> =
            vars.iter().map(|(k, v)| (k, v.as_tensor())).collect();
        tensors.sort_by_key(|(k, _)| *k);
        if let Some((name, _)) = tensors
            .iter()
            .find(|(_, t)| !all_finite(t).unwrap_or(false))
        {
            return Err(NetError::NonFinite {
                place: "the network to be written".into(),
                tensor: name.to_string(),
            });
        }
        let s = meta.shape;
        let info: HashMap<String, String> = [
            ("format", CHECKPOINT_FORMAT.to_string()),
            ("version", CHECKPOINT_VERSION.to_string()),
            ("game", meta.game.clone()),
            ("planes", s.planes.to_string()),
            ("height", s.height.to_string()),
            ("width", s.width.to_string()),
            ("policy_size", s.policy_size.to_string()),
            (
                "network",
                serde_json::to_string(&meta.network).expect("NetConfig serialises"),
            ),
            ("generation", meta.generation.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let serialising = |e: safetensors::SafeTensorError| {
            NetError::Candle(candle_core::Error::Msg(format!("serialising: {e}")))
        };
        // The bytes written, so that the checksums are of exactly those.
        let data: Vec<std::borrow::Cow<[u8]>> = tensors.iter().map(|(_, t)| t.data()).collect();
        let views = tensors
            .iter()
            .zip(&data)
            .map(|((k, t), data)| {
                safetensors::tensor::TensorView::new(View::dtype(t), View::shape(t).to_vec(), data)
                    .map(|view| (k.as_str(), view))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(serialising)?;
        shards::checksum::serialize(views, info).map_err(serialising)
    }

    /// The game's tensor shape this network was built for.
    pub fn shape(&self) -> TensorShape {
        self.shape
    }

    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Runs a batch `x` of shape (N, planes, height, width): policy logits (N, policy_size),
    /// values (N) in [−1, 1], and the auxiliary outputs the network has ([`Outputs`]). `train`
    /// selects batch statistics (and updates the running ones) instead of the running
    /// statistics.
    pub fn forward_t(&self, x: &Tensor, train: bool) -> candle_core::Result<Outputs> {
        // The tower runs channels-last (see `kernels`); the heads flatten channels-first, the
        // order of the fully connected layers' inputs.
        let (_, _, height, width) = x.dims4()?;
        let scale = board_width_scale(height, width);
        let mut h = self
            .stem
            .forward_t(&x.permute((0, 2, 3, 1))?, None, train)?;
        for block in &self.blocks {
            let mut y = block.a.forward_t(&h, None, train)?;
            if let Some(fc) = &block.pool {
                // The last G channels pooled, the others biased (one pass each over `y`).
                let kept = y.dim(3)? - self.config.pool_channels;
                let pooled = kernels::global_pool(&y, kept, scale as f32)?;
                y = kernels::add_bias(&y, &fc.forward(&pooled)?)?;
            }
            h = block.b.forward_t(&y, Some(&h), train)?;
        }
        let channels_first = |t: &Tensor| t.permute((0, 3, 1, 2))?.flatten_from(1);

        let mut p = self.policy_conv.forward_t(&h, None, train)?;
        let pooled = match &self.policy_pool {
            Some((conv, fc)) => {
                let pooled = global_pool(&conv.forward_t(&h, None, train)?, scale)?;
                p = add_channel_bias(&p, &fc.forward(&pooled)?)?;
                Some(pooled)
            }
            None => None,
        };
        let policy = self.policy_out.forward(&p, pooled.as_ref())?;
        let reply = match &self.reply_out {
            Some(out) => Some(out.forward(&p, pooled.as_ref())?),
            None => None,
        };
        let soft_policy = match &self.soft_policy_out {
            Some(out) => Some(out.forward(&p, pooled.as_ref())?),
            None => None,
        };

        let v = self.value_conv.forward_t(&h, None, train)?;
        let features = if self.config.value_pool {
            global_pool(&v, scale)?
        } else {
            channels_first(&v)?
        };
        let hidden = self.value_fc1.forward(&features)?.relu()?;
        let value = self.value_fc2.forward(&hidden)?.tanh()?.squeeze(1)?;
        let wdl = match &self.wdl {
            Some(fc) => Some(fc.forward(&hidden)?),
            None => None,
        };
        let score = match &self.score {
            Some(fc) => Some(fc.forward(&hidden)?.squeeze(1)?),
            None => None,
        };
        let ownership = match &self.ownership {
            Some(conv) => {
                let bias = conv.bias().expect("the ownership convolution has a bias");
                let o = kernels::conv(&v, conv.weight())?.flatten_from(1)?;
                Some(o.broadcast_add(bias)?.tanh()?)
            }
            None => None,
        };
        Ok(Outputs {
            policy,
            value,
            ownership,
            score,
            wdl,
            reply,
            soft_policy,
        })
    }
}

/// A checkpoint file read into memory: its tensors, and what it says about itself.
pub struct Checkpoint {
    pub path: PathBuf,
    /// Game, shape, network and generation; `None` for a checkpoint written before checkpoints
    /// recorded them.
    pub meta: Option<ModelMeta>,
    tensors: HashMap<String, Tensor>,
}

impl Checkpoint {
    /// Reads the checkpoint at `path`: a safetensors file of finite F32 tensors, with valid
    /// metadata if it has any, whose tensors match their checksums if it records them (a
    /// checkpoint that records none is read with a warning).
    pub fn read(path: &Path, device: &Device) -> Result<Checkpoint, NetError> {
        let bytes = std::fs::read(path).map_err(|e| NetError::Checkpoint {
            path: path.to_owned(),
            reason: format!("cannot read: {e}"),
        })?;
        let bad = |reason: String| NetError::NotCheckpoint {
            path: path.to_owned(),
            reason,
        };
        let (_, header) =
            safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| bad(e.to_string()))?;
        let info = header.metadata().as_ref();
        let (meta, version) = match info {
            Some(info) if info.contains_key("format") => {
                let (meta, version) = meta_from_info(info).map_err(bad)?;
                (Some(meta), Some(version))
            }
            _ => (None, None),
        };
        let st = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| bad(e.to_string()))?;
        match shards::checksum::verify(&st, info) {
            Err(reason) => {
                return Err(NetError::Damaged {
                    path: path.to_owned(),
                    reason,
                })
            }
            Ok(shards::Integrity::NoChecksum) => match version {
                Some(v) if v >= 2 => {
                    return Err(bad(format!(
                        "a version {v} checkpoint without `{}` metadata",
                        shards::checksum::KEY
                    )))
                }
                _ => tracing::warn!(
                    "{}: the checkpoint carries no checksums (written by an older \
                     trainer-bridge): damage to its bytes cannot be detected",
                    path.display()
                ),
            },
            Ok(shards::Integrity::Verified) => {}
        }
        let tensors = candle_core::safetensors::load_buffer(&bytes, device)
            .map_err(|e| bad(e.to_string()))?;
        for (name, t) in &tensors {
            if t.dtype() != DType::F32 {
                return Err(bad(format!("tensor `{name}` is {:?}, not F32", t.dtype())));
            }
            if !all_finite(t)? {
                return Err(NetError::NonFinite {
                    place: path.display().to_string(),
                    tensor: name.clone(),
                });
            }
        }
        Ok(Checkpoint {
            path: path.to_owned(),
            meta,
            tensors,
        })
    }

    /// The input planes and policy size the weights take: from the metadata, or else from the
    /// shapes of the stem's and the policy head's weights (which no `network` key changes).
    pub fn io_sizes(&self) -> Option<(usize, usize)> {
        if let Some(m) = &self.meta {
            return Some((m.shape.planes, m.shape.policy_size));
        }
        let dim = |name: &str, i: usize| {
            self.tensors
                .get(name)
                .and_then(|t| t.dims().get(i).copied())
        };
        Some((dim("stem.conv.weight", 1)?, dim("policy.fc.weight", 0)?))
    }

    /// The mean of `checkpoints`, tensor by tensor, running batch-norm statistics included
    /// (stochastic weight averaging): checkpoints of one run, each fitted from the one before,
    /// lie in one basin, and their mean tends to sit nearer its flat middle than any of them.
    /// All must record the same game, shape and network and hold the same tensors; the mean
    /// takes the newest generation among them and the first one's path.
    pub fn average(checkpoints: &[Checkpoint]) -> Result<Checkpoint, NetError> {
        let Some(first) = checkpoints.first() else {
            return Err(NetError::Config("no checkpoints to average".into()));
        };
        fn refuse(c: &Checkpoint, reason: String) -> NetError {
            NetError::WrongShape {
                path: c.path.clone(),
                reason,
            }
        }
        fn meta_of(c: &Checkpoint) -> Result<&ModelMeta, NetError> {
            c.meta.as_ref().ok_or_else(|| {
                refuse(
                    c,
                    "the checkpoint records no game or network: it cannot be averaged".into(),
                )
            })
        }
        let net = |n: &NetConfig| n.summary();
        let meta = meta_of(first)?;
        let mut generation = meta.generation;
        for c in &checkpoints[1..] {
            let m = meta_of(c)?;
            let differs = if m.game != meta.game {
                Some((
                    format!("a {} network", m.game),
                    format!("a {} one", meta.game),
                ))
            } else if m.shape != meta.shape {
                Some((describe(m.shape), describe(meta.shape)))
            } else if m.network != meta.network {
                Some((net(&m.network), net(&meta.network)))
            } else {
                None
            };
            if let Some((ours, theirs)) = differs {
                return Err(refuse(
                    c,
                    format!(
                        "{ours}, where {} has {theirs}: only checkpoints of one network can be \
                         averaged",
                        first.path.display()
                    ),
                ));
            }
            generation = generation.max(m.generation);
        }
        let scale = 1.0 / checkpoints.len() as f64;
        let mut tensors = HashMap::new();
        for (name, t) in &first.tensors {
            let mut sum = t.clone();
            for c in &checkpoints[1..] {
                match c.tensors.get(name) {
                    Some(u) if u.dims() == t.dims() => sum = (sum + u)?,
                    found => {
                        return Err(refuse(
                            c,
                            format!(
                                "tensor `{name}` is {}, {} has {:?}",
                                found.map_or("missing".into(), |u| format!("{:?}", u.dims())),
                                first.path.display(),
                                t.dims()
                            ),
                        ))
                    }
                }
            }
            tensors.insert(name.clone(), sum.affine(scale, 0.0)?);
        }
        if let Some(c) = checkpoints
            .iter()
            .find(|c| c.tensors.len() != tensors.len())
        {
            return Err(refuse(
                c,
                format!(
                    "{} tensors, {} has {}",
                    c.tensors.len(),
                    first.path.display(),
                    tensors.len()
                ),
            ));
        }
        Ok(Checkpoint {
            path: first.path.clone(),
            meta: Some(ModelMeta {
                generation,
                ..meta.clone()
            }),
            tensors,
        })
    }

    /// This checkpoint for its game's encoding grown to `planes` input planes, the new ones
    /// after the old: the stem's weights on the new planes are zero, so the network computes
    /// exactly what it did on the old planes and learns to use the new ones when next fitted.
    /// Only a checkpoint that records its game and shape can be grown, and only to more planes.
    pub fn with_planes(mut self, planes: usize) -> Result<Checkpoint, NetError> {
        let refuse = |reason: String| NetError::WrongShape {
            path: self.path.clone(),
            reason,
        };
        let Some(meta) = &self.meta else {
            return Err(refuse(
                "the checkpoint records no game or shape: it cannot be carried over".into(),
            ));
        };
        let had = meta.shape.planes;
        if planes <= had {
            return Err(refuse(format!(
                "the checkpoint already takes {had} input planes: nothing to add for {planes}"
            )));
        }
        let stem = self
            .tensors
            .get("stem.conv.weight")
            .ok_or_else(|| refuse("no tensor `stem.conv.weight`".into()))?;
        let (out, inp, kh, kw) = stem.dims4()?;
        if inp != had {
            return Err(refuse(format!(
                "`stem.conv.weight` takes {inp} planes, the metadata says {had}"
            )));
        }
        let zeros = Tensor::zeros((out, planes - had, kh, kw), DType::F32, stem.device())?;
        let grown = Tensor::cat(&[stem, &zeros], 1)?;
        self.tensors.insert("stem.conv.weight".into(), grown);
        if let Some(meta) = &mut self.meta {
            meta.shape.planes = planes;
        }
        Ok(self)
    }

    /// This checkpoint grown to `network`: its policy and value heads widened to
    /// `policy_channels` and `value_channels` (the new channels after the old), and its tower
    /// deepened to `blocks` (the new blocks after the old). The network computes exactly what it
    /// did: the fully connected weights that read the new channels are zero, and each new block
    /// ends in a batch norm of zero scale, so it adds nothing to the skip connection it sits
    /// on. The new convolutions start random (a zero one would never get a gradient), drawn
    /// from `seed`, and start to count when next fitted. Auxiliary heads (`ownership`, `score`,
    /// `wdl`, `reply`, `soft_policy`) may be turned on: they read the heads' channels or hidden layer and
    /// change nothing the network computed, and start as a fresh network of `network` draws
    /// them. The trunk's width, the value head's hidden layer and the pooling parts must be the
    /// checkpoint's, and nothing may shrink.
    pub fn grown_to(mut self, network: &NetConfig, seed: u64) -> Result<Checkpoint, NetError> {
        let path = self.path.clone();
        let refuse = |reason: String| NetError::WrongShape {
            path: path.clone(),
            reason,
        };
        let Some(meta) = self.meta.clone() else {
            return Err(refuse(
                "the checkpoint records no network: it cannot be grown".into(),
            ));
        };
        let had = &meta.network;
        let others = NetConfig {
            blocks: had.blocks,
            policy_channels: had.policy_channels,
            value_channels: had.value_channels,
            ownership: had.ownership,
            score: had.score,
            wdl: had.wdl,
            reply: had.reply,
            soft_policy: had.soft_policy,
            ..network.clone()
        };
        if &others != had {
            return Err(refuse(format!(
                "only the heads' channels, the number of blocks and the auxiliary heads can \
                 grow{}",
                self.network_diff(network)
            )));
        }
        let heads = [
            ("ownership", had.ownership, network.ownership, "ownership."),
            ("score", had.score, network.score, "value.score."),
            ("wdl", had.wdl, network.wdl, "value.wdl."),
            ("reply", had.reply, network.reply, "reply."),
            (
                "soft_policy",
                had.soft_policy,
                network.soft_policy,
                "soft_policy.",
            ),
        ];
        if let Some((key, ..)) = heads.iter().find(|(_, was, is, _)| *was && !is) {
            return Err(refuse(format!(
                "network.{key}: 1 in the checkpoint, 0 asked: a network cannot shrink"
            )));
        }
        let cells = meta.shape.height * meta.shape.width;
        // Heads that pool or feed auxiliary outputs read their channels in other layouts.
        for (key, from, to, fixed) in [
            (
                "policy_channels",
                had.policy_channels,
                network.policy_channels,
                had.policy_pool || had.reply || had.soft_policy,
            ),
            (
                "value_channels",
                had.value_channels,
                network.value_channels,
                had.value_pool || had.ownership,
            ),
        ] {
            if fixed && to != from {
                return Err(refuse(format!(
                    "network.{key}: {from} in the checkpoint, {to} asked: the channels of a head \
                     that pools or feeds an auxiliary output cannot grow yet"
                )));
            }
        }
        for (key, from, to) in [
            ("blocks", had.blocks, network.blocks),
            (
                "policy_channels",
                had.policy_channels,
                network.policy_channels,
            ),
            ("value_channels", had.value_channels, network.value_channels),
        ] {
            if to < from {
                return Err(refuse(format!(
                    "network.{key}: {from} in the checkpoint, {to} asked: a network cannot \
                     shrink"
                )));
            }
        }
        let mut rng = SmallRng::seed_from_u64(seed);
        for (head, fc, from, to) in [
            ("policy", "fc", had.policy_channels, network.policy_channels),
            ("value", "fc1", had.value_channels, network.value_channels),
        ] {
            if to > from {
                self.widen_head(head, fc, from, to, cells, &mut rng)?;
            }
        }
        for block in had.blocks..network.blocks {
            let pooled = network
                .pools_in_block(block)
                .then_some(network.pool_channels);
            self.add_block(block, had.channels, pooled, &mut rng)?;
        }
        let added: Vec<&str> = heads
            .iter()
            .filter(|(_, was, is, _)| !was && *is)
            .map(|(.., prefix)| *prefix)
            .collect();
        if !added.is_empty() {
            let device = self
                .tensors
                .get("stem.conv.weight")
                .map(|t| t.device().clone())
                .unwrap_or(Device::Cpu);
            let (fresh, _) = Net::seeded(network, meta.shape, &device, seed)?;
            let vars = fresh.data().lock().expect("varmap lock poisoned");
            for (name, var) in vars.iter() {
                if added.iter().any(|prefix| name.starts_with(prefix)) {
                    self.tensors.insert(name.clone(), var.as_tensor().copy()?);
                }
            }
        }
        if let Some(m) = &mut self.meta {
            m.network = network.clone();
        }
        Ok(self)
    }

    /// This checkpoint with the residual blocks numbered in `drop` taken out of its tower, the
    /// others kept in order and numbered from 0. Each block adds its branch to a skip
    /// connection, so the tower still works without it, only less well: a smaller network that
    /// costs less a position, to be fitted further (with the full network as its teacher).
    /// Dropping every block is allowed (the stem then feeds the heads).
    pub fn without_blocks(mut self, drop: &[usize]) -> Result<Checkpoint, NetError> {
        let refuse = |reason: String| NetError::WrongShape {
            path: self.path.clone(),
            reason,
        };
        let Some(meta) = self.meta.clone() else {
            return Err(refuse(
                "the checkpoint records no network: its blocks are not known".into(),
            ));
        };
        let blocks = meta.network.blocks;
        if let Some(&b) = drop.iter().find(|&&b| b >= blocks) {
            return Err(refuse(format!(
                "block {b} asked to be dropped, but the network has blocks 0 to {}",
                blocks.saturating_sub(1)
            )));
        }
        let kept: Vec<usize> = (0..blocks).filter(|b| !drop.contains(b)).collect();
        // Global-pooling blocks sit at fixed places in the tower (`pool_every`).
        let net = &meta.network;
        if let Some((new, old)) = kept
            .iter()
            .enumerate()
            .find(|&(new, &old)| net.pools_in_block(new) != net.pools_in_block(old))
        {
            return Err(refuse(format!(
                "block {old} would become block {new}, but only one of the two places is a \
                 global-pooling block (pool_every: {}): drop blocks so that every kept block \
                 keeps its kind",
                net.pool_every
            )));
        }
        let (mut tower, rest): (HashMap<_, _>, HashMap<_, _>) = std::mem::take(&mut self.tensors)
            .into_iter()
            .partition(|(name, _)| name.starts_with("blocks."));
        self.tensors = rest;
        for (new, old) in kept.iter().enumerate() {
            let prefix = format!("blocks.{old}.");
            let names: Vec<String> = tower
                .keys()
                .filter(|n| n.starts_with(&prefix))
                .cloned()
                .collect();
            for name in names {
                let t = tower.remove(&name).expect("listed above");
                let renamed = format!("blocks.{new}.{}", &name[prefix.len()..]);
                self.tensors.insert(renamed, t);
            }
        }
        if let Some(m) = &mut self.meta {
            m.network.blocks = kept.len();
        }
        Ok(self)
    }

    /// Appends residual block `index` of `channels` channels that adds nothing yet (see
    /// [`Checkpoint::grown_to`]); a global-pooling block when `pooled` gives its pooled
    /// channels, its pooling layer zero.
    fn add_block(
        &mut self,
        index: usize,
        channels: usize,
        pooled: Option<usize>,
        rng: &mut SmallRng,
    ) -> Result<(), NetError> {
        let device = self
            .tensors
            .get("stem.conv.weight")
            .map(|t| t.device().clone())
            .ok_or_else(|| NetError::WrongShape {
                path: self.path.clone(),
                reason: "no tensor `stem.conv.weight`".into(),
            })?;
        let kept = channels - pooled.unwrap_or(0);
        for (layer, cin, scale) in [("1", channels, 1.0), ("2", kept, 0.0)] {
            let conv = fresh_conv(rng, (channels, cin, 3, 3), &device)?;
            self.tensors
                .insert(format!("blocks.{index}.conv{layer}.weight"), conv);
            for (name, fill) in fresh_batch_norm(scale) {
                let t = Tensor::full(fill as f32, channels, &device)?;
                self.tensors
                    .insert(format!("blocks.{index}.bn{layer}.{name}"), t);
            }
        }
        if let Some(g) = pooled {
            let fc = format!("blocks.{index}.pool.fc");
            let w = Tensor::zeros((kept, 3 * g), DType::F32, &device)?;
            self.tensors.insert(format!("{fc}.weight"), w);
            let b = Tensor::zeros(kept, DType::F32, &device)?;
            self.tensors.insert(format!("{fc}.bias"), b);
        }
        Ok(())
    }

    /// Grows head `head` from `from` to `to` channels (see [`Checkpoint::grown_to`]).
    fn widen_head(
        &mut self,
        head: &str,
        fc: &str,
        from: usize,
        to: usize,
        cells: usize,
        rng: &mut SmallRng,
    ) -> Result<(), NetError> {
        let get = |name: &str| {
            self.tensors
                .get(name)
                .cloned()
                .ok_or_else(|| NetError::WrongShape {
                    path: self.path.clone(),
                    reason: format!("no tensor `{name}`"),
                })
        };
        let added = to - from;
        let conv = get(&format!("{head}.conv.weight"))?;
        let (_, trunk, kh, kw) = conv.dims4()?;
        let fresh = fresh_conv(rng, (added, trunk, kh, kw), conv.device())?;
        let mut grown = vec![(
            format!("{head}.conv.weight"),
            Tensor::cat(&[&conv, &fresh], 0)?,
        )];
        for (name, fill) in fresh_batch_norm(1.0) {
            let key = format!("{head}.bn.{name}");
            let old = get(&key)?;
            let new = Tensor::full(fill as f32, added, old.device())?;
            grown.push((key, Tensor::cat(&[&old, &new], 0)?));
        }
        // The fully connected layer reads channel-major (channel × cells + cell): the new
        // channels' inputs come after the old ones.
        let key = format!("{head}.{fc}.weight");
        let old = get(&key)?;
        let (outputs, inputs) = old.dims2()?;
        if inputs != from * cells {
            return Err(NetError::WrongShape {
                path: self.path.clone(),
                reason: format!("`{key}` reads {inputs} inputs, not {from} channels × {cells}"),
            });
        }
        let zeros = Tensor::zeros((outputs, added * cells), DType::F32, old.device())?;
        grown.push((key, Tensor::cat(&[&old, &zeros], 1)?));
        self.tensors.extend(grown);
        Ok(())
    }

    /// Why data of `shape` cannot go through this checkpoint's network, if it cannot.
    pub fn shape_mismatch(&self, shape: TensorShape) -> Option<String> {
        match &self.meta {
            Some(m) if m.shape != shape => Some(format!(
                "the checkpoint is for {} with {}, not {}",
                m.game,
                describe(m.shape),
                describe(shape)
            )),
            Some(_) => None,
            None => match self.io_sizes() {
                Some((planes, policy_size))
                    if (planes, policy_size) != (shape.planes, shape.policy_size) =>
                {
                    Some(format!(
                        "the checkpoint takes {planes} input planes and {policy_size} policy \
                         entries, not {}",
                        describe(shape)
                    ))
                }
                _ => None,
            },
        }
    }

    /// `; network.channels: 48 in the checkpoint, 32 in the config` for each key that differs,
    /// when the checkpoint records its network (else empty).
    fn network_diff(&self, config: &NetConfig) -> String {
        let Some(m) = &self.meta else {
            return String::new();
        };
        let (ours, theirs) = (
            serde_json::to_value(&m.network).expect("NetConfig serialises"),
            serde_json::to_value(config).expect("NetConfig serialises"),
        );
        let (Some(ours), Some(theirs)) = (ours.as_object(), theirs.as_object()) else {
            return String::new();
        };
        // A key left out of the JSON is a part that is off: 0.
        let keys: std::collections::BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
        let zero = serde_json::Value::from(0);
        let order = |k: &str| ours.keys().position(|o| o == k).unwrap_or(usize::MAX);
        let mut keys: Vec<&String> = keys.into_iter().collect();
        keys.sort_by_key(|k| order(k));
        keys.into_iter()
            .filter_map(|k| {
                let (v, c) = (ours.get(k).unwrap_or(&zero), theirs.get(k).unwrap_or(&zero));
                (v != c).then(|| format!("; network.{k}: {v} in the checkpoint, {c} in the config"))
            })
            .collect()
    }
}

/// `15 planes, 6×6, 216 policy entries`.
pub fn describe(s: TensorShape) -> String {
    format!(
        "{} planes, {}×{}, {} policy entries",
        s.planes, s.height, s.width, s.policy_size
    )
}

/// A checkpoint's metadata map as a `ModelMeta`, with the checkpoint's version; the reason
/// names the key at fault.
fn meta_from_info(info: &HashMap<String, String>) -> Result<(ModelMeta, u32), String> {
    let get = |k: &str| info.get(k).ok_or_else(|| format!("no `{k}` metadata"));
    let num = |k: &str| -> Result<u64, String> {
        get(k)?
            .parse()
            .map_err(|_| format!("metadata `{k}` is not a number"))
    };
    let format = get("format")?;
    if format != CHECKPOINT_FORMAT {
        return Err(format!("format is {format:?}, not {CHECKPOINT_FORMAT}"));
    }
    let version = get("version")?;
    let version = match version.parse::<u32>() {
        Ok(v) if (1..=CHECKPOINT_VERSION).contains(&v) => v,
        _ => {
            return Err(format!(
                "version {version}; this build reads versions 1 to {CHECKPOINT_VERSION}"
            ))
        }
    };
    let network: NetConfig =
        serde_json::from_str(get("network")?).map_err(|e| format!("metadata `network`: {e}"))?;
    let meta = ModelMeta {
        game: get("game")?.clone(),
        shape: TensorShape {
            planes: num("planes")? as usize,
            height: num("height")? as usize,
            width: num("width")? as usize,
            policy_size: num("policy_size")? as usize,
        },
        network,
        generation: num("generation")?,
    };
    Ok((meta, version))
}

/// Whether `t` holds no NaN and no infinity.
pub(crate) fn all_finite(t: &Tensor) -> candle_core::Result<bool> {
    let values = t.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()?;
    Ok(values.iter().all(|v| v.is_finite()))
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

/// Creates each variable of a [`VarMap`] the first time a layer asks for it, drawing its values
/// from a generator seeded by the run's seed and the variable's name (so the order in which
/// layers are built does not matter).
struct SeededInit {
    map: VarMap,
    seed: u64,
}

impl SeededInit {
    fn values(&self, name: &str, shape: &candle_core::Shape, init: Init) -> Vec<f32> {
        let n = shape.elem_count();
        // FNV-1a of the name: stable across runs and platforms, unlike std's hasher.
        let name_hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let mut rng = SmallRng::seed_from_u64(self.seed ^ name_hash);
        let mut uniform = |lo: f64, up: f64| -> Vec<f32> {
            (0..n)
                .map(|_| (lo + (up - lo) * rng.gen::<f64>()) as f32)
                .collect()
        };
        match init {
            Init::Const(c) => vec![c as f32; n],
            Init::Uniform { lo, up } => uniform(lo, up),
            Init::Randn { mean, stdev } => normal(&mut rng, n, mean, stdev),
            Init::Kaiming {
                dist,
                fan,
                non_linearity,
            } => {
                let std = non_linearity.gain() / (fan.for_shape(shape) as f64).sqrt();
                match dist {
                    NormalOrUniform::Normal => normal(&mut rng, n, 0.0, std),
                    NormalOrUniform::Uniform => {
                        let bound = 3f64.sqrt() * std;
                        uniform(-bound, bound)
                    }
                }
            }
        }
    }
}

/// Convolution weights of `shape` (out, in, kh, kw) as a fresh network draws them: Kaiming
/// normal over the fan-in.
fn fresh_conv(
    rng: &mut SmallRng,
    shape: (usize, usize, usize, usize),
    device: &Device,
) -> candle_core::Result<Tensor> {
    let (out, inp, kh, kw) = shape;
    let fan_in = inp * kh * kw;
    let values = normal(rng, out * fan_in, 0.0, (2.0 / fan_in as f64).sqrt());
    Tensor::from_vec(values, shape, device)
}

/// A fresh batch norm's per-channel values, by tensor name, with scale `scale`: the identity
/// (times `scale`) on normalised inputs.
fn fresh_batch_norm(scale: f64) -> [(&'static str, f64); 4] {
    [
        ("weight", scale),
        ("bias", 0.0),
        ("running_mean", 0.0),
        ("running_var", 1.0),
    ]
}

fn normal(rng: &mut SmallRng, n: usize, mean: f64, stdev: f64) -> Vec<f32> {
    (0..n)
        .map(|_| (mean + stdev * rng.sample::<f64, _>(StandardNormal)) as f32)
        .collect()
}

impl SimpleBackend for SeededInit {
    fn get(
        &self,
        shape: candle_core::Shape,
        name: &str,
        init: Init,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        {
            let mut vars = self.map.data().lock().expect("varmap lock poisoned");
            if !vars.contains_key(name) {
                let values = self.values(name, &shape, init);
                let tensor = Tensor::from_vec(values, shape.clone(), device)?.to_dtype(dtype)?;
                vars.insert(name.to_string(), Var::from_tensor(&tensor)?);
            }
        }
        // The map checks the shape and hands the variable out, as for any other builder.
        self.map.get(shape, name, init, dtype, device)
    }

    fn get_unchecked(
        &self,
        name: &str,
        _dtype: DType,
        _device: &Device,
    ) -> candle_core::Result<Tensor> {
        candle_core::bail!("{name}: a fresh network's variables need their shape")
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.map
            .data()
            .lock()
            .expect("varmap lock poisoned")
            .contains_key(name)
    }
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

    /// Every variable, by name, as flat f32 values.
    fn weights(varmap: &VarMap) -> BTreeMap<String, Vec<f32>> {
        let vars = varmap.data().lock().unwrap();
        vars.iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_tensor().flatten_all().unwrap().to_vec1().unwrap(),
                )
            })
            .collect()
    }

    fn spread(values: &[f32]) -> f64 {
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        (values
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n)
            .sqrt()
    }

    #[test]
    fn a_seed_gives_the_same_network_drawn_as_candle_draws_it() {
        let (a, _) = Net::seeded(&small(), SHAPE, &Device::Cpu, 7).unwrap();
        let (b, _) = Net::seeded(&small(), SHAPE, &Device::Cpu, 7).unwrap();
        let (c, _) = Net::seeded(&small(), SHAPE, &Device::Cpu, 8).unwrap();
        let (fresh, _) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        let (a, b, c, fresh) = (weights(&a), weights(&b), weights(&c), weights(&fresh));
        assert_eq!(a, b);
        assert_ne!(a["stem.conv.weight"], c["stem.conv.weight"]);
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            fresh.keys().collect::<Vec<_>>()
        );
        for (name, values) in &a {
            let other = &fresh[name];
            assert_eq!(values.len(), other.len(), "{name}");
            if values == &c[name] {
                // Constants (batch norm's scales, shifts and statistics) are candle's.
                assert_eq!(values, other, "{name}");
            } else if values.len() > 16 {
                // Candle's draw is unseeded: the ratio of two sample spreads of n uniform
                // values varies by about 0.63/sqrt(n), so small tensors get five of those.
                let n = values.len() as f64;
                let tolerance = (3.2 / n.sqrt()).max(0.35);
                let (s, f) = (spread(values), spread(other));
                assert!(
                    (s / f - 1.0).abs() < tolerance,
                    "{name}: spread {s} against candle's {f}"
                );
            }
        }
    }

    fn meta(shape: TensorShape) -> ModelMeta {
        ModelMeta {
            game: "testgame".into(),
            shape,
            network: small(),
            generation: 0,
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tb-net-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The largest |a − b| over two tensors of one shape.
    fn max_diff(a: Tensor, b: Tensor) -> f32 {
        (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    }

    #[test]
    fn forward_shapes_and_value_range() {
        let (_, net) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 3.0, (3, 5, 6, 6), &Device::Cpu).unwrap();
        for train in [false, true] {
            let Outputs {
                policy: p,
                value: v,
                ..
            } = net.forward_t(&x, train).unwrap();
            assert_eq!(p.dims(), &[3, 40]);
            assert_eq!(v.dims(), &[3]);
            for v in v.to_vec1::<f32>().unwrap() {
                assert!((-1.0..=1.0).contains(&v), "{v}");
            }
        }
    }

    #[test]
    fn save_and_load_round_trip() {
        let dir = temp_dir("round");
        let path = dir.join("net.safetensors");
        let (varmap, net) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 1.0, (2, 5, 6, 6), &Device::Cpu).unwrap();
        // A training pass moves the running statistics; they must survive the round trip.
        net.forward_t(&x, true).unwrap();
        Net::save(&varmap, &meta(SHAPE), &path).unwrap();
        assert_eq!(
            Checkpoint::read(&path, &Device::Cpu).unwrap().meta,
            Some(meta(SHAPE))
        );
        let (_, loaded) = Net::load(&path, &small(), SHAPE, &Device::Cpu).unwrap();
        let Outputs {
            policy: p0,
            value: v0,
            ..
        } = net.forward_t(&x, false).unwrap();
        let Outputs {
            policy: p1,
            value: v1,
            ..
        } = loaded.forward_t(&x, false).unwrap();
        assert_eq!((max_diff(p0, p1), max_diff(v0, v1)), (0.0, 0.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn loading_a_checkpoint_of_another_shape_fails() {
        let dir = temp_dir("shape");
        let path = dir.join("net.safetensors");
        let legacy = dir.join("legacy.safetensors");
        let (varmap, _) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        Net::save(&varmap, &meta(SHAPE), &path).unwrap();
        varmap.save(&legacy).unwrap();
        let other = TensorShape {
            policy_size: 41,
            ..SHAPE
        };
        for (path, expect) in [
            (&path, "the checkpoint is for testgame with 5 planes, 6×6, 40 policy entries, not 5 planes, 6×6, 41 policy entries"),
            (&legacy, "the checkpoint takes 5 input planes and 40 policy entries, not 5 planes, 6×6, 41 policy entries"),
        ] {
            match Net::load(path, &small(), other, &Device::Cpu) {
                Err(e @ NetError::WrongShape { .. }) => assert!(e.to_string().contains(expect), "{e}"),
                r => panic!("expected WrongShape, got {:?}", r.err()),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_checkpoint_grown_to_more_planes_computes_the_same() {
        let dir = temp_dir("grow");
        let path = dir.join("net.safetensors");
        let (varmap, net) = Net::seeded(&small(), SHAPE, &Device::Cpu, 3).unwrap();
        Net::save(&varmap, &meta(SHAPE), &path).unwrap();
        let grown_shape = TensorShape { planes: 8, ..SHAPE };
        let checkpoint = Checkpoint::read(&path, &Device::Cpu)
            .unwrap()
            .with_planes(8)
            .unwrap();
        assert_eq!(checkpoint.meta, Some(meta(grown_shape)));
        let (_, grown) =
            Net::from_checkpoint(&checkpoint, &small(), grown_shape, &Device::Cpu).unwrap();
        // The old planes, then three new ones holding anything: the same outputs.
        let x = Tensor::randn(0f32, 1.0, (4, 5, 6, 6), &Device::Cpu).unwrap();
        let extra = Tensor::randn(0f32, 1.0, (4, 3, 6, 6), &Device::Cpu).unwrap();
        let x8 = Tensor::cat(&[&x, &extra], 1).unwrap();
        let Outputs {
            policy: p0,
            value: v0,
            ..
        } = net.forward_t(&x, false).unwrap();
        let Outputs {
            policy: p1,
            value: v1,
            ..
        } = grown.forward_t(&x8, false).unwrap();
        assert!(max_diff(p0, p1) < 1e-5 && max_diff(v0, v1) < 1e-5);
        // Fewer or as many planes, or a checkpoint with no metadata: refused, naming why.
        for planes in [5, 4] {
            let e = Checkpoint::read(&path, &Device::Cpu)
                .unwrap()
                .with_planes(planes)
                .err()
                .unwrap();
            assert!(
                e.to_string().contains("already takes 5 input planes"),
                "{e}"
            );
        }
        let legacy = dir.join("legacy.safetensors");
        varmap.save(&legacy).unwrap();
        let e = Checkpoint::read(&legacy, &Device::Cpu)
            .unwrap()
            .with_planes(8)
            .err()
            .unwrap();
        assert!(e.to_string().contains("records no game or shape"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A damaged file or some other file is "not a valid safetensors checkpoint", whatever it is.
    #[test]
    fn corrupt_checkpoints_are_named_as_such() {
        let dir = temp_dir("corrupt");
        let good = dir.join("good.safetensors");
        let (varmap, _) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        Net::save(&varmap, &meta(SHAPE), &good).unwrap();
        let bytes = std::fs::read(&good).unwrap();
        let f16 = VarMap::new();
        let vb = VarBuilder::from_varmap(&f16, DType::F16, &Device::Cpu);
        vb.get_with_hints(3, "w", candle_nn::Init::Const(1.0))
            .unwrap();
        let f16_path = dir.join("f16.safetensors");
        f16.save(&f16_path).unwrap();
        let mut bad_meta = bytes.clone();
        // `"version":"2"` becomes `"version":"9"`: same length, so the header stays valid.
        let key = br#""version":""#;
        let at = bad_meta.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        bad_meta[at] = b'9';
        for (name, content, expect) in [
            (
                "empty.safetensors",
                Vec::new(),
                "not a valid safetensors checkpoint",
            ),
            (
                "half.safetensors",
                bytes[..bytes.len() / 2].to_vec(),
                "not a valid safetensors checkpoint",
            ),
            (
                "text.safetensors",
                b"a text file, not a checkpoint".to_vec(),
                "not a valid safetensors checkpoint",
            ),
            (
                "version.safetensors",
                bad_meta,
                "not a valid safetensors checkpoint: version 9",
            ),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, content).unwrap();
            match Checkpoint::read(&path, &Device::Cpu) {
                Err(e @ NetError::NotCheckpoint { .. }) => {
                    let msg = e.to_string();
                    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
                    assert!(msg.contains(expect), "{msg}");
                }
                r => panic!("{name}: expected NotCheckpoint, got {:?}", r.err()),
            }
        }
        match Checkpoint::read(&f16_path, &Device::Cpu) {
            Err(e @ NetError::NotCheckpoint { .. }) => {
                assert!(e.to_string().contains("tensor `w` is F16, not F32"), "{e}")
            }
            r => panic!("expected NotCheckpoint, got {:?}", r.err()),
        }
        match Checkpoint::read(&dir.join("absent.safetensors"), &Device::Cpu) {
            Err(e @ NetError::Checkpoint { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("absent.safetensors: cannot read"), "{msg}");
            }
            r => panic!("expected Checkpoint, got {:?}", r.err()),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `blocks: 0` is a working network (the stem feeds the heads), so the config allows it.
    #[test]
    fn zero_blocks_is_a_working_network() {
        let cfg = NetConfig {
            blocks: 0,
            ..small()
        };
        let (varmap, net) = Net::fresh(&cfg, SHAPE, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 1.0, (2, 5, 6, 6), &Device::Cpu).unwrap();
        let Outputs {
            policy: p,
            value: v,
            ..
        } = net.forward_t(&x, false).unwrap();
        assert_eq!((p.dims(), v.dims()), (&[2, 40][..], &[2][..]));
        let m = ModelMeta {
            network: cfg,
            ..meta(SHAPE)
        };
        assert!(!crate::onnx::model_bytes(&varmap, &m).unwrap().is_empty());
    }

    /// Every pooling part and auxiliary head on.
    fn pooling() -> NetConfig {
        NetConfig {
            blocks: 3,
            channels: 8,
            policy_channels: 3,
            value_channels: 4,
            value_hidden: 16,
            pool_every: 2,
            pool_channels: 3,
            policy_pool: true,
            value_pool: true,
            ownership: true,
            score: true,
            wdl: true,
            reply: true,
            soft_policy: true,
        }
    }

    fn go_shape(size: usize) -> TensorShape {
        TensorShape {
            planes: 5,
            height: size,
            width: size,
            policy_size: size * size + 1,
        }
    }

    #[test]
    fn every_output_has_its_shape_and_range() {
        for shape in [SHAPE, go_shape(9)] {
            let (_, net) = Net::seeded(&pooling(), shape, &Device::Cpu, 1).unwrap();
            let cells = shape.height * shape.width;
            let x =
                Tensor::randn(0f32, 1.0, (3, 5, shape.height, shape.width), &Device::Cpu).unwrap();
            for train in [false, true] {
                let out = net.forward_t(&x, train).unwrap();
                assert_eq!(out.policy.dims(), &[3, shape.policy_size]);
                assert_eq!(out.value.dims(), &[3]);
                let own = out.ownership.unwrap();
                assert_eq!(own.dims(), &[3, cells]);
                for o in own.flatten_all().unwrap().to_vec1::<f32>().unwrap() {
                    assert!((-1.0..=1.0).contains(&o), "{o}");
                }
                assert_eq!(out.score.unwrap().dims(), &[3]);
                assert_eq!(out.wdl.unwrap().dims(), &[3, 3]);
                assert_eq!(out.reply.unwrap().dims(), &[3, shape.policy_size]);
                assert_eq!(out.soft_policy.unwrap().dims(), &[3, shape.policy_size]);
            }
        }
        // The plain network has none of the auxiliary outputs.
        let (_, net) = Net::fresh(&small(), SHAPE, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 1.0, (2, 5, 6, 6), &Device::Cpu).unwrap();
        let out = net.forward_t(&x, false).unwrap();
        assert!(out.ownership.is_none() && out.score.is_none());
        assert!(out.wdl.is_none() && out.reply.is_none() && out.soft_policy.is_none());
    }

    /// The pooled features: per channel the mean, the mean times the width scale, the max.
    #[test]
    fn global_pool_is_mean_scaled_mean_and_max() {
        // One sample, a 1 × 3 board, two channels (channels-last).
        let x = Tensor::new(&[[[[1f32, 4.0], [2.0, -6.0], [6.0, 5.0]]]], &Device::Cpu).unwrap();
        let pooled = global_pool(&x, -0.5).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(pooled, [[3.0, 1.0, -1.5, -0.5, 6.0, 5.0]]);
        assert_eq!(width_scale(go_shape(9)), -0.5);
        assert!((width_scale(go_shape(19)) - 0.5).abs() < 1e-12);
    }

    /// Where the head is per point and the value head pools, no variable depends on the board's
    /// size: a 9×9 network's weights fit a 13×13 one.
    #[test]
    fn a_per_point_network_has_the_same_variables_at_every_size() {
        let dims = |size| {
            let (varmap, _) = Net::fresh(&pooling(), go_shape(size), &Device::Cpu).unwrap();
            let vars = varmap.data().lock().unwrap();
            vars.iter()
                .map(|(k, v)| (k.clone(), v.dims().to_vec()))
                .collect::<BTreeMap<_, _>>()
        };
        let nine = dims(9);
        assert!(nine.contains_key("policy.out.weight") && nine.contains_key("reply.pass.bias"));
        assert!(nine.contains_key("soft_policy.out.weight"));
        assert!(!nine.contains_key("policy.fc.weight"));
        assert_eq!(nine["blocks.1.pool.fc.weight"], [5, 9]);
        assert_eq!(nine["blocks.1.conv2.weight"], [8, 5, 3, 3]);
        assert_eq!(nine["blocks.0.conv2.weight"], [8, 8, 3, 3]);
        assert_eq!(nine["value.fc1.weight"], [16, 12]);
        assert_eq!(nine, dims(13));
    }

    /// A training step's gradients reach every variable, the pooling layers included.
    #[test]
    fn gradients_reach_every_variable() {
        let (varmap, net) = Net::seeded(&pooling(), go_shape(5), &Device::Cpu, 2).unwrap();
        let x = Tensor::randn(0f32, 1.0, (4, 5, 5, 5), &Device::Cpu).unwrap();
        let out = net.forward_t(&x, true).unwrap();
        let loss = [
            out.policy.sqr().unwrap().mean_all().unwrap(),
            out.value.mean_all().unwrap(),
            out.ownership.unwrap().mean_all().unwrap(),
            out.score.unwrap().mean_all().unwrap(),
            out.wdl.unwrap().sqr().unwrap().mean_all().unwrap(),
            out.reply.unwrap().sqr().unwrap().mean_all().unwrap(),
            out.soft_policy.unwrap().sqr().unwrap().mean_all().unwrap(),
        ]
        .into_iter()
        .reduce(|a, b| (a + b).unwrap())
        .unwrap();
        let grads = loss.backward().unwrap();
        for (name, var) in varmap.data().lock().unwrap().iter() {
            if name.contains("running_") {
                continue;
            }
            let g = grads.get(var.as_tensor());
            let g = g.unwrap_or_else(|| panic!("{name}: no gradient"));
            let size = g
                .abs()
                .unwrap()
                .sum_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(size > 0.0 && size.is_finite(), "{name}: gradient {size}");
        }
    }

    #[test]
    fn a_pooling_network_round_trips_through_its_checkpoint() {
        let dir = temp_dir("pool-round");
        let path = dir.join("net.safetensors");
        let shape = go_shape(7);
        let (varmap, net) = Net::seeded(&pooling(), shape, &Device::Cpu, 4).unwrap();
        let m = ModelMeta {
            network: pooling(),
            ..meta(shape)
        };
        Net::save(&varmap, &m, &path).unwrap();
        let ck = Checkpoint::read(&path, &Device::Cpu).unwrap();
        assert_eq!(ck.meta.as_ref(), Some(&m));
        let (_, loaded) = Net::from_checkpoint(&ck, &pooling(), shape, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 1.0, (2, 5, 7, 7), &Device::Cpu).unwrap();
        let (a, b) = (
            net.forward_t(&x, false).unwrap(),
            loaded.forward_t(&x, false).unwrap(),
        );
        assert_eq!(max_diff(a.policy, b.policy), 0.0);
        assert_eq!(max_diff(a.ownership.unwrap(), b.ownership.unwrap()), 0.0);
        // The plain config cannot read it: the tensors name the difference.
        let e = Net::from_checkpoint(&ck, &small(), shape, &Device::Cpu)
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("network.pool_every: 2 in the checkpoint"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Grown by blocks, a pooling network computes what it did (the new pooling block's layer
    /// starts at zero, its last batch norm at scale 0); dropping blocks is refused where a kept
    /// block would change kind.
    #[test]
    fn a_pooling_network_grows_and_drops_blocks_in_place() {
        let dir = temp_dir("pool-grow");
        let path = dir.join("net.safetensors");
        let shape = go_shape(5);
        let cfg = NetConfig {
            blocks: 1,
            ..pooling()
        };
        let (varmap, net) = Net::seeded(&cfg, shape, &Device::Cpu, 5).unwrap();
        let m = ModelMeta {
            network: cfg.clone(),
            ..meta(shape)
        };
        Net::save(&varmap, &m, &path).unwrap();
        let deeper = NetConfig {
            blocks: 4,
            ..cfg.clone()
        };
        let grown = Checkpoint::read(&path, &Device::Cpu)
            .unwrap()
            .grown_to(&deeper, 1)
            .unwrap();
        let (_, big) = Net::from_checkpoint(&grown, &deeper, shape, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 1.0, (3, 5, 5, 5), &Device::Cpu).unwrap();
        let (a, b) = (
            net.forward_t(&x, false).unwrap(),
            big.forward_t(&x, false).unwrap(),
        );
        assert!(max_diff(a.policy, b.policy) < 1e-5);
        assert!(max_diff(a.value, b.value) < 1e-5);
        assert!(max_diff(a.score.unwrap(), b.score.unwrap()) < 1e-5);
        // Blocks 1 and 3 pool: dropping block 3 keeps every kind, dropping block 0 does not.
        let dropped = grown_checkpoint(&grown).without_blocks(&[3]).unwrap();
        assert_eq!(dropped.meta.unwrap().network.blocks, 3);
        let e = grown_checkpoint(&grown).without_blocks(&[0]).err().unwrap();
        assert!(e.to_string().contains("global-pooling block"), "{e}");
        // A pooling head cannot widen yet.
        let wider = NetConfig {
            policy_channels: 5,
            ..cfg.clone()
        };
        let e = Checkpoint::read(&path, &Device::Cpu)
            .unwrap()
            .grown_to(&wider, 1)
            .err()
            .unwrap();
        assert!(e.to_string().contains("cannot grow yet"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A plain checkpoint grown to every auxiliary head computes the policy and value it did
    /// and gains the new outputs; taking a head out again is refused.
    #[test]
    fn auxiliary_heads_can_be_added_to_a_checkpoint() {
        let dir = temp_dir("aux-grow");
        let path = dir.join("net.safetensors");
        let shape = go_shape(5);
        let (varmap, net) = Net::seeded(&small(), shape, &Device::Cpu, 6).unwrap();
        Net::save(&varmap, &meta(shape), &path).unwrap();
        let heads = NetConfig {
            ownership: true,
            score: true,
            wdl: true,
            reply: true,
            soft_policy: true,
            ..small()
        };
        let grown = Checkpoint::read(&path, &Device::Cpu)
            .unwrap()
            .grown_to(&heads, 2)
            .unwrap();
        let (_, big) = Net::from_checkpoint(&grown, &heads, shape, &Device::Cpu).unwrap();
        let x = Tensor::randn(0f32, 1.0, (3, 5, 5, 5), &Device::Cpu).unwrap();
        let (a, b) = (
            net.forward_t(&x, false).unwrap(),
            big.forward_t(&x, false).unwrap(),
        );
        assert_eq!(max_diff(a.policy, b.policy), 0.0);
        assert_eq!(max_diff(a.value, b.value), 0.0);
        assert!(b.ownership.is_some() && b.score.is_some() && b.wdl.is_some() && b.reply.is_some());
        assert!(b.soft_policy.is_some());
        let m = ModelMeta {
            network: heads.clone(),
            ..meta(shape)
        };
        Net::save(&big_varmap(&grown, &heads, shape), &m, &path).unwrap();
        let e = Checkpoint::read(&path, &Device::Cpu)
            .unwrap()
            .grown_to(
                &NetConfig {
                    wdl: false,
                    ..heads.clone()
                },
                2,
            )
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("network.wdl: 1 in the checkpoint, 0 asked"),
            "{e}"
        );
        let e = Checkpoint::read(&path, &Device::Cpu)
            .unwrap()
            .grown_to(
                &NetConfig {
                    soft_policy: false,
                    ..heads.clone()
                },
                2,
            )
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("network.soft_policy: 1 in the checkpoint, 0 asked"),
            "{e}"
        );
        // Pooling cannot be turned on in place.
        let e = Checkpoint::read(&path, &Device::Cpu)
            .unwrap()
            .grown_to(
                &NetConfig {
                    value_pool: true,
                    ..small()
                },
                2,
            )
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("network.value_pool: 0 in the checkpoint, 1 in the config"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn big_varmap(c: &Checkpoint, network: &NetConfig, shape: TensorShape) -> VarMap {
        Net::from_checkpoint(c, network, shape, &Device::Cpu)
            .unwrap()
            .0
    }

    fn grown_checkpoint(c: &Checkpoint) -> Checkpoint {
        Checkpoint {
            path: c.path.clone(),
            meta: c.meta.clone(),
            tensors: c.tensors.clone(),
        }
    }
}
