//! `trainer-bridge bench`: the learner's throughput against the arithmetic it does, beside the
//! same network's forward pass through ONNX Runtime in the same run.
//!
//! Training steps run on synthetic samples of the config's network (random binary planes,
//! random sparse policies, random values) through the same batch assembly, loss and AdamW step
//! as `fit`. Each figure is the median of many timed calls, and the three kinds of call (a
//! training step, candle's forward pass in training mode with the loss, ONNX Runtime's forward
//! pass) take turns in short runs, so that a busy machine slows all of them alike.
//!
//! Where the config's network has global pooling or auxiliary heads, the plain network of the
//! same blocks and channels ([`NetConfig::plain`]) takes its turns in the same runs, and the
//! report gives what the new parts cost as ratios of time per training sample and per
//! evaluation against it.

use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use candle_core::Device;
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use games::{Symmetry, TensorShape};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shards::{Sample, Shard, ShardMeta};

use crate::fit::{losses, train_step, Batch};
use crate::net::describe;
use crate::{ModelMeta, Net, NetConfig};

/// Synthetic samples the batches are drawn from.
const POOL: usize = 1024;
/// Calls of one kind in a row before the next kind takes its turn. The first call after a
/// switch pays for the other kind (ONNX Runtime's threads spin on after a run, caches are cold);
/// the medians leave it out.
const RUN: usize = 5;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub game: String,
    pub shape: TensorShape,
    pub network: NetConfig,
    pub batch: usize,
    /// Wall time for all measurements together (at least one timed call of each kind).
    pub duration: Duration,
}

/// Floating-point operations per sample, counted from the architecture.
///
/// A convolution or fully connected layer costs 2 FLOP (a multiply and an add) per weight per
/// output point: 2 · H · W · Cin · Cout · k² for a convolution with `same` padding, 2 · in · out
/// for a fully connected layer. Batch norm, ReLU, the residual additions, the softmax, tanh and
/// the optimiser are left out: they are O(activations) or O(weights), under 2 % of the
/// products for these networks. A training step counts the forward pass, the weight gradients
/// (the same products again) and the input gradients (again, except the stem's: the input
/// planes need none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flops {
    pub forward: f64,
    pub train: f64,
}

impl Flops {
    pub fn of(network: &NetConfig, shape: TensorShape) -> Flops {
        let cells = (shape.height * shape.width) as f64;
        let c = network.channels as f64;
        let g = network.pool_channels as f64;
        let conv = |cin: f64, cout: f64, k: f64| 2.0 * cells * cin * cout * k * k;
        let fc = |inputs: f64, outputs: f64| 2.0 * inputs * outputs;
        let stem = conv(shape.planes as f64, c, 3.0);
        let tower: f64 = (0..network.blocks)
            .map(|i| {
                if network.pools_in_block(i) {
                    conv(c, c, 3.0) + fc(3.0 * g, c - g) + conv(c - g, c, 3.0)
                } else {
                    2.0 * conv(c, c, 3.0)
                }
            })
            .sum();
        let (pc, vc) = (
            network.policy_channels as f64,
            network.value_channels as f64,
        );
        let hidden = network.value_hidden as f64;
        let pooled = if network.policy_pool {
            conv(c, g, 1.0) + fc(3.0 * g, pc)
        } else {
            0.0
        };
        let policy_out = match crate::net::PolicyForm::of(network, shape) {
            crate::net::PolicyForm::Dense => fc(pc * cells, shape.policy_size as f64),
            crate::net::PolicyForm::Points { pooled } => {
                conv(pc, 1.0, 1.0) + fc(pooled as f64, 1.0)
            }
        };
        let outs = if network.reply { 2.0 } else { 1.0 };
        let value_in = if network.value_pool {
            3.0 * vc
        } else {
            vc * cells
        };
        let extra = [
            (network.ownership, conv(vc, 1.0, 1.0)),
            (network.score, fc(hidden, 1.0)),
            (network.wdl, fc(hidden, 3.0)),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, f)| f)
        .sum::<f64>();
        let heads = conv(c, pc, 1.0)
            + pooled
            + outs * policy_out
            + conv(c, vc, 1.0)
            + fc(value_in, hidden)
            + fc(hidden, 1.0)
            + extra;
        let forward = stem + tower + heads;
        Flops {
            forward,
            train: 3.0 * forward - stem,
        }
    }
}

/// What a bench run measured: median seconds per call of each kind.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub options: BenchOptions,
    pub threads: usize,
    pub flops: Flops,
    /// Calls timed of each kind.
    pub calls: usize,
    /// A training step: batch assembly, forward, loss, backward, AdamW.
    pub step_s: f64,
    /// candle's forward pass in training mode with the loss (batch assembly included).
    pub forward_s: f64,
    /// The forward pass and loss inside a training step.
    pub step_forward_s: f64,
    /// The backward pass inside a training step.
    pub backward_s: f64,
    /// AdamW's update inside a training step.
    pub optimiser_s: f64,
    /// ONNX Runtime's forward pass of the same batch.
    pub ort_s: f64,
    /// The plain network of the same tower, measured in the same runs, where the config's has
    /// new parts.
    pub baseline: Option<Baseline>,
}

/// The plain network's figures (see [`NetConfig::plain`]).
#[derive(Clone, Debug)]
pub struct Baseline {
    pub network: NetConfig,
    pub flops: Flops,
    /// Median seconds of a training step, of candle's forward pass with the loss, and of
    /// ONNX Runtime's forward pass, as in [`BenchReport`].
    pub step_s: f64,
    pub forward_s: f64,
    pub ort_s: f64,
}

impl BenchReport {
    /// What the new parts cost: time per training sample and per evaluation (ONNX Runtime) of
    /// the config's network over the plain one's.
    pub fn cost_ratios(&self) -> Option<(f64, f64)> {
        self.baseline
            .as_ref()
            .map(|b| (self.step_s / b.step_s, self.ort_s / b.ort_s))
    }
}

impl BenchReport {
    fn rate(&self, seconds: f64) -> f64 {
        self.options.batch as f64 / seconds
    }

    pub fn samples_per_s(&self) -> f64 {
        self.rate(self.step_s)
    }

    /// GFLOP/s of the whole training step.
    pub fn train_gflops(&self) -> f64 {
        self.samples_per_s() * self.flops.train / 1e9
    }

    pub fn ort_evals_per_s(&self) -> f64 {
        self.rate(self.ort_s)
    }

    pub fn ort_gflops(&self) -> f64 {
        self.ort_evals_per_s() * self.flops.forward / 1e9
    }
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        let n = &o.network;
        writeln!(
            f,
            "{}: {} blocks × {} channels ({}), batch {}, {} thread(s) for candle and ONNX Runtime, median of {} calls each",
            o.game, n.blocks, n.channels, describe(o.shape), o.batch, self.threads, self.calls
        )?;
        let fl = self.flops;
        writeln!(
            f,
            "per sample: forward {:.2} MFLOP, training step {:.2} MFLOP",
            fl.forward / 1e6,
            fl.train / 1e6
        )?;
        let line = |f: &mut fmt::Formatter<'_>, what: &str, s: f64, flop: f64| {
            writeln!(
                f,
                "{what:<38} {:>9.2} ms  {:>8.0} samples/s  {:>7.1} GFLOP/s",
                s * 1e3,
                self.rate(s),
                self.rate(s) * flop / 1e9
            )
        };
        line(f, "candle training step", self.step_s, fl.train)?;
        line(f, "  its forward and loss", self.step_forward_s, fl.forward)?;
        line(f, "  its backward", self.backward_s, fl.train - fl.forward)?;
        line(f, "  its AdamW update", self.optimiser_s, 0.0)?;
        line(
            f,
            "candle forward alone (training mode)",
            self.forward_s,
            fl.forward,
        )?;
        line(f, "ONNX Runtime forward", self.ort_s, fl.forward)?;
        if let (Some(b), Some((train, eval))) = (&self.baseline, self.cost_ratios()) {
            writeln!(
                f,
                "the same tower without pooling or auxiliary heads ({}):",
                b.network.summary()
            )?;
            line(f, "  its candle training step", b.step_s, b.flops.train)?;
            line(
                f,
                "  its candle forward (training mode)",
                b.forward_s,
                b.flops.forward,
            )?;
            line(f, "  its ONNX Runtime forward", b.ort_s, b.flops.forward)?;
            writeln!(
                f,
                "cost of the new parts: {train:.3}x the time per training sample, {eval:.3}x per \
                 evaluation ({:.3}x and {:.3}x the FLOP)",
                fl.train / b.flops.train,
                fl.forward / b.flops.forward
            )?;
        }
        write!(
            f,
            "fit {:.0} samples/s, {:.1} GFLOP/s; forward {:.0} evals/s, {:.1} GFLOP/s; ratio {:.3}",
            self.samples_per_s(),
            self.train_gflops(),
            self.ort_evals_per_s(),
            self.ort_gflops(),
            self.train_gflops() / self.ort_gflops()
        )
    }
}

/// The game a config file is for (`game.name`) and its network's tensor shape (Go's from
/// `game.size`).
pub fn config_shape(path: &Path) -> anyhow::Result<(String, TensorShape)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let game = doc
        .get("game")
        .and_then(|g| g.get("name"))
        .and_then(|n| n.as_str())
        .with_context(|| format!("{}: no `game.name`", path.display()))?;
    let size = doc
        .get("game")
        .and_then(|g| g.get("size"))
        .and_then(|s| s.as_u64())
        .map(|s| s as usize);
    let shape = games::shape_of(game, size)
        .with_context(|| format!("{}: game.name {game:?}: unknown game", path.display()))?;
    Ok((game.to_string(), shape))
}

/// A shard in memory of `POOL` random samples of `shape`: planes 0 or 1, a policy spread over a
/// few random entries, a value in [−1, 1]; only the identity symmetry.
fn synthetic_shard(game: &str, shape: TensorShape, rng: &mut SmallRng) -> Shard {
    let samples = (0..POOL)
        .map(|_| {
            let planes = (0..shape.input_len())
                .map(|_| f32::from(u8::from(rng.gen_bool(0.3))))
                .collect();
            let entries = rng.gen_range(1..=8.min(shape.policy_size));
            let weights: Vec<f32> = (0..entries).map(|_| rng.gen_range(0.1..1.0)).collect();
            let total: f32 = weights.iter().sum();
            let policy = weights
                .iter()
                .map(|w| (rng.gen_range(0..shape.policy_size) as u16, w / total))
                .collect();
            // Auxiliary targets for every sample, so that a network with those heads pays for
            // their losses as it would on self-play shards.
            let cells = shape.height * shape.width;
            let aux = shards::Aux {
                ownership: Some(
                    (0..cells)
                        .map(|_| f32::from(rng.gen_range(-1i8..=1)))
                        .collect(),
                ),
                score: Some(rng.gen_range(-20.0..20.0)),
                reply: Some(vec![(rng.gen_range(0..shape.policy_size) as u16, 1.0)]),
                surprise: None,
            };
            Sample {
                planes,
                policy,
                value: rng.gen_range(-1.0..=1.0),
                aux,
            }
        })
        .collect();
    Shard {
        meta: ShardMeta {
            game: game.to_string(),
            planes: shape.planes,
            height: shape.height,
            width: shape.width,
            policy_size: shape.policy_size,
            model: "synthetic".into(),
            config: String::new(),
            created_unix: 0,
            games: 0,
            policy_target: shards::PolicyTarget::Visits,
        },
        samples,
        symmetries: vec![(Symmetry::IDENTITY, (0..shape.policy_size as u16).collect())],
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One network under measurement: candle's, its optimiser, and ONNX Runtime's model of it.
struct Subject {
    net: Net,
    opt: AdamW,
    model: infer::OrtModel,
    /// Seconds of each kind of call kept: training step, its forward, backward and optimiser
    /// parts, candle's forward alone, ONNX Runtime's forward.
    step_s: Vec<f64>,
    step_forward_s: Vec<f64>,
    backward_s: Vec<f64>,
    optimiser_s: Vec<f64>,
    forward_s: Vec<f64>,
    ort_s: Vec<f64>,
}

impl Subject {
    fn new(options: &BenchOptions, network: &NetConfig, threads: usize) -> anyhow::Result<Subject> {
        let shape = options.shape;
        let (varmap, net) = Net::fresh(network, shape, &Device::Cpu)?;
        let opt = AdamW::new(varmap.all_vars(), ParamsAdamW::default())?;
        // ONNX Runtime on the same network, with as many intra-op threads as candle uses.
        let dir = std::env::temp_dir().join(format!("trainer-bridge-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let model_path = dir.join("net.onnx");
        let meta = ModelMeta {
            game: options.game.clone(),
            shape,
            network: network.clone(),
            generation: 0,
        };
        let written = crate::export_onnx(&varmap, &meta, &model_path);
        let model = written.map_err(anyhow::Error::from).and_then(|()| {
            let opts = infer::OrtOptions {
                batch_size: options.batch,
                intra_threads: threads,
                ..infer::OrtOptions::default()
            };
            Ok(infer::OrtModel::load(&model_path, &opts)?)
        });
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Subject {
            net,
            opt,
            model: model.context("ONNX Runtime")?,
            step_s: Vec::new(),
            step_forward_s: Vec::new(),
            backward_s: Vec::new(),
            optimiser_s: Vec::new(),
            forward_s: Vec::new(),
            ort_s: Vec::new(),
        })
    }
}

/// Runs the measurements (see the module docs).
pub fn run(options: &BenchOptions) -> anyhow::Result<BenchReport> {
    let (b, shape) = (options.batch, options.shape);
    anyhow::ensure!(b >= 1, "--batch must be at least 1");
    let mut rng = SmallRng::seed_from_u64(1);
    let shard = crate::window::WindowShard::from(synthetic_shard(&options.game, shape, &mut rng));
    let shards = std::slice::from_ref(&shard);
    let index: Vec<(usize, usize)> = (0..POOL).map(|i| (0, i)).collect();
    let fit = crate::fit::FitConfig::default();
    let weights = fit.loss_weights();
    let mut batch = Batch::new(&shard.meta, b);
    let threads = candle_core::utils::get_num_threads();
    let plain = options.network.plain();
    let mut subjects = vec![Subject::new(options, &options.network, threads)?];
    if options.network.has_new_parts() {
        subjects.push(Subject::new(options, &plain, threads)?);
    }
    let mut policy = vec![0.0; b * shape.policy_size];
    let mut value = vec![0.0; b];

    let time = |f: &mut dyn FnMut() -> anyhow::Result<()>| -> anyhow::Result<f64> {
        let t = Instant::now();
        f()?;
        Ok(t.elapsed().as_secs_f64())
    };
    let started = Instant::now();
    let mut round = 0;
    // Round 0 warms up (allocator, thread pools, ONNX Runtime's first run) and is not kept.
    while round < 2 || started.elapsed() < options.duration {
        let keep = round > 0;
        for x in subjects.iter_mut() {
            for _ in 0..RUN {
                let mut step = None;
                let s = time(&mut || {
                    batch.fill(shards, &index, false, &mut rng);
                    let lr = fit.learning_rate;
                    step = Some(train_step(&x.net, &mut x.opt, &batch, &weights, lr, None)?);
                    Ok(())
                })?;
                let step = step.expect("timed");
                if keep {
                    x.step_s.push(s);
                    x.step_forward_s.push(step.forward_s);
                    x.backward_s.push(step.backward_s);
                    x.optimiser_s.push(step.optimiser_s);
                }
            }
            for _ in 0..RUN {
                let f = time(&mut || {
                    batch.fill(shards, &index, false, &mut rng);
                    let l = losses(&x.net, &batch, &weights)?;
                    l.total.to_scalar::<f32>()?;
                    Ok(())
                })?;
                if keep {
                    x.forward_s.push(f);
                }
            }
            for _ in 0..RUN {
                let o = time(&mut || {
                    x.model
                        .evaluate_encoded(&batch.planes, &mut policy, &mut value)?;
                    Ok(())
                })?;
                if keep {
                    x.ort_s.push(o);
                }
            }
        }
        round += 1;
    }
    let mut subjects = subjects.into_iter();
    let main = subjects.next().expect("the config's network");
    let baseline = subjects.next().map(|x| Baseline {
        network: plain.clone(),
        flops: Flops::of(&plain, shape),
        step_s: median(x.step_s),
        forward_s: median(x.forward_s),
        ort_s: median(x.ort_s),
    });
    Ok(BenchReport {
        options: options.clone(),
        threads,
        flops: Flops::of(&options.network, shape),
        calls: main.step_s.len(),
        step_s: median(main.step_s),
        forward_s: median(main.forward_s),
        step_forward_s: median(main.step_forward_s),
        backward_s: median(main.backward_s),
        optimiser_s: median(main.optimiser_s),
        ort_s: median(main.ort_s),
        baseline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count by hand for Liuzhou's 4 × 48 network: 15 planes, 6 × 6, 216 policy entries.
    #[test]
    fn flops_of_the_liuzhou_network() {
        let shape = TensorShape {
            planes: 15,
            height: 6,
            width: 6,
            policy_size: 216,
        };
        let f = Flops::of(&NetConfig::default(), shape);
        let stem = 2.0 * 36.0 * 15.0 * 48.0 * 9.0;
        let block_convs = 8.0 * 2.0 * 36.0 * 48.0 * 48.0 * 9.0;
        let policy = 2.0 * 36.0 * 48.0 * 2.0 + 2.0 * 72.0 * 216.0;
        let value = 2.0 * 36.0 * 48.0 + 2.0 * 36.0 * 64.0 + 2.0 * 64.0;
        let forward = stem + block_convs + policy + value;
        assert_eq!(f.forward, forward);
        assert_eq!(f.train, 3.0 * forward - stem);
        assert!((f.forward / 1e6 - 12.46).abs() < 0.01, "{}", f.forward);
    }

    /// The count by hand for a Go 9×9 network of 2 blocks × 16 channels with a pooling block
    /// (4 pooled channels), pooling heads and every auxiliary head.
    #[test]
    fn flops_of_a_pooling_network() {
        let shape = TensorShape {
            planes: 17,
            height: 9,
            width: 9,
            policy_size: 82,
        };
        let network = NetConfig {
            blocks: 2,
            channels: 16,
            policy_channels: 4,
            value_channels: 8,
            value_hidden: 32,
            pool_every: 2,
            pool_channels: 4,
            policy_pool: true,
            value_pool: true,
            ownership: true,
            score: true,
            wdl: true,
            reply: true,
            soft_policy: false,
        };
        let f = Flops::of(&network, shape);
        let conv = |cin: f64, cout: f64, k: f64| 2.0 * 81.0 * cin * cout * k * k;
        let stem = conv(17.0, 16.0, 3.0);
        // Block 0 plain; block 1 pools 4 of 16 channels: its second convolution reads 12.
        let tower = 2.0 * conv(16.0, 16.0, 3.0)
            + conv(16.0, 16.0, 3.0)
            + 2.0 * 12.0 * 12.0
            + conv(12.0, 16.0, 3.0);
        // Policy 1×1, its pooled branch and biases; per point (and reply) a 1×1 and pass.
        let policy = conv(16.0, 4.0, 1.0)
            + conv(16.0, 4.0, 1.0)
            + 2.0 * 12.0 * 4.0
            + 2.0 * (conv(4.0, 1.0, 1.0) + 2.0 * 12.0);
        // Value 1×1, pooled into fc1 (24 inputs), fc2, ownership, score, wdl.
        let value = conv(16.0, 8.0, 1.0)
            + 2.0 * 24.0 * 32.0
            + 2.0 * 32.0
            + conv(8.0, 1.0, 1.0)
            + 2.0 * 32.0
            + 2.0 * 32.0 * 3.0;
        assert_eq!(f.forward, stem + tower + policy + value);
        assert_eq!(f.train, 3.0 * f.forward - stem);
    }
}
