//! `engine bootstrap`: a teacher's games and analysis into training shards (`teach::bootstrap`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;
use players::spec::{self, AgentSpec};
use setup::config;
use teach::bootstrap::{bootstrap, BootstrapConfig, BootstrapOptions};
use teach::teacher::TeachError;

use super::{config_reads, net_loader, with_default_network, ForGame, GameArgs, GameType, Loaded};

/// Play a teacher engine against itself (or an opponent) and write its games as shards: every
/// position gets the teacher's policy (GNU Go's move values, Fairy-Stockfish's MultiPV lines,
/// or any agent's choice) and a value blending the result with the teacher's evaluation.
/// Resumable: finished shards are kept and only the missing games are played.
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads(
        "its `game` and `bootstrap` sections and, for `net` agents, its `inference` section"
    )
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// The teacher: `gtp:cmd=gnugo --mode gtp --chinese-rules --positional-superko
    /// --capture-all-dead` (Go), `fairy-stockfish[:depth=N,movetime=MS,nodes=N,multipv=K]` or
    /// `uci:cmd=…` (Xiangqi; those keys override the config's `bootstrap` section), or any agent
    /// spec of `engine match`.
    #[arg(long)]
    teacher: String,
    /// An agent spec the teacher plays against (the teacher takes both sides without one).
    #[arg(long)]
    opponent: Option<String>,
    /// Games the run holds when complete (those of finished shards included).
    #[arg(long)]
    games: usize,
    /// Directory the shards are written to (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Seed of the openings, the teacher's levels and the agents.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.games >= 1, "--games must be at least 1");
    let line = args.game.dispatch(&args)?;
    outln!("{line}")
}

impl ForGame for &Args {
    type Output = String;

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<String> {
        let settings: BootstrapConfig =
            config::checked(&c.doc, "bootstrap", &c.path, BootstrapConfig::validate)?;
        let load = net_loader(&start, &c.doc, &c.path, 1, None);
        let build = |text: &str, seed: u64| -> Result<_, TeachError> {
            let parsed = AgentSpec::parse(text).map_err(|e| TeachError::Spec {
                spec: text.to_string(),
                reason: e.reason.to_string(),
            })?;
            let parsed = with_default_network(&parsed, &start);
            spec::build::<G>(&parsed, text, seed, &load).map_err(|e| TeachError::Spec {
                spec: text.to_string(),
                reason: format!("{e:#}"),
            })
        };
        let mut teacher = G::teacher(&self.teacher, &settings, &mut || {
            build(&self.teacher, self.seed)
        })
        .context("--teacher")?;
        let mut opponent = match &self.opponent {
            Some(text) => Some(build(text, self.seed ^ 1).context("--opponent")?),
            None => None,
        };
        let opts = BootstrapOptions {
            out: &self.out,
            games: self.games,
            seed: self.seed,
            teacher: &self.teacher,
            opponent: self.opponent.as_deref(),
            progress: true,
        };
        let done = bootstrap(
            &start,
            teacher.as_mut(),
            opponent.as_deref_mut(),
            &settings,
            &opts,
        )?;
        Ok(done.line())
    }
}
