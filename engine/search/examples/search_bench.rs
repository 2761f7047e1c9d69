//! Search overhead and batching figures for Liuzhou, until `engine bench` calls the same
//! functions: `cargo run --release -p search --example search_bench [seconds] [overhead|batch]`.

use std::time::Duration;

use games::liuzhou::Liuzhou;
use infer::fake::FakeEvaluator;

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let duration = Duration::from_secs_f64(secs);
    let part = std::env::args().nth(2).unwrap_or_else(|| "all".into());
    let positions = search::bench::positions(&Liuzhou::default(), 32, 1);
    if part == "all" || part == "overhead" {
        overhead(&positions, duration);
    }
    if part == "all" || part == "independent" {
        independent(&positions, duration);
    }
    if part == "all" || part == "batch" {
        batch(&positions, duration);
    }
}

/// CPU seconds this process has used (user + system, all threads), from /proc: on a busy
/// machine, playouts per CPU second say more about the code than playouts per wall second.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}

fn overhead(positions: &[Liuzhou], duration: Duration) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut one_rate = 0.0;
    for t in [1, threads] {
        if t == threads && t == 1 {
            break;
        }
        let cpu = cpu_seconds();
        let r = search::bench::overhead(positions, t, 20_000, duration).expect("search");
        let cpu = cpu_seconds() - cpu;
        let rate = r.playouts_per_second();
        if t == 1 {
            one_rate = rate;
        }
        println!(
            "liuzhou search overhead, fake evaluator, {t} thread(s): {rate:.0} playouts/s ({:.2}x one thread), {:.0} playouts per CPU second, {:.3} collisions per playout",
            rate / one_rate,
            r.playouts as f64 / cpu,
            r.collisions as f64 / r.playouts as f64
        );
    }
}

/// The machine's own scaling, for reference: each thread searches a tree of its own, so
/// nothing is shared but the memory system.
fn independent(positions: &[Liuzhou], duration: Duration) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = cpu_seconds();
    let start = std::time::Instant::now();
    let playouts: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    search::bench::overhead(positions, 1, 20_000, duration)
                        .expect("search")
                        .playouts
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("thread")).sum()
    });
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    println!(
        "independent trees, {threads} threads: {:.0} playouts/s, {:.0} playouts per CPU second",
        playouts as f64 / wall,
        playouts as f64 / cpu
    );
}

fn batch(positions: &[Liuzhou], duration: Duration) {
    // A fake network with a fixed cost per batch stands in for the real one here.
    let fake = FakeEvaluator::new(64).with_batch_cost(Duration::from_millis(5));
    let bare = search::bench::bare_evaluator(positions, &fake, duration).expect("evaluate");
    let inside = search::bench::with_evaluator(positions, &fake, 2_000, duration).expect("search");
    let bare_rate = bare.states as f64 / bare.eval_time.as_secs_f64();
    println!(
        "fake evaluator (batch 64, 5 ms per batch): bare {:.0} evals/s, inside search {:.0} evals/s ({:.1} %), batch fill {:.1} %",
        bare_rate,
        inside.evals_per_second(),
        100.0 * inside.evals_per_second() / bare_rate,
        100.0 * inside.batches.fill()
    );
}
