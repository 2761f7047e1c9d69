//! Go networks made by `trainer-bridge init`, for the tests of which network plays which board
//! (`mod go_networks;`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes a Go network under `dir`: `dir/go/best.onnx` and `.safetensors`, so that `dir` is a
/// directory of default networks (`ENGINE_MODELS`); returns `dir/go/best.onnx`. Of any size: a
/// small network with a per-point policy and pooling heads, ownership and score; otherwise
/// `configs/go.yaml`'s network, whose fully connected heads play 9 × 9 only.
pub fn go_network(dir: &Path, any_size: bool) -> PathBuf {
    let trainer = PathBuf::from(env!("CARGO_BIN_EXE_engine")).with_file_name("trainer-bridge");
    assert!(
        trainer.is_file(),
        "{} missing: run `cargo build -p trainer-bridge`",
        trainer.display()
    );
    std::fs::create_dir_all(dir.join("go")).unwrap();
    let config = if any_size {
        let config = dir.join("go/any-size.yaml");
        std::fs::write(
            &config,
            "network:\n  blocks: 2\n  channels: 16\n  policy_channels: 4\n  value_channels: 4\n  \
             value_hidden: 16\n  pool_every: 2\n  pool_channels: 4\n  policy_pool: 1\n  \
             value_pool: 1\n  ownership: 1\n  score: 1\n",
        )
        .unwrap();
        config
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/go.yaml")
    };
    let made = Command::new(&trainer)
        .args(["init", "--game", "go", "--config"])
        .arg(config)
        .arg("--out")
        .arg(dir.join("go/best"))
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let onnx = dir.join("go/best.onnx");
    assert!(onnx.is_file());
    onnx
}
