//! The subcommands of `engine`, one file each.

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
enum Command {}

impl Cli {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {}
    }
}
