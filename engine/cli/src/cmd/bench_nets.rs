//! The search and inference sections of `engine bench`, measured per game with its default
//! network freshly initialised (`train::bench`: speed depends on a network's size, not its
//! weights); this file chooses the figures and prints them.

use std::path::Path;
use std::time::Duration;

use games::go::{GoRules, GoState};
use games::liuzhou::Liuzhou;
use games::xiangqi::Xiangqi;
use games::Game;
use search::Playable;
use train::bench::{BenchModels, CALIBRATION_POSITIONS};

/// The default network of each game (`train::bench`), the games it could not make said.
pub struct DefaultModels(BenchModels);

impl DefaultModels {
    pub fn init() -> anyhow::Result<DefaultModels> {
        let models = BenchModels::init()?;
        for game in models.skipped() {
            outln!(
                "(could not initialise the {game} network with {}: skipped)",
                models.trainer().display()
            )?;
        }
        Ok(DefaultModels(models))
    }

    /// Runs `figure` on each game's start position with its network.
    fn each_game(&self, figure: impl Figure) -> anyhow::Result<()> {
        figure.run(&Liuzhou::default(), &self.0.path("liuzhou"))?;
        figure.run(&Xiangqi::default(), &self.0.path("xiangqi"))?;
        figure.run(&GoState::new(GoRules::default())?, &self.0.path("go"))
    }
}

/// A figure measured per game with its default network.
trait Figure {
    fn run<G: Playable>(&self, start: &G, model: &Path) -> anyhow::Result<()>;
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
/// (`BenchModels::quantize`, calibrated on positions of random play), then both run through
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

struct Precisions<'a> {
    models: &'a DefaultModels,
    budget: Duration,
    threads: usize,
    /// Liuzhou's ratio at batch 64, once measured.
    liuzhou_64: std::cell::Cell<Option<f64>>,
}

impl Figure for &Precisions<'_> {
    fn run<G: Playable>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
        if !model.is_file() {
            return outln!(
                "== inference, fp32 against int8: {} == skipped: no model",
                G::NAME
            );
        }
        if let Err(e) = self.models.0.quantize(start, model) {
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
    fn run<G: Playable>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
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
    fn run<G: Playable>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
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
