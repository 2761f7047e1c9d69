//! Liuzhou's alpha-beta, its speed and depth on fixed positions:
//!
//! ```text
//! cargo run --release -p players --example liuzhou_alphabeta_figures
//! ```
//!
//! For 100 ms and 1 s a move it prints one line over the unfinished positions of
//! `games::liuzhou::bench_positions` (millions of nodes a second; the least, median and greatest
//! depth reached), then the depth and node count at each time for the start position and a
//! mid-placement one. The searches use a 16 MiB table, those of the two named positions 4 MiB.

use std::time::{Duration, Instant};

use games::liuzhou::{Liuzhou, Rules, START_LFEN};
use games::Game;
use players::alphabeta::liuzhou::{LiuzhouAlphaBeta, SearchLimits, SearchResult};

fn pos(lfen: &str) -> Liuzhou {
    Liuzhou::from_lfen(lfen, Rules::default()).expect("a valid LFEN")
}

fn search(s: &Liuzhou, limits: SearchLimits) -> SearchResult {
    LiuzhouAlphaBeta::new(4).search(s, limits, |_| {})
}

fn main() {
    let positions = games::liuzhou::bench_positions();
    for ms in [100u64, 1000] {
        let (mut nodes, mut secs, mut depths) = (0u64, 0f64, Vec::new());
        for s in positions.iter().filter(|s| s.outcome().is_none()) {
            let t = Instant::now();
            let r = LiuzhouAlphaBeta::new(16).search(
                s,
                SearchLimits::movetime(Duration::from_millis(ms)),
                |_| {},
            );
            secs += t.elapsed().as_secs_f64();
            nodes += r.nodes;
            depths.push(r.depth);
        }
        depths.sort_unstable();
        let n = depths.len();
        println!(
            "{ms} ms a move, {n} positions: {:.2} M nodes/s, depth min {} median {} max {}",
            nodes as f64 / secs / 1e6,
            depths[0],
            depths[n / 2],
            depths[n - 1]
        );
    }
    for (name, lfen) in [
        ("start", START_LFEN),
        (
            "mid-placement",
            "BWBWBW/WBWBWB/B1W1B1/1B1W1W/BW4/6 b place 0 20 0",
        ),
    ] {
        for ms in [100u64, 1000] {
            let r = search(
                &pos(lfen),
                SearchLimits::movetime(Duration::from_millis(ms)),
            );
            println!("{name} at {ms} ms: depth {}, {} nodes", r.depth, r.nodes);
        }
    }
}
