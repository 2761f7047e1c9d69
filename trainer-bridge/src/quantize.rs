//! Static int8 quantisation: the fp32 model rewritten in ONNX's QDQ form, which ONNX Runtime's
//! CPU provider runs with integer kernels (`QLinearConv`, `QLinearAdd`, `QGemm`).
//!
//! What is written, from the fp32 model's weights:
//! - batch norm folded into each convolution (a weight per output channel and a bias);
//! - every convolution and fully connected layer as `DequantizeLinear` of its int8 weights
//!   (symmetric, one scale per output channel, zero point 0) and of its int32 bias (scale:
//!   input scale × weight scale), feeding the float operator;
//! - every activation between layers (the input planes, each ReLU's output, each residual
//!   block's second convolution before the skip is added, the sum) as `QuantizeLinear` →
//!   `DequantizeLinear` at uint8 with one scale and zero point for the whole tensor. A ReLU
//!   before a quantisation is left out: a zero point of 0 clamps as it does;
//! - the policy logits and the value head's last layer stay float (`QGemm` with a float
//!   output), and `Tanh` runs in float.
//!
//! ONNX Runtime fuses each `DequantizeLinear` → operator → `QuantizeLinear` group into the
//! integer operator; what is left in float is the policy's and value's last layer outputs.
//!
//! Where the network pools (see [`crate::net`]): a pooling block's first convolution is written
//! as two integer convolutions, of the channels kept and of those pooled; the pooling
//! (`GlobalAveragePool`, `Mul`, `GlobalMaxPool`) and the small layers that read pooled features
//! run in float, and the biased channels are quantised again before the next convolution. The
//! one-channel output convolutions (the per-point policy and reply, ownership) read quantised
//! channels with int8 weights and give float outputs. The auxiliary outputs keep their fp32
//! names and shapes ([`output_agreement`] compares every output).
//!
//! The activations' ranges are calibrated by running the model (BN folded, in fp32, through
//! ONNX Runtime, every tensor to be quantised made an output) on positions read from shards:
//! each range is the smallest and largest value seen ("min/max" calibration), widened to
//! include 0.
//!
//! The model file is the fp32 interface unchanged (input `input`, outputs `policy`, `value`
//! and the auxiliary ones the network has, the same metadata) plus metadata `precision`
//! (`int8`), `source_crc32` (the CRC-32 of the fp32 ONNX model quantised, which the engine
//! compares with the model beside it), and `calibration` (how the ranges were found).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, ensure, Context};
use candle_core::Device;
use games::TensorShape;
use prost::Message;

use crate::net::{describe, PolicyForm};
use crate::onnx::{self, proto, ModelMeta, OWNERSHIP, REPLY_POLICY, SCORE, WDL};
use crate::{Checkpoint, Net, NetConfig};

/// Calibration positions read when none are asked for.
pub const DEFAULT_SAMPLES: usize = 1024;
/// Largest number of calibration positions (their planes are held in memory).
pub const MAX_SAMPLES: usize = 1 << 16;
/// Most shards read for calibration positions.
const MAX_SHARDS: usize = 64;
/// Largest magnitude of an int8 weight: symmetric, −127..=127.
const WEIGHT_MAX: f32 = 127.0;
/// Positions per calibration call of ONNX Runtime.
const CALIBRATION_BATCH: usize = 64;

const DATA_TYPE_UINT8: i32 = 2;
const DATA_TYPE_INT8: i32 = 3;
const DATA_TYPE_INT32: i32 = 6;

/// An fp32 model: its ONNX bytes, metadata and weights.
pub struct Fp32Model {
    pub meta: ModelMeta,
    /// The fp32 ONNX model.
    pub bytes: Vec<u8>,
    /// What the int8 model records as `source_crc32`: the CRC-32 of the fp32 ONNX file the
    /// engine will find beside the int8 one.
    pub source_crc32: String,
    tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
}

impl Fp32Model {
    /// The model at `path`: an ONNX model written by trainer-bridge (`.onnx`), or a checkpoint
    /// (`.safetensors`, with its metadata) exported as `fit` and `init` export it.
    pub fn read(path: &Path) -> anyhow::Result<Fp32Model> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext {
            "onnx" => {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("{}: cannot read", path.display()))?;
                let crc = infer::precision::source_crc32(&bytes);
                Fp32Model::from_onnx(bytes, crc)
                    .with_context(|| format!("{}: not an fp32 model", path.display()))
            }
            "safetensors" => {
                let ck = Checkpoint::read(path, &Device::Cpu)?;
                let meta = ck.meta.clone().with_context(|| {
                    format!(
                        "{}: the checkpoint records no game or network (written by an older \
                         trainer-bridge): quantise its .onnx model instead",
                        path.display()
                    )
                })?;
                let (varmap, _) =
                    Net::from_checkpoint(&ck, &meta.network, meta.shape, &Device::Cpu)?;
                let bytes = crate::onnx::model_bytes(&varmap, &meta)?;
                // The engine compares the int8 model with the ONNX file beside it.
                let beside = crate::fit::with_ext(&path.with_extension(""), "onnx");
                let crc = match std::fs::read(&beside) {
                    Ok(b) => infer::precision::source_crc32(&b),
                    Err(_) => infer::precision::source_crc32(&bytes),
                };
                Fp32Model::from_onnx(bytes, crc)
                    .with_context(|| format!("{}: exporting it", path.display()))
            }
            _ => bail!(
                "{}: give an fp32 model (.onnx) or a checkpoint (.safetensors)",
                path.display()
            ),
        }
    }

    /// An fp32 ONNX model written by [`crate::onnx::model_bytes`]; `source_crc32` as
    /// [`Fp32Model::source_crc32`].
    pub fn from_onnx(bytes: Vec<u8>, source_crc32: String) -> anyhow::Result<Fp32Model> {
        let model = proto::ModelProto::decode(bytes.as_slice())
            .map_err(|e| anyhow::anyhow!("not an ONNX model: {e}"))?;
        let props: HashMap<&str, &str> = model
            .metadata_props
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str()))
            .collect();
        let get = |key: &str| {
            props.get(key).copied().with_context(|| {
                format!("metadata `{key}` missing (not written by trainer-bridge?)")
            })
        };
        let number = |key: &str| -> anyhow::Result<u64> {
            let text = get(key)?;
            text.parse()
                .with_context(|| format!("metadata `{key}`: {text:?} is not a whole number"))
        };
        ensure!(
            number("format_version")? == u64::from(crate::onnx::FORMAT_VERSION),
            "metadata `format_version` {}: this trainer-bridge reads version {}",
            get("format_version")?,
            crate::onnx::FORMAT_VERSION
        );
        if let Some(p) = props.get("precision").filter(|p| **p != "fp32") {
            bail!("the model is already {p}: quantise the fp32 model it was made from");
        }
        let network: NetConfig = serde_json::from_str(get("network")?)
            .context("metadata `network`: not a network config")?;
        let size = |key| number(key).map(|n| n as usize);
        let meta = ModelMeta {
            game: get("game")?.to_owned(),
            shape: TensorShape {
                planes: size("planes")?,
                height: size("height")?,
                width: size("width")?,
                policy_size: size("policy_size")?,
            },
            network,
            generation: number("generation")?,
        };
        let graph = model.graph.context("no graph")?;
        let mut tensors = HashMap::new();
        for t in graph.initializer {
            // Shapes and axes (Slice, Unsqueeze) are not weights.
            if t.data_type == proto::DATA_TYPE_INT64 {
                continue;
            }
            ensure!(
                t.data_type == proto::DATA_TYPE_FLOAT,
                "initializer `{}` is not float (type {})",
                t.name,
                t.data_type
            );
            let dims: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
            let n: usize = dims.iter().product();
            ensure!(
                t.raw_data.len() == 4 * n,
                "initializer `{}`: {} bytes for {n} floats",
                t.name,
                t.raw_data.len()
            );
            let values = t
                .raw_data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            tensors.insert(t.name, (dims, values));
        }
        Ok(Fp32Model {
            meta,
            bytes,
            source_crc32,
            tensors,
        })
    }

    fn tensor(&self, name: &str, dims: &[usize]) -> anyhow::Result<&[f32]> {
        let (d, v) = self
            .tensors
            .get(name)
            .with_context(|| format!("the model has no tensor `{name}`"))?;
        ensure!(
            d == dims,
            "tensor `{name}` is {d:?}; the network in its metadata needs {dims:?}"
        );
        Ok(v)
    }

    /// Convolution `conv` with batch norm `bn` folded in: weight (out, in, k, k) and bias.
    fn folded_conv(
        &self,
        conv: &str,
        bn: &str,
        cin: usize,
        cout: usize,
        k: usize,
    ) -> anyhow::Result<Layer> {
        let w = self.tensor(&format!("{conv}.weight"), &[cout, cin, k, k])?;
        let get = |p: &str| self.tensor(&format!("{bn}.{p}"), &[cout]);
        let (gamma, beta, mean, var) = (
            get("weight")?,
            get("bias")?,
            get("running_mean")?,
            get("running_var")?,
        );
        let fan_in = cin * k * k;
        let mut weight = w.to_vec();
        let mut bias = vec![0.0; cout];
        for o in 0..cout {
            let s = gamma[o] / (var[o] + crate::net::BN_EPS as f32).sqrt();
            weight[o * fan_in..(o + 1) * fan_in]
                .iter_mut()
                .for_each(|x| *x *= s);
            bias[o] = beta[o] - mean[o] * s;
        }
        Ok(Layer {
            dims: vec![cout, cin, k, k],
            weight,
            bias,
        })
    }

    /// Fully connected layer `name`: weight (out, in) and bias.
    fn linear(&self, name: &str, fan_in: usize, out: usize) -> anyhow::Result<Layer> {
        Ok(Layer {
            dims: vec![out, fan_in],
            weight: self
                .tensor(&format!("{name}.weight"), &[out, fan_in])?
                .to_vec(),
            bias: self.tensor(&format!("{name}.bias"), &[out])?.to_vec(),
        })
    }
}

/// A layer's float weight (output channels first) and bias.
struct Layer {
    dims: Vec<usize>,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Layer {
    fn outputs(&self) -> usize {
        self.dims[0]
    }

    /// The layer's first `at` outputs, and the others.
    fn split(self, at: usize) -> (Layer, Layer) {
        let per = self.weight.len() / self.outputs();
        let part = |range: std::ops::Range<usize>| {
            let mut dims = self.dims.clone();
            dims[0] = range.len();
            Layer {
                dims,
                weight: self.weight[range.start * per..range.end * per].to_vec(),
                bias: self.bias[range].to_vec(),
            }
        };
        (part(0..at), part(at..self.outputs()))
    }
}

/// The smallest and largest value an activation took during calibration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub lo: f32,
    pub hi: f32,
}

impl Range {
    const EMPTY: Range = Range {
        lo: f32::INFINITY,
        hi: f32::NEG_INFINITY,
    };

    fn add(&mut self, values: &[f32]) {
        for &v in values {
            self.lo = self.lo.min(v);
            self.hi = self.hi.max(v);
        }
    }

    /// uint8 parameters covering the range widened to include 0 (so that 0, the padding of
    /// every convolution, is exact).
    fn params(self) -> QParams {
        let lo = self.lo.min(0.0);
        let hi = self.hi.max(0.0);
        let span = hi - lo;
        if !(span > 1e-12 && span.is_finite()) {
            // Constant 0 (a dead channel group): any scale represents it.
            return QParams {
                scale: 1.0 / 255.0,
                zero_point: 0,
            };
        }
        let scale = span / 255.0;
        QParams {
            scale,
            zero_point: (-lo / scale).round().clamp(0.0, 255.0) as u8,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct QParams {
    scale: f32,
    zero_point: u8,
}

/// The calibration positions: up to `samples` positions of `meta`'s game and shape from the
/// newest shards in `dir`, spread evenly over the positions of those read (at most
/// [`MAX_SHARDS`] shards, the newest first, until `samples` are there). Returned as encoded
/// planes, one input after another. Shards that cannot be read or are for another game or
/// shape are skipped with a warning; none left is an error.
pub fn calibration_inputs(
    dir: &Path,
    meta: &ModelMeta,
    samples: usize,
) -> anyhow::Result<Vec<f32>> {
    check_samples(samples)?;
    let s = meta.shape;
    let mut read: Vec<shards::Shard> = Vec::new();
    let (mut positions, mut skipped) = (0, 0);
    for path in shards::newest_first(dir)?.into_iter().take(MAX_SHARDS) {
        if positions >= samples {
            break;
        }
        let shard = match shards::Shard::read(&path) {
            Ok(shard) => shard,
            Err(e) => {
                tracing::warn!("skipping shard: {e}");
                skipped += 1;
                continue;
            }
        };
        let m = &shard.meta;
        if m.game != meta.game || (m.planes, m.height, m.width) != (s.planes, s.height, s.width) {
            tracing::warn!(
                "skipping shard: {}: a {} shard of {}×{}×{} planes; the model is for {}, {}",
                path.display(),
                m.game,
                m.planes,
                m.height,
                m.width,
                meta.game,
                describe(s)
            );
            skipped += 1;
            continue;
        }
        positions += shard.samples.len();
        read.push(shard);
    }
    ensure!(
        positions > 0,
        "no positions for {} ({}) in the shards of {}{}",
        meta.game,
        describe(s),
        dir.display(),
        match skipped {
            0 => String::new(),
            n => format!(" ({n} skipped: see the warnings above)"),
        }
    );
    Ok(spread(&read, samples))
}

fn check_samples(samples: usize) -> anyhow::Result<()> {
    ensure!(
        (1..=MAX_SAMPLES).contains(&samples),
        "--samples {samples}: give 1 to {MAX_SAMPLES} positions"
    );
    Ok(())
}

/// Up to `samples` positions of `shards` (all of one shape), evenly spaced over all of
/// theirs, as encoded planes one after another.
pub fn spread(shards: &[shards::Shard], samples: usize) -> Vec<f32> {
    let all: Vec<&[f32]> = shards
        .iter()
        .flat_map(|s| s.samples.iter().map(|x| x.planes.as_slice()))
        .collect();
    spread_picks(all.len(), samples)
        .into_iter()
        .flat_map(|i| all[i].iter().copied())
        .collect()
}

/// Which of `total` positions [`spread`] takes to keep up to `samples`: evenly spaced, the
/// first included.
pub fn spread_picks(total: usize, samples: usize) -> Vec<usize> {
    let n = samples.min(total);
    (0..n).map(|i| i * total / n).collect()
}

/// What [`quantize`] made.
pub struct Quantized {
    /// The int8 ONNX model.
    pub bytes: Vec<u8>,
    /// Calibration positions.
    pub positions: usize,
    /// Activations quantised, with their ranges.
    pub ranges: Vec<(String, Range)>,
    /// Seconds spent calibrating.
    pub seconds: f64,
}

/// The int8 model of `model`, its activation ranges calibrated on `inputs` (encoded
/// positions, one after another).
pub fn quantize(model: &Fp32Model, inputs: &[f32]) -> anyhow::Result<Quantized> {
    let len = model.meta.shape.input_len();
    ensure!(
        !inputs.is_empty() && inputs.len().is_multiple_of(len),
        "{} floats are not a whole number of {len}-float positions",
        inputs.len()
    );
    let started = Instant::now();
    let ranges = calibrate(model, inputs)?;
    let seconds = started.elapsed().as_secs_f64();
    let positions = inputs.len() / len;
    let calibration = format!("min/max over {positions} positions");
    let bytes = build(model, Mode::Quantize(&ranges), &calibration)?.0;
    let mut ranges: Vec<(String, Range)> = ranges.into_iter().collect();
    ranges.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Quantized {
        bytes,
        positions,
        ranges,
        seconds,
    })
}

/// Each quantised activation's range over `inputs`: the smallest and largest value seen.
/// (Clipping the ranges at the 99.999th, 99.99th or 99.9th percentile instead, or storing the
/// weights in 7 bits, agreed less well with the fp32 model on held-out positions.)
fn calibrate(model: &Fp32Model, inputs: &[f32]) -> anyhow::Result<HashMap<String, Range>> {
    let (bytes, outputs) = build(model, Mode::Calibrate, "")?;
    let s = model.meta.shape;
    let len = s.input_len();
    let env = infer::runtime::environment()?;
    let mut session = ort::session::Session::builder(env)
        .map_err(ort_err)?
        .with_intra_threads(0)
        .map_err(ort_err)?
        .commit_from_memory(&bytes)
        .map_err(ort_err)?;
    let mut ranges: HashMap<String, Range> = HashMap::new();
    let mut input = Range::EMPTY;
    input.add(inputs);
    ranges.insert(INPUT_KEY.into(), input);
    for chunk in inputs.chunks(CALIBRATION_BATCH * len) {
        let n = chunk.len() / len;
        let dims = [n, s.planes, s.height, s.width];
        let tensor = ort::value::TensorRef::from_array_view((dims, chunk)).map_err(ort_err)?;
        let out = session
            .run(ort::inputs!["input" => tensor])
            .map_err(ort_err)?;
        for (tensor, key) in &outputs {
            let (_, values) = out[tensor.as_str()]
                .try_extract_tensor::<f32>()
                .map_err(ort_err)?;
            ensure!(
                values.iter().all(|v| v.is_finite()),
                "calibration: activation `{key}` is not finite"
            );
            ranges
                .entry(key.clone())
                .or_insert(Range::EMPTY)
                .add(values);
        }
    }
    Ok(ranges)
}

fn ort_err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("ONNX Runtime, calibrating: {e}")
}

/// The key of the input planes' range.
const INPUT_KEY: &str = "input";

enum Mode<'a> {
    /// fp32 with batch norm folded, each activation to be quantised also a graph output.
    Calibrate,
    /// QDQ with these ranges.
    Quantize(&'a HashMap<String, Range>),
}

/// A tensor between layers: float (calibration), or uint8 with its parameters, stored under
/// initializers `<key>.scale` and `<key>.zero_point`.
#[derive(Clone)]
struct Act {
    name: String,
    key: String,
    q: Option<QParams>,
}

/// A calibration output: (tensor name, activation key).
type Output = (String, String);

struct Graph<'a> {
    graph: proto::GraphProto,
    mode: Mode<'a>,
    /// Calibration outputs.
    outputs: Vec<Output>,
    dq: usize,
}

/// Writes the model in `mode`; returns its bytes and, when calibrating, the outputs that hold
/// activations (tensor name, activation key).
fn build(
    model: &Fp32Model,
    mode: Mode<'_>,
    calibration: &str,
) -> anyhow::Result<(Vec<u8>, Vec<Output>)> {
    let meta = &model.meta;
    let cfg = &meta.network;
    cfg.validate()
        .map_err(|e| anyhow::anyhow!("network: {e}"))?;
    let s = meta.shape;
    let (c, cells) = (cfg.channels, s.height * s.width);
    let calibrating = matches!(mode, Mode::Calibrate);
    let mut g = Graph {
        graph: proto::GraphProto {
            name: format!(
                "{}_pv_resnet_{}",
                meta.game,
                if calibrating { "calibration" } else { "int8" }
            ),
            ..Default::default()
        },
        mode,
        outputs: Vec::new(),
        dq: 0,
    };
    g.graph.input.push(proto::ValueInfoProto::tensor(
        "input",
        onnx::input_dims(meta),
    ));
    if cfg.pooling_blocks() > 0 || cfg.policy_pool || cfg.value_pool {
        let (nodes, constants) = onnx::width_scale_graph("input");
        g.graph.node.extend(nodes);
        g.graph.initializer.extend(constants);
    }

    let x = g.input()?;
    let stem = model.folded_conv("stem.conv", "stem.bn", s.planes, c, 3)?;
    let y = g.conv(&stem, "stem.conv", &x)?;
    let mut h = g.act(y, "stem.relu", true)?;
    for i in 0..cfg.blocks {
        let p = format!("blocks.{i}");
        let l1 = model.folded_conv(&format!("{p}.conv1"), &format!("{p}.bn1"), c, c, 3)?;
        let (y, kept) = if cfg.pools_in_block(i) {
            // The first convolution as two: the channels kept and those pooled, each its own
            // integer convolution.
            let g_c = cfg.pool_channels;
            let kept = c - g_c;
            let (l1, l1g) = l1.split(kept);
            let y = g.conv(&l1, &format!("{p}.conv1"), &h)?;
            let y = g.act(y, &format!("{p}.relu1"), true)?;
            let q = g.conv(&l1g, &format!("{p}.conv1g"), &h)?;
            let q = g.act(q, &format!("{p}.relu1g"), true)?;
            let pooled = g.pool(&q, &format!("{p}.pool"));
            let fc = model.linear(&format!("{p}.pool.fc"), 3 * g_c, kept)?;
            let bias = g.gemm(
                &fc,
                &format!("{p}.pool.fc"),
                &pooled,
                &format!("{p}.pool.out"),
            )?;
            let y = g.add_bias(&y, &bias, &format!("{p}.biased"));
            (g.act(y, &format!("{p}.biased"), false)?, kept)
        } else {
            let y = g.conv(&l1, &format!("{p}.conv1"), &h)?;
            (g.act(y, &format!("{p}.relu1"), true)?, c)
        };
        let l2 = model.folded_conv(&format!("{p}.conv2"), &format!("{p}.bn2"), kept, c, 3)?;
        let z = g.conv(&l2, &format!("{p}.conv2"), &y)?;
        let z = g.act(z, &format!("{p}.bn2"), false)?;
        let sum = g.add(&z, &h, &format!("{p}.add"));
        h = g.act(sum, &format!("{p}.relu2"), true)?;
    }

    let pc = cfg.policy_channels;
    let l = model.folded_conv("policy.conv", "policy.bn", c, pc, 1)?;
    let p = g.conv(&l, "policy.conv", &h)?;
    let mut p = g.act(p, "policy.relu", true)?;
    let pooled = if cfg.policy_pool {
        let g_c = cfg.pool_channels;
        let l = model.folded_conv("policy.gconv", "policy.gbn", c, g_c, 1)?;
        let q = g.conv(&l, "policy.gconv", &h)?;
        let q = g.act(q, "policy.grelu", true)?;
        let pooled = g.pool(&q, "policy.pool");
        let fc = model.linear("policy.gfc", 3 * g_c, pc)?;
        let bias = g.gemm(&fc, "policy.gfc", &pooled, "policy.gfc.out")?;
        let biased = g.add_bias(&p, &bias, "policy.biased");
        p = g.act(biased, "policy.biased", false)?;
        Some(pooled)
    } else {
        None
    };
    let heads: &[(&str, &str)] = if cfg.reply {
        &[("policy", "policy"), ("reply", REPLY_POLICY)]
    } else {
        &[("policy", "policy")]
    };
    let mut wanted = vec![("policy", s.policy_size), ("value", 1)];
    match (PolicyForm::of(cfg, s), &pooled) {
        (PolicyForm::Points { pooled: inputs }, Some(pooled)) => {
            for (head, out) in heads {
                let w = model.tensor(&format!("{head}.out.weight"), &[1, pc, 1, 1])?;
                let layer = Layer {
                    dims: vec![1, pc, 1, 1],
                    weight: w.to_vec(),
                    bias: vec![0.0],
                };
                let points = g.conv(&layer, &format!("{head}.out"), &p)?;
                let points = g.flat(&points);
                let fc = model.linear(&format!("{head}.pass"), inputs, 1)?;
                let pass = g.gemm(
                    &fc,
                    &format!("{head}.pass"),
                    pooled,
                    &format!("{head}.pass.out"),
                )?;
                g.node(
                    "Concat",
                    &[&points, &pass],
                    out,
                    vec![proto::AttributeProto::int("axis", 1)],
                );
            }
        }
        _ => {
            let flat = g.flatten(&p);
            for (head, out) in heads {
                let l = model.linear(&format!("{head}.fc"), pc * cells, s.policy_size)?;
                g.gemm(&l, &format!("{head}.fc"), &flat, out)?;
            }
        }
    }

    let (vc, hidden) = (cfg.value_channels, cfg.value_hidden);
    let l = model.folded_conv("value.conv", "value.bn", c, vc, 1)?;
    let v = g.conv(&l, "value.conv", &h)?;
    let v = g.act(v, "value.relu", true)?;
    let (features, inputs) = if cfg.value_pool {
        (g.pool(&v, "value.pool"), 3 * vc)
    } else {
        (g.flatten(&v), vc * cells)
    };
    let l = model.linear("value.fc1", inputs, hidden)?;
    let u = g.gemm(&l, "value.fc1", &features, "value.fc1.out")?;
    let u = g.act(u, "value.fc1.relu", true)?;
    let l = model.linear("value.fc2", hidden, 1)?;
    let out = g.gemm(&l, "value.fc2", &u, "value.fc2.out")?;
    g.node("Tanh", &[&out], "value", vec![]);
    if cfg.ownership {
        let layer = Layer {
            dims: vec![1, vc, 1, 1],
            weight: model
                .tensor("ownership.conv.weight", &[1, vc, 1, 1])?
                .to_vec(),
            bias: model.tensor("ownership.conv.bias", &[1])?.to_vec(),
        };
        let o = g.conv(&layer, "ownership.conv", &v)?;
        let o = g.flat(&o);
        g.node("Tanh", &[&o], OWNERSHIP, vec![]);
        wanted.push((OWNERSHIP, cells));
    }
    if cfg.score {
        let l = model.linear("value.score", hidden, 1)?;
        g.gemm(&l, "value.score", &u, SCORE)?;
        wanted.push((SCORE, 1));
    }
    if cfg.wdl {
        let l = model.linear("value.wdl", hidden, 3)?;
        g.gemm(&l, "value.wdl", &u, WDL)?;
        wanted.push((WDL, 3));
    }
    if cfg.reply {
        wanted.push((REPLY_POLICY, s.policy_size));
    }

    for (name, size) in wanted {
        g.graph.output.push(proto::ValueInfoProto::tensor(
            name,
            onnx::output_dims(meta, name, size),
        ));
    }
    for (tensor, _) in &g.outputs {
        g.graph.output.push(proto::ValueInfoProto {
            name: tensor.clone(),
            r#type: Some(proto::TypeProto {
                tensor_type: Some(proto::TypeTensor {
                    elem_type: proto::DATA_TYPE_FLOAT,
                    shape: None,
                }),
            }),
        });
    }

    let extra = if calibrating {
        vec![]
    } else {
        vec![
            ("precision", "int8".to_string()),
            ("source_crc32", model.source_crc32.clone()),
            ("calibration", calibration.to_string()),
        ]
    };
    let outputs = std::mem::take(&mut g.outputs);
    let out = crate::onnx::model_proto(g.graph, meta, extra);
    Ok((out.encode_to_vec(), outputs))
}

impl Graph<'_> {
    fn node(&mut self, op: &str, inputs: &[&str], output: &str, attrs: Vec<proto::AttributeProto>) {
        self.graph.node.push(proto::NodeProto::new(
            op,
            inputs,
            &[output],
            format!("{output}.{}", op.to_lowercase()),
            attrs,
        ));
    }

    fn initializer(&mut self, name: &str, dims: &[usize], data_type: i32, raw_data: Vec<u8>) {
        self.graph.initializer.push(proto::TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type,
            name: name.into(),
            raw_data,
        });
    }

    fn floats(&mut self, name: &str, dims: &[usize], values: &[f32]) {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializer(name, dims, proto::DATA_TYPE_FLOAT, raw);
    }

    /// Scale and zero point of activation `key` as scalars (written once, shared by its
    /// `QuantizeLinear` and every `DequantizeLinear`).
    fn act_params(&mut self, key: &str, q: QParams) {
        self.floats(&format!("{key}.scale"), &[], &[q.scale]);
        self.initializer(
            &format!("{key}.zero_point"),
            &[],
            DATA_TYPE_UINT8,
            vec![q.zero_point],
        );
    }

    fn range(&self, key: &str) -> anyhow::Result<Range> {
        match self.mode {
            Mode::Quantize(ranges) => ranges
                .get(key)
                .copied()
                .with_context(|| format!("no calibrated range for `{key}`")),
            Mode::Calibrate => unreachable!("ranges are read when quantising"),
        }
    }

    /// The graph input as an activation.
    fn input(&mut self) -> anyhow::Result<Act> {
        match self.mode {
            // The input's range is taken from the positions themselves.
            Mode::Calibrate => Ok(Act {
                name: "input".into(),
                key: INPUT_KEY.into(),
                q: None,
            }),
            Mode::Quantize(_) => self.quantize("input".into(), INPUT_KEY, false),
        }
    }

    /// Float tensor `x` as activation `key`, after a ReLU if `relu`.
    fn act(&mut self, x: String, key: &str, relu: bool) -> anyhow::Result<Act> {
        match self.mode {
            Mode::Calibrate => {
                let name = if relu {
                    let out = format!("{key}.out");
                    self.node("Relu", &[&x], &out, vec![]);
                    out
                } else {
                    x
                };
                self.outputs.push((name.clone(), key.into()));
                Ok(Act {
                    name,
                    key: key.into(),
                    q: None,
                })
            }
            Mode::Quantize(_) => self.quantize(x, key, relu),
        }
    }

    /// `QuantizeLinear` of `x` with `key`'s range; with `relu`, the range starts at 0 and the
    /// zero point 0 clamps below as the ReLU left out would.
    fn quantize(&mut self, x: String, key: &str, relu: bool) -> anyhow::Result<Act> {
        let mut range = self.range(key)?;
        if relu {
            range.lo = 0.0;
        }
        let q = range.params();
        debug_assert!(!relu || q.zero_point == 0);
        self.act_params(key, q);
        let out = format!("{key}.q");
        let (scale, zp) = (format!("{key}.scale"), format!("{key}.zero_point"));
        self.node("QuantizeLinear", &[&x, &scale, &zp], &out, vec![]);
        Ok(Act {
            name: out,
            key: key.into(),
            q: Some(q),
        })
    }

    /// The float tensor a consumer of `a` reads: a `DequantizeLinear` of its own (ONNX
    /// Runtime groups each with one consumer) when `a` is quantised.
    fn read(&mut self, a: &Act) -> String {
        if a.q.is_none() {
            return a.name.clone();
        }
        self.dq += 1;
        let out = format!("{}.dq{}", a.name, self.dq);
        let (scale, zp) = (format!("{}.scale", a.key), format!("{}.zero_point", a.key));
        self.node("DequantizeLinear", &[&a.name, &scale, &zp], &out, vec![]);
        out
    }

    /// The layer's weight and bias as graph values for an input `x`: float initializers, or
    /// when `x` is quantised, `DequantizeLinear` of int8 weights (per output channel) and of
    /// int32 biases.
    fn weights(&mut self, layer: &Layer, name: &str, x: &Act) -> (String, String) {
        let (w, b) = (format!("{name}.weight"), format!("{name}.bias"));
        let Some(qx) = x.q else {
            self.floats(&w, &layer.dims, &layer.weight);
            self.floats(&b, &[layer.outputs()], &layer.bias);
            return (w, b);
        };
        let out = layer.outputs();
        let fan_in = layer.weight.len() / out;
        let mut scales = Vec::with_capacity(out);
        let mut q = Vec::with_capacity(layer.weight.len());
        for row in layer.weight.chunks_exact(fan_in) {
            let max = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let scale = if max > 0.0 { max / WEIGHT_MAX } else { 1.0 };
            scales.push(scale);
            q.extend(
                row.iter()
                    .map(|v| (v / scale).round().clamp(-WEIGHT_MAX, WEIGHT_MAX) as i8),
            );
        }
        let bias: Vec<i32> = layer
            .bias
            .iter()
            .zip(&scales)
            .map(|(b, s)| {
                (f64::from(*b) / (f64::from(qx.scale) * f64::from(*s)))
                    .round()
                    .clamp(i32::MIN as f64, i32::MAX as f64) as i32
            })
            .collect();
        let bias_scales: Vec<f32> = scales.iter().map(|s| qx.scale * s).collect();
        let axis = || vec![proto::AttributeProto::int("axis", 0)];

        self.initializer(
            &format!("{w}.int8"),
            &layer.dims,
            DATA_TYPE_INT8,
            q.iter().map(|&v| v as u8).collect(),
        );
        self.floats(&format!("{w}.scale"), &[out], &scales);
        self.initializer(
            &format!("{w}.zero_point"),
            &[out],
            DATA_TYPE_INT8,
            vec![0; out],
        );
        self.node(
            "DequantizeLinear",
            &[
                &format!("{w}.int8"),
                &format!("{w}.scale"),
                &format!("{w}.zero_point"),
            ],
            &w,
            axis(),
        );
        let raw = bias.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializer(&format!("{b}.int32"), &[out], DATA_TYPE_INT32, raw);
        self.floats(&format!("{b}.scale"), &[out], &bias_scales);
        let zeros = vec![0u8; 4 * out];
        self.initializer(&format!("{b}.zero_point"), &[out], DATA_TYPE_INT32, zeros);
        self.node(
            "DequantizeLinear",
            &[
                &format!("{b}.int32"),
                &format!("{b}.scale"),
                &format!("{b}.zero_point"),
            ],
            &b,
            axis(),
        );
        (w, b)
    }

    /// Convolution `name` (k × k, same padding) of `x`; returns its float output.
    fn conv(&mut self, layer: &Layer, name: &str, x: &Act) -> anyhow::Result<String> {
        let k = layer.dims[2] as i64;
        let xin = self.read(x);
        let (w, b) = self.weights(layer, name, x);
        let out = format!("{name}.out");
        let pad = k / 2;
        self.node(
            "Conv",
            &[&xin, &w, &b],
            &out,
            vec![
                proto::AttributeProto::ints("kernel_shape", &[k, k]),
                proto::AttributeProto::ints("pads", &[pad, pad, pad, pad]),
                proto::AttributeProto::ints("strides", &[1, 1]),
            ],
        );
        Ok(out)
    }

    /// `x · Wᵀ + b` into the float tensor `out`.
    fn gemm(&mut self, layer: &Layer, name: &str, x: &Act, out: &str) -> anyhow::Result<String> {
        let xin = self.read(x);
        let (w, b) = self.weights(layer, name, x);
        self.node(
            "Gemm",
            &[&xin, &w, &b],
            out,
            vec![
                proto::AttributeProto::float("alpha", 1.0),
                proto::AttributeProto::float("beta", 1.0),
                proto::AttributeProto::int("transB", 1),
            ],
        );
        Ok(out.into())
    }

    /// `a + b` as a float tensor.
    fn add(&mut self, a: &Act, b: &Act, name: &str) -> String {
        let (ia, ib) = (self.read(a), self.read(b));
        let out = format!("{name}.out");
        self.node("Add", &[&ia, &ib], &out, vec![]);
        out
    }

    /// [`crate::net::global_pool`] of activation `x`, in float: (batch, 3 × channels).
    fn pool(&mut self, x: &Act, key: &str) -> Act {
        let xin = self.read(x);
        let (mean, max, scaled, all) = (
            format!("{key}.mean"),
            format!("{key}.max"),
            format!("{key}.scaled"),
            format!("{key}.concat"),
        );
        self.node("GlobalAveragePool", &[&xin], &mean, vec![]);
        self.node("Mul", &[&mean, onnx::WIDTH_SCALE], &scaled, vec![]);
        self.node("GlobalMaxPool", &[&xin], &max, vec![]);
        self.node(
            "Concat",
            &[&mean, &scaled, &max],
            &all,
            vec![proto::AttributeProto::int("axis", 1)],
        );
        Act {
            name: self.flat(&all),
            key: key.into(),
            q: None,
        }
    }

    /// Float tensor `x` flattened to (batch, features).
    fn flat(&mut self, x: &str) -> String {
        let out = format!("{x}.flat");
        self.node(
            "Flatten",
            &[x],
            &out,
            vec![proto::AttributeProto::int("axis", 1)],
        );
        out
    }

    /// Activation `x` (batch, channels, height, width) plus the float `bias` (batch, channels)
    /// on each sample's channels, as a float tensor.
    fn add_bias(&mut self, x: &Act, bias: &str, name: &str) -> String {
        let xin = self.read(x);
        let axes = format!("{name}.axes");
        let raw = [2i64, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializer(&axes, &[2], proto::DATA_TYPE_INT64, raw);
        let b = format!("{name}.bias");
        self.node("Unsqueeze", &[bias, &axes], &b, vec![]);
        let out = format!("{name}.out");
        self.node("Add", &[&xin, &b], &out, vec![]);
        out
    }

    /// `x` flattened to (batch, features), keeping its quantisation (a
    /// `DequantizeLinear` → `Flatten` → `QuantizeLinear` group that ONNX Runtime runs on the
    /// uint8 values).
    fn flatten(&mut self, x: &Act) -> Act {
        let xin = self.read(x);
        let flat = format!("{}.flat", x.key);
        self.node(
            "Flatten",
            &[&xin],
            &flat,
            vec![proto::AttributeProto::int("axis", 1)],
        );
        if x.q.is_none() {
            return Act {
                name: flat,
                key: x.key.clone(),
                q: None,
            };
        }
        let out = format!("{flat}.q");
        let (scale, zp) = (format!("{}.scale", x.key), format!("{}.zero_point", x.key));
        self.node("QuantizeLinear", &[&flat, &scale, &zp], &out, vec![]);
        Act {
            name: out,
            key: x.key.clone(),
            q: x.q,
        }
    }
}

/// Where `quantize` writes the int8 model of `model`: beside it, `x.onnx` → `x.int8.onnx`.
pub fn int8_path(model: &Path) -> PathBuf {
    infer::precision::int8_path(model)
}

/// Policy (softmax) and value of the int8 model against the fp32 one on the same inputs.
#[derive(Clone, Copy, Debug)]
pub struct Agreement {
    pub positions: usize,
    /// Mean over positions and entries of |p_int8 − p_fp32|, the policies as probabilities.
    pub policy_mean: f64,
    /// Mean over positions of the total variation distance, ½ Σ |p_int8 − p_fp32|.
    pub policy_tv_mean: f64,
    /// Mean and largest |v_int8 − v_fp32|.
    pub value_mean: f64,
    pub value_max: f64,
    /// Share of positions where both pick the same most likely action.
    pub top1: f64,
}

/// Runs both models (ONNX bytes) through ONNX Runtime on `inputs` and compares them.
pub fn agreement(
    fp32: &[u8],
    int8: &[u8],
    shape: TensorShape,
    inputs: &[f32],
) -> anyhow::Result<Agreement> {
    let len = shape.input_len();
    let n = inputs.len() / len;
    ensure!(n > 0, "no positions to compare on");
    let opts = infer::OrtOptions {
        batch_size: CALIBRATION_BATCH,
        intra_threads: 0,
        ..Default::default()
    };
    let run = |bytes: &[u8], name: &str| -> anyhow::Result<(Vec<f32>, Vec<f32>)> {
        let model = infer::OrtModel::from_bytes(Path::new(name), bytes, &opts)?;
        let mut policy = vec![0.0; n * shape.policy_size];
        let mut value = vec![0.0; n];
        model
            .evaluate_encoded(inputs, &mut policy, &mut value)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        Ok((policy, value))
    };
    let (p32, v32) = run(fp32, "fp32 model")?;
    let (p8, v8) = run(int8, "int8 model")?;
    let ps = shape.policy_size;
    let (mut sum, mut tv, mut same) = (0.0f64, 0.0f64, 0usize);
    for (a, b) in p32.chunks_exact(ps).zip(p8.chunks_exact(ps)) {
        let (a, b) = (softmax(a), softmax(b));
        let d: f64 = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).sum();
        sum += d / ps as f64;
        tv += d / 2.0;
        same += usize::from(argmax(&a) == argmax(&b));
    }
    let dv: Vec<f64> = v32
        .iter()
        .zip(&v8)
        .map(|(a, b)| f64::from((a - b).abs()))
        .collect();
    Ok(Agreement {
        positions: n,
        policy_mean: sum / n as f64,
        policy_tv_mean: tv / n as f64,
        value_mean: dv.iter().sum::<f64>() / n as f64,
        value_max: dv.iter().fold(0.0, |m, d| m.max(*d)),
        top1: same as f64 / n as f64,
    })
}

/// How one output of the int8 model agrees with the fp32 model's.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputAgreement {
    /// The output's name (`policy`, `value`, `ownership`, `score`, `wdl`, `reply_policy`).
    pub name: String,
    /// For the logits (`policy`, `reply_policy`, `wdl`): the mean total variation distance
    /// between the two softmax distributions; otherwise the mean |Δ| over every value.
    pub mean: f64,
    /// The largest total variation distance, or the largest |Δ|.
    pub max: f64,
    /// For the logits: the share of positions where both rank the same entry first.
    pub top1: Option<f64>,
}

/// Every output of both models (ONNX bytes) on `inputs` through ONNX Runtime, compared (see
/// [`OutputAgreement`]), in the fp32 model's output order.
pub fn output_agreement(
    fp32: &[u8],
    int8: &[u8],
    shape: TensorShape,
    inputs: &[f32],
) -> anyhow::Result<Vec<OutputAgreement>> {
    let len = shape.input_len();
    let n = inputs.len() / len;
    ensure!(n > 0, "no positions to compare on");
    let env = infer::runtime::environment()?;
    let run = |bytes: &[u8]| -> anyhow::Result<Vec<(String, Vec<f32>)>> {
        let mut session = ort::session::Session::builder(env)
            .map_err(ort_err)?
            .with_intra_threads(0)
            .map_err(ort_err)?
            .commit_from_memory(bytes)
            .map_err(ort_err)?;
        let names: Vec<String> = session
            .outputs()
            .iter()
            .map(|o| o.name().to_string())
            .collect();
        let mut all: Vec<(String, Vec<f32>)> =
            names.iter().map(|n| (n.clone(), Vec::new())).collect();
        for chunk in inputs.chunks(CALIBRATION_BATCH * len) {
            let dims = [chunk.len() / len, shape.planes, shape.height, shape.width];
            let tensor = ort::value::TensorRef::from_array_view((dims, chunk)).map_err(ort_err)?;
            let out = session
                .run(ort::inputs!["input" => tensor])
                .map_err(ort_err)?;
            for (name, values) in &mut all {
                let (_, v) = out[name.as_str()]
                    .try_extract_tensor::<f32>()
                    .map_err(ort_err)?;
                values.extend_from_slice(v);
            }
        }
        Ok(all)
    };
    let (a, b) = (run(fp32)?, run(int8)?);
    let mut out = Vec::new();
    for (name, x) in a {
        let Some((_, y)) = b.iter().find(|(m, _)| *m == name) else {
            bail!("the int8 model has no output `{name}`");
        };
        ensure!(
            x.len() == y.len(),
            "output `{name}`: {} and {} values",
            x.len(),
            y.len()
        );
        let logits = matches!(name.as_str(), "policy" | REPLY_POLICY | WDL);
        let row = x.len() / n;
        let (mut sum, mut max, mut same) = (0.0f64, 0.0f64, 0usize);
        if logits {
            for (p, q) in x.chunks_exact(row).zip(y.chunks_exact(row)) {
                let (p, q) = (softmax(p), softmax(q));
                let tv = p.iter().zip(&q).map(|(a, b)| (a - b).abs()).sum::<f64>() / 2.0;
                sum += tv;
                max = max.max(tv);
                same += usize::from(argmax(&p) == argmax(&q));
            }
            sum /= n as f64;
        } else {
            for (p, q) in x.iter().zip(y.iter()) {
                let d = f64::from((p - q).abs());
                sum += d;
                max = max.max(d);
            }
            sum /= x.len() as f64;
        }
        out.push(OutputAgreement {
            name,
            mean: sum,
            max,
            top1: logits.then(|| same as f64 / n as f64),
        });
    }
    Ok(out)
}

fn softmax(logits: &[f32]) -> Vec<f64> {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v));
    let e: Vec<f64> = logits.iter().map(|v| f64::from(v - max).exp()).collect();
    let total: f64 = e.iter().sum();
    e.into_iter().map(|v| v / total).collect()
}

fn argmax(p: &[f64]) -> usize {
    p.iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |best, (i, v)| {
            if *v > best.1 {
                (i, *v)
            } else {
                best
            }
        })
        .0
}
