//! `engine gtp`: Go over GTP version 2 on stdin/stdout (`faces::gtp`).

use std::path::PathBuf;

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
    /// Go config file: its `game` section gives the rules, its `gtp` section the agent; the
    /// keys it names replace those of the built-in configs/go.yaml.
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

pub fn run(args: Args) -> anyhow::Result<()> {
    // GUIs start engines from directories of their own: the built-in config serves them all.
    let (doc, path) = config::read(GameKind::Go.name(), args.config.as_deref())?;
    let mut rules = config::rules::<GoRules>(&doc, &path, "go")?;
    let mut gtp = config::section::<GtpConfig>(&doc, "gtp", &path)?;
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
        // The default network, where there is one for this board; otherwise the tree search
        // with random playouts, unless the network was asked for by name.
        let fallback = "the tree search with random playouts (mcts)";
        let found = if rules.size == SHIPPED_SIZE {
            models::default_network("go", fallback)
        } else {
            None
        };
        match found {
            Some(place) => gtp.model = Some(place.model()),
            None if chosen => anyhow::bail!(
                "--agent net: no network for go at {size}x{size}; give --model",
                size = rules.size
            ),
            None => {
                if rules.size != SHIPPED_SIZE {
                    tracing::info!(
                        "go at {size}x{size}: the default network plays 9x9 only; using {fallback}",
                        size = rules.size
                    );
                }
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
