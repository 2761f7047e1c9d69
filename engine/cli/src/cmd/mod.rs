//! The subcommands of `engine`, one file each; a subcommand's per-game or per-section parts
//! sit beside it as `<subcommand>_<part>.rs`.

mod analyse;
mod bench;
mod bench_nets;
mod bench_rules;
mod bootstrap;
mod gtp;
mod import;
mod match_;
mod perft;
mod perft_go;
mod perft_xiangqi;
mod play;
mod selfplay;
mod serve;
mod train;
mod uci;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use eval::Evaluator;
use games::Game;
use setup::models;

use clap::{Parser, Subcommand, ValueEnum};
use faces::web::view::WebGame;
use setup::config;

#[derive(Parser)]
#[command(
    name = "engine",
    version,
    about = "AlphaZero-style engine for Liuzhou chess (六洲棋), Xiangqi and Go"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count leaf nodes of the game tree (rules check).
    Perft(perft::Args),
    /// Measure rules, search and inference speed.
    Bench(bench::Args),
    /// Search a position and list the candidate actions with their visits, values and lines.
    ///
    /// A value is the expected result for the player to act, from −1 (a loss) to +1 (a win);
    /// `won N` and `lost N` mark results the MCTS-solver proved, N actions from the game's end.
    #[command(visible_alias = "analyze")]
    Analyse(analyse::Args),
    /// Play a game in the terminal.
    Play(play::Args),
    /// Play a match between two agents (wins/draws/losses with a confidence interval).
    Match(Box<match_::Args>),
    /// Serve a web page to play against the engine in a browser.
    Serve(serve::Args),
    /// Play games against itself and write training shards.
    Selfplay(selfplay::Args),
    /// Run the AlphaZero loop: self-play, fit, gate, report (resumable).
    Train(train::Args),
    /// Play a teacher engine (GNU Go, Fairy-Stockfish, any agent) and write its games and
    /// analysis as training shards (resumable).
    Bootstrap(bootstrap::Args),
    /// Read game records (SGF for Go, PGN for Xiangqi) into training shards.
    Import(import::Args),
    /// Speak GTP version 2 on stdin/stdout (Go).
    Gtp(gtp::Args),
    /// Speak UCI, or UCCI after `ucci`, on stdin/stdout (Xiangqi; ICCS moves with ranks 0–9).
    Uci(uci::Args),
}

impl Cli {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Perft(args) => perft::run(args),
            Command::Bench(args) => bench::run(args),
            Command::Analyse(args) => analyse::run(args),
            Command::Play(args) => play::run(args),
            Command::Match(args) => match_::run(*args),
            Command::Serve(args) => serve::run(args),
            Command::Selfplay(args) => selfplay::run(args),
            Command::Train(args) => train::run_cmd(args),
            Command::Bootstrap(args) => bootstrap::run(args),
            Command::Import(args) => import::run(args),
            Command::Gtp(args) => gtp::run(args),
            Command::Uci(args) => uci::run(args),
        }
    }
}

/// The games the engine plays; every subcommand that takes `--game` uses this list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GameKind {
    /// 六洲棋 Liuzhou chess, 6 × 6.
    Liuzhou,
    /// 象棋 Xiangqi (Chinese chess).
    Xiangqi,
    /// 围棋 Go, 2 × 2 to 19 × 19.
    Go,
}

impl GameKind {
    /// The config file used when `--config` is not given.
    pub fn default_config(self) -> std::path::PathBuf {
        match self {
            GameKind::Liuzhou => "configs/liuzhou.yaml".into(),
            GameKind::Xiangqi => "configs/xiangqi.yaml".into(),
            GameKind::Go => "configs/go.yaml".into(),
        }
    }
}

/// `--game` and `--config`, spelled the same in every subcommand that plays a game.
#[derive(clap::Args, Clone, Debug)]
pub struct GameArgs {
    /// The game.
    #[arg(long, value_enum, default_value = "liuzhou")]
    pub game: GameKind,
    /// Config file: the game's variant rules (its `game` section) and the sections the
    /// subcommand reads [default: configs/<game>.yaml].
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// A config as a subcommand reads it: the document and where it came from.
pub struct Loaded {
    pub doc: serde_yaml::Value,
    pub path: PathBuf,
}

/// Everything a subcommand may ask of a game: the faces, its own players, learning from others.
pub trait GameType: WebGame + teach::Learnable {}

impl<G: WebGame + teach::Learnable> GameType for G {}

/// A subcommand's work for whichever game `--game` names, run once with the configured start
/// position (see [`GameArgs::dispatch`]).
pub trait ForGame {
    type Output;
    fn run<G: GameType>(self, start: G, config: &Loaded) -> anyhow::Result<Self::Output>;
}

impl GameArgs {
    /// The config file: `--config`, else the game's default.
    pub fn load(&self) -> anyhow::Result<Loaded> {
        let path = self
            .config
            .clone()
            .unwrap_or_else(|| self.game.default_config());
        Ok(Loaded {
            doc: config::load(&path)?,
            path,
        })
    }

    /// Reads the config and runs `work` for the game: the one place that turns `--game` into a
    /// type.
    pub fn dispatch<W: ForGame>(&self, work: W) -> anyhow::Result<W::Output> {
        let c = self.load()?;
        match self.game {
            GameKind::Liuzhou => work.run(config::liuzhou_start(&c.doc, &c.path)?, &c),
            GameKind::Xiangqi => work.run(config::xiangqi_start(&c.doc, &c.path)?, &c),
            GameKind::Go => work.run(config::go_start(&c.doc, &c.path)?, &c),
        }
    }
}

/// Loads `net` agents' models the way every subcommand does (`setup::models`). With games
/// played `parallel` at a time, each network gets an equal share of the cores for its
/// intra-op threads (one side of a game thinks at a time): two games at once, each network
/// on all cores, took 190 s for 20 games where a share each took 101 s.
pub fn net_loader<'a, G: Game>(
    start: &'a G,
    doc: &'a serde_yaml::Value,
    config: &'a Path,
    parallel: u32,
) -> impl Fn(Option<&Path>) -> anyhow::Result<Arc<dyn Evaluator<G>>> + 'a {
    let overrides = models::Overrides::sharing_cores(parallel);
    move |model: Option<&Path>| {
        let model = models::named_or_shipped(model, G::NAME)?;
        let text = model
            .to_str()
            .with_context(|| format!("net:model={}: not a UTF-8 path", model.display()))?;
        models::evaluator_with(start, text, doc, config, overrides)
            .with_context(|| format!("net:model={}", model.display()))
    }
}

/// Plays `moves` (actions in the game's notation, separated by spaces or commas) on `state`,
/// for the `--moves` flags; an action that cannot be read or is illegal is an error naming its
/// place in the list.
pub fn play_moves<G: Game>(state: &mut G, moves: &str) -> anyhow::Result<()> {
    for (i, word) in moves
        .split([' ', ','])
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let action = state
            .parse_action(word)
            .with_context(|| format!("--moves: action {} ({word})", i + 1))?;
        state
            .play(action)
            .with_context(|| format!("--moves: action {} ({word})", i + 1))?;
    }
    Ok(())
}
