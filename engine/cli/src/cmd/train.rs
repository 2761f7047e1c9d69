//! `engine train`: the whole AlphaZero loop (see `crate::train`).

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::GameKind;
use setup::config;
use train::{find_trainer, run, Setup, TrainConfig};

/// Run the self-play → fit → gate loop; resumes from the run directory's state.
#[derive(ClapArgs)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value = "liuzhou")]
    game: GameKind,
    /// Config file: its `game`, `network`, `selfplay`, `fit`, `inference` and `train` sections.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run directory (overrides `train.run_dir`): models, shards, state and report go here.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Stop after this many minutes of training in total (overrides `train.time_limit_minutes`).
    #[arg(long)]
    minutes: Option<f64>,
    /// Stop after this many iterations in total (overrides `train.iterations`).
    #[arg(long)]
    iterations: Option<u32>,
    /// The trainer-bridge binary (default: next to this executable, else on the PATH).
    #[arg(long)]
    trainer: Option<PathBuf>,
}

pub fn run_cmd(args: Args) -> anyhow::Result<()> {
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(|| args.game.default_config());
    let doc = config::load(&config_path)?;
    let train = train_section(&args, &doc, &config_path)?;
    // Every section the loop uses is read and checked here, before anything is created.
    let setup = Setup {
        config_path: &config_path,
        doc: &doc,
        trainer: find_trainer(args.trainer.clone()),
        selfplay: config::selfplay(&doc, &config_path)?,
        inference: config::inference(&doc, &config_path)?,
        network: config::network(&doc, &config_path)?,
    };
    let done = match args.game {
        GameKind::Liuzhou => run(&config::liuzhou_start(&doc, &config_path)?, &train, &setup),
        GameKind::Xiangqi => run(&config::xiangqi_start(&doc, &config_path)?, &train, &setup),
        GameKind::Go => run(&config::go_start(&doc, &config_path)?, &train, &setup),
    }?;
    outln!("{done}")
}

/// The `train` section with the command line's overrides, checked; an error names the flag
/// when the value came from one.
fn train_section(
    args: &Args,
    doc: &serde_yaml::Value,
    config_path: &std::path::Path,
) -> anyhow::Result<TrainConfig> {
    let mut train: TrainConfig = config::section(doc, "train", config_path)?;
    let mut flags = Vec::new();
    if let Some(d) = &args.run_dir {
        train.run_dir = d.clone();
        flags.push(("run_dir", "--run-dir"));
    }
    if let Some(m) = args.minutes {
        train.time_limit_minutes = m;
        flags.push(("time_limit_minutes", "--minutes"));
    }
    if let Some(i) = args.iterations {
        train.iterations = i;
        flags.push(("iterations", "--iterations"));
    }
    if let Err(e) = train.validate() {
        return Err(match flags.iter().find(|(key, _)| *key == e.key) {
            Some((_, flag)) => anyhow::anyhow!("{flag}: {e}"),
            None => config::invalid(config_path, "train", e).into(),
        });
    }
    Ok(train)
}
