//! Turns a `--model` argument into an evaluator: the one place that knows the model kinds.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use games::Game;
use infer::fake::FakeEvaluator;
use infer::onnx::{OrtEvaluator, OrtOptions};
use infer::Evaluator;

use crate::config;

/// The evaluator named by `model`: `uniform` (no network: uniform priors, value 0), or an ONNX
/// model file run by ONNX Runtime with the config's `inference` section.
pub fn evaluator<G: Game>(
    start: &G,
    model: &str,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    let opts: OrtOptions = config::section(doc, "inference", config_path)?;
    if model == "uniform" {
        return Ok(Arc::new(FakeEvaluator::new(opts.batch_size.max(1))));
    }
    let evaluator = OrtEvaluator::load(Path::new(model), start, &opts)
        .with_context(|| format!("loading model {model}"))?;
    tracing::info!("{}", evaluator.describe());
    Ok(Arc::new(evaluator))
}
