//! `engine bench`: the figures the project's performance targets are stated in. Each section
//! prints what it measured and how; node counts double as a behaviour signature.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args as ClapArgs, ValueEnum};
use games::bench::{perft_figures, rules_figures};
use games::liuzhou::{self, Liuzhou};
use games::Game;

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
    let budget = args.seconds;
    let on = |s: Section| args.section.is_empty() || args.section.contains(&s);
    if on(Section::Rules) {
        rules_liuzhou(budget)?;
        rules_xiangqi(args.fairy_stockfish)?;
        rules_go(budget)?;
    }
    let models = if on(Section::Search) || on(Section::Inference) {
        Some(default_models()?)
    } else {
        None
    };
    if on(Section::Search) {
        let models = models.as_ref().expect("made above");
        search_section(
            &Liuzhou::default(),
            &models.path("liuzhou"),
            budget,
            args.threads,
        )?;
        search_section(
            &games::xiangqi::Xiangqi::default(),
            &models.path("xiangqi"),
            budget,
            args.threads,
        )?;
        let go = games::go::GoState::new(games::go::GoRules::default())?;
        search_section(&go, &models.path("go"), budget, args.threads)?;
    }
    if on(Section::Inference) {
        let models = models.as_ref().expect("made above");
        inference(
            &Liuzhou::default(),
            &models.path("liuzhou"),
            budget,
            args.threads,
        )?;
        inference(
            &games::xiangqi::Xiangqi::default(),
            &models.path("xiangqi"),
            budget,
            args.threads,
        )?;
        let go = games::go::GoState::new(games::go::GoRules::default())?;
        inference(&go, &models.path("go"), budget, args.threads)?;
    }
    Ok(())
}

/// Xiangqi perft on fixed positions (one thread), optionally beside Fairy-Stockfish.
fn rules_xiangqi(with_fsf: bool) -> anyhow::Result<()> {
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

/// The default network of each game, freshly initialised by `trainer-bridge init` from
/// `configs/<game>.yaml` (inference speed depends on the network's size, not its weights).
struct DefaultModels {
    dir: PathBuf,
}

impl DefaultModels {
    fn path(&self, game: &str) -> PathBuf {
        self.dir.join(format!("{game}.onnx"))
    }
}

fn default_models() -> anyhow::Result<DefaultModels> {
    let dir = std::env::temp_dir().join(format!("engine-bench-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let trainer = train::find_trainer(None);
    for game in ["liuzhou", "xiangqi", "go"] {
        let status = std::process::Command::new(&trainer)
            .args(["init", "--game", game, "--config"])
            .arg(format!("configs/{game}.yaml"))
            .arg("--out")
            .arg(dir.join(game))
            .args(if game == "go" {
                &["--board-size", "9"][..]
            } else {
                &[]
            })
            .stdout(std::process::Stdio::null())
            .status();
        if !matches!(status, Ok(s) if s.success()) {
            outln!(
                "(could not initialise the {game} network with {}: skipped)",
                trainer.display()
            )?;
        }
    }
    Ok(DefaultModels { dir })
}

/// Search overhead with the fake evaluator (one thread, all threads), and the real evaluator's
/// throughput bare and inside the search at the default batch size.
fn search_section<G: Game>(
    start: &G,
    model: &Path,
    budget: Duration,
    threads: usize,
) -> anyhow::Result<()> {
    let opts = infer::onnx::OrtOptions {
        batch_size: 64,
        intra_threads: threads,
        ..Default::default()
    };
    let net = if model.is_file() {
        Some(infer::onnx::OrtEvaluator::load(model, start, &opts)?)
    } else {
        None
    };
    let figures = search::bench::search_figures(
        start,
        budget,
        net.as_ref().map(|e| e as &dyn eval::Evaluator<G>),
    )?;
    out!("{figures}")?;
    Ok(())
}

/// Evaluator throughput at each batch size beside a bare ONNX Runtime session on the same model.
fn inference<G: Game>(
    start: &G,
    model: &Path,
    budget: Duration,
    threads: usize,
) -> anyhow::Result<()> {
    if !model.is_file() {
        return outln!("== inference: {} == skipped: no model", G::NAME);
    }
    let opts = infer::bench::BenchOptions {
        min_time: budget,
        intra_threads: threads,
        ..Default::default()
    };
    outln!(
        "== inference: {} (default net of configs/{}.yaml, {threads} intra-op thread(s), CPU) ==",
        G::NAME,
        G::NAME
    )?;
    match infer::bench::run(model, start, &opts) {
        Ok(rows) => out!("{}", infer::bench::format_rows(&rows)),
        Err(e) => outln!("error: {e}"),
    }
}

/// Go: random playouts (legality checks on random points, then the move) on 9×9 and 19×19,
/// repeated for at least `budget` each; the move count is a behaviour signature per seed.
fn rules_go(budget: Duration) -> anyhow::Result<()> {
    use games::go::playout::play_throughput;
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

fn rules_liuzhou(budget: Duration) -> anyhow::Result<()> {
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
