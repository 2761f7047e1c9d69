//! `engine gtp`: Go over GTP version 2 on stdin/stdout (`faces::gtp`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args as ClapArgs;
use faces::gtp::{make_agent, serve_stdio, AgentKind, GtpConfig, Session};
use games::go::{GoRules, GoState};
use setup::{config, models};

/// The board size of the shipped Go network.
const SHIPPED_SIZE: usize = 9;

use super::GameKind;

/// Speak GTP version 2 on stdin/stdout (Go).
#[derive(ClapArgs)]
pub struct Args {
    /// Go config file: its `game` section gives the rules, its `gtp` section the agent
    /// [default: configs/go.yaml if it is there, else built-in defaults].
    #[arg(long)]
    config: Option<PathBuf>,
    /// Board size at start, overriding the config (GTP `boardsize` changes it later).
    #[arg(long)]
    size: Option<usize>,
    /// Komi at start, overriding the config (GTP `komi` changes it later).
    #[arg(long)]
    komi: Option<f32>,
    /// The agent that answers `genmove`, overriding the config.
    #[arg(long, value_enum)]
    agent: Option<AgentKind>,
    /// The ONNX model of the `net` agent, overriding the config.
    #[arg(long)]
    model: Option<String>,
    /// Visits per move of the `mcts` and `net` agents, overriding the config.
    #[arg(long)]
    visits: Option<u64>,
    /// Seed of the agent's random choices, overriding the config.
    #[arg(long)]
    seed: Option<u64>,
}

/// The config document at `path` with its rules and agent settings.
fn read_config(path: &Path) -> anyhow::Result<(serde_yaml::Value, GoRules, GtpConfig)> {
    let doc = config::load(path)?;
    let rules = config::rules::<GoRules>(&doc, path, "go")?;
    let gtp = config::section::<GtpConfig>(&doc, "gtp", path)?;
    Ok((doc, rules, gtp))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let default = GameKind::Go.default_config();
    let (doc, path, mut rules, mut gtp) = match &args.config {
        Some(path) => {
            let (doc, rules, gtp) = read_config(path)?;
            (doc, path.clone(), rules, gtp)
        }
        None if default.exists() => {
            let (doc, rules, gtp) = read_config(&default)?;
            (doc, default, rules, gtp)
        }
        // GUIs start engines from directories of their own: the built-in rules then.
        None => {
            tracing::info!("no config at {}: default Go rules", default.display());
            let none = PathBuf::from("(defaults)");
            (
                serde_yaml::Value::Null,
                none,
                GoRules::default(),
                GtpConfig::default(),
            )
        }
    };
    if let Some(size) = args.size {
        rules.size = size;
    }
    if let Some(komi) = args.komi {
        rules.komi = komi;
    }
    let chosen = args.agent.is_some();
    if let Some(agent) = args.agent {
        gtp.agent = agent;
    }
    if let Some(seed) = args.seed {
        gtp.seed = seed;
    }
    if let Some(model) = args.model {
        gtp.model = Some(model);
    }
    if let Some(visits) = args.visits {
        gtp.visits = visits;
    }
    rules.validate().context("Go rules")?;
    if gtp.agent == AgentKind::Net && gtp.model.is_none() {
        // The shipped network, where one is there for this board; otherwise the tree search
        // with random playouts, unless the network was asked for by name.
        match models::shipped("go").filter(|_| rules.size == SHIPPED_SIZE) {
            Some(m) => gtp.model = Some(m.to_string_lossy().into_owned()),
            None if chosen => anyhow::bail!(
                "--agent net: no network ships for go at {size}x{size}; give --model",
                size = rules.size
            ),
            None => {
                tracing::info!(
                    "no network ships for go at {size}x{size}: playing mcts (random playouts)",
                    size = rules.size
                );
                gtp.agent = AgentKind::Mcts;
            }
        }
    }
    let start = GoState::new(rules.clone())?;
    let (agent, only_size) = make_agent(&gtp, &start, &doc, &path)?;
    let mut session = Session::new(rules, agent)?;
    session.only_size = only_size;
    serve_stdio(session)
}
