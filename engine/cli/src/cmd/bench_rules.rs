//! The rules section of `engine bench`: each game's move generation on fixed positions.

use std::time::Duration;

use games::bench::{perft_figures, rules_figures};
use games::go::playout::play_throughput;
use games::liuzhou::{self, Liuzhou};

/// Liuzhou, Xiangqi (beside Fairy-Stockfish when `with_fsf`) and Go, in that order.
pub fn run(budget: Duration, with_fsf: bool) -> anyhow::Result<()> {
    liuzhou_rules(budget)?;
    xiangqi(with_fsf)?;
    go(budget)
}

/// Liuzhou: legal-action generation and apply on fixed positions of every phase, then perft.
fn liuzhou_rules(budget: Duration) -> anyhow::Result<()> {
    let positions = liuzhou::bench_positions();
    let f = rules_figures(&positions, budget);
    outln!(
        "== rules: liuzhou ({} fixed positions, all phases) ==",
        f.positions
    )?;
    outln!("legal-action generation   {:8.1} ns/call", f.legal_ns)?;
    outln!("apply (clone + play)      {:8.1} ns/action", f.apply_ns)?;
    outln!(
        "legal + apply             {:8.1} ns",
        f.legal_ns + f.apply_ns
    )?;
    let mut cases = vec![(Liuzhou::default(), 5)];
    cases.extend(positions.into_iter().map(|s| (s, 4)));
    let (nodes, nps) = perft_figures(&cases);
    outln!(
        "perft (start d5 + positions d4): {nodes} leaves, {:.1} M leaves/s",
        nps / 1e6
    )
}

/// Xiangqi perft on fixed positions (one thread), optionally beside Fairy-Stockfish.
fn xiangqi(with_fsf: bool) -> anyhow::Result<()> {
    outln!("== rules: xiangqi perft (fixed positions, one thread) ==")?;
    let ours = games::xiangqi::bench_xiangqi(1);
    outln!("{ours}")?;
    if !with_fsf {
        return Ok(());
    }
    match players::fairy::find_fairy_stockfish() {
        Some(path) => match players::fairy::bench_fairy_stockfish(&path, 1) {
            Ok(theirs) => {
                outln!("fairy-stockfish `go perft` on the same positions:\n{theirs}")?;
                outln!("ratio (wall): {:.2}x", ours.rate() / theirs.rate())?;
            }
            Err(e) => outln!("fairy-stockfish failed: {e}")?,
        },
        None => outln!("fairy-stockfish not found (apt-get install fairy-stockfish)")?,
    }
    Ok(())
}

/// Go: random playouts (legality checks on random points, then the move) on 9×9 and 19×19,
/// repeated for at least `budget` each; the move count is a behaviour signature per seed.
fn go(budget: Duration) -> anyhow::Result<()> {
    outln!("== rules: go (random playouts, default rules, seed 1) ==")?;
    for size in [9, 19] {
        let first = play_throughput(size, 1, 1);
        let games = ((budget.as_secs_f64() / first.elapsed.as_secs_f64().max(1e-9)) as usize)
            .clamp(1, 1_000_000);
        let f = play_throughput(size, games, 1);
        let cpu = f
            .cpu_ns_per_move()
            .map_or(String::new(), |ns| format!(", {ns:.1} ns/move on CPU"));
        outln!(
            "{size:>2}x{size:<2} play + legality       {:8.1} ns/move ({} moves in {} games{cpu})",
            f.ns_per_move(),
            f.moves,
            f.games
        )?;
    }
    Ok(())
}
