//! `engine perft`: counts the leaves of the game tree, the standard check of move generation.

use anyhow::Context;
use clap::Args as ClapArgs;
use games::liuzhou::{Liuzhou, Rules};
use games::{perft, perft_divide, Game};

use super::GameKind;

/// Count leaf nodes of the game tree to a depth (every atomic action is one ply).
#[derive(ClapArgs)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value = "liuzhou")]
    game: GameKind,
    /// Start position in the game's text format (Liuzhou: LFEN; Xiangqi: FEN; Go: see docs/go.md); the standard
    /// start if absent.
    #[arg(long, visible_alias = "fen")]
    position: Option<String>,
    /// Plies to search.
    #[arg(long)]
    depth: u32,
    /// First print one `ACTION COUNT` line per legal action.
    #[arg(long)]
    divide: bool,
    /// Liuzhou: a player with fewer stones than this after placement loses (1 or 4).
    #[arg(long, default_value_t = 1)]
    lose_below: u8,
    #[command(flatten)]
    go: super::perft_go::GoArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.game {
        GameKind::Liuzhou => {
            let rules = Rules {
                lose_below: args.lose_below,
            };
            rules
                .validate()
                .map_err(anyhow::Error::msg)
                .context("--lose-below")?;
            let state = match &args.position {
                Some(text) => Liuzhou::from_lfen(text, rules)
                    .with_context(|| format!("perft: --position '{text}'"))?,
                None => Liuzhou::new(rules),
            };
            report(&state, args.depth, args.divide)?;
        }
        // Xiangqi has its own make/unmake perft, far faster than the generic clone-and-play.
        GameKind::Xiangqi => {
            super::perft_xiangqi::run(args.position.as_deref(), args.depth, args.divide)?
        }
        GameKind::Go => {
            let state = super::perft_go::start(&args.go, args.position.as_deref())?;
            report(&state, args.depth, args.divide)?;
        }
    }
    Ok(())
}

/// Prints the divide lines (if asked) and the total alone on the last line.
pub fn report<G: Game>(state: &G, depth: u32, divide: bool) -> anyhow::Result<()> {
    if divide && depth > 0 {
        let parts = perft_divide(state, depth);
        for (action, count) in &parts {
            outln!("{} {count}", state.format_action(*action))?;
        }
        outln!("{}", parts.iter().map(|(_, c)| c).sum::<u64>())
    } else {
        outln!("{}", perft(state, depth))
    }
}
