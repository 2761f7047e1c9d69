//! The arithmetic a model runs in, and where a model's int8 file lies.
//!
//! `trainer-bridge quantize` (and `trainer-bridge fit` with `fit.int8: true`) writes the int8
//! model beside the fp32 one: `0005.onnx` → `0005.int8.onnx`. The int8 file's metadata says
//! `precision` `int8` and records `source_crc32`, the CRC-32 of the fp32 model's bytes it was
//! quantised from, so that an int8 file left beside a replaced fp32 model is refused rather
//! than played.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// What `inference.precision` asks for.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// The model file as given.
    #[default]
    Fp32,
    /// The statically quantised model beside it ([`int8_path`]): int8 weights, uint8
    /// activations, run by ONNX Runtime's integer kernels on the CPU.
    Int8,
    /// Half precision, for GPUs: TensorRT builds fp16 engines from the fp32 model. Refused on
    /// the CPU and with CUDA.
    Fp16,
    /// [`Precision::Int8`] on the CPU where the model has its int8 file (quantised from it),
    /// [`Precision::Fp32`] otherwise: the faster and, where measured, the stronger player
    /// wherever one was made, with nothing to ask for.
    Auto,
}

impl Precision {
    pub const ALL: [Precision; 4] = [
        Precision::Fp32,
        Precision::Int8,
        Precision::Fp16,
        Precision::Auto,
    ];

    /// What this asks for, for a model run on the CPU (`on_cpu`) or not that has its int8 file
    /// (`has_int8`) or not: [`Precision::Auto`] comes to int8 or fp32, the others to themselves.
    pub fn resolve(self, on_cpu: bool, has_int8: bool) -> Precision {
        match self {
            Precision::Auto if on_cpu && has_int8 => Precision::Int8,
            Precision::Auto => Precision::Fp32,
            p => p,
        }
    }

    /// The spelling in configs, metadata and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
            Precision::Fp16 => "fp16",
            Precision::Auto => "auto",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Precision::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown precision {s:?}; expected fp32, int8, fp16 or auto"))
    }
}

/// The file name ending of int8 models.
pub const INT8_SUFFIX: &str = ".int8.onnx";

/// Whether `path` names an int8 model file (`….int8.onnx`).
pub fn is_int8_path(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(INT8_SUFFIX) && n.len() > INT8_SUFFIX.len())
}

/// The int8 model that belongs to the model or checkpoint at `path`: its extension (`.onnx`,
/// `.safetensors`) replaced by `.int8.onnx`. An int8 path is its own.
pub fn int8_path(path: &Path) -> PathBuf {
    if is_int8_path(path) {
        return path.to_owned();
    }
    let mut name = path.file_stem().map(|s| s.to_owned()).unwrap_or_default();
    name.push(INT8_SUFFIX);
    path.with_file_name(name)
}

/// The CRC-32 of a model's bytes as its int8 file records it (`source_crc32`): 8 lowercase hex
/// digits.
pub fn source_crc32(bytes: &[u8]) -> String {
    format!("{:08x}", crc32fast::hash(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_files_lie_beside_their_models() {
        for (from, to) in [
            ("models/liuzhou/best.onnx", "models/liuzhou/best.int8.onnx"),
            ("runs/x/models/0005.onnx", "runs/x/models/0005.int8.onnx"),
            (
                "runs/x/models/0005.safetensors",
                "runs/x/models/0005.int8.onnx",
            ),
            ("0005.int8.onnx", "0005.int8.onnx"),
            ("net", "net.int8.onnx"),
        ] {
            assert_eq!(int8_path(Path::new(from)), PathBuf::from(to), "{from}");
        }
        assert!(is_int8_path(Path::new("a/b.int8.onnx")));
        assert!(!is_int8_path(Path::new("a/b.onnx")));
        assert!(!is_int8_path(Path::new(".int8.onnx")));
    }

    #[test]
    fn precision_names_round_trip() {
        for p in Precision::ALL {
            assert_eq!(p.as_str().parse::<Precision>(), Ok(p));
            assert_eq!(p.to_string().to_uppercase().parse::<Precision>(), Ok(p));
        }
        let e = "bf16".parse::<Precision>().unwrap_err();
        assert!(e.contains("bf16") && e.contains("int8"), "{e}");
    }
}
