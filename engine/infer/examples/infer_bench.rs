//! The inference figures of `engine bench` for one model, without the rest of the engine:
//! `cargo run --release -p infer --example infer_bench -- liuzhou models/liuzhou/0000.onnx [threads] [seconds]`.

use std::path::Path;
use std::time::Duration;

use infer::bench::{self, BenchOptions};

fn main() {
    provision::install();
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: infer_bench <game> <model.onnx> [intra-threads] [seconds-per-measure]");
        std::process::exit(2);
    }
    let threads = args
        .get(3)
        .map_or(1, |s| s.parse().expect("threads: a number"));
    let seconds: f64 = args
        .get(4)
        .map_or(1.0, |s| s.parse().expect("seconds: a number"));
    let opts = BenchOptions {
        intra_threads: threads,
        min_time: Duration::from_secs_f64(seconds),
        ..BenchOptions::default()
    };
    let path = Path::new(&args[2]);
    let rows = match args[1].as_str() {
        "liuzhou" => bench::run(path, &games::liuzhou::Liuzhou::default(), &opts),
        other => {
            eprintln!("unknown game {other:?}");
            std::process::exit(2);
        }
    };
    match rows {
        Ok(rows) => print!("{}", bench::format_rows(&rows)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
