//! The subcommands of `engine`, one file each.

mod perft;
mod perft_xiangqi;
mod uci;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "engine",
    version,
    about = "AlphaZero-style engine for Liuzhou chess, Xiangqi and Go"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaves of the move tree (rules check): `engine perft --game xiangqi --depth 5`.
    Perft(perft::Args),
    /// Speak UCI on stdin/stdout (Xiangqi; ICCS moves with ranks 0–9).
    Uci(uci::Args),
}

impl Cli {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Perft(args) => perft::run(args),
            Command::Uci(args) => uci::run(args),
        }
    }
}
