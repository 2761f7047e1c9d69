//! Turns a `--model` argument into an evaluator: the one place that knows the model kinds.

use std::path::Path;
use std::sync::Arc;

use games::Game;
use infer::fake::FakeEvaluator;
use infer::Evaluator;

/// The evaluator named by `model`: `uniform` (no network), or an ONNX model file.
pub fn evaluator<G: Game>(
    _start: &G,
    model: &str,
    _doc: &serde_yaml::Value,
    _config_path: &Path,
) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    match model {
        "uniform" => Ok(Arc::new(FakeEvaluator::new(64))),
        other => anyhow::bail!(
            "--model {other:?}: ONNX models are not supported by this build yet; use `uniform`"
        ),
    }
}
