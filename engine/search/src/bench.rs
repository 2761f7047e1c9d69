//! Measurements for `engine bench` (search section). Each function runs searches over a fixed
//! list of positions and returns figures; the caller prints them with the command that
//! reproduces them.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::time::{Duration, Instant};

use crate::Playable;
use eval::fake::FakeEvaluator;
use eval::Evaluator;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::batch::{BatchReport, BatchStats};
use crate::config::{Limit, RunOptions, SearchConfig};
use crate::search::{Search, SearchError};

/// Positions to search from: `start`, then positions reached by random play from it (taken
/// every few actions, fixed by `seed`), skipping finished ones.
pub fn positions<G: Playable>(start: &G, count: usize, seed: u64) -> Vec<G> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = vec![start.clone()];
    let mut s = start.clone();
    // Every seventh position of each random game.
    let mut until_next = 7;
    while out.len() < count {
        match games::random_action(&s, &mut rng) {
            Some(a) => {
                s.play_unchecked(a);
                until_next -= 1;
                if until_next == 0 {
                    until_next = 7;
                    if s.outcome().is_none() {
                        out.push(s.clone());
                    }
                }
            }
            None => {
                s = start.clone();
                until_next = 7;
            }
        }
    }
    out
}

/// What one search benchmark measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchBench {
    pub threads: usize,
    pub playouts: u64,
    /// Descents abandoned on a leaf another descent was evaluating.
    pub collisions: u64,
    pub elapsed: Duration,
    /// CPU time of the whole process meanwhile (Linux only): on a shared machine, playouts per
    /// CPU second tell more about the code than playouts per wall second.
    pub cpu: Option<Duration>,
    pub batches: BatchReport,
}

/// CPU time used so far by this process, all threads (user + system), from `/proc/self/stat`.
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name (in parentheses): state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux reports in USER_HZ, which is 100 on every architecture it supports.
    Some(Duration::from_millis(ticks * 10))
}

impl SearchBench {
    /// Nothing measured yet, on `threads` threads.
    fn empty(threads: usize) -> Self {
        SearchBench {
            threads,
            playouts: 0,
            collisions: 0,
            elapsed: Duration::ZERO,
            cpu: None,
            batches: BatchReport::default(),
        }
    }

    /// Playouts per second of process CPU time, if known.
    pub fn playouts_per_cpu_second(&self) -> Option<f64> {
        self.cpu
            .map(|c| self.playouts as f64 / c.as_secs_f64().max(1e-9))
    }

    pub fn playouts_per_second(&self) -> f64 {
        self.playouts as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// States evaluated per second of wall time.
    pub fn evals_per_second(&self) -> f64 {
        self.batches.states as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Searches from each of `positions` in turn (starting again from the first) until `duration`
/// has passed (at least one search): `moves` moves of a game from each, `visits` playouts per
/// move, playing the best action and keeping its subtree as in match play.
pub fn searches<G: Playable>(
    positions: &[G],
    evaluator: &dyn Evaluator<G>,
    config: &SearchConfig,
    visits: u64,
    moves: usize,
    options: RunOptions,
    duration: Duration,
) -> Result<SearchBench, SearchError> {
    let start = Instant::now();
    let cpu_start = process_cpu_time();
    let mut total = SearchBench::empty(options.threads);
    let mut searched = 0;
    let mut i = 0;
    // One search reset for each position: the arena's memory is reused, as in a game.
    let mut s = Search::new(positions[0].clone(), config.clone(), 0);
    while searched == 0 || start.elapsed() < duration {
        s.reset(positions[i].clone());
        for _ in 0..moves.max(1) {
            if searched > 0 && start.elapsed() >= duration {
                break;
            }
            let r = s.run(evaluator, Limit::visits(visits), options)?;
            total.playouts += r.playouts;
            total.collisions += r.collisions;
            total.elapsed += r.elapsed;
            total.batches.merge(&r.batches);
            searched += 1;
            match s.best_action() {
                Some(a) if s.advance(a).is_ok() && s.state().outcome().is_none() => {}
                _ => break,
            }
        }
        i = (i + 1) % positions.len();
    }
    total.cpu = cpu_start.and_then(|c0| Some(process_cpu_time()? - c0));
    Ok(total)
}

/// Search overhead alone: playouts/s with a uniform fake evaluator (no cost), `threads`
/// threads in one tree, each evaluating its own `leaves` leaves at a time.
pub fn overhead<G: Playable>(
    positions: &[G],
    threads: usize,
    visits: u64,
    duration: Duration,
) -> Result<SearchBench, SearchError> {
    let leaves = 8;
    let fake = FakeEvaluator::new(leaves);
    let config = SearchConfig {
        cache_entries: 0,
        ..SearchConfig::default()
    };
    let options = RunOptions {
        threads,
        leaves_per_thread: leaves,
        combine: false,
        batch_wait: Duration::from_micros(500),
    };
    searches(positions, &fake, &config, visits, 1, options, duration)
}

/// The machine's own scaling, the reference for [`overhead`] on `threads` threads: each thread
/// searches a tree of its own (as self-play's games could), so they share nothing but the
/// memory system. Playouts are summed; the elapsed time is the longest thread's.
pub fn own_trees<G: Playable>(
    positions: &[G],
    threads: usize,
    visits: u64,
    duration: Duration,
) -> Result<SearchBench, SearchError> {
    let cpu_start = process_cpu_time();
    let runs: Vec<Result<SearchBench, SearchError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| s.spawn(|| overhead(positions, 1, visits, duration)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread panicked"))
            .collect()
    });
    let mut total = SearchBench::empty(threads);
    for r in runs {
        let r = r?;
        total.playouts += r.playouts;
        total.collisions += r.collisions;
        total.elapsed = total.elapsed.max(r.elapsed);
        total.batches.merge(&r.batches);
    }
    total.cpu = cpu_start.and_then(|c0| Some(process_cpu_time()? - c0));
    Ok(total)
}

/// How long one cache line takes to go from one thread to another and back, averaged over
/// `rounds` round trips: what every statistic shared by two search threads pays when both
/// write it. On a virtual machine it changes as the host moves the virtual CPUs (here: about
/// 55 ns with both on one die, about 340 ns across dies), and the one-tree figure with it.
pub fn round_trip(rounds: u64) -> Duration {
    let flag = crate::tree::CacheLine(AtomicU64::new(0));
    // Waits for `flag` to reach `value`, yielding now and then in case the two threads share
    // one CPU.
    let wait = |value: u64| {
        let mut spins = 0u32;
        while flag.load(Acquire) != value {
            spins += 1;
            if spins.is_multiple_of(1024) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..rounds {
                wait(2 * i + 1);
                flag.store(2 * i + 2, Release);
            }
        });
        let start = Instant::now();
        for i in 0..rounds {
            flag.store(2 * i + 1, Release);
            wait(2 * i + 2);
        }
        start.elapsed() / rounds.max(1) as u32
    })
}

/// The evaluator alone: states per second in full batches of its batch size, over `positions`.
pub fn bare_evaluator<G: Playable>(
    positions: &[G],
    evaluator: &dyn Evaluator<G>,
    duration: Duration,
) -> Result<BatchReport, SearchError> {
    let b = evaluator.batch_size();
    let batch: Vec<G> = positions.iter().cycle().take(b).cloned().collect();
    let stats = BatchStats::default();
    let policy_size = positions[0].shape().policy_size;
    let mut policy = vec![0.0; b * policy_size];
    let mut value = vec![0.0; b];
    let start = Instant::now();
    while start.elapsed() < duration || stats.report().batches == 0 {
        crate::batch::evaluate_recorded(evaluator, &batch, &mut policy, &mut value, None, &stats)?;
    }
    let mut r = stats.report();
    // Wall time, not only time inside the evaluator: the two differ by the loop alone.
    r.eval_time = start.elapsed();
    Ok(r)
}

/// The evaluator inside the search: one thread gathering whole batches (virtual loss) from one
/// tree, at least `visits` playouts per move (whole batches), eight moves of a game from each
/// position with the tree kept from move to move (as in match play). Compare `evals_per_second()` with
/// [`bare_evaluator`] at the same batch size.
pub fn with_evaluator<G: Playable>(
    positions: &[G],
    evaluator: &dyn Evaluator<G>,
    visits: u64,
    duration: Duration,
) -> Result<SearchBench, SearchError> {
    let config = SearchConfig {
        cache_entries: 0,
        ..SearchConfig::default()
    };
    // As a `net` agent searches: whole batches, the last one of a move included.
    let options = RunOptions {
        ..RunOptions::single(evaluator.batch_size())
    };
    searches(positions, evaluator, &config, visits, 8, options, duration)
}

/// The search section of `engine bench` for one game.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchFigures {
    pub game: &'static str,
    pub positions: usize,
    /// Fake evaluator, one thread.
    pub one_thread: SearchBench,
    /// Fake evaluator, every available thread in one tree (None on a one-core machine).
    pub all_threads: Option<SearchBench>,
    /// The same threads each in a tree of its own: what the machine allows (see [`own_trees`]).
    pub own_trees: Option<SearchBench>,
    /// A cache line's round trip between two threads (see [`round_trip`]), taken just before.
    pub round_trip: Option<Duration>,
    /// Real evaluator: bare figures, then inside the search at the same batch size.
    pub evaluator: Option<(String, BatchReport, SearchBench)>,
}

/// Measures the search section for `start`'s game: overhead with the fake evaluator on one
/// thread and on all, and, given a real `evaluator`, its throughput bare and inside the search.
pub fn search_figures<G: Playable>(
    start: &G,
    budget: Duration,
    evaluator: Option<&dyn Evaluator<G>>,
) -> Result<SearchFigures, SearchError> {
    let positions = positions(start, 32, 1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one_thread = overhead(&positions, 1, 20_000, budget)?;
    let (round_trip, all_threads, own_trees) = if threads > 1 {
        (
            Some(round_trip(100_000)),
            Some(overhead(&positions, threads, 20_000, budget)?),
            Some(own_trees(&positions, threads, 20_000, budget)?),
        )
    } else {
        (None, None, None)
    };
    let evaluator = match evaluator {
        Some(e) => Some((
            e.describe(),
            bare_evaluator(&positions, e, budget)?,
            with_evaluator(&positions, e, 1_000, budget)?,
        )),
        None => None,
    };
    Ok(SearchFigures {
        game: G::NAME,
        positions: positions.len(),
        one_thread,
        all_threads,
        own_trees,
        round_trip,
        evaluator,
    })
}

impl std::fmt::Display for SearchFigures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "== search: {} ({} positions: start + random-play positions, seed 1) ==",
            self.game, self.positions
        )?;
        let one = self.one_thread.playouts_per_second();
        let per_cpu = |b: &SearchBench| {
            b.playouts_per_cpu_second()
                .map_or(String::new(), |r| format!(", {r:.0} per CPU second"))
        };
        writeln!(
            f,
            "fake evaluator, 1 thread      {:>10.0} playouts/s{}",
            one,
            per_cpu(&self.one_thread)
        )?;
        if let (Some(all), Some(own)) = (&self.all_threads, &self.own_trees) {
            writeln!(
                f,
                "fake evaluator, {} threads     {:>10.0} playouts/s ({:.2}x one thread{}, {:.3} collisions/playout)",
                all.threads,
                all.playouts_per_second(),
                all.playouts_per_second() / one,
                per_cpu(all),
                all.collisions as f64 / all.playouts.max(1) as f64
            )?;
            writeln!(
                f,
                "  reference: {} own trees     {:>10.0} playouts/s ({:.2}x one thread: the machine's ceiling; one tree reaches {:.0} % of it)",
                own.threads,
                own.playouts_per_second(),
                own.playouts_per_second() / one,
                100.0 * all.playouts_per_second() / own.playouts_per_second()
            )?;
        }
        if let Some(rt) = self.round_trip {
            writeln!(
                f,
                "  cache line round trip between two threads: {} ns (what each shared statistic costs)",
                rt.as_nanos()
            )?;
        }
        if let Some((name, bare, inside)) = &self.evaluator {
            let bare_rate = bare.states as f64 / bare.eval_time.as_secs_f64().max(1e-9);
            writeln!(f, "evaluator: {name}")?;
            writeln!(
                f,
                "  bare, full batches          {:>10.0} evals/s",
                bare_rate
            )?;
            writeln!(
                f,
                "  inside search, same batch   {:>10.0} evals/s ({:.1} % of bare), batch fill {:.1} %, {:.0} playouts/s",
                inside.evals_per_second(),
                100.0 * inside.evals_per_second() / bare_rate,
                100.0 * inside.batches.fill(),
                inside.playouts_per_second()
            )?;
        }
        Ok(())
    }
}
