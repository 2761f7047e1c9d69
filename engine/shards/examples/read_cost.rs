//! What checking checksums costs a reader: the same shards read as version 2 (checksums
//! checked) and as version 1 (none to check), alternating in one run, from the page cache.
//!
//! `cargo run --release -p shards --example read_cost [ROUNDS]`

use std::path::{Path, PathBuf};
use std::time::Instant;

use games::Symmetry;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shards::{Sample, Shard, ShardMeta};

/// Positions per shard: what the configs' `selfplay.positions_per_shard` writes.
const POSITIONS: usize = 2048;
/// Shards per game and version.
const SHARDS: usize = 4;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("ROUNDS: a number"))
        .unwrap_or(7);
    println!("cargo run --release -p shards --example read_cost {rounds}");
    println!(
        "{SHARDS} shards of {POSITIONS} positions per game, read {rounds} times in each version \
         (alternating); medians, the cost as the median of each round's ratio"
    );
    println!(
        "{:<9} {:>9} {:>24} {:>24} {:>6} {:>13}",
        "game", "shard", "version 2 (checked)", "version 1 (unchecked)", "cost", "CRC-32 alone"
    );
    let dir = std::env::temp_dir().join(format!("read-cost-{}", std::process::id()));
    for (game, size) in [
        ("liuzhou", None),
        ("xiangqi", None),
        ("go", Some(9)),
        ("go", Some(19)),
    ] {
        let shape = games::shape_of(game, size).expect("a known game");
        let (checked, unchecked) = write_shards(&dir, game, shape);
        let bytes: u64 = checked
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        let contents: Vec<Vec<u8>> = checked.iter().map(|p| std::fs::read(p).unwrap()).collect();
        let mut times = [Vec::new(), Vec::new(), Vec::new()];
        let mut ratios = Vec::new();
        for _ in 0..rounds {
            let (a, b) = (read_all(&checked), read_all(&unchecked));
            times[0].push(a);
            times[1].push(b);
            ratios.push(a / b);
            times[2].push(crc_all(&contents));
        }
        let [v2, v1, crc] = times.map(median);
        let cost = median(ratios) - 1.0;
        let mb = bytes as f64 / 1e6;
        let label = match size {
            Some(n) => format!("{game} {n}x{n}"),
            None => game.to_string(),
        };
        println!(
            "{label:<9} {:>6.1} MB {:>9.0} MB/s {:>5.1} sh/s {:>9.0} MB/s {:>5.1} sh/s {:>5.1}% {:>8.0} MB/s",
            mb / SHARDS as f64,
            mb / v2,
            SHARDS as f64 / v2,
            mb / v1,
            SHARDS as f64 / v1,
            100.0 * cost,
            mb / crc,
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Seconds to read (and validate) every shard.
fn read_all(paths: &[PathBuf]) -> f64 {
    let started = Instant::now();
    for p in paths {
        let shard = Shard::read(p).expect("a shard written here");
        std::hint::black_box(shard);
    }
    started.elapsed().as_secs_f64()
}

/// Seconds to compute the CRC-32 of each file's bytes, in memory.
fn crc_all(contents: &[Vec<u8>]) -> f64 {
    let started = Instant::now();
    for bytes in contents {
        std::hint::black_box(shards::checksum::crc32(bytes));
    }
    started.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `SHARDS` shards of self-play-like samples (0/1 planes, a few dozen policy entries) as
/// version 2, and the same shards as version 1.
fn write_shards(dir: &Path, game: &str, shape: games::TensorShape) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut rng = SmallRng::seed_from_u64(1);
    let meta = ShardMeta {
        game: game.into(),
        planes: shape.planes,
        height: shape.height,
        width: shape.width,
        policy_size: shape.policy_size,
        model: "random".into(),
        config: String::new(),
        created_unix: 0,
        games: 1,
        policy_target: shards::PolicyTarget::Visits,
    };
    let identity: Vec<u16> = (0..shape.policy_size as u16).collect();
    let (mut checked, mut unchecked) = (Vec::new(), Vec::new());
    for k in 0..SHARDS {
        let samples = (0..POSITIONS)
            .map(|_| {
                let planes = (0..shape.input_len())
                    .map(|_| f32::from(rng.gen_bool(0.2)))
                    .collect();
                let n = rng.gen_range(1..40);
                let policy = (0..n)
                    .map(|_| (rng.gen_range(0..shape.policy_size) as u16, 1.0 / n as f32))
                    .collect();
                Sample {
                    planes,
                    policy,
                    value: [-1.0, 0.0, 1.0][rng.gen_range(0..3)],
                    aux: Default::default(),
                }
            })
            .collect();
        let shard = Shard {
            meta: meta.clone(),
            samples,
            symmetries: vec![(Symmetry::IDENTITY, identity.clone())],
        };
        let path = dir.join(format!("{k}-v2.safetensors"));
        shard.write(&path).unwrap();
        let old = dir.join(format!("{k}-v1.safetensors"));
        as_version_1(&path, &old);
        checked.push(path);
        unchecked.push(old);
    }
    (checked, unchecked)
}

/// The shard at `from` as version 1 wrote it: no `crc32` metadata.
fn as_version_1(from: &Path, to: &Path) {
    let bytes = std::fs::read(from).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut info = header.metadata().clone().unwrap();
    info.remove(shards::checksum::KEY);
    info.insert("version".into(), "1".into());
    std::fs::write(
        to,
        safetensors::serialize(st.tensors(), Some(info)).unwrap(),
    )
    .unwrap();
}
