//! `engine bench`: the figures the project's performance targets are stated in. Each section
//! prints what it measured and how; node counts double as a behaviour signature.

use std::time::Duration;

use clap::Args as ClapArgs;
use games::bench::{perft_figures, rules_figures};
use games::liuzhou::{self, Liuzhou};

/// Measure rules speed (and later search and inference) on fixed position sets.
#[derive(ClapArgs)]
pub struct Args {
    /// Seconds to spend on each timed figure.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.seconds > 0.0 && args.seconds.is_finite(),
        "--seconds must be positive"
    );
    let budget = Duration::from_secs_f64(args.seconds);
    rules_liuzhou(budget);
    rules_go(budget);
    Ok(())
}

/// Go: random playouts (legality checks on random points, then the move) on 9×9 and 19×19,
/// repeated for at least `budget` each; the move count is a behaviour signature per seed.
fn rules_go(budget: Duration) {
    use games::go::playout::play_throughput;
    println!("== rules: go (random playouts, default rules, seed 1) ==");
    for size in [9, 19] {
        let first = play_throughput(size, 1, 1);
        let games = ((budget.as_secs_f64() / first.elapsed.as_secs_f64().max(1e-9)) as usize)
            .clamp(1, 1_000_000);
        let f = play_throughput(size, games, 1);
        let cpu = f
            .cpu_ns_per_move()
            .map_or(String::new(), |ns| format!(", {ns:.1} ns/move on CPU"));
        println!(
            "{size:>2}x{size:<2} play + legality       {:8.1} ns/move ({} moves in {} games{cpu})",
            f.ns_per_move(),
            f.moves,
            f.games
        );
    }
}

fn rules_liuzhou(budget: Duration) {
    let positions = liuzhou::bench_positions();
    let f = rules_figures(&positions, budget);
    println!(
        "== rules: liuzhou ({} fixed positions, all phases) ==",
        f.positions
    );
    println!("legal-action generation   {:8.1} ns/call", f.legal_ns);
    println!("apply (clone + play)      {:8.1} ns/action", f.apply_ns);
    println!(
        "legal + apply             {:8.1} ns",
        f.legal_ns + f.apply_ns
    );
    let mut cases = vec![(Liuzhou::default(), 5)];
    cases.extend(positions.into_iter().map(|s| (s, 4)));
    let (nodes, nps) = perft_figures(&cases);
    println!(
        "perft (start d5 + positions d4): {nodes} leaves, {:.1} M leaves/s",
        nps / 1e6
    );
}
