//! Turns a `--model` argument into an evaluator: the one place that knows the model kinds.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use eval::fake::FakeEvaluator;
use eval::Evaluator;
use games::Game;
use infer::onnx::{OrtEvaluator, OrtOptions, Provider};

use crate::config;

/// The evaluator named by `model`: `uniform` (no network: uniform priors, value 0), or an ONNX
/// model file run by ONNX Runtime with the config's `inference` section.
pub fn evaluator<G: Game>(
    start: &G,
    model: &str,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    evaluator_with(start, model, doc, config_path, Overrides::default())
}

/// Settings of the command line that replace the `inference` section's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    /// `--provider`.
    pub provider: Option<Provider>,
    /// Intra-op threads per network, where several networks share the cores (`engine match
    /// --parallel`).
    pub intra_threads: Option<usize>,
}

impl Overrides {
    /// For networks of `parallel` games played at once (one side of a game thinks at a time):
    /// each gets an equal share of the cores for its intra-op threads; a single game keeps the
    /// config's setting.
    pub fn sharing_cores(parallel: u32) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Overrides {
            intra_threads: (parallel > 1).then(|| (cores / parallel as usize).max(1)),
            ..Default::default()
        }
    }
}

/// As [`evaluator`], with the command line's `overrides` in place of the section's settings.
pub fn evaluator_with<G: Game>(
    start: &G,
    model: &str,
    doc: &serde_yaml::Value,
    config_path: &Path,
    overrides: Overrides,
) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    let mut opts: OrtOptions = config::inference(doc, config_path)?;
    if let Some(p) = overrides.provider {
        opts.provider = p;
    }
    if let Some(n) = overrides.intra_threads {
        opts.intra_threads = n;
    }
    if model == "uniform" {
        return Ok(Arc::new(FakeEvaluator::new(opts.batch_size.max(1))));
    }
    let evaluator = OrtEvaluator::load(Path::new(model), start, &opts)
        .with_context(|| format!("loading model {model}"))?;
    tracing::info!("{}", evaluator.describe());
    Ok(Arc::new(evaluator))
}

/// The model `engine play` and `engine analyse` play game `game` with: `--model` when given,
/// else, unless `--agent` asks for another agent than `net`, the shipped
/// `models/<game>/best.onnx` (relative to the directory the engine runs in) if there is one.
pub fn given_or_shipped(model: Option<&Path>, agent: Option<&str>, game: &str) -> Option<PathBuf> {
    if let Some(m) = model {
        return Some(m.to_path_buf());
    }
    shipped(game).filter(|_| agent.is_none_or(|a| a == "net"))
}

/// The game's shipped network, `models/<game>/best.onnx`, if there is one.
pub fn shipped(game: &str) -> Option<PathBuf> {
    let path = PathBuf::from(format!("models/{game}/best.onnx"));
    path.is_file().then_some(path)
}

/// The network a `net` agent names (`model=`), or the game's shipped one when it names none.
pub fn named_or_shipped(model: Option<&Path>, game: &str) -> anyhow::Result<PathBuf> {
    match model {
        Some(m) => Ok(m.to_path_buf()),
        None => shipped(game).ok_or_else(|| {
            anyhow::anyhow!("no network ships for {game}: name one with net:model=PATH")
        }),
    }
}
