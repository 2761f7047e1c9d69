//! Perft on the raw [`Position`] (make/unmake, bulk count at depth 1) and the rules benchmark.

use std::time::{Duration, Instant};

use super::board::{MoveList, Position};
use super::Move;

/// Leaves of the move tree to `depth` plies. Pure move-generation count: the end-of-game
/// rules (repetition, natural limit) do not stop it, as is usual for perft.
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal(),
        _ => {
            let mut list = MoveList::new();
            pos.gen_legal(&mut list);
            let mut n = 0;
            for &m in list.as_slice() {
                let undo = pos.make(m);
                n += perft(pos, depth - 1);
                pos.unmake(m, undo);
            }
            n
        }
    }
}

/// Perft split by first move, in generation order. `depth` ≥ 1.
pub fn perft_divide(pos: &mut Position, depth: u32) -> Vec<(Move, u64)> {
    let mut list = MoveList::new();
    pos.gen_legal(&mut list);
    list.as_slice()
        .iter()
        .map(|&m| {
            let undo = pos.make(m);
            let n = perft(pos, depth.saturating_sub(1));
            pos.unmake(m, undo);
            (m, n)
        })
        .collect()
}

/// Positions of the benchmark: the start and three middlegames (FEN, perft depth).
pub const BENCH_POSITIONS: [(&str, &str, u32); 4] = [
    (
        "start",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        5,
    ),
    (
        "central cannon opening",
        "r1bakab1r/9/1cn3nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R w - - 4 3",
        4,
    ),
    (
        "open middlegame",
        "2bak4/4a4/4b1n2/p3p1R1p/2p6/9/P1P1P3P/4B1N2/4A4/2BAK4 b - - 0 20",
        5,
    ),
    (
        "rooks and cannons",
        "3aka3/9/4b4/p1r1p3p/2c6/6R2/P3P3P/4C4/9/3AKAB2 w - - 0 30",
        5,
    ),
];

/// One benchmark line: a position's perft and how fast it ran.
#[derive(Clone, Debug)]
pub struct BenchLine {
    pub name: String,
    pub fen: String,
    pub depth: u32,
    pub nodes: u64,
    /// Wall-clock time.
    pub time: Duration,
    /// CPU time of the counting thread or process, where the OS tells it (Linux `/proc`):
    /// on a shared machine it is the fairer figure.
    pub cpu: Option<Duration>,
}

impl BenchLine {
    /// Leaves per wall-clock second.
    pub fn rate(&self) -> f64 {
        self.nodes as f64 / self.time.as_secs_f64().max(1e-9)
    }
}

/// CPU time (user + system) from a `/proc/.../stat` file, if readable. Clock ticks are taken
/// as 100 per second, the value on every Linux configuration in use.
pub fn proc_cpu_time(stat_path: &str) -> Option<Duration> {
    let text = std::fs::read_to_string(stat_path).ok()?;
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// The result of [`bench_xiangqi`]: one line per position and the total.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub lines: Vec<BenchLine>,
}

impl BenchReport {
    pub fn total_nodes(&self) -> u64 {
        self.lines.iter().map(|l| l.nodes).sum()
    }
    pub fn total_time(&self) -> Duration {
        self.lines.iter().map(|l| l.time).sum()
    }
    /// Total CPU time, if every line has one.
    pub fn total_cpu(&self) -> Option<Duration> {
        self.lines.iter().map(|l| l.cpu).sum()
    }
    /// Leaves per CPU second, if known.
    pub fn cpu_rate(&self) -> Option<f64> {
        self.total_cpu()
            .map(|c| self.total_nodes() as f64 / c.as_secs_f64().max(1e-9))
    }
    /// Leaves per second over all positions.
    pub fn rate(&self) -> f64 {
        self.total_nodes() as f64 / self.total_time().as_secs_f64().max(1e-9)
    }
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // CPU time comes in 10 ms ticks: too coarse for short runs.
        let cpu = |c: Option<Duration>, nodes: u64| match c {
            Some(c) if c >= Duration::from_millis(200) => format!(
                ", cpu {:.2} s {:.2} M leaves/s",
                c.as_secs_f64(),
                nodes as f64 / c.as_secs_f64().max(1e-9) / 1e6
            ),
            _ => String::new(),
        };
        for l in &self.lines {
            writeln!(
                f,
                "  {:<24} depth {} {:>11} leaves: wall {:.3} s {:.2} M leaves/s{}",
                l.name,
                l.depth,
                l.nodes,
                l.time.as_secs_f64(),
                l.rate() / 1e6,
                cpu(l.cpu, l.nodes)
            )?;
        }
        write!(
            f,
            "  total {} leaves: wall {:.3} s {:.2} M leaves/s{} (one thread)",
            self.total_nodes(),
            self.total_time().as_secs_f64(),
            self.rate() / 1e6,
            cpu(self.total_cpu(), self.total_nodes())
        )
    }
}

/// Runs perft on [`BENCH_POSITIONS`], one thread, each at its depth reduced by `reduce`
/// (0 for the full benchmark, 1 or 2 for a quick one). The node total is a signature: it
/// changes only when move generation does.
pub fn bench_xiangqi(reduce: u32) -> BenchReport {
    let lines = BENCH_POSITIONS
        .iter()
        .map(|&(name, fen, depth)| {
            let (mut pos, _, _) = super::fen::parse_fen(fen).expect("bench FENs are valid");
            let depth = depth.saturating_sub(reduce).max(1);
            let cpu0 = proc_cpu_time("/proc/thread-self/stat");
            let t = Instant::now();
            let nodes = perft(&mut pos, depth);
            let time = t.elapsed();
            let cpu1 = proc_cpu_time("/proc/thread-self/stat");
            BenchLine {
                name: name.to_string(),
                fen: fen.to_string(),
                depth,
                nodes,
                time,
                cpu: cpu0.zip(cpu1).map(|(a, b)| b.saturating_sub(a)),
            }
        })
        .collect();
    BenchReport { lines }
}
