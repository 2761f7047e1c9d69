//! One game's search: a tree, its root state, and the gather/apply steps that feed leaves to an
//! evaluator in batches.
//!
//! A search step is split in two, so that leaves of many trees can share one batch:
//! [`Search::gather`] descends (with virtual loss) and collects leaves that need the network
//! into a [`LeafBatch`]; terminal leaves and cache hits are backed up on the spot. After the
//! batch is evaluated, [`LeafBatch::apply`] expands each leaf and backs its value up.
//! [`Search::run`] does this in a loop with one or more threads on this one tree.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use games::{Game, Outcome, PlayError, Player};
use infer::{EvalError, Evaluator};
use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::batch::{evaluate_recorded, BatchReport, BatchStats, Batcher};
use crate::cache::EvalCache;
use crate::config::{Limit, RunOptions, SearchConfig};
use crate::noise::dirichlet;
use crate::tree::{status, terminal_outcome, NodeStats, Puct, Tree};

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("the game is over at the root: nothing to search")]
    GameOver,
    #[error("a search limit needs visits or time")]
    NoLimit,
    #[error(transparent)]
    Eval(#[from] EvalError),
}

/// What one call of [`Search::run`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchReport {
    /// Completed playouts (each adds one visit to the root).
    pub playouts: u64,
    /// Playouts that ended on a known terminal (scored exactly, no evaluation).
    pub terminal: u64,
    /// Playouts answered by the cache of network results.
    pub cache_hits: u64,
    /// Descents abandoned because they met a leaf already being evaluated.
    pub collisions: u64,
    /// Leaves evaluated but not expanded because the arena was full.
    pub tree_full: u64,
    pub elapsed: Duration,
    pub batches: BatchReport,
}

impl SearchReport {
    pub fn playouts_per_second(&self) -> f64 {
        self.playouts as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn add(&mut self, o: &GatherCounts) {
        self.playouts += o.playouts;
        self.terminal += o.terminal;
        self.cache_hits += o.cache_hits;
        self.collisions += o.collisions;
        self.tree_full += o.tree_full;
    }
}

/// One child of the root, as the search sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChildInfo<A> {
    pub action: A,
    pub visits: u32,
    /// Mean value for the player to act at the root (0 when unvisited).
    pub q: f64,
    /// Prior after root noise.
    pub prior: f32,
}

/// Counters from gathering (and applying) leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatherCounts {
    /// Leaves queued for the evaluator.
    pub leaves: u64,
    /// Playouts completed (during gather: terminals and cache hits; during apply: leaves).
    pub playouts: u64,
    pub terminal: u64,
    pub cache_hits: u64,
    pub collisions: u64,
    pub tree_full: u64,
}

#[derive(Clone, Copy, Debug)]
struct LeafRef {
    /// Which search the leaf belongs to (the caller's numbering).
    tag: u32,
    node: u32,
    path_start: u32,
    path_end: u32,
}

/// Leaves waiting for the evaluator, possibly from many trees; reused from round to round so
/// that a playout allocates nothing.
pub struct LeafBatch<G: Game> {
    states: Vec<G>,
    leaves: Vec<LeafRef>,
    paths: Vec<u32>,
    actions: Vec<G::Action>,
    priors: Vec<f32>,
    /// Outputs of the evaluator, sized for the states gathered.
    pub policy: Vec<f32>,
    pub value: Vec<f32>,
}

impl<G: Game> Default for LeafBatch<G> {
    fn default() -> Self {
        LeafBatch {
            states: Vec::new(),
            leaves: Vec::new(),
            paths: Vec::new(),
            actions: Vec::new(),
            priors: Vec::new(),
            policy: Vec::new(),
            value: Vec::new(),
        }
    }
}

impl<G: Game> LeafBatch<G> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn clear(&mut self) {
        self.states.clear();
        self.leaves.clear();
        self.paths.clear();
    }

    /// Leaves gathered.
    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// The states to evaluate, in order.
    pub fn states(&self) -> &[G] {
        &self.states
    }

    /// Sizes `policy` and `value` for the gathered states.
    pub fn prepare_outputs(&mut self, policy_size: usize) {
        self.policy.resize(self.states.len() * policy_size, 0.0);
        self.value.resize(self.states.len(), 0.0);
    }

    /// Evaluates the gathered states with `evaluator` into `policy` and `value`, recording the
    /// call in `stats`.
    pub fn evaluate(
        &mut self,
        evaluator: &dyn Evaluator<G>,
        stats: &BatchStats,
    ) -> Result<(), EvalError> {
        if self.states.is_empty() {
            return Ok(());
        }
        self.prepare_outputs(self.states[0].shape().policy_size);
        evaluate_recorded(
            evaluator,
            &self.states,
            &mut self.policy,
            &mut self.value,
            stats,
        )
    }

    /// Expands every gathered leaf with the outputs in `policy`/`value` and backs its value up.
    /// `search(tag)` returns the search a leaf was gathered from.
    pub fn apply<'s>(&mut self, search: impl Fn(u32) -> &'s Search<G>) -> GatherCounts {
        let mut counts = GatherCounts::default();
        let Some(first) = self.states.first() else {
            return counts;
        };
        let ps = first.shape().policy_size;
        for k in 0..self.leaves.len() {
            let leaf = self.leaves[k];
            let s = search(leaf.tag);
            let path = &self.paths[leaf.path_start as usize..leaf.path_end as usize];
            let full = s.apply_leaf(
                &self.states[k],
                leaf.node,
                path,
                &self.policy[k * ps..(k + 1) * ps],
                self.value[k],
                &mut self.actions,
                &mut self.priors,
            );
            counts.playouts += 1;
            counts.tree_full += u64::from(full);
        }
        counts
    }

    /// Gives every gathered leaf back unevaluated (after an evaluator failure).
    pub fn abandon<'s>(&mut self, search: impl Fn(u32) -> &'s Search<G>) {
        for leaf in &self.leaves {
            let s = search(leaf.tag);
            s.tree.release_claim(leaf.node);
            s.tree
                .undo(&self.paths[leaf.path_start as usize..leaf.path_end as usize]);
        }
        self.clear();
    }
}

/// The search of one game.
pub struct Search<G: Game> {
    state: G,
    tree: Tree<G::Action>,
    config: SearchConfig,
    puct: Puct,
    cache: Option<Arc<EvalCache>>,
    /// Draws root noise; locked only when the root is expanded.
    rng: Mutex<SmallRng>,
}

impl<G: Game> Search<G> {
    /// A search from `state` with a fresh tree (and a cache of its own if configured).
    pub fn new(state: G, config: SearchConfig, seed: u64) -> Self {
        let cache =
            (config.cache_entries > 0).then(|| Arc::new(EvalCache::new(config.cache_entries)));
        let tree = Tree::new(config.max_nodes, state.to_act().opponent());
        Search {
            puct: Puct {
                c_puct: config.c_puct,
                fpu_reduction: config.fpu_reduction,
                virtual_loss: config.virtual_loss,
            },
            state,
            tree,
            config,
            cache,
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
        }
    }

    /// Shares `cache` (for example among the games of one self-play worker), or drops the cache.
    pub fn with_cache(mut self, cache: Option<Arc<EvalCache>>) -> Self {
        self.cache = cache;
        self
    }

    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The root position.
    pub fn state(&self) -> &G {
        &self.state
    }

    pub fn tree(&self) -> &Tree<G::Action> {
        &self.tree
    }

    /// Starts again from `state` with an empty tree.
    pub fn reset(&mut self, state: G) {
        self.tree = Tree::new(self.config.max_nodes, state.to_act().opponent());
        self.state = state;
    }

    /// Plays `action` at the root. With tree reuse the chosen child's subtree becomes the new
    /// tree (and gets fresh root noise if noise is on); otherwise the tree starts empty.
    pub fn advance(&mut self, action: G::Action) -> Result<(), PlayError> {
        let mover = self.state.to_act();
        self.state.play(action)?;
        let root = self.tree.root();
        let child = self
            .tree
            .children(root)
            .find(|&c| self.tree.action(c) == action);
        self.tree = match child {
            Some(c) if self.config.reuse_tree => self.tree.extract(c, self.config.max_nodes),
            _ => Tree::new(self.config.max_nodes, mover),
        };
        if self.config.dirichlet_epsilon > 0.0 && self.tree.is_expanded(self.tree.root()) {
            let n = self.tree.children(self.tree.root()).len();
            let mut noise = vec![0.0; n];
            dirichlet(
                self.config.dirichlet_alpha,
                &mut noise,
                &mut *self.rng.lock(),
            );
            self.tree
                .mix_root_priors(&noise, self.config.dirichlet_epsilon);
        }
        Ok(())
    }

    /// Completed visits of the root.
    pub fn root_visits(&self) -> u32 {
        self.tree.stats(self.tree.root()).visits
    }

    /// The root's mean value for its player to act, in [−1, 1].
    pub fn root_value(&self) -> f32 {
        let root = self.tree.root();
        let q = self.tree.stats(root).q() as f32;
        if self.tree.mover(root) == self.state.to_act() {
            q
        } else {
            -q
        }
    }

    /// The root's children in `legal_actions` order (empty before the root is expanded).
    pub fn root_children(&self) -> Vec<ChildInfo<G::Action>> {
        let t = &self.tree;
        t.children(t.root())
            .map(|c| {
                let s: NodeStats = t.stats(c);
                ChildInfo {
                    action: t.action(c),
                    visits: s.visits,
                    q: s.q(),
                    prior: s.prior,
                }
            })
            .collect()
    }

    /// The visit distribution at the root (the policy target of self-play): each child's share
    /// of the children's visits.
    pub fn visit_distribution(&self) -> Vec<(G::Action, f32)> {
        let children = self.root_children();
        let total: u64 = children.iter().map(|c| u64::from(c.visits)).sum();
        children
            .iter()
            .map(|c| {
                let p = if total == 0 {
                    0.0
                } else {
                    c.visits as f32 / total as f32
                };
                (c.action, p)
            })
            .collect()
    }

    /// The most visited child (ties broken by value, then prior).
    pub fn best_action(&self) -> Option<G::Action> {
        self.root_children()
            .into_iter()
            .max_by(|a, b| {
                (a.visits, a.q, a.prior)
                    .partial_cmp(&(b.visits, b.q, b.prior))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .map(|c| c.action)
    }

    /// An action drawn with probability ∝ visits^(1/temperature); the best action at
    /// temperature 0.
    pub fn choose_action<R: Rng + ?Sized>(
        &self,
        temperature: f32,
        rng: &mut R,
    ) -> Option<G::Action> {
        if temperature <= 1e-3 {
            return self.best_action();
        }
        let children = self.root_children();
        let max = children.iter().map(|c| c.visits).max()?;
        if max == 0 {
            return self.best_action();
        }
        // Relative to the maximum so that small temperatures do not overflow.
        let weights: Vec<f64> = children
            .iter()
            .map(|c| (f64::from(c.visits) / f64::from(max)).powf(1.0 / f64::from(temperature)))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut x = rng.gen::<f64>() * total;
        for (c, w) in children.iter().zip(&weights) {
            if x < *w {
                return Some(c.action);
            }
            x -= w;
        }
        children.last().map(|c| c.action)
    }

    /// Descends up to `max_leaves` times, queueing leaves that need the network into `batch`
    /// (tagged `tag`). Terminal leaves and cache hits complete their playouts here. Stops early
    /// after `max_leaves` collisions. Safe to call from several threads at once.
    pub fn gather(&self, batch: &mut LeafBatch<G>, tag: u32, max_leaves: usize) -> GatherCounts {
        let mut c = GatherCounts::default();
        let max = max_leaves as u64;
        // Playouts completed on the spot (terminals, cache hits) use the budget too.
        while c.leaves + c.playouts < max && c.collisions < max {
            self.descend(batch, tag, &mut c);
        }
        c
    }

    /// One descent from the root.
    fn descend(&self, batch: &mut LeafBatch<G>, tag: u32, c: &mut GatherCounts) {
        let t = &self.tree;
        let path_start = batch.paths.len();
        let mut node = t.root();
        t.add_in_flight(node);
        batch.paths.push(node);
        batch.states.push(self.state.clone());
        let state = batch.states.last_mut().expect("just pushed");
        loop {
            match t.status(node) {
                status::EXPANDED => {
                    let child = t.select_child(node, state.to_act(), &self.puct);
                    t.add_in_flight(child);
                    state.play_unchecked(t.action(child));
                    batch.paths.push(child);
                    node = child;
                }
                status::NEW => {
                    if t.try_claim(node).is_err() {
                        continue; // another thread changed it: look again
                    }
                    if let Some(outcome) = state.outcome() {
                        t.set_terminal(node, outcome);
                        t.backup(&batch.paths[path_start..], outcome.value_for(Player::First));
                        c.terminal += 1;
                        c.playouts += 1;
                        break;
                    }
                    if let Some(cache) = &self.cache {
                        batch.actions.clear();
                        state.legal_actions(&mut batch.actions);
                        if let Some(v) =
                            cache.get(state.hash(), batch.actions.len(), &mut batch.priors)
                        {
                            if node == t.root() {
                                self.root_noise(&mut batch.priors);
                            }
                            let full =
                                !t.expand(node, state.to_act(), &batch.actions, &batch.priors);
                            t.backup(&batch.paths[path_start..], side_value(v, state.to_act()));
                            c.cache_hits += 1;
                            c.playouts += 1;
                            c.tree_full += u64::from(full);
                            break;
                        }
                    }
                    batch.leaves.push(LeafRef {
                        tag,
                        node,
                        path_start: path_start as u32,
                        path_end: batch.paths.len() as u32,
                    });
                    c.leaves += 1;
                    return; // the state stays in the batch
                }
                status::EXPANDING => {
                    t.undo(&batch.paths[path_start..]);
                    c.collisions += 1;
                    break;
                }
                s => {
                    let outcome: Outcome = terminal_outcome(s).expect("terminal status");
                    t.backup(&batch.paths[path_start..], outcome.value_for(Player::First));
                    c.terminal += 1;
                    c.playouts += 1;
                    break;
                }
            }
        }
        batch.states.pop();
        batch.paths.truncate(path_start);
    }

    /// Expands one evaluated leaf and backs its value up. Returns true if the arena was full.
    #[allow(clippy::too_many_arguments)]
    fn apply_leaf(
        &self,
        state: &G,
        node: u32,
        path: &[u32],
        logits: &[f32],
        value: f32,
        actions: &mut Vec<G::Action>,
        priors: &mut Vec<f32>,
    ) -> bool {
        actions.clear();
        state.legal_actions(actions);
        priors.clear();
        priors.extend(actions.iter().map(|&a| logits[state.action_index(a)]));
        softmax(priors);
        if let Some(cache) = &self.cache {
            cache.insert(state.hash(), value, priors);
        }
        if node == self.tree.root() {
            self.root_noise(priors);
        }
        let to_act = state.to_act();
        let full = !self.tree.expand(node, to_act, actions, priors);
        self.tree.backup(path, side_value(value, to_act));
        full
    }

    fn root_noise(&self, priors: &mut [f32]) {
        let eps = self.config.dirichlet_epsilon;
        if eps <= 0.0 || priors.is_empty() {
            return;
        }
        let mut noise = vec![0.0; priors.len()];
        dirichlet(
            self.config.dirichlet_alpha,
            &mut noise,
            &mut *self.rng.lock(),
        );
        for (p, n) in priors.iter_mut().zip(noise) {
            *p = (1.0 - eps) * *p + eps * n;
        }
    }

    /// Searches until `limit`, with `options.threads` threads in this tree, evaluating leaves
    /// with `evaluator`.
    pub fn run(
        &mut self,
        evaluator: &dyn Evaluator<G>,
        limit: Limit,
        options: RunOptions,
    ) -> Result<SearchReport, SearchError> {
        if self.state.outcome().is_some() {
            return Err(SearchError::GameOver);
        }
        if limit.visits.is_none() && limit.time.is_none() {
            return Err(SearchError::NoLimit);
        }
        let start = Instant::now();
        let deadline = limit.time.map(|t| start + t);
        let tickets = Tickets {
            left: AtomicU64::new(limit.visits.unwrap_or(u64::MAX)),
        };
        let stop = AtomicBool::new(false);
        let stats = BatchStats::default();
        let leaves = options
            .leaves_per_thread
            .clamp(1, evaluator.batch_size().max(1));
        let policy_size = self.state.shape().policy_size;
        let batcher = (options.combine && options.threads > 1)
            .then(|| Batcher::new(evaluator, policy_size, Duration::from_micros(500)));
        let this = &*self;
        let worker = || -> Result<SearchReport, SearchError> {
            let mut report = SearchReport::default();
            let mut batch = LeafBatch::new();
            loop {
                if stop.load(Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let want = tickets.take(leaves as u64);
                if want == 0 {
                    break;
                }
                batch.clear();
                let g = this.gather(&mut batch, 0, want as usize);
                report.add(&g);
                tickets.give_back(want.saturating_sub(g.leaves + g.playouts));
                if batch.is_empty() {
                    continue;
                }
                let evaluated = match &batcher {
                    Some(b) => {
                        batch.prepare_outputs(policy_size);
                        b.evaluate(&batch.states, &mut batch.policy, &mut batch.value)
                    }
                    None => batch.evaluate(evaluator, &stats),
                };
                if let Err(e) = evaluated {
                    batch.abandon(|_| this);
                    stop.store(true, Relaxed);
                    return Err(e.into());
                }
                let a = batch.apply(|_| this);
                report.add(&a);
            }
            Ok(report)
        };
        let results: Vec<Result<SearchReport, SearchError>> = if options.threads <= 1 {
            vec![worker()]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..options.threads).map(|_| s.spawn(&worker)).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("search thread panicked"))
                    .collect()
            })
        };
        let mut total = SearchReport::default();
        for r in results {
            let r = r?;
            total.add(&GatherCounts {
                leaves: 0,
                playouts: r.playouts,
                terminal: r.terminal,
                cache_hits: r.cache_hits,
                collisions: r.collisions,
                tree_full: r.tree_full,
            });
        }
        total.elapsed = start.elapsed();
        total.batches = match &batcher {
            Some(b) => b.stats().report(),
            None => stats.report(),
        };
        Ok(total)
    }
}

/// The playout budget shared by the threads of one search.
struct Tickets {
    left: AtomicU64,
}

impl Tickets {
    /// Takes up to `n` playouts from the budget.
    fn take(&self, n: u64) -> u64 {
        let mut left = self.left.load(Relaxed);
        loop {
            let k = left.min(n);
            if k == 0 {
                return 0;
            }
            match self
                .left
                .compare_exchange_weak(left, left - k, Relaxed, Relaxed)
            {
                Ok(_) => return k,
                Err(now) => left = now,
            }
        }
    }

    fn give_back(&self, n: u64) {
        if n > 0 {
            self.left.fetch_add(n, Relaxed);
        }
    }
}

/// `value` (for `to_act`) as seen by `Player::First`.
#[inline]
fn side_value(value: f32, to_act: Player) -> f32 {
    match to_act {
        Player::First => value,
        Player::Second => -value,
    }
}

/// In-place softmax; a uniform distribution if the logits are not finite.
fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    if sum.is_finite() && sum > 0.0 {
        let inv = 1.0 / sum;
        x.iter_mut().for_each(|v| *v *= inv);
    } else {
        let u = 1.0 / x.len().max(1) as f32;
        x.iter_mut().for_each(|v| *v = u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_normalises_and_survives_nan() {
        let mut x = [1.0, 2.0, 3.0];
        softmax(&mut x);
        assert!((x.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(x[2] > x[1] && x[1] > x[0]);
        let mut y = [f32::NAN, 0.0];
        softmax(&mut y);
        assert_eq!(y, [0.5, 0.5]);
    }

    #[test]
    fn tickets_never_exceed_the_budget() {
        let t = Tickets {
            left: AtomicU64::new(5),
        };
        assert_eq!(t.take(3), 3);
        assert_eq!(t.take(3), 2);
        assert_eq!(t.take(3), 0);
        t.give_back(1);
        assert_eq!(t.take(3), 1);
    }
}
