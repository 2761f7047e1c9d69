//! `engine analyse`: searches one position and lists the candidate actions the search weighed,
//! each with its visits, value, prior and expected line (`faces::analysis`): what a player asks
//! of an engine between games.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use eval::Evaluator;
use faces::analysis::{self, Settings};
use players::spec::{MAX_THREADS, MAX_VISITS};
use search::{Limit, SearchKind};
use setup::models;

use super::{config_reads, position, ForGame, GameArgs, GameType, Loaded};

/// Search a position and list the candidate actions with their visits, values and lines.
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads(
        "its `game` section (the variant rules) and, for `--model`, its `inference` section"
    )
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// The position in the game's text format (Liuzhou: LFEN; Xiangqi: FEN; Go: see
    /// docs/go.md); the start position if absent.
    #[arg(long, visible_alias = "fen")]
    position: Option<String>,
    /// Actions played from the position before the search, in the game's notation, separated
    /// by spaces or commas: `c3 d4 xc3` (Liuzhou), `h2e2 h9g7` (Xiangqi), `C3 D4 pass` (Go).
    #[arg(long, default_value = "")]
    moves: String,
    /// The search: `mcts` (random playouts) or `net` (guided by `--model`) [default: `net`
    /// when there is a model, else `mcts`].
    #[arg(long)]
    agent: Option<String>,
    /// The ONNX model that guides the `net` search, or `built-in` [default: the game's
    /// default network (`engine models list`), if it has one].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Playouts to search [default: 1600, or no limit when `--seconds` is given].
    #[arg(long)]
    visits: Option<u64>,
    /// Seconds to search, alone or with `--visits` (whichever ends first).
    #[arg(long)]
    seconds: Option<f64>,
    /// Threads searching the one tree.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The tree search's rule: `puct`, or `gumbel` (Gumbel AlphaZero: sequential halving at
    /// the root, without noise; docs/search.md).
    #[arg(long, default_value = "puct")]
    search: SearchKind,
    /// Candidates to list, most visited first (0: all).
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Seed of the search's random choices (random playouts, ties).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Visits when neither `--visits` nor `--seconds` is given.
const DEFAULT_VISITS: u64 = 1600;

pub fn run(args: Args) -> anyhow::Result<()> {
    args.game.dispatch(&args)
}

impl ForGame for &Args {
    type Output = ();

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<()> {
        let state = position(start, self.position.as_deref(), &self.moves)?;
        if let Some(reason) = state.end_reason() {
            bail!("analyse: the game is over in this position ({reason})");
        }
        if self.threads == 0 || self.threads > MAX_THREADS {
            bail!("--threads {}: must be 1 to {MAX_THREADS}", self.threads);
        }
        let settings = Settings {
            limit: limit(self.visits, self.seconds)?,
            search: self.search,
            threads: self.threads,
            seed: self.seed,
            top: self.top,
        };
        let model = models::given_or_default(
            self.model.as_deref(),
            self.agent.as_deref(),
            &state,
            "tree search with random playouts (mcts)",
        );
        let agent = self
            .agent
            .clone()
            .unwrap_or_else(|| if model.is_some() { "net" } else { "mcts" }.into());
        let (network, label): (Option<Arc<dyn Evaluator<G>>>, String) = match agent.as_str() {
            "mcts" => (None, "mcts (random playouts)".into()),
            "net" => {
                let Some(model) = &model else {
                    bail!("--agent net needs --model: {} has no network", G::NAME);
                };
                let net = models::evaluator(&state, model, &c.doc, &c.path).context("--model")?;
                (Some(net), format!("net ({model})"))
            }
            other => bail!("--agent {other:?}: must be mcts or net"),
        };
        let label = match self.search {
            SearchKind::Puct => label,
            SearchKind::Gumbel => format!("{label}, gumbel"),
        };
        let found = analysis::search(&state, network, label, &settings)?;
        if self.json {
            outln!("{}", found.json())
        } else {
            outln!("{}\n{}", G::TITLE, state.render())?;
            out!("{}", found.table())
        }
    }
}

/// The search's limit from the flags: visits, seconds or both.
fn limit(visits: Option<u64>, seconds: Option<f64>) -> anyhow::Result<Limit> {
    if let Some(v) = visits {
        if v == 0 || v > MAX_VISITS {
            bail!("--visits {v}: must be 1 to {MAX_VISITS}");
        }
    }
    let time = match seconds {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--seconds {s}: must be more than 0 and at most 86400"),
    };
    let visits = visits.or(if time.is_none() {
        Some(DEFAULT_VISITS)
    } else {
        None
    });
    Ok(Limit { visits, time })
}
