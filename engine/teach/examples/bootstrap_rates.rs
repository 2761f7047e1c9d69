//! How fast the teachers of `engine bootstrap` play: five games each with GNU Go at levels 1
//! and 10 (9×9) and with Fairy-Stockfish at depth 8, eight lines (Xiangqi), one after another
//! (about a minute each):
//!
//! ```text
//! cargo run --release -p teach --example bootstrap_rates
//! ```
//!
//! For each teacher it prints its spec and the run's summary line (`BootstrapSummary::line`:
//! games, positions, and their rates). A teacher whose program is not installed is named on
//! stderr as `SKIPPED` and left out.

use std::path::PathBuf;

use games::go::GoState;
use games::xiangqi::Xiangqi;
use games::Encoding;
use teach::bootstrap::{bootstrap, BootstrapConfig, BootstrapOptions};
use teach::gtp_teacher::GtpTeacher;
use teach::teacher::Teacher;
use teach::uci_teacher::UciTeacher;

/// A fresh, empty directory for one teacher's shards.
fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bootstrap-rates-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Plays 5 games with `teacher` and prints the run's rates.
fn print_rate<G: Encoding>(
    start: &G,
    teacher: &mut dyn Teacher<G>,
    spec: &str,
    config: &BootstrapConfig,
) -> Result<(), Box<dyn std::error::Error>> {
    let out = out_dir(&format!("rate-{}", spec.len()));
    let opts = BootstrapOptions {
        out: &out,
        games: 5,
        seed: 1,
        teacher: spec,
        opponent: None,
        progress: false,
    };
    let summary = bootstrap(start, teacher, None, config, &opts);
    let _ = std::fs::remove_dir_all(&out);
    println!("{spec}: {}", summary?.line());
    Ok(())
}

fn rate_gnugo(level: u32) -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = testkit::gnugo("GNU Go's rate not measured") else {
        return Ok(());
    };
    let spec = format!(
        "gtp:cmd={path} --mode gtp --level {level} --chinese-rules --positional-superko \
         --capture-all-dead"
    );
    let config = BootstrapConfig {
        games_per_shard: 5,
        levels: Some([level, level]),
        ..BootstrapConfig::default()
    };
    let mut teacher = GtpTeacher::from_spec(&spec, &config)?;
    print_rate(&GoState::with_size(9), &mut teacher, &spec, &config)
}

fn rate_fairy_stockfish() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = testkit::fairy_stockfish("Fairy-Stockfish's rate not measured") else {
        return Ok(());
    };
    let spec = format!("fairy-stockfish:path={path}");
    let config = BootstrapConfig {
        games_per_shard: 5,
        multipv: 8,
        depth: Some(8),
        ..BootstrapConfig::default()
    };
    let mut teacher = UciTeacher::from_spec(&spec, &config)?.ok_or("not a UCI teacher spec")?;
    print_rate(&Xiangqi::start(), &mut teacher, &spec, &config)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    rate_gnugo(1)?;
    rate_gnugo(10)?;
    rate_fairy_stockfish()
}
