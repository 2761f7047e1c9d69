//! `trainer-bridge bench`: the learner's throughput against the arithmetic it does, beside the
//! same network's forward pass through ONNX Runtime in the same run.
//!
//! Training steps run on synthetic samples of the config's network (random binary planes,
//! random sparse policies, random values) through the same batch assembly, loss and AdamW step
//! as `fit`. Each figure is the median of many timed calls, and the three kinds of call (a
//! training step, candle's forward pass in training mode with the loss, ONNX Runtime's forward
//! pass) take turns in short runs, so that a busy machine slows all of them alike.

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
        let conv = |cin: f64, cout: f64, k: f64| 2.0 * cells * cin * cout * k * k;
        let fc = |inputs: f64, outputs: f64| 2.0 * inputs * outputs;
        let stem = conv(shape.planes as f64, c, 3.0);
        let tower = 2.0 * network.blocks as f64 * conv(c, c, 3.0);
        let (pc, vc) = (
            network.policy_channels as f64,
            network.value_channels as f64,
        );
        let hidden = network.value_hidden as f64;
        let heads = conv(c, pc, 1.0)
            + fc(pc * cells, shape.policy_size as f64)
            + conv(c, vc, 1.0)
            + fc(vc * cells, hidden)
            + fc(hidden, 1.0);
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
            Sample {
                planes,
                policy,
                value: rng.gen_range(-1.0..=1.0),
                aux: Default::default(),
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

/// Runs the measurements (see the module docs).
pub fn run(options: &BenchOptions) -> anyhow::Result<BenchReport> {
    let (b, shape) = (options.batch, options.shape);
    anyhow::ensure!(b >= 1, "--batch must be at least 1");
    let mut rng = SmallRng::seed_from_u64(1);
    let shard = crate::window::WindowShard::from(synthetic_shard(&options.game, shape, &mut rng));
    let shards = std::slice::from_ref(&shard);
    let index: Vec<(usize, usize)> = (0..POOL).map(|i| (0, i)).collect();
    let (varmap, net) = Net::fresh(&options.network, shape, &Device::Cpu)?;
    let mut opt = AdamW::new(varmap.all_vars(), ParamsAdamW::default())?;
    let fit = crate::fit::FitConfig::default();
    let mut batch = Batch::new(&shard.meta, b);

    // ONNX Runtime on the same network, with as many intra-op threads as candle uses.
    let threads = candle_core::utils::get_num_threads();
    let dir = std::env::temp_dir().join(format!("trainer-bridge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let model_path = dir.join("net.onnx");
    let meta = ModelMeta {
        game: options.game.clone(),
        shape,
        network: options.network.clone(),
        generation: 0,
    };
    let written = crate::export_onnx(&varmap, &meta, &model_path);
    let model = written.map_err(anyhow::Error::from).and_then(|()| {
        let opts = infer::OrtOptions {
            batch_size: b,
            intra_threads: threads,
            ..infer::OrtOptions::default()
        };
        Ok(infer::OrtModel::load(&model_path, &opts)?)
    });
    let _ = std::fs::remove_dir_all(&dir);
    let model = model.context("ONNX Runtime")?;
    let mut policy = vec![0.0; b * shape.policy_size];
    let mut value = vec![0.0; b];

    let (mut step_s, mut forward_s, mut ort_s) = (Vec::new(), Vec::new(), Vec::new());
    let (mut step_forward_s, mut backward_s, mut optimiser_s) = (vec![], vec![], vec![]);
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
        for _ in 0..RUN {
            let mut step = None;
            let s = time(&mut || {
                batch.fill(shards, &index, false, &mut rng);
                let lr = fit.learning_rate;
                step = Some(train_step(
                    &net,
                    &mut opt,
                    &batch,
                    &fit.loss_weights(),
                    lr,
                    None,
                )?);
                Ok(())
            })?;
            let step = step.expect("timed");
            if keep {
                step_s.push(s);
                step_forward_s.push(step.forward_s);
                backward_s.push(step.backward_s);
                optimiser_s.push(step.optimiser_s);
            }
        }
        for _ in 0..RUN {
            let f = time(&mut || {
                batch.fill(shards, &index, false, &mut rng);
                let l = losses(&net, &batch, &fit.loss_weights())?;
                l.total.to_scalar::<f32>()?;
                Ok(())
            })?;
            if keep {
                forward_s.push(f);
            }
        }
        for _ in 0..RUN {
            let o = time(&mut || {
                model.evaluate_encoded(&batch.planes, &mut policy, &mut value)?;
                Ok(())
            })?;
            if keep {
                ort_s.push(o);
            }
        }
        round += 1;
    }
    Ok(BenchReport {
        options: options.clone(),
        threads,
        flops: Flops::of(&options.network, shape),
        calls: step_s.len(),
        step_s: median(step_s),
        forward_s: median(forward_s),
        step_forward_s: median(step_forward_s),
        backward_s: median(backward_s),
        optimiser_s: median(optimiser_s),
        ort_s: median(ort_s),
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
}
