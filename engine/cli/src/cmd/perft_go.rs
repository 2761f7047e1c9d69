//! The Go part of `engine perft`: board size, moves to reach the position, and rule options.

use anyhow::Context;
use clap::Args as ClapArgs;
use games::go::{GoRules, GoState, KoRule, MoveCap};
use games::Game;

/// Go options of `engine perft` (ignored by the other games).
#[derive(ClapArgs, Clone, Debug)]
pub struct GoArgs {
    /// Go: board side, 2 to 19 [default: the side of `--position`, else 3].
    #[arg(long)]
    pub size: Option<usize>,
    /// Go: moves played from the start position (or `--position`) before counting, in GTP
    /// notation separated by spaces or commas, colours alternating: `C3 B2 pass`.
    #[arg(long, default_value = "")]
    pub moves: String,
    /// Go: simple ko instead of positional superko.
    #[arg(long)]
    pub simple_ko: bool,
    /// Go: allow suicide.
    #[arg(long)]
    pub allow_suicide: bool,
}

/// The position perft starts from: `--position` (Go text format) or the empty board, then
/// `--moves`. Games never end by the move cap here, only by two passes.
pub fn start(args: &GoArgs, position: Option<&str>) -> anyhow::Result<GoState> {
    let rules = GoRules {
        size: args.size.unwrap_or(3),
        ko: if args.simple_ko {
            KoRule::Simple
        } else {
            KoRule::PositionalSuperko
        },
        allow_suicide: args.allow_suicide,
        move_cap: MoveCap::Unlimited,
        ..GoRules::default()
    };
    let mut state = GoState::new(rules).context("--size")?;
    if let Some(text) = position {
        state = state
            .parse_position(text)
            .with_context(|| format!("perft: --position '{text}'"))?;
        if let Some(size) = args.size.filter(|&n| n != state.size()) {
            anyhow::bail!(
                "perft: --size {size} but --position '{text}' is a {n}x{n} board",
                n = state.size()
            );
        }
    }
    super::play_moves(&mut state, &args.moves)?;
    Ok(state)
}
