//! The search section of `engine bench` for Liuzhou, runnable on its own:
//! `cargo run --release -p infer --example search_bench [seconds] [all|overhead|games|batch|MODEL.onnx] [threads]`.
//!
//! `batch` stands a fake network with a fixed cost per batch in for the real one; a path to an
//! ONNX model measures that model with ONNX Runtime (batch 64, `threads` intra-op threads, 2 by
//! default).

use std::time::Duration;

use eval::fake::FakeEvaluator;
use eval::Evaluator;
use games::liuzhou::Liuzhou;

fn main() {
    provision::install();
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let duration = Duration::from_secs_f64(secs);
    let part = std::env::args().nth(2).unwrap_or_else(|| "all".into());
    if part == "all" || part == "overhead" {
        let figures =
            search::bench::search_figures(&Liuzhou::default(), duration, None).expect("search");
        print!("{figures}");
    }
    if part == "all" || part == "games" {
        // The other games, for the record (Go 9×9 with the default rules).
        let xiangqi = games::xiangqi::Xiangqi::default();
        print!(
            "{}",
            search::bench::search_figures(&xiangqi, duration, None).expect("search")
        );
        let go = games::go::GoState::new(games::go::GoRules::default()).expect("default rules");
        print!(
            "{}",
            search::bench::search_figures(&go, duration, None).expect("search")
        );
    }
    if part.ends_with(".onnx") {
        let opts = infer::onnx::OrtOptions {
            batch_size: 64,
            intra_threads: std::env::args()
                .nth(3)
                .and_then(|s| s.parse().ok())
                .unwrap_or(2),
            ..Default::default()
        };
        let net = infer::onnx::OrtEvaluator::load(
            std::path::Path::new(&part),
            &Liuzhou::default(),
            &opts,
        )
        .expect("loading the model");
        let net: &dyn Evaluator<Liuzhou> = &net;
        let figures = search::bench::search_figures(&Liuzhou::default(), duration, Some(net))
            .expect("search");
        for line in figures
            .to_string()
            .lines()
            .skip_while(|l| !l.starts_with("evaluator"))
        {
            println!("{line}");
        }
    }
    if part == "all" || part == "batch" {
        // 5 ms per batch of 64: about the real 6×6 network's cost on two CPU threads.
        let fake = FakeEvaluator::new(64).with_batch_cost(Duration::from_millis(5));
        let net: &dyn Evaluator<Liuzhou> = &fake;
        let figures = search::bench::search_figures(&Liuzhou::default(), duration, Some(net))
            .expect("search");
        for line in figures
            .to_string()
            .lines()
            .skip_while(|l| !l.starts_with("evaluator"))
        {
            println!("{line}");
        }
    }
}
