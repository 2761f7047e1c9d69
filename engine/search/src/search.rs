//! One game's search: a tree, its root state, and the gather/apply steps that feed leaves to an
//! evaluator in batches.
//!
//! A search step is split in two, so that leaves of many trees can share one batch:
//! [`Search::gather`] descends (with virtual loss) and collects leaves that need the network
//! into a [`LeafBatch`]; terminal leaves and cache hits are backed up on the spot. After the
//! batch is evaluated, [`LeafBatch::apply`] expands each leaf and backs its value up.
//! [`Search::run`] does this in a loop with one or more threads on this one tree.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::Playable;
use eval::{EvalError, Evaluator};
use games::{Candidate, Outcome, PlayError, Player};
use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::batch::{evaluate_recorded, BatchReport, BatchStats, Batcher};
use crate::cache::EvalCache;
use crate::config::{Limit, RunOptions, SearchConfig, SearchKind};
use crate::gumbel::{self, ChildView, Gumbel, RootPlan, OPEN_BUDGET};
use crate::noise::dirichlet;
use crate::tree::{exact_outcome, status, CacheLine, Cursor, NodeStats, Puct, Tree};

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
    /// The result with best play after this action, when the game ended there or the solver
    /// proved it.
    pub proven: Option<Outcome>,
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
///
/// Every [`Search::gather`] into a batch must be followed by [`LeafBatch::apply`] (or
/// [`LeafBatch::abandon`]) before the batch is cleared: besides the leaves, the batch holds the
/// virtual loss of the descents that collided, which those two withdraw.
pub struct LeafBatch<G: Playable> {
    states: Vec<G>,
    leaves: Vec<LeafRef>,
    /// Paths of descents that met a leaf being evaluated. Their virtual loss stays until the
    /// batch is applied, so that the next descents go elsewhere instead of repeating the same
    /// path into the same collision (which would end the gathering with a part-empty batch).
    collided: Vec<LeafRef>,
    paths: Vec<u32>,
    actions: Vec<G::Action>,
    priors: Vec<f32>,
    sorted: Vec<(f32, G::Action)>,
    /// This batch's (so this thread's) runs of free arena slots, by search tag.
    cursors: Vec<Cursor>,
    /// Scratch of the Gumbel rules: one node's children, and a number per child.
    views: Vec<ChildView>,
    work: Vec<f64>,
    /// Outputs of the evaluator, sized for the states gathered.
    pub policy: Vec<f32>,
    pub value: Vec<f32>,
    /// The network's score of each state (for its player to act), where a leaf's tree keeps
    /// scores and the evaluator has a score head; empty otherwise.
    pub score: Vec<f32>,
    /// Whether a leaf of this batch comes from a tree that keeps scores.
    wants_score: bool,
}

impl<G: Playable> Default for LeafBatch<G> {
    fn default() -> Self {
        LeafBatch {
            states: Vec::new(),
            leaves: Vec::new(),
            collided: Vec::new(),
            paths: Vec::new(),
            actions: Vec::new(),
            priors: Vec::new(),
            sorted: Vec::new(),
            cursors: Vec::new(),
            views: Vec::new(),
            work: Vec::new(),
            policy: Vec::new(),
            value: Vec::new(),
            score: Vec::new(),
            wants_score: false,
        }
    }
}

impl<G: Playable> LeafBatch<G> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the batch for the next round (after `apply` or `abandon`).
    pub fn clear(&mut self) {
        debug_assert!(
            self.collided.is_empty(),
            "clear() before apply() would leak virtual loss"
        );
        self.states.clear();
        self.leaves.clear();
        self.collided.clear();
        self.paths.clear();
        self.score.clear();
        self.wants_score = false;
    }

    /// Leaves gathered.
    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    /// True when there is nothing to evaluate and nothing to withdraw: `apply` may be skipped.
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty() && self.collided.is_empty()
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

    /// Whether the evaluator is to be asked for the states' scores too: a leaf's tree keeps
    /// scores and `evaluator` has a score head.
    pub fn wants_score(&self, evaluator: &dyn Evaluator<G>) -> bool {
        self.wants_score && evaluator.heads().score
    }

    /// Evaluates the gathered states with `evaluator` into `policy` and `value` (and `score`
    /// where [`LeafBatch::wants_score`]), recording the call in `stats`.
    pub fn evaluate(
        &mut self,
        evaluator: &dyn Evaluator<G>,
        stats: &BatchStats,
    ) -> Result<(), EvalError> {
        if self.states.is_empty() {
            return Ok(());
        }
        self.prepare_outputs(self.states[0].shape().policy_size);
        let score = self.wants_score(evaluator).then_some(&mut self.score);
        evaluate_recorded(
            evaluator,
            &self.states,
            &mut self.policy,
            &mut self.value,
            score,
            stats,
        )
    }

    /// Expands every gathered leaf with the outputs in `policy`/`value` and backs its value up.
    /// `search(tag)` returns the search a leaf was gathered from.
    pub fn apply<'s>(&mut self, search: impl Fn(u32) -> &'s Search<G>) -> GatherCounts {
        let mut counts = GatherCounts::default();
        self.withdraw_collisions(&search);
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
                self.score.get(k).copied(),
                &mut self.actions,
                &mut self.priors,
                &mut self.sorted,
                cursor(&mut self.cursors, leaf.tag),
            );
            counts.playouts += 1;
            counts.tree_full += u64::from(full);
        }
        counts
    }

    /// Withdraws the virtual loss of the descents that collided.
    fn withdraw_collisions<'s>(&mut self, search: &impl Fn(u32) -> &'s Search<G>) {
        for c in self.collided.drain(..) {
            search(c.tag)
                .tree
                .undo(&self.paths[c.path_start as usize..c.path_end as usize]);
        }
    }

    /// Gives every gathered leaf back unevaluated (after an evaluator failure).
    pub fn abandon<'s>(&mut self, search: impl Fn(u32) -> &'s Search<G>) {
        self.withdraw_collisions(&search);
        for leaf in &self.leaves {
            let s = search(leaf.tag);
            s.tree.release_claim(leaf.node);
            s.tree
                .undo(&self.paths[leaf.path_start as usize..leaf.path_end as usize]);
        }
        self.clear();
    }
}

/// Longest principal variation [`Search::principal_variation`] gives.
pub const PV_MAX: usize = 12;

/// The search of one game.
pub struct Search<G: Playable> {
    state: G,
    tree: Tree<G::Action>,
    config: SearchConfig,
    puct: Puct,
    cache: Option<Arc<EvalCache>>,
    /// The previous arena, kept to copy the next reused subtree into (no fresh page faults).
    spare: Option<Tree<G::Action>>,
    /// Draws root noise; locked only when the root is expanded.
    rng: Mutex<SmallRng>,
    /// Noise was mixed into the priors of an already expanded root (a reused subtree), so they
    /// are out of order and selection must read all the root's children. Changed only under
    /// `&mut` (an atomic only so that the search threads can share `&Search`).
    root_noised: AtomicBool,
    /// The dynamic score utility's centre (f32 bits, `Player::First`'s view): set from the
    /// root's mean score when a search begins, or from the root's own evaluation when the
    /// search expands it.
    score_center: AtomicU32,
    /// The root's children's priors before Dirichlet noise was mixed in, as (action, prior);
    /// empty while the root has no noise. Written once per root, by the thread that expands
    /// it or under `&mut` (a reused root); cleared under `&mut` with every new root.
    root_prior: Mutex<Vec<(G::Action, f32)>>,
    /// Whether roots get Dirichlet noise (when the config has any); see [`Search::set_root_noise`].
    noise_on: bool,
    /// Set from outside (a protocol's `stop`) to end a running search early.
    halt: Option<Arc<AtomicBool>>,
    /// The Gumbel constants when the config asks for a Gumbel search.
    gumbel: Option<Gumbel>,
    /// The Gumbel root's plan for the current search. Set once per root and search: under
    /// `&mut` (a new search, a new root) or by the thread that expands the root.
    plan: OnceLock<RootPlan>,
    /// New playouts the current search may spend (`None`: open-ended), as the Gumbel root
    /// plans them; see [`Search::begin_search`].
    budget: Option<u64>,
    /// Scale of the Gumbel noise (the move's temperature; 0 chooses greedily).
    gumbel_scale: f32,
}

impl<G: Playable> Search<G> {
    /// A search from `state` with a fresh tree (and a cache of its own if configured).
    pub fn new(state: G, config: SearchConfig, seed: u64) -> Self {
        let cache =
            (config.cache_entries > 0).then(|| Arc::new(EvalCache::new(config.cache_entries)));
        let mut tree = Tree::new(config.max_nodes, state.to_act().opponent());
        if config.minimax_weight > 0.0 {
            tree.track_minimax();
        }
        if config.track_scores || config.score_utility > 0.0 || config.dynamic_score_utility > 0.0 {
            tree.track_scores();
        }
        let gumbel = (config.search == SearchKind::Gumbel).then_some(Gumbel {
            m: config.gumbel_m,
            c_visit: config.gumbel_c_visit,
            c_scale: config.gumbel_c_scale,
        });
        Search {
            puct: Puct {
                c_puct: config.c_puct,
                fpu_reduction: config.fpu_reduction,
                virtual_loss: config.virtual_loss,
                minimax_weight: config.minimax_weight,
                forced: config.forced_playouts,
                score_weight: config.score_utility,
                dynamic_weight: config.dynamic_score_utility,
                score_center: 0.0,
                score_scale: score_scale(&state),
            },
            state,
            tree,
            config,
            cache,
            spare: None,
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
            root_noised: AtomicBool::new(false),
            score_center: AtomicU32::new(0.0f32.to_bits()),
            root_prior: Mutex::new(Vec::new()),
            noise_on: true,
            halt: None,
            gumbel,
            plan: OnceLock::new(),
            budget: None,
            gumbel_scale: 0.0,
        }
    }

    /// Scale of the Gumbel noise of the searches to come: the temperature of the moves they
    /// choose. 1 samples as the paper does (argmax of g + logit + σ(q̂) with g ~ Gumbel(0, 1)
    /// is a draw from the improved policy's softmax, as far as the visits allow); 0 (the
    /// default, match play) draws no noise and chooses greedily. Takes effect at the next
    /// [`Search::begin_search`] or root. PUCT ignores it.
    pub fn set_gumbel_noise(&mut self, scale: f32) {
        self.gumbel_scale = scale.max(0.0);
    }

    /// Starts a search of `visits` new playouts from the root as it stands (`None`: until
    /// stopped). [`Search::run`] calls it; a caller driving [`Search::gather`] itself calls it
    /// before each search. The Gumbel root plans its sequential halving here (or, if the root
    /// is not yet expanded, when it is: its own evaluation is the first playout); PUCT needs no
    /// plan.
    pub fn begin_search(&mut self, visits: Option<u64>) {
        self.budget = visits;
        self.plan = OnceLock::new();
        if self.puct.dynamic_weight > 0.0 {
            if let Some(stats) = self.tree.score(self.tree.root()) {
                let mover = self.state.to_act().opponent();
                self.center_scores(side_value(stats.mean, mover));
            }
        }
        if self.tree.is_expanded(self.tree.root()) {
            self.plan_root(visits.unwrap_or(OPEN_BUDGET));
        }
    }

    /// The Gumbel root's plan for `simulations` visits from the expanded root (nothing for
    /// PUCT, or when another thread planned first).
    fn plan_root(&self, simulations: u64) {
        let Some(g) = &self.gumbel else {
            return;
        };
        let root = self.tree.root();
        if let Some(plan) = RootPlan::new(
            &self.tree,
            root,
            self.state.to_act(),
            g,
            simulations,
            self.gumbel_scale,
            &mut *self.rng.lock(),
        ) {
            let _ = self.plan.set(plan);
        }
    }

    /// Sets the dynamic score utility's centre from the score expected at the root
    /// (`Player::First`'s view), as KataGo does: that score drawn a fifth of the way towards 0,
    /// but never further from it than 0.75 · √(board points) (KataGo's
    /// `dynamicScoreCenterZeroWeight` and `dynamicScoreCenterScale`). The pull towards 0 keeps
    /// a side that is far ahead from counting every point it gives back as a loss.
    fn center_scores(&self, expected: f32) {
        if self.puct.dynamic_weight <= 0.0 {
            return;
        }
        // score_scale is 2 · √(board points).
        let cap = 0.75 * self.puct.score_scale / 2.0;
        let center = (expected * (1.0 - 0.2)).clamp(expected - cap, expected + cap);
        self.score_center.store(center.to_bits(), Relaxed);
    }

    /// After this search expanded the root: the rest of the budget goes to its children.
    fn root_expanded(&self) {
        if self.gumbel.is_some() {
            self.plan_root(self.budget.map_or(OPEN_BUDGET, |b| b.saturating_sub(1)));
        }
    }

    /// The simulations the Gumbel root planned for the current search (`None` for PUCT or
    /// before the root is expanded).
    pub fn planned_simulations(&self) -> Option<u64> {
        self.plan.get().map(RootPlan::simulations)
    }

    /// A flag that, once set, ends every `run` of this search at its next round (as soon as the
    /// root has children to choose from): how a protocol's `stop` ends an open-ended search.
    pub fn set_halt(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.halt = flag;
    }

    /// Turns root noise on or off for the roots to come: the next `reset` or `advance`, or a
    /// root not yet expanded. Self-play turns it off for the cheap searches of playout-cap
    /// randomisation: their moves are played but never learned from, so noise would only make
    /// those moves worse. Has no effect when the config has no noise. Forced playouts follow
    /// the same switch: they serve the learned searches alone.
    pub fn set_root_noise(&mut self, on: bool) {
        self.noise_on = on;
        self.puct.forced = if on { self.config.forced_playouts } else { 0.0 };
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

    /// Starts again from `state` with an empty tree (keeping the arena's memory).
    pub fn reset(&mut self, state: G) {
        self.tree.clear(state.to_act().opponent());
        // Go's board may change size between games.
        self.puct.score_scale = score_scale(&state);
        self.state = state;
        self.root_noised.store(false, Relaxed);
        self.score_center.store(0.0f32.to_bits(), Relaxed);
        self.root_prior.get_mut().clear();
        self.plan = OnceLock::new();
    }

    /// Plays `action` at the root. With tree reuse the chosen child's subtree becomes the new
    /// tree (PUCT: with fresh Dirichlet noise if noise is on; Gumbel: with a fresh plan for the
    /// last budget, which [`Search::begin_search`] replaces); otherwise the tree starts empty.
    pub fn advance(&mut self, action: G::Action) -> Result<(), PlayError> {
        let mover = self.state.to_act();
        self.state.play(action)?;
        let root = self.tree.root();
        let child = self
            .tree
            .children(root)
            .find(|&c| self.tree.action(c) == action);
        match child {
            Some(c) if self.config.reuse_tree => {
                let mut next = self
                    .spare
                    .take()
                    .unwrap_or_else(|| Tree::new(self.config.max_nodes, mover));
                self.tree.extract_into(c, &mut next);
                self.spare = Some(std::mem::replace(&mut self.tree, next));
            }
            _ => self.tree.clear(mover),
        }
        self.root_noised.store(false, Relaxed);
        self.root_prior.get_mut().clear();
        self.plan = OnceLock::new();
        if self.gumbel.is_some() {
            // The Gumbel noise replaces Dirichlet's.
            if self.tree.is_expanded(self.tree.root()) {
                self.plan_root(self.budget.unwrap_or(OPEN_BUDGET));
            }
        } else if self.noise_on
            && self.config.dirichlet_epsilon > 0.0
            && self.tree.is_expanded(self.tree.root())
        {
            let t = &self.tree;
            let before = t
                .children(t.root())
                .map(|c| (t.action(c), t.stats(c).prior));
            *self.root_prior.get_mut() = before.collect();
            let n = self.tree.children(self.tree.root()).len();
            let mut noise = vec![0.0; n];
            dirichlet(
                self.config.dirichlet_alpha,
                &mut noise,
                &mut *self.rng.lock(),
            );
            self.tree
                .mix_root_priors(&noise, self.config.dirichlet_epsilon);
            self.root_noised.store(true, Relaxed);
        }
        Ok(())
    }

    /// Completed visits of the root.
    pub fn root_visits(&self) -> u32 {
        self.tree.stats(self.tree.root()).visits
    }

    /// The root's mean value for its player to act, in [−1, 1]; exactly 1, 0 or −1 once the
    /// result is proven.
    pub fn root_value(&self) -> f32 {
        let root = self.tree.root();
        if let Some(outcome) = self.tree.proven(root) {
            return outcome.value_for(self.state.to_act());
        }
        let q = self.tree.stats(root).q() as f32;
        if self.tree.mover(root) == self.state.to_act() {
            q
        } else {
            -q
        }
    }

    /// The root's proven result (a win or a loss; `None` for a draw or nothing proven) and the
    /// actions to the game's end along the proof: the fewest the winner's proof needs, the
    /// most the loser can hold out against it. The winner may have a shorter win the search
    /// did not prove, so the count is one it can force, at most.
    pub fn proven_result(&self) -> Option<(Outcome, u32)> {
        let root = self.tree.root();
        Some((self.tree.proven(root)?, self.proof_line(root)?.0))
    }

    /// The child of proven node `node` on its proof's line (see [`Search::proof_line`]).
    fn proof_step(&self, node: u32) -> Option<u32> {
        self.proof_line(node)?.1
    }

    /// The line of proven node `node`'s proof: the actions from it to the game's end, and the
    /// child the line goes through (`None` at the game's end). The winner takes its quickest
    /// proven win, the loser its longest defence. `None` for a draw, an unproven node, or a
    /// loss with a reply whose line is not known to the end.
    fn proof_line(&self, node: u32) -> Option<(u32, Option<u32>)> {
        let t = &self.tree;
        let outcome = t.proven(node)?;
        let children = t.children(node);
        if children.is_empty() {
            // The game's end (a proven node always has its children).
            return Some((0, None));
        }
        // Its children's mover is the player to act here (a Liuzhou turn may keep the move).
        let chooser = t.mover(children.start);
        let through = |c: u32| self.proof_line(c).map(|(n, _)| (n + 1, Some(c)));
        match outcome {
            Outcome::Draw => None,
            Outcome::Win(p) if p == chooser => children
                .filter(|&c| t.proven(c) == Some(outcome))
                .filter_map(through)
                .min_by_key(|&(n, _)| n),
            // Lost: every child is a proven win for the opponent; the longest defence counts.
            Outcome::Win(_) => children.into_iter().try_fold((0, None), |longest, c| {
                let line = through(c)?;
                Some(if line.0 > longest.0 { line } else { longest })
            }),
        }
    }

    /// The line the search expects after choosing `action` at the root: `action`, then at each
    /// level the proof's line where the result is proven, else the most visited child while
    /// that child was seen at least twice (once is a guess, not an expectation), at most
    /// [`PV_MAX`] actions.
    pub fn principal_variation(&self, action: G::Action) -> Vec<G::Action> {
        let t = &self.tree;
        match t.children(t.root()).find(|&c| t.action(c) == action) {
            Some(child) => self.line_from(child),
            None => vec![action],
        }
    }

    /// [`Search::principal_variation`] from root child `child`.
    fn line_from(&self, child: u32) -> Vec<G::Action> {
        let t = &self.tree;
        let mut pv = vec![t.action(child)];
        let mut node = Some(child);
        while let Some(n) = node {
            if pv.len() >= PV_MAX || !t.is_expanded(n) {
                break;
            }
            node = self.proof_step(n).or_else(|| {
                t.children(n)
                    .max_by_key(|&c| t.stats(c).visits)
                    .filter(|&c| t.stats(c).visits >= 2)
            });
            if let Some(c) = node {
                pv.push(t.action(c));
            }
        }
        pv
    }

    /// Every root action as an analysis lists it, in the order the search prefers them: a
    /// proven win first, a proven loss last, else by visits (ties by prior).
    pub fn candidates(&self) -> Vec<Candidate<G::Action>> {
        let t = &self.tree;
        let to_act = self.state.to_act();
        let candidates: Vec<Candidate<G::Action>> = t
            .children(t.root())
            .map(|c| {
                let s: NodeStats = t.stats(c);
                let proven = t.proven(c);
                Candidate {
                    action: t.action(c),
                    visits: s.visits,
                    value: match proven {
                        Some(o) => Some(o.value_for(to_act)),
                        None if s.visits > 0 => Some(s.q() as f32),
                        None => None,
                    },
                    prior: s.prior,
                    proven,
                    // The proof's actions after this one, and this one.
                    proof_length: self.proof_line(c).map(|(n, _)| n + 1),
                    pv: self.line_from(c),
                    score: t.score(c).map(|sc| (sc.mean, sc.stdev)),
                }
            })
            .collect();
        let rank = |c: &Candidate<G::Action>| match c.proven.map(|o| o.value_for(to_act)) {
            Some(v) if v > 0.0 => 0,
            Some(v) if v < 0.0 => 2,
            _ => 1,
        };
        // Equal visits: PUCT by prior; Gumbel by the improved policy (its choice among the
        // most visited, without noise).
        let tie: Vec<f32> = match self.gumbel {
            Some(_) => self.improved_policy().into_iter().map(|(_, p)| p).collect(),
            None => candidates.iter().map(|c| c.prior).collect(),
        };
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&candidates[a], &candidates[b]);
            rank(ca)
                .cmp(&rank(cb))
                .then(cb.visits.cmp(&ca.visits))
                .then(tie[b].total_cmp(&tie[a]))
        });
        let mut slots: Vec<Option<Candidate<G::Action>>> =
            candidates.into_iter().map(Some).collect();
        order
            .into_iter()
            .map(|k| slots[k].take().expect("each index once"))
            .collect()
    }

    /// The root's children, by decreasing prior (empty before the root is expanded).
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
                    proven: t.proven(c),
                }
            })
            .collect()
    }

    /// The network's policy at the root, as (action, prior) by decreasing prior (empty before
    /// the root is expanded): the root's priors before Dirichlet noise, with the capture
    /// heuristic ([`SearchConfig::capture_prior`]) taken back out where the config mixes it in
    /// (each prior floored at 0, the whole renormalised). What the network that played thought
    /// before the search: the policy surprise of a self-play sample is measured against it.
    pub fn root_network_prior(&self) -> Vec<(G::Action, f32)> {
        let saved = self.root_prior.lock().clone();
        let mut prior = if saved.is_empty() {
            let t = &self.tree;
            t.children(t.root())
                .map(|c| (t.action(c), t.stats(c).prior))
                .collect()
        } else {
            saved
        };
        let eps = self.config.capture_prior;
        let total: f32 = prior.iter().map(|&(a, _)| self.state.capture_gain(a)).sum();
        if eps > 0.0 && eps < 1.0 && total > 0.0 {
            for (a, p) in prior.iter_mut() {
                let gain = eps * self.state.capture_gain(*a) / total;
                *p = ((*p - gain) / (1.0 - eps)).max(0.0);
            }
            let sum: f32 = prior.iter().map(|&(_, p)| p).sum();
            if sum > 0.0 {
                prior.iter_mut().for_each(|(_, p)| *p /= sum);
            }
        }
        prior.sort_by(|a, b| b.1.total_cmp(&a.1));
        prior
    }

    /// The improved policy at the root, softmax(logit + σ(completed Q)) with the config's
    /// Gumbel constants, over the root's children by decreasing prior (empty before the root
    /// is expanded): the policy target of Gumbel self-play. Every legal action gets a share;
    /// the shares sum to 1.
    pub fn improved_policy(&self) -> Vec<(G::Action, f32)> {
        let t = &self.tree;
        let c = &self.config;
        let g = Gumbel {
            m: c.gumbel_m,
            c_visit: c.gumbel_c_visit,
            c_scale: c.gumbel_c_scale,
        };
        let mut views = Vec::new();
        let (first, raw) = gumbel::read_node(t, t.root(), self.state.to_act(), &mut views);
        let mut p = Vec::new();
        gumbel::improved_policy(&views, raw, &g, &mut p);
        p.iter()
            .enumerate()
            .map(|(k, &p)| (t.action(first + k as u32), p as f32))
            .collect()
    }

    /// The visit distribution at the root (the policy target of PUCT self-play): each child's
    /// share of the children's visits.
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

    /// The visit distribution with forced playouts pruned (KataGo's policy-target pruning):
    /// from every child but the most visited, as many of its forced visits
    /// (sqrt(k · prior · N)) are taken back as leave its PUCT score below the best child's,
    /// and a child left with one visit counts none. Without forced playouts
    /// ([`SearchConfig::forced_playouts`] 0, or root noise off), [`Search::visit_distribution`].
    pub fn pruned_visit_distribution(&self) -> Vec<(G::Action, f32)> {
        let k = self.puct.forced;
        let children = self.root_children();
        let total: u32 = children.iter().map(|c| c.visits).sum();
        let Some(best) = (0..children.len()).max_by_key(|&i| children[i].visits) else {
            return Vec::new();
        };
        if k <= 0.0 || total == 0 {
            return self.visit_distribution();
        }
        let explore = self.config.c_puct * (total as f32).sqrt();
        let b = &children[best];
        let bar = b.q as f32 + explore * b.prior / (1.0 + b.visits as f32);
        let kept: Vec<f32> = children
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let n = c.visits as f32;
                if i == best || c.visits == 0 {
                    return n;
                }
                // The fewest visits at which the child's score stays at or below the best's.
                let gap = bar - c.q as f32;
                let floor = if gap > 0.0 {
                    (explore * c.prior / gap - 1.0).max(0.0)
                } else {
                    n
                };
                let forced = (k * c.prior * total as f32).sqrt();
                let left = n.min(floor.max(n - forced).ceil());
                if left <= 1.0 {
                    0.0
                } else {
                    left
                }
            })
            .collect();
        let sum: f32 = kept.iter().sum();
        children
            .iter()
            .zip(&kept)
            .map(|(c, &n)| (c.action, n / sum))
            .collect()
    }

    /// The action the search recommends. A proven root plays its proof. PUCT: the most
    /// visited child (ties broken by value, then prior). Gumbel: of the children most visited
    /// in this search, the best by g + logit + σ(q̂). Neither plays a proven loss while
    /// anything else is left.
    pub fn best_action(&self) -> Option<G::Action> {
        let t = &self.tree;
        // A proven root plays its proof: the quickest win, or the longest defence.
        if let Some(c) = self.proof_step(t.root()) {
            return Some(t.action(c));
        }
        if let Some(g) = &self.gumbel {
            let mut views = Vec::new();
            let (first, raw) = gumbel::read_node(t, t.root(), self.state.to_act(), &mut views);
            return gumbel::choose(&views, raw, g, self.plan.get())
                .map(|k| t.action(first + k as u32));
        }
        let me = self.state.to_act();
        // Otherwise the most visited child, a proven loss only if nothing else is left.
        let rank = |c: &ChildInfo<G::Action>| match c.proven {
            Some(Outcome::Win(p)) if p != me => 0,
            _ => 1,
        };
        self.root_children()
            .into_iter()
            .max_by(|a, b| {
                (rank(a), a.visits, a.q, a.prior)
                    .partial_cmp(&(rank(b), b.visits, b.q, b.prior))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .map(|c| c.action)
    }

    /// PUCT: an action drawn with probability ∝ visits^(1/temperature); the best action at
    /// temperature 0. Gumbel: the best action, always: its noise, drawn when the search
    /// began ([`Search::set_gumbel_noise`]), already made the draw.
    pub fn choose_action<R: Rng + ?Sized>(
        &self,
        temperature: f32,
        rng: &mut R,
    ) -> Option<G::Action> {
        let children = self.root_children();
        if temperature <= 1e-3
            || self.gumbel.is_some()
            || self.tree.proven(self.tree.root()).is_some()
        {
            return self.best_action();
        }
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
    /// after `max_leaves` collisions, and when a Gumbel root must wait for the leaves in flight
    /// before its next phase. Safe to call from several threads at once.
    pub fn gather(&self, batch: &mut LeafBatch<G>, tag: u32, max_leaves: usize) -> GatherCounts {
        let mut c = GatherCounts::default();
        let max = max_leaves as u64;
        // Playouts completed on the spot (terminals, cache hits) use the budget too.
        while c.leaves + c.playouts < max && c.collisions < max {
            if !self.descend(batch, tag, &mut c) {
                break;
            }
        }
        c
    }

    /// The child of expanded node `node` a descent takes, by the search's rule; `None` when a
    /// Gumbel root must wait for the visits in flight.
    #[inline]
    fn select(
        &self,
        node: u32,
        chooser: Player,
        views: &mut Vec<ChildView>,
        work: &mut Vec<f64>,
    ) -> Option<u32> {
        let t = &self.tree;
        let Some(g) = &self.gumbel else {
            // Root noise reorders the root's priors, and forced playouts may pick any child:
            // then scan all its children.
            let full =
                node == t.root() && (self.root_noised.load(Relaxed) || self.puct.forced > 0.0);
            if self.puct.dynamic_weight > 0.0 {
                let p = Puct {
                    score_center: f32::from_bits(self.score_center.load(Relaxed)),
                    ..self.puct
                };
                return Some(t.select_child(node, chooser, &p, full));
            }
            return Some(t.select_child(node, chooser, &self.puct, full));
        };
        if node != t.root() {
            return Some(gumbel::select_interior(t, node, chooser, g, views, work));
        }
        // The root is planned by the thread that expanded it, just after publishing it: a
        // descent that comes between waits.
        self.plan
            .get()
            .and_then(|plan| plan.select(t, node, chooser, g, views, work))
    }

    /// A finished game's value from `Player::First`'s point of view, a draw priced by
    /// [`SearchConfig::contempt`] for the root's player.
    fn terminal_value(&self, outcome: Outcome) -> f32 {
        match outcome {
            Outcome::Draw => side_value(-self.config.contempt, self.state.to_act()),
            won => won.value_for(Player::First),
        }
    }

    /// One descent from the root. Returns false when it could not start (a Gumbel root
    /// waiting for its phase's visits).
    fn descend(&self, batch: &mut LeafBatch<G>, tag: u32, c: &mut GatherCounts) -> bool {
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
                    let Some(child) =
                        self.select(node, state.to_act(), &mut batch.views, &mut batch.work)
                    else {
                        // Only the root waits, before any child is entered.
                        t.undo(&batch.paths[path_start..]);
                        batch.states.pop();
                        batch.paths.truncate(path_start);
                        return false;
                    };
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
                        self.backup_terminal(&batch.paths[path_start..], state, outcome);
                        t.prove_up(&batch.paths[path_start..]);
                        c.terminal += 1;
                        c.playouts += 1;
                        break;
                    }
                    if let Some(cache) = &self.cache {
                        batch.actions.clear();
                        state.legal_actions(&mut batch.actions);
                        if let Some((v, score)) =
                            cache.get(state.hash(), batch.actions.len(), &mut batch.priors)
                        {
                            self.capture_prior(state, &batch.actions, &mut batch.priors);
                            if node == t.root() {
                                self.root_noise(&batch.actions, &mut batch.priors);
                            }
                            by_prior(&mut batch.actions, &mut batch.priors, &mut batch.sorted);
                            let full = !t.expand(
                                node,
                                state.to_act(),
                                &batch.actions,
                                &batch.priors,
                                cursor(&mut batch.cursors, tag),
                            );
                            if node == t.root() && !full {
                                self.root_expanded();
                            }
                            let path = &batch.paths[path_start..];
                            let v = if !full && self.proves_win(state, path) {
                                1.0
                            } else {
                                v
                            };
                            t.backup(path, side_value(v, state.to_act()));
                            if let Some(score) = score {
                                let score = side_value(score, state.to_act());
                                t.backup_score(path, score);
                                if node == t.root() && !full {
                                    self.center_scores(score);
                                }
                            }
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
                    batch.wants_score |= t.tracks_scores();
                    c.leaves += 1;
                    return true; // the state stays in the batch
                }
                status::EXPANDING => {
                    // Keep the path's virtual loss until the batch is applied (see
                    // `LeafBatch::collided`).
                    batch.collided.push(LeafRef {
                        tag,
                        node,
                        path_start: path_start as u32,
                        path_end: batch.paths.len() as u32,
                    });
                    batch.states.pop();
                    c.collisions += 1;
                    return true;
                }
                s if status::has_children(s) => {
                    // Proven: follow a line that carries the proof to the game's end, so the
                    // playout's value is exact and every visit still ends at a leaf.
                    let outcome = exact_outcome(s).expect("a proven status");
                    let child = t.proof_child(node, outcome);
                    t.add_in_flight(child);
                    state.play_unchecked(t.action(child));
                    batch.paths.push(child);
                    node = child;
                }
                s => {
                    let outcome: Outcome = exact_outcome(s).expect("terminal status");
                    self.backup_terminal(&batch.paths[path_start..], state, outcome);
                    t.prove_up(&batch.paths[path_start..]);
                    c.terminal += 1;
                    c.playouts += 1;
                    break;
                }
            }
        }
        batch.states.pop();
        batch.paths.truncate(path_start);
        true
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
        score: Option<f32>,
        actions: &mut Vec<G::Action>,
        priors: &mut Vec<f32>,
        sorted: &mut Vec<(f32, G::Action)>,
        cursor: &mut Cursor,
    ) -> bool {
        actions.clear();
        state.legal_actions(actions);
        priors.clear();
        priors.extend(actions.iter().map(|&a| logits[state.action_index(a)]));
        softmax(priors);
        if let Some(cache) = &self.cache {
            cache.insert(state.hash(), value, score, priors);
        }
        self.capture_prior(state, actions, priors);
        if node == self.tree.root() {
            self.root_noise(actions, priors);
        }
        by_prior(actions, priors, sorted);
        let to_act = state.to_act();
        let full = !self.tree.expand(node, to_act, actions, priors, cursor);
        if node == self.tree.root() && !full {
            self.root_expanded();
        }
        let value = if !full && self.proves_win(state, path) {
            1.0
        } else {
            value
        };
        self.tree.backup(path, side_value(value, to_act));
        if let Some(score) = score {
            let score = side_value(score, to_act);
            self.tree.backup_score(path, score);
            if node == self.tree.root() && !full {
                self.center_scores(score);
            }
        }
        full
    }

    /// Backs up a finished game's exact value along `path`, and its margin where the tree
    /// keeps scores (`state` is the finished position).
    fn backup_terminal(&self, path: &[u32], state: &G, outcome: Outcome) {
        let t = &self.tree;
        t.backup(path, self.terminal_value(outcome));
        if t.tracks_scores() {
            if let Some(margin) = state.final_score(Player::First) {
                t.backup_score(path, margin);
            }
        }
    }

    /// With [`SearchConfig::capture_prior`] ε: `priors` (a distribution over `actions`) becomes
    /// (1 − ε) · priors + ε · each capture's share of all captures' gain, when there are any.
    fn capture_prior(&self, state: &G, actions: &[G::Action], priors: &mut [f32]) {
        let eps = self.config.capture_prior;
        if eps <= 0.0 {
            return;
        }
        let total: f32 = actions.iter().map(|&a| state.capture_gain(a)).sum();
        if total <= 0.0 {
            return;
        }
        for (p, &a) in priors.iter_mut().zip(actions) {
            *p = (1.0 - eps) * *p + eps * state.capture_gain(a) / total;
        }
    }

    /// With [`SearchConfig::decisive`]: if `state`, at the just-expanded last node of `path`,
    /// has an action that wins at once, marks that child terminal and proves the node won (and
    /// whatever that settles above it). Returns whether it did.
    fn proves_win(&self, state: &G, path: &[u32]) -> bool {
        if !self.config.decisive {
            return false;
        }
        let Some(action) = state.winning_action() else {
            return false;
        };
        let t = &self.tree;
        let node = *path.last().expect("a path holds its leaf");
        let Some(child) = t.children(node).find(|&c| t.action(c) == action) else {
            return false;
        };
        // A thread that entered the child first scores it itself, as the same terminal.
        if t.try_claim(child).is_ok() {
            t.set_terminal(child, Outcome::Win(state.to_act()));
        }
        let mut line = path.to_vec();
        line.push(child);
        t.prove_up(&line);
        true
    }

    fn root_noise(&self, actions: &[G::Action], priors: &mut [f32]) {
        let eps = self.config.dirichlet_epsilon;
        // A Gumbel root draws its own noise.
        if eps <= 0.0 || !self.noise_on || priors.is_empty() || self.gumbel.is_some() {
            return;
        }
        *self.root_prior.lock() = actions
            .iter()
            .copied()
            .zip(priors.iter().copied())
            .collect();
        let mut noise = vec![0.0; priors.len()];
        dirichlet(
            self.config.dirichlet_alpha,
            &mut noise,
            &mut *self.rng.lock(),
        );
        for (p, n) in priors.iter_mut().zip(noise) {
            *p = (1.0 - eps) * *p + eps * n;
        }
        // The caller sorts the children after this, so the root needs no full scan.
    }

    /// Searches until `limit` (a new search: [`Search::begin_search`] with its visits), with
    /// `options.threads` threads in this tree, evaluating leaves with `evaluator`.
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
        self.begin_search(limit.visits);
        let start = Instant::now();
        let deadline = limit.time.map(|t| start + t);
        let tickets = Tickets {
            left: CacheLine(AtomicU64::new(limit.visits.unwrap_or(u64::MAX))),
        };
        let stop = CacheLine(AtomicBool::new(false));
        let leaves = options
            .leaves_per_thread
            .clamp(1, evaluator.batch_size().max(1));
        let policy_size = self.state.shape().policy_size;
        let batcher = (options.combine && options.threads > 1).then(|| {
            Batcher::new(evaluator, policy_size, options.batch_wait)
                .with_scores(self.tree.tracks_scores())
        });
        let this = &*self;
        let worker = || -> Result<SearchReport, SearchError> {
            let mut report = SearchReport::default();
            let mut batch = LeafBatch::new();
            // Per thread: shared counters would be one more cache line the threads fight over.
            let stats = BatchStats::default();
            loop {
                // A timed or halted search stops, but never before the root has children to
                // choose from.
                let late = (deadline.is_some_and(|d| Instant::now() >= d)
                    || this.halt.as_ref().is_some_and(|h| h.load(Relaxed)))
                    && this.tree.is_expanded(this.tree.root());
                // A timed search of a proven root has its move: more time cannot change it
                // (a visit budget is kept, since self-play's targets count its visits).
                let settled = deadline.is_some() && this.tree.proven(this.tree.root()).is_some();
                if stop.load(Relaxed) || late || settled {
                    break;
                }
                let taken = tickets.take(leaves as u64);
                if taken == 0 {
                    break;
                }
                // The last round takes only what is left: a visit limit is exact.
                let want = taken;
                batch.clear();
                let g = this.gather(&mut batch, 0, want as usize);
                report.add(&g);
                tickets.give_back(taken.saturating_sub(g.leaves + g.playouts));
                if batch.is_empty() {
                    if g.playouts == 0 {
                        // Waiting on another thread's leaves (a Gumbel phase, a collision).
                        std::thread::yield_now();
                    }
                    continue;
                }
                let evaluated = match &batcher {
                    Some(b) => {
                        batch.prepare_outputs(policy_size);
                        b.evaluate(
                            &batch.states,
                            &mut batch.policy,
                            &mut batch.value,
                            &mut batch.score,
                        )
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
            report.batches = stats.report();
            Ok(report)
        };
        let results: Vec<Result<SearchReport, SearchError>> = if options.threads <= 1 {
            vec![worker()]
        } else {
            // The calling thread is one of the workers: one thread fewer to start (each start
            // costs about 0.1 ms, more than a small search's share of work).
            std::thread::scope(|s| {
                let handles: Vec<_> = (1..options.threads).map(|_| s.spawn(worker)).collect();
                let mine = worker();
                std::iter::once(mine)
                    .chain(
                        handles
                            .into_iter()
                            .map(|h| h.join().expect("search thread panicked")),
                    )
                    .collect()
            })
        };
        let mut total = SearchReport::default();
        let mut batches = BatchReport::default();
        for r in results {
            let r = r?;
            batches.merge(&r.batches);
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
            None => batches,
        };
        Ok(total)
    }
}

/// The cursor for search `tag` in a batch's list.
#[inline]
fn cursor(cursors: &mut Vec<Cursor>, tag: u32) -> &mut Cursor {
    let t = tag as usize;
    if cursors.len() <= t {
        cursors.resize(t + 1, Cursor::default());
    }
    &mut cursors[t]
}

/// One round of batched search over many trees, as self-play runs many games: gathers leaves
/// from `searches` in turn (up to `per_tree` from each per pass, passing again while there is
/// room) until the batch holds the evaluator's batch size or no tree yields more, evaluates
/// them in one call and applies the results. Each search's leaves carry its index in
/// `searches` as their tag. Pass only the searches that still need playouts.
pub fn batched_round<G: Playable>(
    searches: &[&Search<G>],
    batch: &mut LeafBatch<G>,
    evaluator: &dyn Evaluator<G>,
    per_tree: usize,
    stats: &BatchStats,
) -> Result<GatherCounts, SearchError> {
    let capacity = evaluator.batch_size();
    let mut total = GatherCounts::default();
    batch.clear();
    loop {
        let before = total;
        for (tag, s) in searches.iter().enumerate() {
            let room = capacity - batch.len();
            if room == 0 {
                break;
            }
            let g = s.gather(batch, tag as u32, per_tree.min(room).max(1));
            total.leaves += g.leaves;
            total.playouts += g.playouts;
            total.terminal += g.terminal;
            total.cache_hits += g.cache_hits;
            total.collisions += g.collisions;
            total.tree_full += g.tree_full;
        }
        let progressed = total.leaves > before.leaves || total.playouts > before.playouts;
        if batch.len() >= capacity || !progressed {
            break;
        }
    }
    if let Err(e) = batch.evaluate(evaluator, stats) {
        batch.abandon(|tag| searches[tag as usize]);
        return Err(e.into());
    }
    let applied = batch.apply(|tag| searches[tag as usize]);
    total.playouts += applied.playouts;
    total.tree_full += applied.tree_full;
    Ok(total)
}

/// The playout budget shared by the threads of one search.
struct Tickets {
    left: CacheLine<AtomicU64>,
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

/// The score utility's scale for `state`'s board: 2 · √(board area), KataGo's.
fn score_scale<G: Playable>(state: &G) -> f32 {
    let shape = state.shape();
    2.0 * ((shape.height * shape.width).max(1) as f32).sqrt()
}

/// `value` (for `to_act`) as seen by `Player::First`.
#[inline]
fn side_value(value: f32, to_act: Player) -> f32 {
    match to_act {
        Player::First => value,
        Player::Second => -value,
    }
}

/// Orders `actions` and `priors` together by decreasing prior (stable), as the tree stores
/// children (see `Tree::select_child`).
fn by_prior<A: Copy>(actions: &mut [A], priors: &mut [f32], sorted: &mut Vec<(f32, A)>) {
    if priors.windows(2).all(|w| w[0] >= w[1]) {
        return; // already in order (a uniform policy, for one)
    }
    sorted.clear();
    sorted.extend(priors.iter().copied().zip(actions.iter().copied()));
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (k, &(p, a)) in sorted.iter().enumerate() {
        priors[k] = p;
        actions[k] = a;
    }
}

/// `e^x` for x ≤ 0 to about 1e-5 relative error: priors need no more, and libm's `expf`
/// was a noticeable share of an expansion.
#[inline]
fn exp_nonpositive(x: f32) -> f32 {
    let t = x.max(-100.0) * std::f32::consts::LOG2_E;
    // Floor without a branch (so that the loop vectorises): truncation rounds toward zero.
    let i = t as i32 - i32::from(t < (t as i32) as f32);
    let f = t - i as f32; // in [0, 1)
                          // 2^f on [0, 1): its Taylor series to degree 7 (error below 2e-6).
    let p = 1.0
        + f * (std::f32::consts::LN_2
            + f * (0.240_226_5
                + f * (0.055_504_1
                    + f * (0.009_618_13
                        + f * (0.001_333_36 + f * (0.000_154_035 + f * 0.000_015_252_7))))));
    f32::from_bits(((i + 127).max(0) as u32) << 23) * p
}

/// In-place softmax; a uniform distribution if the logits are not finite.
fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Two passes: the map vectorises, a float sum in the same loop would not.
    for v in x.iter_mut() {
        *v = exp_nonpositive(*v - max);
    }
    let sum: f32 = x.iter().sum();
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
        // A NaN logit (a broken network) gets next to nothing; all NaN, a uniform policy.
        let mut y = [f32::NAN, 0.0];
        softmax(&mut y);
        assert!(y[0] < 1e-30 && y[1] == 1.0);
        let mut z = [f32::NAN; 4];
        softmax(&mut z);
        assert_eq!(z, [0.25; 4]);
    }

    #[test]
    fn fast_exp_is_close_to_exp() {
        for k in 0..=2000 {
            let x = -(k as f32) * 0.01;
            let (a, b) = (exp_nonpositive(x), x.exp());
            assert!((a - b).abs() <= 2e-5 * b + 1e-30, "{x}: {a} vs {b}");
        }
        assert_eq!(exp_nonpositive(-1000.0), 0.0);
    }

    #[test]
    fn children_are_ordered_by_prior() {
        let mut a = [1, 2, 3, 4];
        let mut p = [0.1, 0.4, 0.1, 0.4];
        by_prior(&mut a, &mut p, &mut Vec::new());
        assert_eq!(a, [2, 4, 1, 3]);
        assert_eq!(p, [0.4, 0.4, 0.1, 0.1]);
    }

    #[test]
    fn tickets_never_exceed_the_budget() {
        let t = Tickets {
            left: CacheLine(AtomicU64::new(5)),
        };
        assert_eq!(t.take(3), 3);
        assert_eq!(t.take(3), 2);
        assert_eq!(t.take(3), 0);
        t.give_back(1);
        assert_eq!(t.take(3), 1);
    }
}
