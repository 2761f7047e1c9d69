//! Xiangqi's part of `engine perft`: the fast make/unmake perft of `games::xiangqi`.

use std::time::Instant;

use anyhow::Context;
use games::xiangqi::{fen, perft, perft_divide, START_FEN};

/// Prints the perft of `fen_text` (the start position if `None`) to `depth`, per the contract of
/// `engine perft`.
pub fn run(fen_text: Option<&str>, depth: u32, divide: bool) -> anyhow::Result<()> {
    let text = fen_text.unwrap_or(START_FEN);
    let (mut pos, _, _) =
        fen::parse_fen(text).with_context(|| format!("perft: --position '{text}'"))?;
    let start = Instant::now();
    let total = if divide && depth >= 1 {
        let lines = perft_divide(&mut pos, depth);
        for (m, n) in &lines {
            outln!("{m} {n}")?;
        }
        lines.iter().map(|&(_, n)| n).sum()
    } else {
        perft(&mut pos, depth)
    };
    outln!("{total}")?;
    let secs = start.elapsed().as_secs_f64();
    tracing::info!(
        "perft {depth}: {total} leaves in {secs:.3} s ({:.2} M leaves/s)",
        total as f64 / secs.max(1e-9) / 1e6
    );
    Ok(())
}
