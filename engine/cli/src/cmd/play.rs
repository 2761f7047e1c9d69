//! `engine play`: a game in the terminal, a person against an agent or two agents watched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Args as ClapArgs;
use eval::Evaluator;
use games::Game;

use super::GameKind;
use faces::terminal::play_game;
use faces::web::view::Choice;
use setup::{config, models};

/// Play a game in the terminal: type actions in the game's notation, or `help`.
#[derive(ClapArgs)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value = "liuzhou")]
    game: GameKind,
    /// Config file with the game's variant settings (its `game` section); default
    /// `configs/<game>.yaml`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The side a person plays: `first`/`second`, the side's name (`black`, `white`; `red` in
    /// Xiangqi), or `none` to watch the engine play itself.
    #[arg(long, default_value = "none")]
    human: String,
    /// The engine's agent: `mcts` (tree search with random playouts), `net` (tree search with the
    /// network of `--model`), `random`, or the game's own (`alphabeta` for Xiangqi, its
    /// default; otherwise `net` when there is a model, else `mcts`).
    #[arg(long)]
    agent: Option<String>,
    /// The ONNX model the `net` agent plays with (its `inference` settings come from `--config`)
    /// [default: the shipped models/<game>/best.onnx, if there is one].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Visits per decision for a searching agent.
    #[arg(long, default_value_t = 400)]
    visits: u64,
    /// Seed of the agent's random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // The name is settled per game in `play_game` when `--agent` is not given.
    let spec = Choice {
        name: args.agent.clone().unwrap_or_default(),
        visits: args.visits,
        seed: args.seed,
    };
    spec.validate(u64::MAX).context("--agent/--visits")?;
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(|| args.game.default_config());
    let doc = config::load(&config_path)?;
    match args.game {
        GameKind::Liuzhou => {
            let start = config::liuzhou_start(&doc, &config_path)?;
            let net = network(&start, &args, &doc, &config_path)?;
            play_game(start, &args.human, &spec, net.as_ref())
        }
        GameKind::Xiangqi => {
            let start = config::xiangqi_start(&doc, &config_path)?;
            let net = network(&start, &args, &doc, &config_path)?;
            play_game(start, &args.human, &spec, net.as_ref())
        }
        GameKind::Go => {
            let start = config::go_start(&doc, &config_path)?;
            let net = network(&start, &args, &doc, &config_path)?;
            play_game(start, &args.human, &spec, net.as_ref())
        }
    }
}

/// The network of `--model`, else the shipped one when the agent may be `net`.
fn network<G: Game>(
    start: &G,
    args: &Args,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<Option<Arc<dyn Evaluator<G>>>> {
    models::given_or_shipped(args.model.as_deref(), args.agent.as_deref(), G::NAME)
        .as_ref()
        .map(|m| models::evaluator(start, &m.to_string_lossy(), doc, config_path))
        .transpose()
        .context("--model")
}
