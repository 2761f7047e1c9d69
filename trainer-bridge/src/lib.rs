//! The learner half of the loop: the policy/value network in candle, its checkpoints, and the
//! ONNX model the engine runs.
//!
//! The network exists once, here: [`net::Net`] is trained by `trainer-bridge fit` and exported by
//! [`onnx::export_onnx`]; the engine only ever sees the ONNX file and its metadata.

pub mod bench;
pub mod config;
pub mod fit;
pub mod kernels;
pub mod net;
pub mod onnx;
pub mod quantize;
pub mod window;

pub use config::{ConfigError, NetConfig};
pub use net::{describe, Checkpoint, Net, NetError};
pub use onnx::{export_onnx, ModelMeta, OnnxError};

use std::path::{Path, PathBuf};

use anyhow::Context;
use candle_nn::VarMap;

/// Writes a generation: `<stem>.safetensors` (the checkpoint) and `<stem>.onnx` (the model),
/// creating the directory if needed. Both files or neither: everything that can fail
/// (non-finite weights included) is checked before the first byte is written, and the
/// checkpoint is removed again if the model cannot be written.
pub fn write_model(
    varmap: &VarMap,
    meta: &ModelMeta,
    stem: &Path,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    let checkpoint = fit::with_ext(stem, "safetensors");
    let onnx = fit::with_ext(stem, "onnx");
    let checkpoint_bytes = Net::checkpoint_bytes(varmap, meta)?;
    let onnx_bytes = onnx::model_bytes(varmap, meta)?;
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
    }
    shards::write_atomically(&checkpoint, &checkpoint_bytes)?;
    if let Err(e) = shards::write_atomically(&onnx, &onnx_bytes) {
        let _ = std::fs::remove_file(&checkpoint);
        return Err(e.into());
    }
    Ok((checkpoint, onnx))
}
