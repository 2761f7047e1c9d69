//! `trainer-bridge fit`: trains the network on the newest self-play shards and writes the next
//! checkpoint and its ONNX model.
//!
//! Samples are drawn from a window of the newest positions (uniformly, or weighted by their policy
//! surprise: `surprise_weight`, [`crate::window::Sampler`]), each seen through a random
//! board symmetry (shards carry the symmetry maps, so no game rules are needed): the planes and
//! the ownership target move with the board, the policy and the reply target through the
//! symmetry's policy map. The loss is the policy cross-entropy against the visit distribution
//! plus the value's squared error, and, for each auxiliary head the network has, its term
//! weighted by its `fit` key ([`LossWeights`]); AdamW's decoupled weight decay regularises. Losses are appended per step to a JSONL log that the
//! engine plots. Fitting resumes from any checkpoint: `--model` is where it starts.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::{Device, Tensor, D};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use shards::{Shard, ShardMeta};

use crate::net::describe;
use crate::window::WindowShard;
use crate::{write_model, Checkpoint, ModelMeta, Net, NetConfig};

/// The `fit` section of a game's config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FitConfig {
    /// Optimiser steps per `fit` call.
    pub steps: usize,
    pub batch_size: usize,
    /// AdamW learning rate at the first step.
    pub learning_rate: f64,
    /// Learning rate at the last step (cosine decay from `learning_rate`; equal = constant).
    pub final_learning_rate: f64,
    /// AdamW decoupled weight decay.
    pub weight_decay: f64,
    /// Weight of the value loss against the policy loss.
    pub value_weight: f64,
    /// Weight of the ownership loss, where the network has an ownership head: the squared error
    /// of each point's owner (−1..1), its mean over the points, over the samples whose shard
    /// has an ownership target (the others weigh 0).
    pub ownership_weight: f64,
    /// Weight of the score loss, where the network has a score head: the Huber loss (quadratic
    /// within 1, linear beyond) of (predicted − final margin) / `score_scale`, over the samples
    /// with a score target.
    pub score_weight: f64,
    /// The score margin that counts as 1 in the score loss (points for Go, stones for Liuzhou).
    pub score_scale: f64,
    /// Weight of the win/draw/loss loss, where the network has a wdl head: the cross-entropy of
    /// its three logits against the value target read as (win, draw, loss) = (max(v, 0),
    /// 1 − |v|, max(−v, 0)), which is one-hot for the results −1, 0 and 1.
    pub wdl_weight: f64,
    /// Weight of the reply-policy loss, where the network has a reply head: the cross-entropy
    /// against the opponent's reply (the next position's policy target), over the samples with
    /// one.
    pub reply_weight: f64,
    /// Weight of the soft policy loss, where the network has a soft policy head
    /// (`network.soft_policy`): the cross-entropy against the policy target softened by
    /// `soft_policy_temperature` ([`soft_policy_target`]), over every sample. 8 as in KataGo,
    /// whose training weighs this term 8 times (`-soft-policy-weight-scale`, default 8.0, in
    /// lightvector/KataGo `python/train.py`) against the main policy's 1 (0.93 in its newer
    /// models, `metrics_pytorch.py`): the softened target's cross-entropy moves little, so it
    /// needs the larger weight to shape the shared layers.
    pub soft_policy_weight: f64,
    /// T of the soft policy target: each entry of the policy target raised to the power 1/T,
    /// then renormalised (KataGo: T = 4, the power 0.25). Above 0; 1 is the policy target
    /// itself, larger flattens it towards uniform over the moves the search visited.
    pub soft_policy_temperature: f64,
    /// Positions sampled from: the newest this many across the newest shards.
    pub window_samples: usize,
    /// Share a of the sampling weight spread by policy surprise (KataGo's weighting, which
    /// uses 0.5): a position is drawn with weight (1 − a) + a · surprise / the window's mean
    /// surprise, one without a surprise (older shards, teacher data) with weight 1
    /// ([`crate::window::Sampler`]). 0 to 1; 0 draws uniformly.
    pub surprise_weight: f64,
    /// Apply a random board symmetry to each sample.
    pub augment: bool,
    pub seed: u64,
    /// Also write the int8 model beside the new one (`<out>.int8.onnx`, see
    /// [`crate::quantize`]), calibrated on positions spread over the window.
    pub int8: bool,
    /// Shards of the window kept out of training, spread evenly over it, whose losses (before
    /// and after the fit, batch norm in inference mode) say how the network does on games it
    /// did not learn from. 0: none. Ignored when the window has no more shards than this.
    pub holdout_shards: usize,
    /// Share of each target taken from the starting checkpoint's own outputs (a frozen copy,
    /// batch norm in inference mode, on the same augmented positions), or from a teacher's
    /// when one is given: the policy target becomes (1 − a)·target + a·softmax(anchor
    /// logits), the value target likewise. 0: the shards' targets alone. Keeps a fine-tune on
    /// new data from forgetting what the window it was trained on, no longer at hand, taught
    /// ("learning without forgetting"); with a teacher, a smaller network learns its play.
    pub anchor_weight: f64,
}

impl Default for FitConfig {
    fn default() -> Self {
        FitConfig {
            steps: 200,
            batch_size: 256,
            learning_rate: 2e-3,
            final_learning_rate: 5e-4,
            weight_decay: 1e-4,
            value_weight: 1.0,
            ownership_weight: 1.0,
            score_weight: 0.5,
            score_scale: 10.0,
            wdl_weight: 1.0,
            reply_weight: 0.15,
            soft_policy_weight: 8.0,
            soft_policy_temperature: 4.0,
            window_samples: 100_000,
            surprise_weight: 0.0,
            augment: true,
            seed: 1,
            int8: false,
            holdout_shards: 0,
            anchor_weight: 0.0,
        }
    }
}

impl FitConfig {
    pub fn validate(&self) -> Result<(), String> {
        let weights = [
            ("weight_decay", self.weight_decay),
            ("value_weight", self.value_weight),
            ("ownership_weight", self.ownership_weight),
            ("score_weight", self.score_weight),
            ("wdl_weight", self.wdl_weight),
            ("reply_weight", self.reply_weight),
            ("soft_policy_weight", self.soft_policy_weight),
        ];
        if let Some((key, w)) = weights.iter().find(|(_, w)| !(*w >= 0.0 && w.is_finite())) {
            return Err(format!("{key} is {w}: weights must be ≥ 0"));
        }
        let checks = [
            (self.steps >= 1, "steps must be at least 1"),
            (self.batch_size >= 1, "batch_size must be at least 1"),
            (
                self.learning_rate > 0.0 && self.final_learning_rate > 0.0,
                "learning rates must be positive",
            ),
            (self.score_scale > 0.0, "score_scale must be positive"),
            (
                self.soft_policy_temperature > 0.0 && self.soft_policy_temperature.is_finite(),
                "soft_policy_temperature must be positive and finite",
            ),
            (
                self.window_samples >= 1,
                "window_samples must be at least 1",
            ),
            (
                (0.0..=1.0).contains(&self.surprise_weight),
                "surprise_weight must be between 0 and 1",
            ),
            (
                (0.0..=1.0).contains(&self.anchor_weight),
                "anchor_weight must be between 0 and 1",
            ),
        ];
        match checks.iter().find(|(ok, _)| !ok) {
            Some((_, msg)) => Err(msg.to_string()),
            None => Ok(()),
        }
    }

    /// The weights of the loss's terms.
    pub fn loss_weights(&self) -> LossWeights {
        LossWeights {
            value: self.value_weight,
            ownership: self.ownership_weight,
            score: self.score_weight,
            score_scale: self.score_scale,
            wdl: self.wdl_weight,
            reply: self.reply_weight,
            soft_policy: self.soft_policy_weight,
            soft_policy_temperature: self.soft_policy_temperature,
        }
    }

    /// The learning rate at `step` of `steps` (cosine from the first to the final rate).
    pub fn learning_rate_at(&self, step: usize) -> f64 {
        let t = step as f64 / (self.steps.max(2) - 1) as f64;
        let c = 0.5 * (1.0 + (std::f64::consts::PI * t).cos());
        self.final_learning_rate + (self.learning_rate - self.final_learning_rate) * c
    }
}

/// What a `fit` call is asked to do.
pub struct FitJob<'a> {
    pub shards_dir: &'a Path,
    /// The checkpoint training starts from; only shards of its game and shape are used.
    pub checkpoint: &'a Checkpoint,
    /// Whose outputs take `anchor_weight` of the targets, when not the starting checkpoint's:
    /// a network of the same game and shape, of any size (it records its own).
    pub teacher: Option<&'a Checkpoint>,
    pub network: &'a NetConfig,
    pub config: &'a FitConfig,
    /// Output stem: `<out>.safetensors` and `<out>.onnx` are written.
    pub out: &'a Path,
    /// Generation number recorded in the ONNX metadata.
    pub generation: u64,
    /// Loss log (JSONL, appended), if any.
    pub log: Option<&'a Path>,
    /// Called after every step with (step, steps).
    pub on_step: &'a mut dyn FnMut(usize, usize),
}

/// What a `fit` call did.
#[derive(Clone, Debug)]
pub struct FitReport {
    pub game: String,
    pub window: usize,
    pub shards: usize,
    pub steps: usize,
    pub first_loss: (f64, f64),
    pub last_loss: (f64, f64),
    pub samples_per_second: f64,
    pub checkpoint: PathBuf,
    pub onnx: PathBuf,
    /// The int8 model, when `fit.int8` asked for one.
    pub int8: Option<PathBuf>,
    /// Losses on the held-out shards, when `fit.holdout_shards` kept some out.
    pub holdout: Option<Holdout>,
}

/// Losses on shards kept out of training.
#[derive(Clone, Debug)]
pub struct Holdout {
    pub shards: usize,
    pub samples: usize,
    /// (policy, value) loss of the starting checkpoint and of the new model.
    pub before: (f64, f64),
    pub after: (f64, f64),
}

/// The shards to hold out of `n`: `k` of them spread evenly, none when `n <= k`.
fn holdout_indices(n: usize, k: usize) -> Vec<usize> {
    if k == 0 || n <= k {
        return Vec::new();
    }
    (1..=k).map(|j| j * n / (k + 1)).collect()
}

/// A fingerprint of a shard's contents (its header and every target, not the planes): equal
/// for copies of one file, whatever their names.
fn content_key(shard: &WindowShard) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let m = &shard.meta;
    (&m.game, &m.model, &m.config, m.created_unix, m.games).hash(&mut h);
    shard.samples.len().hash(&mut h);
    for sample in &shard.samples {
        sample.value.to_bits().hash(&mut h);
        for &(i, p) in sample.policy.iter() {
            (i, p.to_bits()).hash(&mut h);
        }
    }
    h.finish()
}

/// Mean (policy, value) loss of `net` in inference mode over every sample of `held`.
fn holdout_losses(
    net: &Net,
    shards: &[WindowShard],
    held: &[usize],
    batch_size: usize,
) -> candle_core::Result<(f64, f64)> {
    let (mut policy, mut value, mut total) = (0.0, 0.0, 0);
    // Shard by shard: a batch holds one board size.
    for &k in held {
        let pairs: Vec<(usize, usize)> = (0..shards[k].samples.len()).map(|i| (k, i)).collect();
        for chunk in pairs.chunks(batch_size.max(1)) {
            let mut batch = Batch::new(&shards[k].meta, chunk.len());
            batch.fill_with(shards, chunk);
            let l = losses_t(net, &batch, &LossWeights::default(), false, None)?;
            let n = chunk.len() as f64;
            policy += f64::from(l.policy.to_scalar::<f32>()?) * n;
            value += f64::from(l.value.to_scalar::<f32>()?) * n;
        }
        total += pairs.len();
    }
    let n = total.max(1) as f64;
    Ok((policy / n, value / n))
}

/// The newest shards of `dir` that `usable` accepts, up to `window` samples, newest first,
/// their planes packed as each is read (`crate::window`). Unreadable shards (damaged ones: a
/// tensor that fails its checksum) and those `usable` refuses are skipped with a warning naming
/// the file; none left is an error. Shards without checksums are used, with one warning for the
/// directory.
fn window(
    dir: &Path,
    window: usize,
    mut usable: impl FnMut(&ShardMeta) -> Result<(), String>,
) -> anyhow::Result<Vec<WindowShard>> {
    let mut out: Vec<WindowShard> = Vec::new();
    let (mut total, mut skipped, mut unchecked) = (0, 0, 0);
    for path in shards::newest_first(dir)? {
        if total >= window {
            break;
        }
        match Shard::read_checked(&path)
            .map_err(|e| e.to_string())
            .and_then(|(s, integrity)| {
                usable(&s.meta).map_err(|reason| format!("{}: {reason}", path.display()))?;
                Ok((s, integrity))
            }) {
            Ok((s, integrity)) => {
                total += s.samples.len();
                unchecked += usize::from(integrity == shards::Integrity::NoChecksum);
                out.push(WindowShard::from(s));
            }
            Err(e) => {
                skipped += 1;
                tracing::warn!("skipping shard: {e}");
            }
        }
    }
    shards::warn_unchecked(dir, unchecked, out.len());
    anyhow::ensure!(
        total > 0,
        "no readable shard with samples in {}{}",
        dir.display(),
        match skipped {
            0 => String::new(),
            n => format!(" ({n} skipped: see the warnings above)"),
        }
    );
    Ok(out)
}

/// The shard's shape, checked against the game it names: a shard whose game this build does
/// not know, or whose shape is not its game's, cannot be trained on.
fn shard_shape(meta: &ShardMeta) -> Result<games::TensorShape, String> {
    let shape = games::TensorShape {
        planes: meta.planes,
        height: meta.height,
        width: meta.width,
        policy_size: meta.policy_size,
    };
    // Go's shape depends on the board size, which is the shard's height.
    match games::shape_of(&meta.game, Some(meta.height)) {
        None => Err(format!("unknown game {:?}", meta.game)),
        Some(s) if s != shape => Err(format!(
            "a {} shard of {}, but {} has {}",
            meta.game,
            describe(shape),
            meta.game,
            describe(s)
        )),
        Some(_) => Ok(shape),
    }
}

/// Trains from `job.checkpoint` on the shards and writes the result. See the module docs.
pub fn fit(job: FitJob<'_>) -> anyhow::Result<FitReport> {
    let cfg = job.config;
    cfg.validate()
        .map_err(|e| anyhow::anyhow!("fit config: {e}"))?;
    // Fail before training, not after: the output's directory must be one (or not exist yet).
    if let Some(dir) = job.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        anyhow::ensure!(
            !dir.exists() || dir.is_dir(),
            "{}: not a directory (the new model is written into it)",
            dir.display()
        );
    }
    let ck = job.checkpoint;
    // A checkpoint that records its game takes only that game's shards; an older one takes the
    // newest shard's game, and shards of its input and policy sizes. A network of any size
    // (`net::any_size`) takes its game's shards of every board.
    let mut game = ck.meta.as_ref().map(|m| (m.game.clone(), m.shape));
    let shards = window(job.shards_dir, cfg.window_samples, |meta| {
        let shape = shard_shape(meta)?;
        match &game {
            Some((g, s))
                if g == &meta.game
                    && crate::net::any_size(job.network, *s)
                    && shape.planes == s.planes
                    && shape.policy_size == shape.height * shape.width + 1 =>
            {
                Ok(())
            }
            Some((g, s)) if (g, s) != (&meta.game, &shape) => Err(format!(
                "a {} shard of {}; the checkpoint is for {g}, {}",
                meta.game,
                describe(shape),
                describe(*s)
            )),
            Some(_) => Ok(()),
            None => {
                if let Some(reason) = ck.shape_mismatch(shape) {
                    return Err(format!("a {} shard: {reason}", meta.game));
                }
                game = Some((meta.game.clone(), shape));
                Ok(())
            }
        }
    })?;
    tracing::info!(
        "window: {} shards, {} positions, {:.0} MB in memory",
        shards.len(),
        shards.iter().map(|s| s.samples.len()).sum::<usize>(),
        shards.iter().map(WindowShard::bytes).sum::<usize>() as f64 / 1e6
    );
    let meta = shards[0].meta.clone();
    // The checkpoint's board (or the newest shard's, for a checkpoint that records none): the
    // board the model is written for.
    let shape = game.map_or_else(
        || shard_shape(&meta).expect("checked by window"),
        |(_, s)| s,
    );
    let device = Device::Cpu;
    let (varmap, net) = Net::from_checkpoint(ck, job.network, shape, &device)?;
    // A second, frozen network: its variables are not in `varmap`, so the optimiser never
    // sees them.
    let anchor = match (cfg.anchor_weight > 0.0, job.teacher) {
        (false, None) => None,
        (false, Some(t)) => anyhow::bail!(
            "{}: a teacher needs fit.anchor_weight above 0",
            t.path.display()
        ),
        (true, None) => Some(Net::from_checkpoint(ck, job.network, shape, &device)?.1),
        (true, Some(t)) => {
            let Some(m) = &t.meta else {
                anyhow::bail!(
                    "{}: the teacher records no network, so its size is not known",
                    t.path.display()
                );
            };
            anyhow::ensure!(
                m.game == meta.game,
                "{}: the teacher is a {} network, the shards are {}",
                t.path.display(),
                m.game,
                meta.game
            );
            Some(Net::from_checkpoint(t, &m.network, shape, &device)?.1)
        }
    }
    .map(|net| Anchor {
        net,
        weight: cfg.anchor_weight,
    });

    // The window: (shard, sample) pairs, newest samples first, cut at window_samples, less
    // the held-out shards and every copy of one (a shard linked several times to weigh it).
    let held = holdout_indices(shards.len(), cfg.holdout_shards);
    let held_content: Vec<u64> = held.iter().map(|&k| content_key(&shards[k])).collect();
    let kept: Vec<bool> = shards
        .iter()
        .enumerate()
        .map(|(k, s)| {
            !held.contains(&k) && (held.is_empty() || !held_content.contains(&content_key(s)))
        })
        .collect();
    let index: Vec<(usize, usize)> = shards
        .iter()
        .enumerate()
        .flat_map(|(k, s)| (0..s.samples.len()).rev().map(move |i| (k, i)))
        .take(cfg.window_samples)
        .filter(|&(k, _)| kept[k])
        .collect();
    // A batch holds one board size: the window's positions by board, each step drawing a
    // board in proportion to its positions.
    let mut boards: Vec<(ShardMeta, Vec<(usize, usize)>)> = Vec::new();
    for &(k, i) in &index {
        let m = &shards[k].meta;
        let key = (m.planes, m.height, m.width, m.policy_size);
        match boards
            .iter_mut()
            .find(|(b, _)| (b.planes, b.height, b.width, b.policy_size) == key)
        {
            Some((_, pairs)) => pairs.push((k, i)),
            None => boards.push((m.clone(), vec![(k, i)])),
        }
    }
    if boards.len() > 1 {
        let sizes: Vec<String> = boards
            .iter()
            .map(|(m, pairs)| format!("{}x{} {}", m.height, m.width, pairs.len()))
            .collect();
        tracing::info!("window by board: {}", sizes.join(", "));
    }
    let samplers: Vec<crate::window::Sampler<'_>> = boards
        .iter()
        .map(|(_, pairs)| crate::window::Sampler::new(&shards, pairs, cfg.surprise_weight))
        .collect();
    let mut batches: Vec<Batch> = boards
        .iter()
        .map(|(m, _)| Batch::new(m, cfg.batch_size))
        .collect();
    let holdout_before = if held.is_empty() {
        None
    } else {
        Some(holdout_losses(&net, &shards, &held, cfg.batch_size)?)
    };

    let mut opt = AdamW::new(
        varmap.all_vars(),
        ParamsAdamW {
            lr: cfg.learning_rate,
            weight_decay: cfg.weight_decay,
            ..ParamsAdamW::default()
        },
    )?;
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ job.generation.wrapping_mul(0x9E37_79B9));
    let b = cfg.batch_size;
    let mut log = match job.log {
        Some(p) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
        ),
        None => None,
    };
    let first_step = job.log.map_or(0, last_logged_step);
    let started = Instant::now();
    let (mut first_loss, mut last_loss) = ((0.0, 0.0), (0.0, 0.0));
    for step in 0..cfg.steps {
        // One board only: no draw, so a fit of one board draws what it always drew.
        let board = if boards.len() == 1 {
            0
        } else {
            let mut u = rng.gen_range(0..index.len());
            boards
                .iter()
                .position(|(_, pairs)| {
                    let here = u < pairs.len();
                    u = u.saturating_sub(pairs.len());
                    here
                })
                .unwrap_or(0)
        };
        let batch = &mut batches[board];
        batch.fill_from(&shards, &samplers[board], cfg.augment, &mut rng);
        let done = train_step(
            &net,
            &mut opt,
            batch,
            &cfg.loss_weights(),
            cfg.learning_rate_at(step),
            anchor.as_ref(),
        )?;
        let (pl, vl) = (done.policy_loss, done.value_loss);
        anyhow::ensure!(
            pl.is_finite() && vl.is_finite(),
            "loss diverged at step {step}"
        );
        if step == 0 {
            first_loss = (pl, vl);
        }
        last_loss = (pl, vl);
        if step == 0 || step + 1 == cfg.steps {
            for (name, loss) in &done.aux {
                tracing::info!("step {}: {name} loss {loss:.4}", step + 1);
            }
        }
        if let Some(f) = log.as_mut() {
            let mut line = serde_json::json!({
                "step": first_step + step as u64 + 1,
                "generation": job.generation,
                "policy_loss": pl,
                "value_loss": vl,
                "learning_rate": cfg.learning_rate_at(step),
                "window": index.len(),
            });
            // Each auxiliary term the network has, over the samples with its target (none in
            // the batch: left out).
            for (name, loss) in &done.aux {
                line[format!("{name}_loss")] = serde_json::json!(loss);
            }
            writeln!(f, "{line}")?;
        }
        (job.on_step)(step + 1, cfg.steps);
    }
    let samples_per_second = (cfg.steps * b) as f64 / started.elapsed().as_secs_f64();
    let holdout = match holdout_before {
        Some(before) => Some(Holdout {
            shards: held.len(),
            samples: held.iter().map(|&k| shards[k].samples.len()).sum(),
            before,
            after: holdout_losses(&net, &shards, &held, cfg.batch_size)?,
        }),
        None => None,
    };
    if let (Some(f), Some(h)) = (log.as_mut(), &holdout) {
        let line = serde_json::json!({
            "step": first_step + cfg.steps as u64,
            "generation": job.generation,
            "holdout_samples": h.samples,
            "holdout_policy_loss": h.after.0,
            "holdout_value_loss": h.after.1,
        });
        writeln!(f, "{line}")?;
    }

    let (checkpoint, onnx) = write_model(
        &varmap,
        &ModelMeta {
            game: meta.game.clone(),
            shape,
            network: job.network.clone(),
            generation: job.generation,
        },
        job.out,
    )?;
    let int8 = if cfg.int8 {
        Some(write_int8(&onnx, &shards)?)
    } else {
        None
    };
    Ok(FitReport {
        game: meta.game,
        window: index.len(),
        shards: shards.len(),
        steps: cfg.steps,
        first_loss,
        last_loss,
        samples_per_second,
        checkpoint,
        onnx,
        int8,
        holdout,
    })
}

/// Quantises the model just written at `onnx`, calibrated on positions spread over `shards`;
/// returns the int8 model's path.
fn write_int8(onnx: &Path, shards: &[WindowShard]) -> anyhow::Result<PathBuf> {
    use crate::quantize;
    let bytes = std::fs::read(onnx).map_err(|e| anyhow::anyhow!("{}: {e}", onnx.display()))?;
    let crc = infer::precision::source_crc32(&bytes);
    let model = quantize::Fp32Model::from_onnx(bytes, crc)?;
    let inputs = crate::window::spread(shards, quantize::DEFAULT_SAMPLES);
    let made = quantize::quantize(&model, &inputs)?;
    let path = quantize::int8_path(onnx);
    shards::write_atomically(&path, &made.bytes)?;
    Ok(path)
}

/// The buffers of one batch: dense planes, policy targets and values of `size` samples, and
/// the auxiliary targets with a mask of the samples that have each (1) and those that do not
/// (0, their targets' buffers left as they were).
pub struct Batch {
    pub size: usize,
    dims: (usize, usize, usize, usize),
    policy_size: usize,
    pub planes: Vec<f32>,
    pub policy: Vec<f32>,
    pub value: Vec<f32>,
    /// Final ownership (size × height × width), row-major, the mover's view.
    pub ownership: Vec<f32>,
    pub ownership_mask: Vec<f32>,
    /// Final score margin, the mover's view.
    pub score: Vec<f32>,
    pub score_mask: Vec<f32>,
    /// The opponent's reply (size × policy_size).
    pub reply: Vec<f32>,
    pub reply_mask: Vec<f32>,
    /// One sample's planes as unpacked, before its symmetry is applied.
    unpacked: Vec<f32>,
    /// One sample's ownership as unpacked.
    board: Vec<f32>,
}

impl Batch {
    /// Empty buffers for `size` samples of the shape `meta` describes.
    pub fn new(meta: &ShardMeta, size: usize) -> Batch {
        let cells = meta.height * meta.width;
        Batch {
            size,
            dims: (size, meta.planes, meta.height, meta.width),
            policy_size: meta.policy_size,
            planes: vec![0.0; size * meta.input_len()],
            policy: vec![0.0; size * meta.policy_size],
            value: vec![0.0; size],
            ownership: vec![0.0; size * cells],
            ownership_mask: vec![0.0; size],
            score: vec![0.0; size],
            score_mask: vec![0.0; size],
            reply: vec![0.0; size * meta.policy_size],
            reply_mask: vec![0.0; size],
            unpacked: vec![0.0; meta.input_len()],
            board: vec![0.0; cells],
        }
    }

    /// Fills the batch with samples drawn uniformly from `index` ((shard, sample) pairs), each
    /// through a random symmetry of its shard when `augment` is set.
    pub fn fill(
        &mut self,
        shards: &[WindowShard],
        index: &[(usize, usize)],
        augment: bool,
        rng: &mut SmallRng,
    ) {
        let sampler = crate::window::Sampler::uniform(index);
        self.fill_from(shards, &sampler, augment, rng);
    }

    /// [`Batch::fill`] with the samples drawn by `sampler` (uniformly or by weight).
    pub fn fill_from(
        &mut self,
        shards: &[WindowShard],
        sampler: &crate::window::Sampler<'_>,
        augment: bool,
        rng: &mut SmallRng,
    ) {
        for j in 0..self.size {
            let (k, i) = sampler.draw(rng);
            let sym = if augment {
                rng.gen_range(0..shards[k].symmetries.len())
            } else {
                0
            };
            self.put(j, &shards[k], i, sym);
        }
    }

    /// Fills the batch with the samples `pairs` names ((shard, sample), as many as the batch
    /// holds), as stored: no symmetry.
    pub fn fill_with(&mut self, shards: &[WindowShard], pairs: &[(usize, usize)]) {
        for (j, &(k, i)) in pairs.iter().enumerate().take(self.size) {
            self.put(j, &shards[k], i, 0);
        }
    }

    /// Writes sample `i` of `shard`, seen through its symmetry `sym`, into row `j`: the planes
    /// and the ownership board moved as the board is, the policy and the reply through the
    /// symmetry's policy map.
    pub fn put(&mut self, j: usize, shard: &WindowShard, i: usize, sym: usize) {
        let (input, ps) = (self.planes.len() / self.size, self.policy_size);
        let cells = self.board.len();
        let sample = &shard.samples[i];
        let (s, map) = &shard.symmetries[sym];
        sample.planes.unpack(&mut self.unpacked);
        shards::transform(
            &shard.meta,
            &self.unpacked,
            &sample.policy,
            *s,
            map,
            &mut self.planes[j * input..(j + 1) * input],
            &mut self.policy[j * ps..(j + 1) * ps],
        );
        self.value[j] = sample.value;
        let aux = &sample.aux;
        self.ownership_mask[j] = 0.0;
        if let Some(board) = aux.ownership.as_ref().filter(|b| b.len() == cells) {
            board.unpack(&mut self.board);
            shards::transform_ownership(
                &shard.meta,
                &self.board,
                *s,
                &mut self.ownership[j * cells..(j + 1) * cells],
            );
            self.ownership_mask[j] = 1.0;
        }
        self.score[j] = aux.score.unwrap_or(0.0);
        self.score_mask[j] = f32::from(u8::from(aux.score.is_some()));
        self.reply_mask[j] = 0.0;
        if let Some(reply) = &aux.reply {
            let out = &mut self.reply[j * ps..(j + 1) * ps];
            shards::transform_policy(&shard.meta, reply, map, out);
            self.reply_mask[j] = 1.0;
        }
    }

    /// The batch as tensors: input planes (N, planes, height, width), policy targets (N,
    /// policy_size) and values (N).
    pub fn tensors(&self) -> candle_core::Result<(Tensor, Tensor, Tensor)> {
        let device = Device::Cpu;
        Ok((
            Tensor::from_slice(&self.planes, self.dims, &device)?,
            Tensor::from_slice(&self.policy, (self.size, self.policy_size), &device)?,
            Tensor::from_slice(&self.value, self.size, &device)?,
        ))
    }
}

/// The weights of the loss's terms (the `fit` keys of the same names, see [`FitConfig`]). The
/// default weighs the policy and the value 1 and leaves every auxiliary term out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossWeights {
    pub value: f64,
    pub ownership: f64,
    pub score: f64,
    pub score_scale: f64,
    pub wdl: f64,
    pub reply: f64,
    pub soft_policy: f64,
    pub soft_policy_temperature: f64,
}

impl Default for LossWeights {
    fn default() -> Self {
        LossWeights {
            value: 1.0,
            ownership: 0.0,
            score: 0.0,
            score_scale: 1.0,
            wdl: 0.0,
            reply: 0.0,
            soft_policy: 0.0,
            soft_policy_temperature: 4.0,
        }
    }
}

/// The loss of a batch and its terms.
pub struct Losses {
    /// What the optimiser minimises: the policy loss plus each other term times its weight.
    pub total: Tensor,
    /// The policy's cross-entropy, mean over the batch.
    pub policy: Tensor,
    /// The value's squared error, mean over the batch.
    pub value: Tensor,
    /// Each auxiliary head's loss (`ownership`, `score`, `wdl`, `reply`, `soft_policy`) over the
    /// samples that
    /// have its target, for heads the network has and batches with such samples. (In the total,
    /// each term is summed over those samples and divided by the batch size, so a sample weighs
    /// the same in every batch.)
    pub aux: Vec<(&'static str, f64)>,
}

/// The losses of `net` on `batch` in training mode (batch statistics, running ones updated).
pub fn losses(net: &Net, batch: &Batch, weights: &LossWeights) -> candle_core::Result<Losses> {
    losses_t(net, batch, weights, true, None)
}

/// A frozen network whose outputs take `weight` of every target (`fit.anchor_weight`).
pub struct Anchor {
    pub net: Net,
    pub weight: f64,
}

impl Anchor {
    /// The targets mixed with the anchor's outputs on `x`: (1 − w)·target + w·anchor, the
    /// anchor's policy a softmax of its logits.
    pub fn mix(
        &self,
        x: &Tensor,
        target_p: Tensor,
        target_v: Tensor,
    ) -> candle_core::Result<(Tensor, Tensor)> {
        let out = self.net.forward_t(x, false)?;
        let (logits, v) = (out.policy, out.value);
        let p = candle_nn::ops::softmax(&logits.detach(), D::Minus1)?;
        let w = self.weight;
        Ok((
            ((target_p * (1.0 - w))? + (p * w)?)?,
            ((target_v * (1.0 - w))? + (v.detach() * w)?)?,
        ))
    }
}

/// As [`losses`], with batch norm in training mode (`train`) or inference mode, the targets
/// mixed with `anchor`'s outputs when one is given (the policy and the value; the auxiliary
/// targets stay the shards').
fn losses_t(
    net: &Net,
    batch: &Batch,
    weights: &LossWeights,
    train: bool,
    anchor: Option<&Anchor>,
) -> candle_core::Result<Losses> {
    let (x, target_p, target_v) = batch.tensors()?;
    let (target_p, target_v) = match anchor {
        Some(a) => a.mix(&x, target_p, target_v)?,
        None => (target_p, target_v),
    };
    let out = net.forward_t(&x, train)?;
    let log_p = candle_nn::ops::log_softmax(&out.policy, D::Minus1)?;
    let policy_loss = (target_p * log_p)?.sum(1)?.neg()?.mean_all()?;
    let value_loss = (&out.value - &target_v)?.sqr()?.mean_all()?;
    let mut total = (&policy_loss + (&value_loss * weights.value)?)?;
    let mut aux = Vec::new();
    let device = Device::Cpu;
    let n = batch.size;
    // Adds Σ mask · per_sample / N with `weight`, and logs the mean over the masked samples.
    let mut term = |name: &'static str,
                    per_sample: Tensor,
                    mask: &[f32],
                    weight: f64|
     -> candle_core::Result<()> {
        let count: f32 = mask.iter().sum();
        if count == 0.0 {
            return Ok(());
        }
        let mask = Tensor::from_slice(mask, n, &device)?;
        let sum = (per_sample * mask)?.sum_all()?;
        aux.push((name, f64::from(sum.to_scalar::<f32>()? / count)));
        total = (&total + (sum * (weight / n as f64))?)?;
        Ok(())
    };
    if let Some(o) = &out.ownership {
        let cells = batch.ownership.len() / n;
        let target = Tensor::from_slice(&batch.ownership, (n, cells), &device)?;
        let per_sample = (o - target)?.sqr()?.mean(1)?;
        term(
            "ownership",
            per_sample,
            &batch.ownership_mask,
            weights.ownership,
        )?;
    }
    if let Some(s) = &out.score {
        let target = Tensor::from_slice(&batch.score, n, &device)?;
        let a = ((s - target)? / weights.score_scale)?.abs()?;
        // Huber with δ = 1: ½·min(a, 1)² + (a − min(a, 1)).
        let q = a.clamp(0f32, 1f32)?;
        let per_sample = ((q.sqr()? * 0.5)? + (a - q)?)?;
        term("score", per_sample, &batch.score_mask, weights.score)?;
    }
    if let Some(wdl) = &out.wdl {
        let v = target_v.detach();
        let target = Tensor::stack(&[v.relu()?, (v.abs()?.neg()? + 1.0)?, v.neg()?.relu()?], 1)?;
        let log_p = candle_nn::ops::log_softmax(wdl, D::Minus1)?;
        let per_sample = (target * log_p)?.sum(1)?.neg()?;
        term("wdl", per_sample, &vec![1.0; n], weights.wdl)?;
    }
    if let Some(r) = &out.reply {
        let target = Tensor::from_slice(&batch.reply, (n, batch.policy_size), &device)?;
        let log_p = candle_nn::ops::log_softmax(r, D::Minus1)?;
        let per_sample = (target * log_p)?.sum(1)?.neg()?;
        term("reply", per_sample, &batch.reply_mask, weights.reply)?;
    }
    if let Some(soft) = &out.soft_policy {
        // The shards' policy target, softened (an anchor's mix is for the main policy alone).
        let ps = batch.policy_size;
        let mut target = vec![0f32; n * ps];
        let mut mask = vec![0f32; n];
        for ((row, out), m) in batch
            .policy
            .chunks_exact(ps)
            .zip(target.chunks_exact_mut(ps))
            .zip(&mut mask)
        {
            *m = f32::from(u8::from(soft_policy_target(
                row,
                weights.soft_policy_temperature,
                out,
            )));
        }
        let target = Tensor::from_vec(target, (n, ps), &device)?;
        let log_p = candle_nn::ops::log_softmax(soft, D::Minus1)?;
        let per_sample = (target * log_p)?.sum(1)?.neg()?;
        term("soft_policy", per_sample, &mask, weights.soft_policy)?;
    }
    Ok(Losses {
        total,
        policy: policy_loss,
        value: value_loss,
        aux,
    })
}

/// KataGo's soft policy target: `policy` (one sample's target) with each entry raised to the
/// power 1/`temperature` and renormalised, written to `out`. Moves the target gives nothing
/// stay at 0 (KataGo adds 1e-7 to every point of the board first; here the policy covers every
/// move of the game, most of them illegal in a given position, so that would spread the
/// target over moves that cannot be played). False, and `out` all 0, for a target with no mass.
pub fn soft_policy_target(policy: &[f32], temperature: f64, out: &mut [f32]) -> bool {
    let power = (1.0 / temperature) as f32;
    let mut sum = 0f32;
    for (o, &p) in out.iter_mut().zip(policy) {
        *o = if p > 0.0 { p.powf(power) } else { 0.0 };
        sum += *o;
    }
    if sum > 0.0 && sum.is_finite() {
        out.iter_mut().for_each(|o| *o /= sum);
        true
    } else {
        out.fill(0.0);
        false
    }
}

/// What one training step did.
#[derive(Clone, Debug)]
pub struct Step {
    pub policy_loss: f64,
    pub value_loss: f64,
    /// Each auxiliary head's loss, as [`Losses::aux`].
    pub aux: Vec<(&'static str, f64)>,
    /// Seconds of the forward pass with the loss, of the backward pass, and of the
    /// optimiser's update.
    pub forward_s: f64,
    pub backward_s: f64,
    pub optimiser_s: f64,
}

/// One optimiser step on `batch` at learning rate `lr`, the targets mixed with `anchor`'s
/// outputs when one is given; the losses are those before the step, against those targets.
pub fn train_step(
    net: &Net,
    opt: &mut AdamW,
    batch: &Batch,
    weights: &LossWeights,
    lr: f64,
    anchor: Option<&Anchor>,
) -> candle_core::Result<Step> {
    let started = Instant::now();
    let losses = losses_t(net, batch, weights, true, anchor)?;
    let forward_s = started.elapsed().as_secs_f64();
    opt.set_learning_rate(lr);
    let started = Instant::now();
    let grads = losses.total.backward()?;
    let backward_s = started.elapsed().as_secs_f64();
    opt.step(&grads)?;
    Ok(Step {
        policy_loss: f64::from(losses.policy.to_scalar::<f32>()?),
        value_loss: f64::from(losses.value.to_scalar::<f32>()?),
        aux: losses.aux,
        forward_s,
        backward_s,
        optimiser_s: started.elapsed().as_secs_f64() - backward_s,
    })
}

/// The `step` of the last line of an existing loss log (0 if none), so steps keep counting
/// across fit calls.
fn last_logged_step(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .rev()
                .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        })
        .and_then(|v| v.get("step").and_then(|s| s.as_u64()))
        .unwrap_or(0)
}

/// `stem` with `.ext` appended (a stem like `models/0003` has no extension to replace).
pub fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::{self, Planes};
    use games::Encoding;

    /// A Go 5×5 window shard of `samples`, with every symmetry.
    fn go_shard(samples: Vec<window::Sample>) -> WindowShard {
        let state = games::go::GoState::new(games::go::GoRules::with_size(5)).unwrap();
        let s = state.shape();
        WindowShard {
            meta: ShardMeta {
                game: "go".into(),
                planes: s.planes,
                height: 5,
                width: 5,
                policy_size: s.policy_size,
                model: String::new(),
                config: String::new(),
                created_unix: 0,
                games: 1,
                policy_target: shards::PolicyTarget::Visits,
            },
            symmetries: shards::symmetry_maps(&state),
            samples,
        }
    }

    /// A sample whose first plane is `board` and the rest zero, whose ownership is `board` too,
    /// and whose policy and reply are the same few points and pass.
    fn sample(board: &[f32], planes: usize, aux: bool) -> window::Sample {
        let mut all = board.to_vec();
        all.resize(planes * 25, 0.0);
        let policy: Box<[(u16, f32)]> = Box::new([(0, 0.5), (7, 0.25), (13, 0.125), (25, 0.125)]);
        window::Sample {
            planes: Planes::pack(&all),
            policy: policy.clone(),
            value: 0.5,
            aux: if aux {
                window::Aux {
                    ownership: Some(Planes::pack(board)),
                    score: Some(3.0),
                    reply: Some(policy),
                    surprise: None,
                }
            } else {
                window::Aux::default()
            },
        }
    }

    #[test]
    fn a_symmetry_moves_ownership_with_the_planes_and_the_reply_with_the_policy() {
        let board: Vec<f32> = (0..25).map(|i| i as f32 / 25.0 - 0.5).collect();
        let planes = games::shape_of("go", Some(5)).unwrap().planes;
        let shard = go_shard(vec![
            sample(&board, planes, true),
            sample(&board, planes, false),
        ]);
        let mut batch = Batch::new(&shard.meta, 2);
        for sym in 0..shard.symmetries.len() {
            batch.put(0, &shard, 0, sym);
            batch.put(1, &shard, 1, sym);
            assert_eq!(
                &batch.ownership[..25],
                &batch.planes[..25],
                "symmetry {sym}"
            );
            assert_eq!(&batch.reply[..26], &batch.policy[..26], "symmetry {sym}");
            assert_eq!(batch.ownership_mask, [1.0, 0.0]);
            assert_eq!(batch.reply_mask, [1.0, 0.0]);
            assert_eq!(
                (batch.score.clone(), batch.score_mask.clone()),
                (vec![3.0, 0.0], vec![1.0, 0.0])
            );
            if sym > 0 {
                assert_ne!(
                    &batch.ownership[..25],
                    &board[..],
                    "symmetry {sym} moved nothing"
                );
            }
        }
    }

    /// A one-block network with pooling and every auxiliary head, drawn from `seed`.
    fn net_with_every_head(shape: games::TensorShape, seed: u64) -> Net {
        let network = NetConfig {
            blocks: 1,
            channels: 8,
            pool_every: 1,
            pool_channels: 2,
            policy_pool: true,
            value_pool: true,
            ownership: true,
            score: true,
            wdl: true,
            reply: true,
            soft_policy: true,
            ..NetConfig::default()
        };
        Net::seeded(&network, shape, &Device::Cpu, seed).unwrap().1
    }

    /// Each auxiliary term counts the samples with its target only; a batch without any has no
    /// such term; the total is the weighted sum of the terms.
    #[test]
    fn auxiliary_terms_weigh_only_the_samples_with_targets() {
        let shape = games::shape_of("go", Some(5)).unwrap();
        let board: Vec<f32> = (0..25).map(|i| f32::from(i % 3 == 0)).collect();
        let net = net_with_every_head(shape, 1);
        let weights = LossWeights {
            value: 1.0,
            ownership: 1.0,
            score: 2.0,
            score_scale: 4.0,
            wdl: 1.0,
            reply: 0.5,
            soft_policy: 3.0,
            soft_policy_temperature: 4.0,
        };
        let with = go_shard(vec![
            sample(&board, shape.planes, true),
            sample(&board, shape.planes, false),
        ]);
        let mut batch = Batch::new(&with.meta, 2);
        batch.fill_with(std::slice::from_ref(&with), &[(0, 0), (0, 1)]);
        let l = losses_t(&net, &batch, &weights, false, None).unwrap();
        let names: Vec<&str> = l.aux.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["ownership", "score", "wdl", "reply", "soft_policy"]);
        let scalar = |t: &Tensor| f64::from(t.to_scalar::<f32>().unwrap());
        let weighs = [1.0, 2.0, 1.0, 0.5, 3.0];
        // Samples with the target: one of two, except wdl and the soft policy (every sample
        // has a value and a policy).
        let share = [0.5, 0.5, 1.0, 0.5, 1.0];
        let expected = scalar(&l.policy)
            + scalar(&l.value)
            + l.aux
                .iter()
                .zip(weighs.iter().zip(share))
                .map(|((_, loss), (w, s))| loss * w * s)
                .sum::<f64>();
        assert!(
            (scalar(&l.total) - expected).abs() < 1e-4,
            "{} {expected}",
            scalar(&l.total)
        );
        // Without targets: only the wdl term, read from the value target.
        let without = go_shard(vec![sample(&board, shape.planes, false)]);
        let mut batch = Batch::new(&without.meta, 1);
        batch.fill_with(std::slice::from_ref(&without), &[(0, 0)]);
        let l = losses_t(&net, &batch, &weights, false, None).unwrap();
        assert_eq!(
            l.aux.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["wdl", "soft_policy"]
        );
        // The wdl target of a value of 0.5 is (0.5, 0.5, 0): its cross-entropy is at least
        // that distribution's entropy, ln 2.
        assert!(l.aux[0].1 >= std::f64::consts::LN_2 - 1e-6, "{:?}", l.aux);
    }

    /// Each auxiliary loss equals its formula computed by hand from the network's outputs and
    /// the targets: ownership the mean squared error over the board, score the Huber loss of
    /// the scaled error, wdl, reply and soft policy cross-entropies; the logged value is the
    /// mean over the samples with the target, the total adds weight · sum / N.
    #[test]
    fn each_auxiliary_loss_is_its_formula_on_a_hand_made_batch() {
        let shape = games::shape_of("go", Some(5)).unwrap();
        let board: Vec<f32> = (0..25).map(|i| f32::from(i % 4 == 1)).collect();
        let net = net_with_every_head(shape, 7);
        let weights = LossWeights {
            value: 1.0,
            ownership: 1.5,
            score: 2.0,
            score_scale: 0.5,
            wdl: 0.25,
            reply: 0.5,
            soft_policy: 3.0,
            soft_policy_temperature: 2.0,
        };
        let shard = go_shard(vec![
            sample(&board, shape.planes, true),
            sample(&board, shape.planes, false),
        ]);
        let mut batch = Batch::new(&shard.meta, 2);
        batch.fill_with(std::slice::from_ref(&shard), &[(0, 0), (0, 1)]);
        let l = losses_t(&net, &batch, &weights, false, None).unwrap();
        let (x, _, _) = batch.tensors().unwrap();
        let out = net.forward_t(&x, false).unwrap();
        let f64s = |t: &Option<Tensor>| {
            t.as_ref()
                .unwrap()
                .to_dtype(candle_core::DType::F64)
                .unwrap()
        };
        let rows = |t: &Option<Tensor>| -> Vec<Vec<f64>> { f64s(t).to_vec2().unwrap() };
        let log_softmax = |logits: &[f64]| -> Vec<f64> {
            let top = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let log_sum = logits.iter().map(|z| (z - top).exp()).sum::<f64>().ln() + top;
            logits.iter().map(|z| z - log_sum).collect()
        };
        let cross_entropy = |target: &[(usize, f64)], logits: &[f64]| -> f64 {
            let log_p = log_softmax(logits);
            -target.iter().map(|&(k, t)| t * log_p[k]).sum::<f64>()
        };
        // The sample's policy and reply: 0.5, 0.25, 0.125, 0.125 on points 0, 7, 13 and pass.
        let target = [(0, 0.5), (7, 0.25), (13, 0.125), (25, 0.125)];
        // Sample 0 has ownership, score and reply targets, sample 1 none.
        let ownership = rows(&out.ownership)[0]
            .iter()
            .zip(&board)
            .map(|(o, b)| (o - f64::from(*b)).powi(2))
            .sum::<f64>()
            / 25.0;
        let a = ((f64s(&out.score).to_vec1::<f64>().unwrap()[0] - 3.0) / 0.5).abs();
        let score = if a <= 1.0 { a * a / 2.0 } else { a - 0.5 };
        // Both values are 0.5: the wdl target is (0.5, 0.5, 0).
        let wdl: Vec<f64> = rows(&out.wdl)
            .iter()
            .map(|z| cross_entropy(&[(0, 0.5), (1, 0.5)], z))
            .collect();
        let reply = cross_entropy(&target, &rows(&out.reply)[0]);
        // Each target to the power 1/2, over the sum.
        let roots: Vec<(usize, f64)> = target.iter().map(|&(k, t)| (k, f64::sqrt(t))).collect();
        let sum: f64 = roots.iter().map(|r| r.1).sum();
        let soft_target: Vec<(usize, f64)> = roots.iter().map(|&(k, r)| (k, r / sum)).collect();
        let soft: Vec<f64> = rows(&out.soft_policy)
            .iter()
            .map(|z| cross_entropy(&soft_target, z))
            .collect();
        let expected = [
            ("ownership", ownership),
            ("score", score),
            ("wdl", (wdl[0] + wdl[1]) / 2.0),
            ("reply", reply),
            ("soft_policy", (soft[0] + soft[1]) / 2.0),
        ];
        assert_eq!(l.aux.len(), expected.len());
        for ((name, got), (want_name, want)) in l.aux.iter().zip(expected) {
            assert_eq!(*name, want_name);
            assert!(
                (got - want).abs() < 1e-4 * want.max(1.0),
                "{name}: {got} {want}"
            );
        }
        // Sums over the batch: one sample's target for ownership, score and reply, two for the
        // others; each weighed and divided by the batch's 2.
        let scalar = |t: &Tensor| f64::from(t.to_scalar::<f32>().unwrap());
        let total = scalar(&l.policy)
            + scalar(&l.value)
            + (1.5 * ownership + 2.0 * score + 0.5 * reply) / 2.0
            + 0.25 * (wdl[0] + wdl[1]) / 2.0
            + 3.0 * (soft[0] + soft[1]) / 2.0;
        assert!(
            (scalar(&l.total) - total).abs() < 1e-4 * total,
            "{}",
            scalar(&l.total)
        );
    }

    /// The soft target is the target to the power 1/T, renormalised; moves at 0 stay at 0.
    #[test]
    fn the_soft_policy_target_is_the_target_to_the_power_one_over_t() {
        let policy = [0.0, 0.8, 0.15, 0.0, 0.05];
        let mut out = [9.0; 5];
        assert!(soft_policy_target(&policy, 4.0, &mut out));
        // 0.8^0.25, 0.15^0.25, 0.05^0.25 over their sum.
        let roots = [0.8f64.powf(0.25), 0.15f64.powf(0.25), 0.05f64.powf(0.25)];
        let sum: f64 = roots.iter().sum();
        let expected = [0.0, roots[0] / sum, roots[1] / sum, 0.0, roots[2] / sum];
        for (o, e) in out.iter().zip(expected) {
            assert!((f64::from(*o) - e).abs() < 1e-6, "{out:?} {expected:?}");
        }
        assert!((out.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        // About 0.440, 0.290, 0.220: the unlikely moves gain, the order stays.
        assert!(out[1] > out[2] && out[2] > out[4] && out[4] > 0.2);
        // T = 1 is the target itself; a uniform target stays uniform at any T.
        assert!(soft_policy_target(&policy, 1.0, &mut out));
        for (o, p) in out.iter().zip(policy) {
            assert!((o - p).abs() < 1e-6, "{out:?}");
        }
        assert!(soft_policy_target(&[0.25; 4], 7.0, &mut out[..4]));
        assert!(out[..4].iter().all(|o| (o - 0.25).abs() < 1e-6));
        // A target with no mass has no soft target.
        assert!(!soft_policy_target(&[0.0; 5], 4.0, &mut out));
        assert_eq!(out, [0.0; 5]);
    }

    /// The soft policy keys are checked by name.
    #[test]
    fn soft_policy_keys_are_checked() {
        for (cfg, key) in [
            (
                FitConfig {
                    soft_policy_temperature: 0.0,
                    ..FitConfig::default()
                },
                "soft_policy_temperature",
            ),
            (
                FitConfig {
                    soft_policy_temperature: f64::INFINITY,
                    ..FitConfig::default()
                },
                "soft_policy_temperature",
            ),
            (
                FitConfig {
                    soft_policy_weight: -1.0,
                    ..FitConfig::default()
                },
                "soft_policy_weight is -1",
            ),
            (
                FitConfig {
                    soft_policy_weight: f64::NAN,
                    ..FitConfig::default()
                },
                "soft_policy_weight",
            ),
        ] {
            let e = cfg.validate().unwrap_err();
            assert!(e.contains(key), "{key}: {e}");
        }
        let d = FitConfig::default();
        assert_eq!(
            (d.soft_policy_weight, d.soft_policy_temperature),
            (8.0, 4.0)
        );
        assert!(d.validate().is_ok());
        // Read from YAML as the `fit` section is; an unknown spelling is refused by name.
        let cfg: FitConfig =
            serde_yaml::from_str("soft_policy_weight: 2.0\nsoft_policy_temperature: 2.5\n")
                .unwrap();
        assert_eq!(
            (cfg.soft_policy_weight, cfg.soft_policy_temperature),
            (2.0, 2.5)
        );
        let e = serde_yaml::from_str::<FitConfig>("soft_policy_temprature: 2\n").unwrap_err();
        assert!(e.to_string().contains("soft_policy_temprature"), "{e}");
    }
}
