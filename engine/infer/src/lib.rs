//! The ONNX Runtime backend of [`eval::Evaluator`]: models loaded from ONNX files, run on the
//! CPU or a GPU execution provider, and the library found at run time (fetching it is the
//! `provision` crate's job).

pub mod bench;
pub mod onnx;
pub mod precision;
pub mod runtime;

pub use onnx::{
    ModelError, ModelInfo, OrtEvaluator, OrtModel, OrtOptions, Provider, ProviderReport,
};
pub use precision::Precision;
pub use runtime::RuntimeError;
