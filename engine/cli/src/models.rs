//! Turns a `--model` argument into an evaluator: the one place that knows the model kinds.

use std::path::Path;
use std::sync::Arc;

use games::Game;
use infer::fake::FakeEvaluator;
use infer::{Evaluator, OrtEvaluator, OrtOptions, Provider};

use crate::config;

/// The evaluator named by `model`: `uniform` (no network), or an ONNX model file run by ONNX
/// Runtime with the config's `inference` section; `provider`, when given (a command-line
/// flag), overrides the section's.
pub fn evaluator<G: Game>(
    start: &G,
    model: &str,
    doc: &serde_yaml::Value,
    config_path: &Path,
    provider: Option<Provider>,
) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    let mut opts: OrtOptions = config::section(doc, "inference", config_path)?;
    if let Some(p) = provider {
        opts.provider = p;
    }
    match model {
        "uniform" => Ok(Arc::new(FakeEvaluator::new(opts.batch_size))),
        path => Ok(Arc::new(OrtEvaluator::load(Path::new(path), start, &opts)?)),
    }
}
