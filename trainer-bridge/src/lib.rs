//! The learner half of the loop: the policy/value network in candle, its checkpoints, and the
//! ONNX model the engine runs.
//!
//! The network exists once, here: [`net::Net`] is trained by `trainer-bridge fit` and exported by
//! [`onnx::export_onnx`]; the engine only ever sees the ONNX file and its metadata.

pub mod config;
pub mod fit;
pub mod net;
pub mod onnx;

pub use config::{ConfigError, NetConfig};
pub use net::{Net, NetError};
pub use onnx::{export_onnx, ModelMeta, OnnxError};
