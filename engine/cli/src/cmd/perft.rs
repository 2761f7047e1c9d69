//! `engine perft`: counts the leaves of the move tree, the standard rules check.
//!
//! Output contract: with `--divide`, one `MOVE COUNT` line per legal move first; always the
//! total node count alone on the last line of stdout. Timing goes to stderr.

use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// Which game's rules to count (xiangqi).
    #[arg(long, default_value = "xiangqi")]
    game: String,
    /// Start position in the game's text format (Xiangqi: FEN); the standard start if omitted.
    #[arg(long)]
    fen: Option<String>,
    /// Plies to count.
    #[arg(long)]
    depth: u32,
    /// Also print the count below each legal move (`MOVE COUNT`), in generation order.
    #[arg(long)]
    divide: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.game.as_str() {
        "xiangqi" => super::perft_xiangqi::run(args.fen.as_deref(), args.depth, args.divide),
        other => anyhow::bail!("perft: unknown game '{other}' (this build knows: xiangqi)"),
    }
}
