//! `trainer-bridge bench` runs briefly and ends with its summary line:
//! `fit S samples/s, G GFLOP/s; forward E evals/s, F GFLOP/s; ratio R` with R = G ÷ F.
//!
//! Needs ONNX Runtime, as the parity test does (see `infer::runtime`).

use std::path::Path;
use std::process::Command;

/// The number before `unit` in `part` (`"fit 412 samples/s"`, `"samples/s"` → 412).
fn number(part: &str, prefix: &str, unit: &str) -> f64 {
    let rest = part
        .strip_prefix(prefix)
        .and_then(|r| r.strip_suffix(unit))
        .unwrap_or_else(|| panic!("{part:?} is not `{prefix}N{unit}`"));
    rest.parse()
        .unwrap_or_else(|_| panic!("{rest:?} in {part:?} is not a number"))
}

#[test]
fn bench_prints_the_summary_line() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/liuzhou.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .args(["bench", "--batch", "8", "--seconds", "0.3", "--config"])
        .arg(&config)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("liuzhou: 4 blocks × 48 channels"),
        "{stdout}"
    );
    let last = stdout.lines().last().unwrap();
    let parts: Vec<&str> = last.split(", ").flat_map(|p| p.split("; ")).collect();
    assert_eq!(parts.len(), 5, "{last}");
    let samples = number(parts[0], "fit ", " samples/s");
    let g = number(parts[1], "", " GFLOP/s");
    let evals = number(parts[2], "forward ", " evals/s");
    let f = number(parts[3], "", " GFLOP/s");
    let ratio = number(parts[4], "ratio ", "");
    assert!(samples > 0.0 && g > 0.0 && evals > 0.0 && f > 0.0, "{last}");
    // Figures are printed rounded: the ratio agrees with them to their precision.
    assert!((ratio - g / f).abs() <= 0.002 + 0.05 / f, "{last}");
}

/// A config whose network pools and has auxiliary heads: the plain network of the same tower
/// is measured in the same run, and the cost of the new parts is printed as ratios before the
/// summary line.
#[test]
fn bench_prices_the_new_parts_against_the_plain_network() {
    let dir = std::env::temp_dir().join(format!("tb-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("go.yaml");
    std::fs::write(
        &config,
        "game:\n  name: go\n  size: 9\nnetwork:\n  blocks: 2\n  channels: 16\n  \
         policy_channels: 4\n  value_channels: 8\n  value_hidden: 16\n  pool_every: 2\n  \
         pool_channels: 4\n  policy_pool: 1\n  value_pool: 1\n  ownership: 1\n  score: 1\n  \
         wdl: 1\n  reply: 1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .args(["bench", "--batch", "8", "--seconds", "0.3", "--config"])
        .arg(&config)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("the same tower without pooling or auxiliary heads (2 blocks of 16"),
        "{stdout}"
    );
    let cost = stdout
        .lines()
        .find(|l| l.starts_with("cost of the new parts: "))
        .unwrap_or_else(|| panic!("no cost line in {stdout}"));
    let parts: Vec<&str> = cost.split(' ').collect();
    let ratio = |word: &str| word.trim_end_matches('x').parse::<f64>().unwrap();
    assert!(ratio(parts[5]) > 0.0 && ratio(parts[11]) > 0.0, "{cost}");
    // The summary line stays the last.
    assert!(
        stdout.lines().last().unwrap().starts_with("fit "),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
