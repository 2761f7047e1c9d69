//! `engine train`: the whole AlphaZero loop (see `crate::train`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;

use super::GameKind;
use crate::config;
use crate::train::{find_trainer, run, Setup, TrainConfig};

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
    let mut train: TrainConfig = config::section(&doc, "train", &config_path)?;
    if let Some(d) = args.run_dir {
        train.run_dir = d;
    }
    if let Some(m) = args.minutes {
        train.time_limit_minutes = m;
    }
    if let Some(i) = args.iterations {
        train.iterations = i;
    }
    train
        .validate()
        .map_err(anyhow::Error::msg)
        .context("config section `train`")?;
    let setup = Setup {
        config_path: &config_path,
        doc: &doc,
        trainer: find_trainer(args.trainer),
    };
    match args.game {
        GameKind::Liuzhou => run(&config::liuzhou_start(&doc, &config_path)?, &train, &setup),
        GameKind::Xiangqi => run(&games::xiangqi::Xiangqi::default(), &train, &setup),
        GameKind::Go => run(&config::go_start(&doc, &config_path)?, &train, &setup),
    }
}
