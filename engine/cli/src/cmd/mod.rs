//! The subcommands of `engine`, one file each.

mod analyse;
mod bench;
mod gtp;
mod match_;
mod perft;
mod perft_go;
mod perft_xiangqi;
mod play;
mod selfplay;
mod serve;
mod train;
mod uci;

use clap::{Parser, Subcommand, ValueEnum};

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

/// Plays `moves` (actions in the game's notation, separated by spaces or commas) on `state`,
/// for the `--moves` flags; an action that cannot be read or is illegal is an error naming its
/// place in the list.
pub fn play_moves<G: games::Game>(state: &mut G, moves: &str) -> anyhow::Result<()> {
    use anyhow::Context;
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
