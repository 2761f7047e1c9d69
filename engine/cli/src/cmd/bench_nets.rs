//! The search and inference sections of `engine bench`: each game's default network, freshly
//! initialised (speed depends on the network's size, not its weights).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use games::go::{GoRules, GoState};
use games::liuzhou::Liuzhou;
use games::xiangqi::Xiangqi;
use games::Game;

/// The default network of each game, initialised by `trainer-bridge init` from the game's
/// built-in config into a temporary directory.
pub struct DefaultModels {
    dir: PathBuf,
    trainer: PathBuf,
}

impl DefaultModels {
    /// Initialises the three networks; one that cannot be made is reported and its game's
    /// figures skipped.
    pub fn init() -> anyhow::Result<DefaultModels> {
        let dir = std::env::temp_dir().join(format!("engine-bench-models-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let trainer = train::find_trainer(None);
        for game in ["liuzhou", "xiangqi", "go"] {
            let config = dir.join(format!("{game}.yaml"));
            std::fs::write(&config, setup::config::built_in(game).unwrap_or_default())?;
            let status = std::process::Command::new(&trainer)
                .args(["init", "--game", game, "--config"])
                .arg(&config)
                .arg("--out")
                .arg(dir.join(game))
                .args(if game == "go" {
                    &["--board-size", "9"][..]
                } else {
                    &[]
                })
                .stdout(std::process::Stdio::null())
                .status();
            if !matches!(status, Ok(s) if s.success()) {
                outln!(
                    "(could not initialise the {game} network with {}: skipped)",
                    trainer.display()
                )?;
            }
        }
        Ok(DefaultModels { dir, trainer })
    }

    fn path(&self, game: &str) -> PathBuf {
        self.dir.join(format!("{game}.onnx"))
    }

    /// Runs `figure` on each game's start position with its network.
    fn each_game(&self, figure: impl Figure) -> anyhow::Result<()> {
        figure.run(&Liuzhou::default(), &self.path("liuzhou"))?;
        figure.run(&Xiangqi::default(), &self.path("xiangqi"))?;
        figure.run(&GoState::new(GoRules::default())?, &self.path("go"))
    }
}

impl Drop for DefaultModels {
    /// The networks, their int8 models and calibration positions are the bench's own.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A figure measured per game with its default network.
trait Figure {
    fn run<G: Game>(&self, start: &G, model: &Path) -> anyhow::Result<()>;
}

/// Search overhead with the fake evaluator (one thread, all threads), and the real evaluator's
/// throughput bare and inside the search at the default batch size.
pub fn search(models: &DefaultModels, budget: Duration, threads: usize) -> anyhow::Result<()> {
    models.each_game(Search { budget, threads })
}

/// Evaluator throughput at each batch size beside a bare ONNX Runtime session on the same model.
pub fn inference(models: &DefaultModels, opts: &infer::bench::BenchOptions) -> anyhow::Result<()> {
    models.each_game(Inference { opts })
}

/// fp32 against int8 at batch 16, 64 and 256: each game's network quantised first
/// (`trainer-bridge quantize`, calibrated on positions of random play), then both run through
/// the engine's evaluator, their calls alternating. Ends with the line `int8/fp32 at batch 64:
/// R` for Liuzhou.
pub fn inference_precisions(
    models: &DefaultModels,
    budget: Duration,
    threads: usize,
) -> anyhow::Result<()> {
    let figure = Precisions {
        models,
        budget,
        threads,
        liuzhou_64: std::cell::Cell::new(None),
    };
    models.each_game(&figure)?;
    match figure.liuzhou_64.get() {
        Some(r) => outln!("int8/fp32 at batch 64: {r:.2}"),
        None => outln!("int8/fp32 at batch 64: not measured (see above)"),
    }
}

/// Calibration positions for the bench's int8 models.
const CALIBRATION_POSITIONS: usize = 256;

struct Precisions<'a> {
    models: &'a DefaultModels,
    budget: Duration,
    threads: usize,
    /// Liuzhou's ratio at batch 64, once measured.
    liuzhou_64: std::cell::Cell<Option<f64>>,
}

impl Precisions<'_> {
    /// Writes the int8 model beside `model`, calibrated on positions of random play.
    fn quantize<G: Game>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
        let dir = model.with_extension("positions");
        std::fs::create_dir_all(&dir)?;
        let shape = start.shape();
        let samples = infer::bench::sample_states(start, CALIBRATION_POSITIONS, 7)
            .iter()
            .map(|state| {
                let mut planes = vec![0.0; shape.input_len()];
                state.encode(&mut planes);
                shards::Sample {
                    planes,
                    policy: vec![(0, 1.0)],
                    value: 0.0,
                    aux: Default::default(),
                }
            })
            .collect();
        let shard = shards::Shard {
            meta: shards::ShardMeta {
                game: G::NAME.into(),
                planes: shape.planes,
                height: shape.height,
                width: shape.width,
                policy_size: shape.policy_size,
                model: "random play".into(),
                config: String::new(),
                created_unix: 0,
                games: 0,
                policy_target: shards::PolicyTarget::Visits,
            },
            samples,
            symmetries: shards::symmetry_maps(start),
        };
        shard.write(&dir.join("positions.safetensors"))?;
        let status = std::process::Command::new(&self.models.trainer)
            .arg("quantize")
            .arg("--model")
            .arg(model)
            .arg("--shards")
            .arg(&dir)
            .args(["--samples", &CALIBRATION_POSITIONS.to_string()])
            .stdout(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running {}", self.models.trainer.display()))?;
        anyhow::ensure!(
            status.success(),
            "{} quantize --model {}: {status}",
            self.models.trainer.display(),
            model.display()
        );
        Ok(())
    }
}

impl Figure for &Precisions<'_> {
    fn run<G: Game>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
        if !model.is_file() {
            return outln!(
                "== inference, fp32 against int8: {} == skipped: no model",
                G::NAME
            );
        }
        if let Err(e) = self.quantize(start, model) {
            return outln!(
                "== inference, fp32 against int8: {} == skipped: no int8 model: {e:#}",
                G::NAME
            );
        }
        let opts = infer::bench::BenchOptions {
            batch_sizes: infer::bench::PRECISION_BATCH_SIZES.to_vec(),
            min_time: self.budget,
            intra_threads: self.threads,
            provider: infer::Provider::Cpu,
        };
        outln!(
            "== inference, fp32 against int8: {} (default net of the built-in configs/{}.yaml, \
             int8 calibrated on {CALIBRATION_POSITIONS} positions of random play, {} intra-op \
             thread(s), CPU) ==",
            G::NAME,
            G::NAME,
            self.threads
        )?;
        match infer::bench::compare_precisions(model, start, &opts) {
            Ok(rows) => {
                if G::NAME == Liuzhou::NAME {
                    let at_64 = rows.iter().find(|r| r.batch == 64).map(|r| r.ratio());
                    self.liuzhou_64.set(at_64);
                }
                out!("{}", infer::bench::format_precision_rows(&rows))
            }
            Err(e) => outln!("error: {e}"),
        }
    }
}

struct Search {
    budget: Duration,
    threads: usize,
}

impl Figure for Search {
    fn run<G: Game>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
        let opts = infer::onnx::OrtOptions {
            batch_size: 64,
            intra_threads: self.threads,
            ..Default::default()
        };
        let net = if model.is_file() {
            Some(infer::onnx::OrtEvaluator::load(model, start, &opts)?)
        } else {
            None
        };
        let figures = search::bench::search_figures(
            start,
            self.budget,
            net.as_ref().map(|e| e as &dyn eval::Evaluator<G>),
        )?;
        out!("{figures}")
    }
}

struct Inference<'a> {
    opts: &'a infer::bench::BenchOptions,
}

impl Figure for Inference<'_> {
    fn run<G: Game>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
        if !model.is_file() {
            return outln!("== inference: {} == skipped: no model", G::NAME);
        }
        outln!(
            "== inference: {} (default net of the built-in configs/{}.yaml, {} intra-op thread(s), {}) ==",
            G::NAME,
            G::NAME,
            self.opts.intra_threads,
            self.opts.provider
        )?;
        match infer::bench::run(model, start, self.opts) {
            Ok(rows) => out!("{}", infer::bench::format_rows(&rows)),
            Err(e) => outln!("error: {e}"),
        }
    }
}
