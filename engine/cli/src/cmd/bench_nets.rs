//! The search and inference sections of `engine bench`: each game's default network, freshly
//! initialised (speed depends on the network's size, not its weights).

use std::path::{Path, PathBuf};
use std::time::Duration;

use games::go::{GoRules, GoState};
use games::liuzhou::Liuzhou;
use games::xiangqi::Xiangqi;
use games::Game;

/// The default network of each game, initialised by `trainer-bridge init` from the game's
/// built-in config into a temporary directory.
pub struct DefaultModels {
    dir: PathBuf,
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
        Ok(DefaultModels { dir })
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
pub fn inference(models: &DefaultModels, budget: Duration, threads: usize) -> anyhow::Result<()> {
    models.each_game(Inference { budget, threads })
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

struct Inference {
    budget: Duration,
    threads: usize,
}

impl Figure for Inference {
    fn run<G: Game>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
        if !model.is_file() {
            return outln!("== inference: {} == skipped: no model", G::NAME);
        }
        let opts = infer::bench::BenchOptions {
            min_time: self.budget,
            intra_threads: self.threads,
            ..Default::default()
        };
        outln!(
            "== inference: {} (default net of the built-in configs/{}.yaml, {} intra-op thread(s), CPU) ==",
            G::NAME,
            G::NAME,
            self.threads
        )?;
        match infer::bench::run(model, start, &opts) {
            Ok(rows) => out!("{}", infer::bench::format_rows(&rows)),
            Err(e) => outln!("error: {e}"),
        }
    }
}
