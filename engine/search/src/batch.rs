//! Fixed-size batches for the evaluator, filled from many sources.
//!
//! Two ways in, both ending in the evaluator's fixed batch:
//! - one thread gathers leaves from one or many trees into a [`crate::LeafBatch`] and
//!   evaluates it itself (self-play: many games' trees, one batch);
//! - several threads hand their leaves to a shared [`Batcher`], which combines them into one
//!   batch and evaluates it when it is full or when the oldest request has waited `max_wait`
//!   (match play: many threads, one tree).
//!
//! Both record how full the batches were ([`BatchStats`]).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Playable;
use eval::{EvalError, Evaluator};
use parking_lot::{Condvar, Mutex};

/// Counters of evaluator calls, shared by the threads that make them.
#[derive(Debug, Default)]
pub struct BatchStats {
    batches: AtomicU64,
    states: AtomicU64,
    capacity: AtomicU64,
    eval_nanos: AtomicU64,
}

/// A snapshot of [`BatchStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchReport {
    /// Evaluator calls.
    pub batches: u64,
    /// States evaluated.
    pub states: u64,
    /// Sum over calls of the evaluator's batch size (what could have been evaluated).
    pub capacity: u64,
    /// Time spent inside the evaluator.
    pub eval_time: Duration,
}

impl BatchReport {
    /// Adds another report's counts to this one.
    pub fn merge(&mut self, o: &BatchReport) {
        self.batches += o.batches;
        self.states += o.states;
        self.capacity += o.capacity;
        self.eval_time += o.eval_time;
    }

    /// Mean fraction of each batch that held real states (1 = always full).
    pub fn fill(&self) -> f64 {
        if self.capacity == 0 {
            0.0
        } else {
            self.states as f64 / self.capacity as f64
        }
    }

    /// States per second of evaluator time.
    pub fn evals_per_eval_second(&self) -> f64 {
        self.states as f64 / self.eval_time.as_secs_f64().max(1e-9)
    }
}

impl BatchStats {
    /// Records one evaluator call.
    pub fn record(&self, states: usize, batch_size: usize, took: Duration) {
        self.batches.fetch_add(1, Relaxed);
        self.states.fetch_add(states as u64, Relaxed);
        self.capacity.fetch_add(batch_size as u64, Relaxed);
        self.eval_nanos.fetch_add(took.as_nanos() as u64, Relaxed);
    }

    pub fn report(&self) -> BatchReport {
        BatchReport {
            batches: self.batches.load(Relaxed),
            states: self.states.load(Relaxed),
            capacity: self.capacity.load(Relaxed),
            eval_time: Duration::from_nanos(self.eval_nanos.load(Relaxed)),
        }
    }
}

/// Calls `evaluator` on `states` and records the call. With `score`, the scores of the states
/// are asked for too ([`Evaluator::evaluate_aux`]) and written there (left empty where the
/// evaluator gives none); without, the plain [`Evaluator::evaluate`] runs.
pub(crate) fn evaluate_recorded<G: Playable, S: std::borrow::Borrow<G>>(
    evaluator: &dyn Evaluator<G>,
    states: &[S],
    policy: &mut [f32],
    value: &mut [f32],
    score: Option<&mut Vec<f32>>,
    stats: &BatchStats,
) -> Result<(), EvalError> {
    let refs: Vec<&G> = states.iter().map(|s| s.borrow()).collect();
    let start = Instant::now();
    match score {
        None => evaluator.evaluate(&refs, policy, value)?,
        Some(score) => {
            let aux = evaluator.evaluate_aux(&refs, policy, value)?;
            score.clear();
            if let Some(s) = aux.score.filter(|s| s.len() >= refs.len()) {
                score.extend_from_slice(&s[..refs.len()]);
            }
        }
    }
    stats.record(refs.len(), evaluator.batch_size(), start.elapsed());
    Ok(())
}

/// The outputs of one evaluated batch (policy, value, score: empty where none was asked for),
/// shared by the threads whose states were in it.
type Outputs = Result<(Vec<f32>, Vec<f32>, Vec<f32>), String>;

/// Where the threads of one batch wait for its outputs.
#[derive(Default)]
struct Slot {
    done: Mutex<Option<Arc<Outputs>>>,
    ready: Condvar,
}

/// The batch being filled.
struct Open<G> {
    /// Increases with every batch taken for evaluation: tells a waiter whether the batch it
    /// joined is still open.
    id: u64,
    states: Vec<G>,
    slot: Arc<Slot>,
}

/// Combines the states of several threads into the evaluator's fixed-size batches.
///
/// No thread of its own: the thread that fills a batch evaluates it, and a thread whose batch
/// is still not full after `max_wait` evaluates what is there.
pub struct Batcher<'e, G: Playable> {
    evaluator: &'e dyn Evaluator<G>,
    /// Whether each batch's scores are asked for too (see [`Batcher::with_scores`]).
    scores: bool,
    max_wait: Duration,
    policy_size: usize,
    open: Mutex<Open<G>>,
    stats: BatchStats,
}

impl<'e, G: Playable> Batcher<'e, G> {
    pub fn new(evaluator: &'e dyn Evaluator<G>, policy_size: usize, max_wait: Duration) -> Self {
        Batcher {
            evaluator,
            scores: false,
            max_wait,
            policy_size,
            open: Mutex::new(Open {
                id: 0,
                states: Vec::with_capacity(evaluator.batch_size()),
                slot: Arc::default(),
            }),
            stats: BatchStats::default(),
        }
    }

    /// Asks the evaluator for the states' scores too, where it has a score head: each
    /// caller then gets them through [`Batcher::evaluate`]'s `score`.
    pub fn with_scores(mut self, on: bool) -> Self {
        self.scores = on && self.evaluator.heads().score;
        self
    }

    pub fn batch_size(&self) -> usize {
        self.evaluator.batch_size()
    }

    pub fn stats(&self) -> &BatchStats {
        &self.stats
    }

    /// Evaluates `states` as part of shared batches; writes policy logits
    /// (`states.len() × policy_size`) and values like [`Evaluator::evaluate`], and the
    /// states' scores into `score` (cleared first) where the batcher asks for them.
    pub fn evaluate(
        &self,
        states: &[G],
        policy: &mut [f32],
        value: &mut [f32],
        score: &mut Vec<f32>,
    ) -> Result<(), EvalError> {
        score.clear();
        let mut done = 0;
        while done < states.len() {
            let (slot, offset, n, id, full) = {
                let mut open = self.open.lock();
                let offset = open.states.len();
                let n = (self.batch_size() - offset).min(states.len() - done);
                open.states.extend_from_slice(&states[done..done + n]);
                let full = open.states.len() == self.batch_size();
                (open.slot.clone(), offset, n, open.id, full)
            };
            let outputs = if full {
                self.flush(id).unwrap_or_else(|| wait(&slot))
            } else {
                match wait_opt(&slot, self.max_wait) {
                    Some(o) => o,
                    None => self.flush(id).unwrap_or_else(|| wait(&slot)),
                }
            };
            let (p, v, s) = outputs
                .as_ref()
                .as_ref()
                .map_err(|e| EvalError::Backend(e.clone()))?;
            let ps = self.policy_size;
            policy[done * ps..(done + n) * ps].copy_from_slice(&p[offset * ps..(offset + n) * ps]);
            value[done..done + n].copy_from_slice(&v[offset..offset + n]);
            if let Some(s) = s.get(offset..offset + n) {
                score.extend_from_slice(s);
            }
            done += n;
        }
        Ok(())
    }

    /// Takes batch `id` if it is still the open one, evaluates it and wakes its waiters.
    /// `None` when another thread already took it.
    fn flush(&self, id: u64) -> Option<Arc<Outputs>> {
        let (states, slot) = {
            let mut open = self.open.lock();
            if open.id != id {
                return None;
            }
            open.id += 1;
            let states = std::mem::replace(
                &mut open.states,
                Vec::with_capacity(self.evaluator.batch_size()),
            );
            (states, std::mem::take(&mut open.slot))
        };
        let mut policy = vec![0.0; states.len() * self.policy_size];
        let mut value = vec![0.0; states.len()];
        let mut score = Vec::new();
        let result = evaluate_recorded(
            self.evaluator,
            &states,
            &mut policy,
            &mut value,
            self.scores.then_some(&mut score),
            &self.stats,
        )
        .map(|()| (policy, value, score))
        .map_err(|e| e.to_string());
        let outputs = Arc::new(result);
        *slot.done.lock() = Some(outputs.clone());
        slot.ready.notify_all();
        Some(outputs)
    }
}

/// Waits for a slot's outputs, at most `limit`.
fn wait_opt(slot: &Slot, limit: Duration) -> Option<Arc<Outputs>> {
    let deadline = Instant::now() + limit;
    let mut done = slot.done.lock();
    loop {
        if let Some(o) = done.as_ref() {
            return Some(o.clone());
        }
        if slot.ready.wait_until(&mut done, deadline).timed_out() {
            return done.clone();
        }
    }
}

/// Waits for a slot's outputs (another thread is evaluating it).
fn wait(slot: &Slot) -> Arc<Outputs> {
    let mut done = slot.done.lock();
    loop {
        if let Some(o) = done.as_ref() {
            return o.clone();
        }
        slot.ready.wait(&mut done);
    }
}
