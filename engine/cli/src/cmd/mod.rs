//! The subcommands of `engine`, one file each; a subcommand's per-game or per-section parts
//! sit beside it as `<subcommand>_<part>.rs`. `game` holds `--game` and `--config` and the one
//! dispatch over games.

mod analyse;
mod bench;
mod bench_nets;
mod bench_rules;
mod bootstrap;
mod config;
mod doctor;
mod game;
mod gtp;
mod import;
mod ladder;
mod levels;
mod match_;
mod models;
mod perft;
mod perft_go;
mod perft_xiangqi;
mod play;
mod selfplay;
mod serve;
mod shards;
mod train;
mod uci;

use clap::{Parser, Subcommand};

pub use game::{
    config_reads, net_loader, play_moves, position, with_default_network, ForGame, GameArgs,
    GameKind, GameType, Loaded,
};

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
    /// Rate a panel of agents by a round robin (Elo by maximum likelihood, 95 % intervals).
    Ladder(ladder::Args),
    /// Calibrate a game's strength levels in Elo against fixed anchors (random play at 0).
    Levels(levels::Args),
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
    /// Tools for training shards: `verify` checks them (and checkpoints) after a copy, `upgrade`
    /// carries them over to a game's current encoding.
    Shards(shards::Args),
    /// Speak GTP version 2 on stdin/stdout (Go; Liuzhou's dialect with `--game liuzhou`).
    Gtp(gtp::Args),
    /// Speak UCI, or UCCI after `ucci`, on stdin/stdout (Xiangqi; ICCS moves with ranks 0–9).
    Uci(uci::Args),
    /// Print the effective config of a game, or where configs, models and caches are looked up.
    Config(config::Args),
    /// List the default networks found, or install the shipped ones into the user's data
    /// directory.
    Models(models::Args),
    /// Report version, configs and networks per game, ONNX Runtime and its execution
    /// providers, and the oracle programs found.
    Doctor(doctor::Args),
}

impl Cli {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Perft(args) => perft::run(args),
            Command::Bench(args) => bench::run(args),
            Command::Analyse(args) => analyse::run(args),
            Command::Play(args) => play::run(args),
            Command::Match(args) => match_::run(*args),
            Command::Ladder(args) => ladder::run(args),
            Command::Levels(args) => levels::run(args),
            Command::Serve(args) => serve::run(args),
            Command::Selfplay(args) => selfplay::run(args),
            Command::Train(args) => train::run(args),
            Command::Bootstrap(args) => bootstrap::run(args),
            Command::Import(args) => import::run(args),
            Command::Shards(args) => shards::run(args),
            Command::Gtp(args) => gtp::run(args),
            Command::Uci(args) => uci::run(args),
            Command::Config(args) => config::run(args),
            Command::Models(args) => models::run(args),
            Command::Doctor(args) => doctor::run(args),
        }
    }
}
