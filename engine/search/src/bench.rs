//! Measurements for `engine bench` (search section). Each function runs searches over a fixed
//! list of positions and returns figures; the caller prints them with the command that
//! reproduces them.

use std::time::{Duration, Instant};

use games::Game;
use infer::fake::FakeEvaluator;
use infer::Evaluator;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::batch::{BatchReport, BatchStats};
use crate::config::{Limit, RunOptions, SearchConfig};
use crate::search::{Search, SearchError};

/// Positions to search from: `start`, then positions reached by random play from it (taken
/// every few actions, fixed by `seed`), skipping finished ones.
pub fn positions<G: Game>(start: &G, count: usize, seed: u64) -> Vec<G> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = vec![start.clone()];
    let mut s = start.clone();
    let mut ply = 0usize;
    while out.len() < count {
        match games::random_action(&s, &mut rng) {
            Some(a) => {
                s.play_unchecked(a);
                ply += 1;
                if ply % 7 == 0 && s.outcome().is_none() {
                    out.push(s.clone());
                }
            }
            None => {
                s = start.clone();
                ply = 0;
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
    pub elapsed: Duration,
    pub batches: BatchReport,
}

impl SearchBench {
    pub fn playouts_per_second(&self) -> f64 {
        self.playouts as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// States evaluated per second of wall time.
    pub fn evals_per_second(&self) -> f64 {
        self.batches.states as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Searches each of `positions` for `visits` playouts in turn, starting again from the first,
/// until `duration` has passed (at least one search each).
pub fn searches<G: Game>(
    positions: &[G],
    evaluator: &dyn Evaluator<G>,
    config: &SearchConfig,
    visits: u64,
    options: RunOptions,
    duration: Duration,
) -> Result<SearchBench, SearchError> {
    let start = Instant::now();
    let mut total = SearchBench {
        threads: options.threads,
        playouts: 0,
        elapsed: Duration::ZERO,
        batches: BatchReport::default(),
    };
    let mut searched = 0;
    let mut i = 0;
    while searched < positions.len() || start.elapsed() < duration {
        let mut s = Search::new(positions[i].clone(), config.clone(), i as u64);
        let r = s.run(evaluator, Limit::visits(visits), options)?;
        total.playouts += r.playouts;
        total.elapsed += r.elapsed;
        let b = &mut total.batches;
        b.batches += r.batches.batches;
        b.states += r.batches.states;
        b.capacity += r.batches.capacity;
        b.eval_time += r.batches.eval_time;
        searched += 1;
        i = (i + 1) % positions.len();
    }
    Ok(total)
}

/// Search overhead alone: playouts/s with a uniform fake evaluator (no cost), `threads`
/// threads in one tree, each evaluating its own `leaves` leaves at a time.
pub fn overhead<G: Game>(
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
    };
    searches(positions, &fake, &config, visits, options, duration)
}

/// The evaluator alone: states per second in full batches of its batch size, over `positions`.
pub fn bare_evaluator<G: Game>(
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
        crate::batch::evaluate_recorded(evaluator, &batch, &mut policy, &mut value, &stats)?;
    }
    let mut r = stats.report();
    // Wall time, not only time inside the evaluator: the two differ by the loop alone.
    r.eval_time = start.elapsed();
    Ok(r)
}

/// The evaluator inside the search: one thread gathering whole batches (virtual loss) from one
/// tree per position, `visits` playouts per search. Compare `evals_per_second()` with
/// [`bare_evaluator`] at the same batch size.
pub fn with_evaluator<G: Game>(
    positions: &[G],
    evaluator: &dyn Evaluator<G>,
    visits: u64,
    duration: Duration,
) -> Result<SearchBench, SearchError> {
    let config = SearchConfig {
        cache_entries: 0,
        ..SearchConfig::default()
    };
    let options = RunOptions::single(evaluator.batch_size());
    searches(positions, evaluator, &config, visits, options, duration)
}
