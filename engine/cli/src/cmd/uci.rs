//! `engine uci`: Xiangqi over UCI, or UCCI when the GUI opens with `ucci` (`faces::uci`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args as ClapArgs;
use faces::uci::{Session, Start, DEFAULT_VISITS};
use players::alphabeta::MAX_HASH_MB;
use setup::{config, models};

use super::GameKind;

/// Speak UCI, or UCCI after `ucci`, on stdin/stdout (Xiangqi).
#[derive(ClapArgs)]
pub struct Args {
    /// Game to play (only xiangqi speaks UCI here).
    #[arg(long, default_value = "xiangqi")]
    game: String,
    /// Transposition table size in MiB, 1 to 4096 (the `Hash` option's start value).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=MAX_HASH_MB as u64))]
    hash: u64,
    /// The searcher at start (the `Agent` option): alphabeta, mcts or net (with `--model`, else
    /// Xiangqi's default network: `engine models list`) [default: net with the default network,
    /// its timed moves checked by alpha-beta (`Guard`); alphabeta where there is no network].
    #[arg(long)]
    agent: Option<String>,
    /// The ONNX model of the `net` agent (the `Model` option's start value).
    #[arg(long)]
    model: Option<String>,
    /// Visits per move of `mcts` and `net` when `go` names no nodes, time or clock.
    #[arg(long, default_value_t = DEFAULT_VISITS)]
    visits: u64,
    /// Config file whose `inference` section loads the model; the keys it names replace those
    /// of the built-in configs/xiangqi.yaml.
    #[arg(long)]
    config: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.game != "xiangqi" {
        anyhow::bail!("uci: only xiangqi speaks UCI, not '{}'", args.game);
    }
    // GUIs start engines from directories of their own: the built-in config serves them all.
    let (doc, path) = config::read(GameKind::Xiangqi.name(), args.config.as_deref())?;
    let xiangqi = config::xiangqi_start(&doc, &path)?;
    let model = models::given_or_default(
        args.model.as_deref().map(Path::new),
        args.agent.as_deref(),
        &xiangqi,
        "alpha-beta (`--agent net` then needs `--model`)",
    );
    let agent = args
        .agent
        .unwrap_or_else(|| if model.is_some() { "net" } else { "alphabeta" }.into());
    let start = Start {
        // The range is checked by clap: this converts, it cannot clamp.
        hash_mb: usize::try_from(args.hash).unwrap_or(MAX_HASH_MB),
        agent,
        model,
        visits: args.visits,
        config: (doc, path),
    };
    let mut session = Session::open(Box::new(std::io::stdout()), start)
        .map_err(|e| anyhow::anyhow!("uci: {}", e.reason))
        .context("starting the UCI session (--agent, --model, --visits, --hash)")?;
    if !session.has_searcher() {
        anyhow::bail!("uci: --agent net needs --model");
    }
    session.run(std::io::stdin().lock())
}
