//! `engine selfplay`: plays games against itself and writes training shards.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;
use games::Game;
use indicatif::{ProgressBar, ProgressStyle};
use selfplay::{SelfplayConfig, ShardSink};

use super::GameKind;
use setup::{config, models};

/// Play games against itself and write their positions as training shards.
#[derive(ClapArgs)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value = "liuzhou")]
    game: GameKind,
    /// The model that plays: an ONNX file, or `uniform` (no network: uniform priors, value 0).
    #[arg(long)]
    model: String,
    /// Directory the shards are written to (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Number of games.
    #[arg(long, default_value_t = 64)]
    games: usize,
    /// Config file (its `game`, `selfplay` and `inference` sections).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Execution provider for an ONNX model: cpu, cuda or tensorrt (overrides the config's
    /// `inference.provider`). What really runs is logged.
    #[arg(long)]
    provider: Option<infer::Provider>,
    /// Seed for noise, temperature and playout caps.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.games >= 1, "--games must be at least 1");
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(|| args.game.default_config());
    let doc = config::load(&config_path)?;
    let sp: SelfplayConfig = config::selfplay(&doc, &config_path)?;
    config::inference(&doc, &config_path)?;
    let config_text = serde_yaml::to_string(&doc).unwrap_or_default();
    match args.game {
        GameKind::Liuzhou => {
            let start = config::liuzhou_start(&doc, &config_path)?;
            play(&start, &args, &sp, &doc, &config_path, &config_text)
        }
        GameKind::Xiangqi => {
            let start = config::xiangqi_start(&doc, &config_path)?;
            play(&start, &args, &sp, &doc, &config_path, &config_text)
        }
        GameKind::Go => {
            let start = config::go_start(&doc, &config_path)?;
            play(&start, &args, &sp, &doc, &config_path, &config_text)
        }
    }
}

fn play<G: Game>(
    start: &G,
    args: &Args,
    sp: &SelfplayConfig,
    doc: &serde_yaml::Value,
    config_path: &std::path::Path,
    config_text: &str,
) -> anyhow::Result<()> {
    let sink = ShardSink {
        dir: &args.out,
        tag: "selfplay",
        model: &args.model,
        config: config_text,
    };
    // A bad --out fails here, not after a shard's worth of games.
    sink.prepare().context("--out")?;
    let overrides = models::Overrides {
        provider: args.provider,
        ..Default::default()
    };
    let evaluator = models::evaluator_with(start, &args.model, doc, config_path, overrides)?;
    tracing::info!("self-play with {}", evaluator.describe());
    let bar = ProgressBar::new(args.games as u64).with_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} games {msg} [{elapsed_precise} < {eta}]",
        )
        .expect("valid template"),
    );
    let summary = selfplay::run(
        start,
        evaluator.as_ref(),
        sp,
        args.games,
        &sink,
        args.seed,
        |s| {
            bar.set_position(s.games as u64);
            bar.set_message(format!("{:.1} positions/s", s.positions_per_second()));
        },
    )?;
    bar.finish_and_clear();
    outln!("{}", summary.line())?;
    Ok(())
}
