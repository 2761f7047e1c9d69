//! `engine gtp`: GTP version 2 on stdin/stdout, for Go (`faces::gtp::go`) or in Liuzhou's
//! dialect (`--game liuzhou`, `faces::gtp::liuzhou`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;
use faces::gtp::go::{make_agent_and_network, Session};
use faces::gtp::liuzhou as gtp_liuzhou;
use faces::gtp::{serve_stdio, GtpConfig};
use games::go::{GoRules, GoState};
use players::spec::AgentSpec;
use setup::{config, models};

/// The board size of the shipped Go network.
const SHIPPED_SIZE: usize = 9;

use super::GameKind;

/// Speak GTP version 2 on stdin/stdout: Go by default, or Liuzhou's dialect with `--game
/// liuzhou` (actions `c3`, `c3-c4`, `xc3`; `liuzhou-lfen`, `liuzhou-legal` and the other
/// commands of docs/liuzhou.md).
#[derive(ClapArgs)]
pub struct Args {
    /// The game: go, or liuzhou for Liuzhou's dialect (a `--config` file must be this game's).
    #[arg(long, value_enum, default_value = "go")]
    game: GameKind,
    /// Config file: its `game` section gives the rules, its `gtp` section the agent; the keys
    /// it names replace those of the built-in configs/<game>.yaml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Go: board size at start, overriding the config (GTP `boardsize` changes it later).
    #[arg(long)]
    size: Option<usize>,
    /// Go: komi at start, overriding the config (GTP `komi` changes it later).
    #[arg(long)]
    komi: Option<f32>,
    /// The agent that answers `genmove`, overriding the config's `gtp.agent`. Go: `net`,
    /// `mcts`, `playout` or `random`. Liuzhou: an agent spec as `engine match` takes them,
    /// `net` (the default network unless `--model`), `mcts`, `alphabeta[:depth=N,movetime=MS]`
    /// or `random`; `--model`, `--visits` and `--seed` fill in the keys it does not give.
    #[arg(long)]
    agent: Option<String>,
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
    let (doc, path) = config::read(args.game.name(), args.config.as_deref())?;
    match args.game {
        GameKind::Go => run_go(args, doc, path),
        GameKind::Liuzhou => run_liuzhou(args, doc, path),
        GameKind::Xiangqi => {
            anyhow::bail!("engine gtp speaks Go and Liuzhou; Xiangqi speaks UCI (engine uci)")
        }
    }
}

/// Liuzhou's dialect: the rules and the agent from the config, the flags over them.
fn run_liuzhou(args: Args, doc: serde_yaml::Value, path: PathBuf) -> anyhow::Result<()> {
    if args.size.is_some() || args.komi.is_some() {
        anyhow::bail!("--size and --komi are for Go; Liuzhou is played on 6x6 without komi");
    }
    let start = config::liuzhou_start(&doc, &path)?;
    let mut gtp = config::section::<GtpConfig>(&doc, "gtp", &path)?;
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
    let agent = gtp_liuzhou::make_agent(&gtp, &start, &doc, &path)?;
    serve_stdio(gtp_liuzhou::Session::new(start.rules(), agent)?)
}

/// Go: the rules and the agent from the config, the flags over them.
fn run_go(args: Args, doc: serde_yaml::Value, path: PathBuf) -> anyhow::Result<()> {
    let mut rules = config::rules::<GoRules>(&doc, &path, "go")?;
    let mut gtp = config::section::<GtpConfig>(&doc, "gtp", &path)?;
    if let Some(size) = args.size {
        rules.size = size;
    }
    if let Some(komi) = args.komi {
        rules.komi = komi;
    }
    let chosen = args.agent.is_some();
    if let Some(agent) = &args.agent {
        gtp.agent = agent.clone();
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
    // The default network plays the board it was made for; the tree search with random
    // playouts plays every other size, so that a GUI can open any board.
    let fallback = "the tree search with random playouts (mcts)";
    let mut net_size = rules.size;
    if matches!(gtp.spec()?, AgentSpec::Net { model: None, .. }) {
        match models::default_network("go", fallback) {
            Some(place) => {
                gtp.model = Some(place.model());
                net_size = SHIPPED_SIZE;
            }
            None if chosen => anyhow::bail!("--agent net: no network for go; give --model"),
            None => gtp.without_network(),
        }
    }
    let net_rules = GoRules {
        size: net_size,
        ..rules.clone()
    };
    let start = GoState::new(net_rules.clone())?;
    let (agent, only_size, network) = make_agent_and_network(&gtp, &start, &doc, &path)?;
    let mut session = Session::new(net_rules, agent)?;
    session.only_size = only_size;
    session.set_network(network);
    if only_size.is_some() {
        let mut other = gtp.clone();
        other.without_network();
        let (agent, _, _) = make_agent_and_network(&other, &start, &doc, &path)?;
        session.set_other_sizes(agent, fallback);
    }
    if rules.size != net_size {
        let reply = session.handle(&format!("boardsize {}", rules.size));
        if !reply.as_deref().is_some_and(|r| r.starts_with('=')) {
            anyhow::bail!("go at {0}x{0}: no player for this board", rules.size);
        }
    }
    serve_stdio(session)
}
