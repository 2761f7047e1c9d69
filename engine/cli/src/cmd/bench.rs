//! `engine bench`: the figures the project's performance targets are stated in. Each section
//! prints what it measured and how; node counts double as a behaviour signature. The sections
//! live beside it: `bench_rules` (move generation), `bench_nets` (search and inference).

use std::time::Duration;

use clap::{Args as ClapArgs, ValueEnum};

use super::bench_nets::{self, DefaultModels};
use super::bench_rules;

/// Measure rules, search and inference speed on fixed position sets.
#[derive(ClapArgs)]
pub struct Args {
    /// Seconds to spend on each timed figure (more than 0, at most a day).
    #[arg(long, default_value = "1", value_parser = parse_seconds)]
    seconds: Duration,
    /// Which sections to run (repeat the flag for several); all by default.
    #[arg(long, value_enum)]
    section: Vec<Section>,
    /// ONNX Runtime intra-op threads for the inference section.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Xiangqi: also run Fairy-Stockfish's `go perft` on the same positions, for the ratio.
    #[arg(long)]
    fairy_stockfish: bool,
    /// Inference: `int8` measures each network at fp32 and int8 side by side (batch 16, 64,
    /// 256; each quantised first), ending with `int8/fp32 at batch 64: R` for Liuzhou; `fp32`
    /// (the default) the evaluator against a bare session.
    #[arg(long)]
    precision: Option<infer::Precision>,
    /// Inference (fp32): where the network runs, cpu, cuda or tensorrt; no fallback, so a
    /// provider that cannot run is an error rather than a CPU figure under its name.
    #[arg(long, default_value = "cpu")]
    provider: infer::Provider,
    /// Inference (fp32): batch sizes to measure (repeat the flag); 1, 8, 32, 128 and 512 by
    /// default.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65536))]
    batch: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Section {
    Rules,
    Search,
    Inference,
}

/// A `--seconds` value: a finite number of seconds above 0 and at most a day (a longer figure
/// is a typo, and `Duration` cannot hold some finite values at all).
fn parse_seconds(text: &str) -> Result<Duration, String> {
    const MAX: f64 = 86_400.0;
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !secs.is_finite() {
        return Err(format!("{text:?} is not a finite number of seconds"));
    }
    if secs <= 0.0 || secs > MAX {
        return Err(format!("{text} s is outside (0, {MAX}] seconds"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{text} s: {e}"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.threads >= 1, "--threads must be at least 1");
    anyhow::ensure!(
        !matches!(
            args.precision,
            Some(infer::Precision::Fp16 | infer::Precision::Auto)
        ),
        "--precision {}: the inference bench measures fp32, or int8 beside it, on the CPU \
         (half precision runs on GPUs only, with provider tensorrt): give fp32 or int8",
        args.precision.map_or("", |p| p.as_str())
    );
    anyhow::ensure!(
        args.provider == infer::Provider::Cpu || args.precision != Some(infer::Precision::Int8),
        "--precision int8 runs on the CPU only: leave out --provider {}",
        args.provider
    );
    let on = |s: Section| args.section.is_empty() || args.section.contains(&s);
    if on(Section::Rules) {
        bench_rules::run(args.seconds, args.fairy_stockfish)?;
    }
    if !on(Section::Search) && !on(Section::Inference) {
        return Ok(());
    }
    let models = DefaultModels::init()?;
    if on(Section::Search) {
        bench_nets::search(&models, args.seconds, args.threads)?;
    }
    if on(Section::Inference) {
        match args.precision {
            Some(infer::Precision::Int8) => {
                bench_nets::inference_precisions(&models, args.seconds, args.threads)?
            }
            _ => {
                let mut opts = infer::bench::BenchOptions {
                    min_time: args.seconds,
                    intra_threads: args.threads,
                    provider: args.provider,
                    ..Default::default()
                };
                if !args.batch.is_empty() {
                    opts.batch_sizes = args.batch.iter().map(|&b| b as usize).collect();
                }
                bench_nets::inference(&models, &opts)?
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_must_be_a_finite_positive_span_of_at_most_a_day() {
        assert_eq!(parse_seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_seconds("86400"), Ok(Duration::from_secs(86_400)));
        for (text, why) in [
            ("1e20", "outside (0, 86400]"),
            ("86401", "outside (0, 86400]"),
            ("0", "outside (0, 86400]"),
            ("-1", "outside (0, 86400]"),
            ("inf", "not a finite number"),
            ("NaN", "not a finite number"),
            ("soon", "not a number"),
        ] {
            let e = parse_seconds(text).expect_err(text);
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
