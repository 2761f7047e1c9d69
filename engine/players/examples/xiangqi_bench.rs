//! Xiangqi perft speed beside Fairy-Stockfish's, same positions, same run, one thread each:
//! `cargo run --release -p games --example xiangqi_bench [REDUCE]` (REDUCE lowers every depth;
//! 0, the default, is the full benchmark).

use games::xiangqi::bench_xiangqi;
use players::fairy::{bench_fairy_stockfish, find_fairy_stockfish};

fn main() {
    let reduce = match std::env::args().nth(1).map(|a| a.parse::<u32>()) {
        None => 0,
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            eprintln!("REDUCE must be a number: {e}");
            std::process::exit(2);
        }
    };
    let ours = bench_xiangqi(reduce);
    println!("this engine:\n{ours}");
    match find_fairy_stockfish() {
        None => println!("fairy-stockfish not found: no comparison"),
        Some(path) => match bench_fairy_stockfish(&path, reduce) {
            Err(e) => println!("fairy-stockfish failed: {e}"),
            Ok(theirs) => {
                println!("fairy-stockfish (go perft):\n{theirs}");
                assert_eq!(
                    ours.total_nodes(),
                    theirs.total_nodes(),
                    "node counts differ"
                );
                println!(
                    "ratio: {:.2}x fairy-stockfish's leaves per wall second",
                    ours.rate() / theirs.rate()
                );
                if let (Some(a), Some(b)) = (ours.cpu_rate(), theirs.cpu_rate()) {
                    println!(
                        "ratio: {:.2}x fairy-stockfish's leaves per CPU second",
                        a / b
                    );
                }
            }
        },
    }
}
