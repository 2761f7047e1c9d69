//! Fairy-Stockfish as an independent oracle for move generation: `go perft` divides, timed.
//! Used by the oracle tests and by the benchmark, which compares speeds in the same run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use games::xiangqi::fen::parse_move_with_base;
use games::xiangqi::perft::{proc_cpu_time, BenchLine, BenchReport, BENCH_POSITIONS};
use games::xiangqi::Move;

use crate::process::ChildProcess;

/// Longest wait for any answer: a deep perft on the bench positions takes seconds.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// Where Fairy-Stockfish is: `$FAIRY_STOCKFISH`, else `/usr/games/fairy-stockfish` (the Debian
/// package), else `fairy-stockfish` on the `PATH`.
pub fn find_fairy_stockfish() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAIRY_STOCKFISH") {
        return Some(PathBuf::from(p));
    }
    let debian = Path::new("/usr/games/fairy-stockfish");
    if debian.is_file() {
        return Some(debian.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("fairy-stockfish"))
        .find(|p| p.is_file())
}

/// A Fairy-Stockfish process in its xiangqi variant.
pub struct FairyStockfish {
    process: ChildProcess,
}

/// A `go perft` answer.
#[derive(Clone, Debug)]
pub struct OraclePerft {
    /// Per first move (ICCS ranks), the leaf count below it.
    pub divide: Vec<(Move, u64)>,
    pub total: u64,
    /// From sending `go perft` to reading the total, so it includes the pipe's latency.
    pub time: Duration,
    /// CPU time the process spent meanwhile (Linux `/proc`), if known.
    pub cpu: Option<Duration>,
}

impl FairyStockfish {
    pub fn spawn(path: &Path) -> std::io::Result<Self> {
        let argv = [path.to_string_lossy().into_owned()];
        let process = ChildProcess::spawn(&argv).map_err(std::io::Error::other)?;
        let mut fsf = FairyStockfish { process };
        fsf.send("uci")?;
        fsf.read_until(|l| l == "uciok")?;
        fsf.send("setoption name UCI_Variant value xiangqi")?;
        fsf.send("isready")?;
        fsf.read_until(|l| l == "readyok")?;
        Ok(fsf)
    }

    fn send(&mut self, line: &str) -> std::io::Result<()> {
        self.process.send(line).map_err(std::io::Error::other)
    }

    fn read_until(&mut self, done: impl Fn(&str) -> bool) -> std::io::Result<Vec<String>> {
        let lines = self.process.read_until(ANSWER_TIMEOUT, done);
        let lines = lines.map_err(std::io::Error::other)?;
        Ok(lines.into_iter().map(|l| l.trim().to_string()).collect())
    }

    /// `go perft depth` from `fen`, with moves converted to ICCS ranks.
    pub fn perft(&mut self, fen: &str, depth: u32) -> std::io::Result<OraclePerft> {
        self.send(&format!("position fen {fen}"))?;
        self.send("isready")?;
        self.read_until(|l| l == "readyok")?;
        let stat = format!("/proc/{}/stat", self.process.id());
        let cpu0 = proc_cpu_time(&stat);
        let start = Instant::now();
        self.send(&format!("go perft {depth}"))?;
        let lines = self.read_until(|l| l.starts_with("Nodes searched"))?;
        let time = start.elapsed();
        let cpu1 = proc_cpu_time(&stat);
        let cpu = cpu0.zip(cpu1).map(|(a, b)| b.saturating_sub(a));
        let bad = |l: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, l.to_string());
        let mut divide = Vec::new();
        let mut total = 0;
        for l in &lines {
            if let Some(n) = l.strip_prefix("Nodes searched:") {
                total = n.trim().parse().map_err(|_| bad(l))?;
            } else if let Some((m, n)) = l.split_once(':') {
                let Ok(m) = parse_move_with_base(m.trim(), 1) else {
                    continue;
                };
                divide.push((m, n.trim().parse().map_err(|_| bad(l))?));
            }
        }
        Ok(OraclePerft {
            divide,
            total,
            time,
            cpu,
        })
    }
}

/// Fairy-Stockfish's `go perft` on the same positions and depths as
/// [`games::xiangqi::perft::bench_xiangqi`], timed from the command to the total (one thread).
pub fn bench_fairy_stockfish(path: &Path, reduce: u32) -> std::io::Result<BenchReport> {
    let mut fsf = FairyStockfish::spawn(path)?;
    let mut lines = Vec::new();
    for &(name, fen, depth) in BENCH_POSITIONS.iter() {
        let depth = depth.saturating_sub(reduce).max(1);
        let r = fsf.perft(fen, depth)?;
        lines.push(BenchLine {
            name: name.to_string(),
            fen: fen.to_string(),
            depth,
            nodes: r.total,
            time: r.time,
            cpu: r.cpu,
        });
    }
    Ok(BenchReport { lines })
}
