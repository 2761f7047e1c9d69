//! The search tree: nodes in one arena, statistics in atomics, children as contiguous ranges.
//!
//! Several threads select, expand and back up in one tree without locks. The rules that make
//! that safe are written next to each field of [`Node`]; in short:
//! - a node's children are allocated, written and then published by one `Release` store of the
//!   parent's `status`; readers only follow children after an `Acquire` load that saw it;
//! - statistics only change through `fetch_add`, so no update is ever lost;
//! - arena slots are handed out by a bump counter and never reused while the tree lives.
//!
//! Values are kept from the point of view of the player who took the action into the node
//! (`mover`), never by flipping per ply: a Liuzhou turn spans several actions.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicI64, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};

use games::{Outcome, Player};

/// Values are summed in fixed point so that concurrent backups add exactly (no float CAS loops,
/// no rounding that depends on the order of additions). 2^24 steps per unit: far finer than any
/// network's value, and 2^32 visits of ±1 still fit in an i64.
pub const VALUE_SCALE: f64 = 16_777_216.0;

/// Scores (a network's final margin, in points) are summed in fixed point too, 2^7 steps per
/// point, with the squares of the same fixed-point numbers: the spread of equal scores is then
/// exactly 0 (squares rounded on their own would leave a spread of rounding errors). The
/// square of the largest margin times 2^32 visits still fits in a u64.
pub const SCORE_SCALE: f64 = 128.0;

/// The largest score margin kept, in points; larger ones are clamped (a 19 × 19 board holds
/// 361 points, and komi).
const SCORE_MAX: f32 = 380.0;

/// A value in [−1, 1] in fixed point.
#[inline]
pub fn to_fixed(v: f32) -> i64 {
    (f64::from(v.clamp(-1.0, 1.0)) * VALUE_SCALE).round() as i64
}

/// One in-flight visit in `counts`; a backup adds `VISIT_DONE` to turn it into a completed one.
const IN_FLIGHT: u64 = 1;
const VISIT_DONE: u64 = (1 << 32) - 1;

/// Life cycle of a node (`Node::status`).
pub(crate) mod status {
    /// Not yet evaluated.
    pub const NEW: u8 = 0;
    /// One thread owns it and is evaluating it; others that reach it back off (a collision).
    pub const EXPANDING: u8 = 1;
    /// Children are published.
    pub const EXPANDED: u8 = 2;
    /// The game is over here; the value is exact.
    pub const DRAW: u8 = 3;
    pub const FIRST_WON: u8 = 4;
    pub const SECOND_WON: u8 = 5;
    /// Expanded, and the result with best play from here is proven (MCTS-solver): the children
    /// stay published, and descents follow a proof line down to the game's end.
    pub const PROVEN_DRAW: u8 = 6;
    pub const PROVEN_FIRST_WON: u8 = 7;
    pub const PROVEN_SECOND_WON: u8 = 8;

    /// Whether a node in status `s` has published children.
    #[inline]
    pub fn has_children(s: u8) -> bool {
        s == EXPANDED || s >= PROVEN_DRAW
    }
}

/// One node: 32 bytes with an action of up to 4 bytes, aligned so that none straddles two
/// cache lines.
#[repr(C, align(32))]
pub struct Node<A> {
    /// Completed visits in the high 32 bits, visits in flight (the virtual loss) in the low 32.
    /// A descent adds 1, its backup adds 2^32 − 1 (the in-flight visit becomes a completed one
    /// in one step), a collision subtracts 1. The low half never underflows: every decrement
    /// undoes an increment made earlier by the same descent.
    counts: AtomicU64,
    /// Sum of the backed-up values from `mover`'s point of view, in fixed point. Only ever
    /// changed by `fetch_add`, so concurrent backups never lose one.
    value: AtomicI64,
    /// The prior probability (f32 bits). Written by the expanding thread before the parent's
    /// `status` is published; changed later only under `&mut Tree` (root noise).
    prior: AtomicU32,
    /// First child's arena index; meaningful once `status` says the node has children
    /// (EXPANDED or proven; read after `Acquire`).
    first_child: AtomicU32,
    /// Number of children; meaningful as `first_child` is.
    num_children: AtomicU16,
    /// See [`status`]. Only moves NEW → EXPANDING → EXPANDED → proven, or EXPANDING →
    /// terminal, except EXPANDING → NEW when the arena is full. Exactly one thread wins the
    /// NEW → EXPANDING exchange and owns the expansion; one wins EXPANDED → proven.
    status: AtomicU8,
    /// `Player::index()` of the player who took `action` into this node. Written with `action`
    /// before publication, never changed afterwards.
    mover: AtomicU8,
    /// The action from the parent. Written once, by the thread expanding the parent, before the
    /// parent's `status` is published with `Release`; read only after an `Acquire` load that saw
    /// it (or under `&mut`). So it is never written and read at the same time.
    action: UnsafeCell<MaybeUninit<A>>,
}

/// Statistics of one node at a moment (a consistent snapshot of each field, not of all).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeStats {
    pub visits: u32,
    pub in_flight: u32,
    /// Sum of backed-up values from the mover's point of view.
    pub value_sum: f64,
    pub prior: f32,
}

impl NodeStats {
    /// Mean value from the mover's point of view (0 when unvisited).
    pub fn q(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / f64::from(self.visits)
        }
    }
}

/// The scores backed up through one node, from its mover's point of view (see
/// [`Tree::score`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreStats {
    /// Playouts that brought a score (a network's, or a finished game's).
    pub count: u32,
    /// Their mean, in points.
    pub mean: f32,
    /// Their standard deviation, in points.
    pub stdev: f32,
}

/// One node's score sums, in a table beside the arena (index = node index). Only changed by
/// `fetch_add`, like the node's own statistics; a reader may see `count` and the sums of
/// slightly different moments, which skews a mean by at most one playout's share.
#[repr(C)]
struct ScoreCell {
    count: AtomicU64,
    /// Σ score, in fixed point ([`SCORE_SCALE`]).
    sum: AtomicI64,
    /// Σ (score in fixed point)², in units of 1 / SCORE_SCALE².
    squares: AtomicU64,
}

/// PUCT parameters, copied out of the search configuration for the hot loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Puct {
    pub c_puct: f32,
    pub fpu_reduction: f32,
    pub virtual_loss: f32,
    pub minimax_weight: f32,
    /// k of the root's forced playouts ([`crate::SearchConfig::forced_playouts`]); 0 off.
    pub forced: f32,
    /// Weight of the score utility ([`crate::SearchConfig::score_utility`]); 0 off.
    pub score_weight: f32,
    /// Weight of the dynamic score utility
    /// ([`crate::SearchConfig::dynamic_score_utility`]); 0 off.
    pub dynamic_weight: f32,
    /// The dynamic utility's centre, from `Player::First`'s view (the search sets it from the
    /// root's mean score).
    pub score_center: f32,
    /// The score that is worth half the utility's range: 2·√(board area), as KataGo's.
    pub score_scale: f32,
}

impl Puct {
    /// The bounded score utility of a mean score `s` (points, the chooser's view), without
    /// the weight: 2/π · atan(s / scale), in (−1, 1).
    #[inline]
    pub(crate) fn score_utility(&self, s: f32) -> f32 {
        std::f32::consts::FRAC_2_PI * (s / self.score_scale).atan()
    }

    /// Whether a child's value gains a score term.
    #[inline]
    pub(crate) fn uses_scores(&self) -> bool {
        self.score_weight > 0.0 || self.dynamic_weight > 0.0
    }

    /// What a mean score `s` (the chooser's view) adds to a child's value: the static term
    /// and the dynamic one, whose centre `center` is from the chooser's view.
    #[inline]
    pub(crate) fn score_bonus(&self, s: f32, center: f32) -> f32 {
        let dynamic = if self.dynamic_weight > 0.0 {
            self.dynamic_weight * self.score_utility(s - center)
        } else {
            0.0
        };
        self.score_weight * self.score_utility(s) + dynamic
    }
}

/// Nodes a thread takes from the shared arena at a time, so that threads do not meet on the
/// arena's counter at every expansion.
const CHUNK: usize = 1024;

/// A value alone on its cache line, so that writes to it do not slow readers of its neighbours.
#[repr(align(64))]
#[derive(Debug, Default)]
pub(crate) struct CacheLine<T>(pub T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Tells apart every tree and every clearing of one, so a [`Cursor`] never outlives its run.
static NEXT_TREE_ID: AtomicU64 = AtomicU64::new(1);

/// A thread's private run of free arena slots in one tree (1024 at a time).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    /// The `Tree::id` the run belongs to; a run of another tree or of a cleared one is void.
    tree: u64,
    next: usize,
    end: usize,
}

/// The arena. `Tree` is `Sync`: all mutation through `&Tree` follows the rules on [`Node`].
pub struct Tree<A> {
    nodes: Arena<A>,
    /// Arena slots handed out so far (in chunks to threads). Only grows (`fetch_add`); it may
    /// pass the capacity when allocations fail, and failed allocations are abandoned. On a
    /// cache line of its own: the fields beside it are read on every descent.
    len: CacheLine<AtomicUsize>,
    root: u32,
    /// Changes (under `&mut`) whenever the arena is cleared: voids every outstanding `Cursor`.
    id: u64,
    /// Per node, when tracked: the minimax of the evaluations below it, from its mover's point
    /// of view, as f32 bits (0: none yet; a zero value is stored as −0.0).
    minimax: Option<Box<[AtomicU32]>>,
    /// Per node, when tracked: the sums of the scores backed up through it (see
    /// [`Tree::track_scores`]).
    scores: Option<Box<[ScoreCell]>>,
}

/// Types whose all-zero bits are a valid value (atomics, and structs of them).
///
/// # Safety
/// Implement only for such types.
unsafe trait Zeroable {}
// SAFETY: an atomic integer of zero bits is 0; a `#[repr(C)]` struct of them is all zeros.
unsafe impl Zeroable for AtomicU32 {}
unsafe impl Zeroable for ScoreCell {}

/// `n` values, all zero, in memory the OS maps lazily.
fn zeroed_atomics<T: Zeroable>(n: usize) -> Box<[T]> {
    if n == 0 {
        return Box::new([]);
    }
    let layout = Layout::array::<T>(n).expect("side table size overflows");
    // SAFETY: non-zero size; all-zero bits are a valid T (`Zeroable`), and the box frees the
    // block with the same layout through the global allocator.
    unsafe {
        let p = alloc_zeroed(layout).cast::<T>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n))
    }
}

#[inline]
fn encode_minimax(v: f32) -> u32 {
    if v == 0.0 {
        (-0.0f32).to_bits()
    } else {
        v.to_bits()
    }
}

// SAFETY: the only non-atomic interior state is `Node::action`, whose writes happen-before its
// reads through the Release/Acquire pair on the parent's `status` (see the field's comment).
unsafe impl<A: Send + Sync> Sync for Tree<A> {}
unsafe impl<A: Send> Send for Tree<A> {}

impl<A: Copy> Tree<A> {
    /// An empty tree of `capacity` nodes whose root was entered by `root_mover` (the opponent of
    /// the root's player to act is a fine convention: only differences matter).
    ///
    /// The arena is zeroed memory, which the OS maps lazily: a large capacity costs address
    /// space, not memory, until nodes are used.
    pub fn new(capacity: usize, root_mover: Player) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as usize);
        let nodes = Arena::zeroed(capacity);
        nodes[0].mover.store(root_mover.index() as u8, Relaxed);
        Tree {
            nodes,
            len: CacheLine(AtomicUsize::new(1)),
            root: 0,
            id: NEXT_TREE_ID.fetch_add(1, Relaxed),
            minimax: None,
            scores: None,
        }
    }

    /// Keeps the sums of the scores backed up through each node from now on
    /// ([`Tree::backup_score`], [`Tree::score`]): 24 bytes a node, mapped as nodes are used.
    pub fn track_scores(&mut self) {
        if self.scores.is_none() {
            self.scores = Some(zeroed_atomics(self.nodes.len()));
        }
    }

    /// Whether the tree keeps scores.
    #[inline]
    pub fn tracks_scores(&self) -> bool {
        self.scores.is_some()
    }

    /// The scores backed up through node `i`, from its mover's point of view; `None` where
    /// the tree keeps none or none came through it.
    pub fn score(&self, i: u32) -> Option<ScoreStats> {
        let cell = &self.scores.as_ref()?[i as usize];
        let count = cell.count.load(Relaxed);
        if count == 0 {
            return None;
        }
        let n = count as f64;
        let mean = cell.sum.load(Relaxed) as f64 / SCORE_SCALE / n;
        let square = cell.squares.load(Relaxed) as f64 / (SCORE_SCALE * SCORE_SCALE) / n;
        Some(ScoreStats {
            count: count.min(u64::from(u32::MAX)) as u32,
            mean: mean as f32,
            stdev: (square - mean * mean).max(0.0).sqrt() as f32,
        })
    }

    /// The mean score through node `i` from its mover's view, 0 where none came through it.
    #[inline]
    fn mean_score(&self, scores: &[ScoreCell], i: u32) -> f32 {
        let cell = &scores[i as usize];
        let count = cell.count.load(Relaxed);
        if count == 0 {
            0.0
        } else {
            (cell.sum.load(Relaxed) as f64 / SCORE_SCALE / count as f64) as f32
        }
    }

    /// Adds `score_first` (a final margin from `Player::First`'s point of view, in points) to
    /// the score sums of every node on `path`, each from its mover's view. Called beside
    /// [`Tree::backup`] for playouts that brought a score; nothing where scores are not kept.
    #[inline]
    pub(crate) fn backup_score(&self, path: &[u32], score_first: f32) {
        let Some(scores) = &self.scores else {
            return;
        };
        if !score_first.is_finite() {
            return;
        }
        let s = f64::from(score_first.clamp(-SCORE_MAX, SCORE_MAX));
        let fixed = (s * SCORE_SCALE).round() as i64;
        let square = fixed.unsigned_abs() * fixed.unsigned_abs();
        for &i in path {
            let cell = &scores[i as usize];
            let signed = if self.node(i).mover.load(Relaxed) == 0 {
                fixed
            } else {
                -fixed
            };
            cell.sum.fetch_add(signed, Relaxed);
            cell.squares.fetch_add(square, Relaxed);
            cell.count.fetch_add(1, Relaxed);
        }
    }

    /// Keeps the minimax of the evaluations below each node from now on (see `minimax_q`).
    pub fn track_minimax(&mut self) {
        if self.minimax.is_none() {
            self.minimax = Some(zeroed_atomics(self.nodes.len()));
        }
    }

    /// The minimax of the evaluations below node `i`, from its mover's point of view.
    #[inline]
    pub fn minimax_q(&self, i: u32) -> Option<f32> {
        let bits = self.minimax.as_ref()?[i as usize].load(Relaxed);
        (bits != 0).then(|| f32::from_bits(bits))
    }

    /// Recomputes node `i`'s minimax from its children's; false if no child has one.
    fn refresh_minimax(&self, mm: &[AtomicU32], i: u32) -> bool {
        let range = self.children(i);
        let mut best = f32::NEG_INFINITY;
        for c in range.clone() {
            let bits = mm[c as usize].load(Relaxed);
            if bits != 0 {
                best = best.max(f32::from_bits(bits));
            }
        }
        if best > f32::NEG_INFINITY {
            let chooser = self.node(range.start).mover.load(Relaxed);
            let v = if self.node(i).mover.load(Relaxed) == chooser {
                best
            } else {
                -best
            };
            mm[i as usize].store(encode_minimax(v), Relaxed);
            true
        } else {
            false
        }
    }

    pub fn root(&self) -> u32 {
        self.root
    }

    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }

    /// Nodes in use.
    pub fn len(&self) -> usize {
        self.len.load(Relaxed).min(self.nodes.len())
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    #[inline]
    fn node(&self, i: u32) -> &Node<A> {
        &self.nodes[i as usize]
    }

    pub fn stats(&self, i: u32) -> NodeStats {
        let n = self.node(i);
        let counts = n.counts.load(Relaxed);
        NodeStats {
            visits: (counts >> 32) as u32,
            in_flight: counts as u32,
            value_sum: n.value.load(Relaxed) as f64 / VALUE_SCALE,
            prior: f32::from_bits(n.prior.load(Relaxed)),
        }
    }

    /// The exact fixed-point value sum (tests check conservation with it).
    pub fn value_sum_fixed(&self, i: u32) -> i64 {
        self.node(i).value.load(Relaxed)
    }

    pub fn mover(&self, i: u32) -> Player {
        player_from(self.node(i).mover.load(Relaxed))
    }

    #[inline]
    pub(crate) fn status(&self, i: u32) -> u8 {
        self.node(i).status.load(Acquire)
    }

    /// Whether the node's children are published.
    pub fn is_expanded(&self, i: u32) -> bool {
        status::has_children(self.status(i))
    }

    /// The game's outcome at this node if the game is over there.
    pub fn terminal(&self, i: u32) -> Option<Outcome> {
        terminal_outcome(self.status(i))
    }

    /// The result with best play from this node if it is known: the game is over there, or
    /// the solver proved it.
    pub fn proven(&self, i: u32) -> Option<Outcome> {
        exact_outcome(self.status(i))
    }

    /// The node's children (empty unless expanded).
    #[inline]
    pub fn children(&self, i: u32) -> Range<u32> {
        let n = self.node(i);
        if !status::has_children(n.status.load(Acquire)) {
            return 0..0;
        }
        let first = n.first_child.load(Relaxed);
        first..first + u32::from(n.num_children.load(Relaxed))
    }

    /// The action into node `i`, which must be a child reached through [`Tree::children`].
    #[inline]
    pub fn action(&self, i: u32) -> A {
        debug_assert!(i != self.root || self.len() > 1);
        // SAFETY: children are only reachable after the parent's EXPANDED status was seen with
        // Acquire, and their action was written before that status was stored with Release.
        unsafe { (*self.node(i).action.get()).assume_init() }
    }

    /// Counts an in-flight visit (virtual loss) on `i`.
    #[inline]
    pub(crate) fn add_in_flight(&self, i: u32) {
        self.node(i).counts.fetch_add(IN_FLIGHT, Relaxed);
    }

    /// Tries to take ownership of a NEW node for expansion. Returns the status seen on failure.
    #[inline]
    pub(crate) fn try_claim(&self, i: u32) -> Result<(), u8> {
        self.node(i)
            .status
            .compare_exchange(status::NEW, status::EXPANDING, AcqRel, Acquire)
            .map(|_| ())
    }

    /// Marks a claimed node terminal.
    pub(crate) fn set_terminal(&self, i: u32, outcome: Outcome) {
        let s = match outcome {
            Outcome::Draw => status::DRAW,
            Outcome::Win(Player::First) => status::FIRST_WON,
            Outcome::Win(Player::Second) => status::SECOND_WON,
        };
        self.node(i).status.store(s, Release);
    }

    /// MCTS-solver, after a playout that ended at a game's end: walks `path` (root first) up
    /// from its last node, proving each parent whose result its children now settle. A parent
    /// is won for its player to act (`chooser`, the mover of its children) as soon as one child
    /// is; otherwise it is settled once every child is, as a draw if one is a draw, else lost.
    /// Stops at the first parent that is not settled or that another thread proved first.
    pub(crate) fn prove_up(&self, path: &[u32]) {
        for pair in path.windows(2).rev() {
            let (parent, child) = (pair[0], pair[1]);
            let Some(outcome) = self.proven(child) else {
                return;
            };
            let chooser = self.mover(child);
            let settled = if outcome == Outcome::Win(chooser) {
                outcome
            } else {
                match self.settled_by_all_children(parent, chooser) {
                    Some(o) => o,
                    None => return,
                }
            };
            let proven = match settled {
                Outcome::Draw => status::PROVEN_DRAW,
                Outcome::Win(Player::First) => status::PROVEN_FIRST_WON,
                Outcome::Win(Player::Second) => status::PROVEN_SECOND_WON,
            };
            // Only an expanded node is proven; each is proven once.
            if self
                .node(parent)
                .status
                .compare_exchange(status::EXPANDED, proven, AcqRel, Acquire)
                .is_err()
            {
                return;
            }
        }
    }

    /// The result of `parent` if every child's is known: the best of them for `chooser`.
    fn settled_by_all_children(&self, parent: u32, chooser: Player) -> Option<Outcome> {
        let mut draw = false;
        for c in self.children(parent) {
            match self.proven(c)? {
                Outcome::Win(p) if p == chooser => return Some(Outcome::Win(p)),
                Outcome::Draw => draw = true,
                Outcome::Win(_) => {}
            }
        }
        Some(if draw {
            Outcome::Draw
        } else {
            Outcome::Win(chooser.opponent())
        })
    }

    /// The child of proven node `i` that carries its proof: one whose result is `outcome`
    /// (one exists by construction), so that a descent through proven nodes ends at a game's
    /// end with exactly that result.
    #[inline]
    pub(crate) fn proof_child(&self, i: u32, outcome: Outcome) -> u32 {
        let range = self.children(i);
        let first = range.start;
        range
            .into_iter()
            .find(|&c| self.proven(c) == Some(outcome))
            .unwrap_or(first)
    }

    /// Gives a claimed node back unexpanded (evaluation failed, or the arena is full).
    pub(crate) fn release_claim(&self, i: u32) {
        self.node(i).status.store(status::NEW, Release);
    }

    /// Publishes the children of a claimed node: `actions[k]` with prior `priors[k]`, all
    /// entered by `mover`, in slots from the calling thread's `cursor`. Returns false (and
    /// releases the claim) when the arena is full.
    pub(crate) fn expand(
        &self,
        i: u32,
        mover: Player,
        actions: &[A],
        priors: &[f32],
        cursor: &mut Cursor,
    ) -> bool {
        debug_assert_eq!(actions.len(), priors.len());
        let n = actions.len();
        debug_assert!(n > 0 && n <= usize::from(u16::MAX));
        if cursor.tree != self.id || cursor.end - cursor.next < n {
            let chunk = CHUNK.max(n);
            let start = self.len.fetch_add(chunk, Relaxed);
            *cursor = Cursor {
                tree: self.id,
                next: start.min(self.nodes.len()),
                end: (start + chunk).min(self.nodes.len()),
            };
            if cursor.end - cursor.next < n {
                self.release_claim(i);
                return false;
            }
        }
        let first = cursor.next;
        cursor.next += n;
        let m = mover.index() as u8;
        for (k, (&a, &p)) in actions.iter().zip(priors).enumerate() {
            let child = &self.nodes[first + k];
            // SAFETY: slot `first + k` lies in a run that the arena's fetch_add handed to this
            // thread's cursor alone, and is not reachable by others until the Release below.
            unsafe { (*child.action.get()).write(a) };
            child.prior.store(p.to_bits(), Relaxed);
            child.mover.store(m, Relaxed);
        }
        let node = self.node(i);
        node.first_child.store(first as u32, Relaxed);
        node.num_children.store(n as u16, Relaxed);
        node.status.store(status::EXPANDED, Release);
        true
    }

    /// PUCT: the child of expanded node `i` to descend into. `chooser` is the player to act at
    /// `i` (the mover of every child).
    ///
    /// Children are stored by decreasing prior, and an unvisited child's score only grows with
    /// its prior, so of the unvisited children only the first can win; and since selection
    /// always takes that one, visited children form a prefix. So the scan stops at the first
    /// unvisited child: it reads the visited children plus one, not all of them. (A collision's
    /// undo can briefly leave a gap; the search then visits the gap first, which is harmless.)
    /// `full_scan` reads every child: needed where noise has reordered the priors (the root).
    #[inline]
    pub(crate) fn select_child(&self, i: u32, chooser: Player, p: &Puct, full_scan: bool) -> u32 {
        let node = self.node(i);
        let counts = node.counts.load(Relaxed);
        let visits = (counts >> 32) as u32;
        let parent_n = visits + counts as u32;
        // The parent's mean from the chooser's side, less a reduction: what an unvisited child
        // is assumed to be worth (first-play urgency).
        let parent_q = if visits == 0 {
            0.0
        } else {
            let q = (node.value.load(Relaxed) as f64 / VALUE_SCALE / f64::from(visits)) as f32;
            if node.mover.load(Relaxed) == chooser.index() as u8 {
                q
            } else {
                -q
            }
        };
        // With the score utility, every child's value gains w · f(its mean score) (and the
        // dynamic w_d · f(its mean score less the centre)), and the value an unvisited child
        // is assumed to have gains the parent's.
        let scores = self.scores.as_deref().filter(|_| p.uses_scores());
        let center = if chooser == Player::First {
            p.score_center
        } else {
            -p.score_center
        };
        let parent_q = match scores {
            Some(sc) if visits > 0 => {
                let m = self.mean_score(sc, i);
                let m = if node.mover.load(Relaxed) == chooser.index() as u8 {
                    m
                } else {
                    -m
                };
                parent_q + p.score_bonus(m, center)
            }
            _ => parent_q,
        };
        let fpu = parent_q - p.fpu_reduction;
        let explore = p.c_puct * (parent_n.max(1) as f32).sqrt();
        let range = self.children(i);
        let mut best = range.start;
        let mut best_score = f32::NEG_INFINITY;
        // Forced playouts at the root: a child below sqrt(k · prior · N) visits goes first,
        // the one furthest below its share (callers scan the whole root for this).
        let force = if p.forced > 0.0 && i == self.root {
            p.forced * parent_n as f32
        } else {
            0.0
        };
        let mut forced = (range.start, 0.0f32);
        for c in range {
            let child = self.node(c);
            let counts = child.counts.load(Relaxed);
            let done = (counts >> 32) as u32;
            let flying = counts as u32;
            let n = done + flying;
            let prior = f32::from_bits(child.prior.load(Relaxed));
            if force > 0.0 {
                let short = (force * prior).sqrt() - n as f32;
                if short > forced.1 && !loses(child.status.load(Relaxed), chooser) {
                    forced = (c, short);
                }
            }
            if n == 0 {
                let score = fpu + explore * prior;
                if score > best_score {
                    best_score = score;
                    best = c;
                }
                if full_scan {
                    continue;
                }
                break;
            }
            let q = {
                // Each visit in flight counts as a loss for the chooser, steering other
                // descents elsewhere until it returns.
                let w = child.value.load(Relaxed) as f32 * (1.0 / VALUE_SCALE as f32)
                    - p.virtual_loss * flying as f32;
                let q = w / n as f32;
                let q = if p.minimax_weight > 0.0 {
                    self.minimax_q(c)
                        .map_or(q, |m| (1.0 - p.minimax_weight) * q + p.minimax_weight * m)
                } else {
                    q
                };
                match scores {
                    // Children are entered by the chooser: their scores are from its view.
                    Some(sc) => q + p.score_bonus(self.mean_score(sc, c), center),
                    None => q,
                }
            };
            let score = q + explore * prior / (1 + n) as f32;
            // A child proven lost for the chooser is never worth a descent (the status is on
            // the line just read; it is looked at only for a would-be best).
            if score > best_score && !loses(child.status.load(Relaxed), chooser) {
                best_score = score;
                best = c;
            }
        }
        if forced.1 > 0.0 {
            forced.0
        } else {
            best
        }
    }

    /// Backs up `value_first` (the result from `Player::First`'s point of view) along `path`
    /// (root first), turning each in-flight visit into a completed one.
    #[inline]
    pub(crate) fn backup(&self, path: &[u32], value_first: f32) {
        let w = to_fixed(value_first);
        for &i in path {
            let node = self.node(i);
            let s = if node.mover.load(Relaxed) == 0 { w } else { -w };
            node.value.fetch_add(s, Relaxed);
            node.counts.fetch_add(VISIT_DONE, Relaxed);
        }
        if let (Some(mm), Some(&leaf)) = (&self.minimax, path.last()) {
            // A leaf just evaluated (or a game's end) is worth its own value.
            if !self.refresh_minimax(mm, leaf) {
                let own = if self.node(leaf).mover.load(Relaxed) == 0 {
                    value_first
                } else {
                    -value_first
                };
                mm[leaf as usize].store(encode_minimax(own), Relaxed);
            }
            for &i in path.iter().rev().skip(1) {
                self.refresh_minimax(mm, i);
            }
        }
    }

    /// Withdraws the in-flight visits of a descent that ended in a collision.
    #[inline]
    pub(crate) fn undo(&self, path: &[u32]) {
        for &i in path {
            self.node(i).counts.fetch_sub(IN_FLIGHT, Relaxed);
        }
    }

    /// Multiplies in Dirichlet noise: `prior = (1 − eps)·prior + eps·noise[k]` for the root's
    /// children. Needs `&mut` so no search runs meanwhile.
    pub(crate) fn mix_root_priors(&mut self, noise: &[f32], eps: f32) {
        let range = self.children(self.root);
        debug_assert_eq!(range.len(), noise.len());
        for (c, &x) in range.zip(noise) {
            let node = &self.nodes[c as usize];
            let p = f32::from_bits(node.prior.load(Relaxed));
            node.prior
                .store(((1.0 - eps) * p + eps * x).to_bits(), Relaxed);
        }
    }

    /// Empties the tree for reuse with a new root entered by `root_mover`, keeping its memory
    /// (zeroing the used nodes is much cheaper than faulting in fresh pages).
    pub fn clear(&mut self, root_mover: Player) {
        let used = self.len();
        // SAFETY: `used` ≤ capacity; all-zero is a valid `Node` (see `Arena`), and
        // `&mut self` means no other thread can see the nodes.
        unsafe { std::ptr::write_bytes(self.nodes.as_mut_ptr(), 0, used) };
        if let Some(mm) = &self.minimax {
            mm[..used].iter().for_each(|m| m.store(0, Relaxed));
        }
        if let Some(sc) = &self.scores {
            for cell in &sc[..used] {
                cell.count.store(0, Relaxed);
                cell.sum.store(0, Relaxed);
                cell.squares.store(0, Relaxed);
            }
        }
        self.nodes[0].mover.store(root_mover.index() as u8, Relaxed);
        self.len.store(1, Relaxed);
        self.root = 0;
        self.id = NEXT_TREE_ID.fetch_add(1, Relaxed);
    }

    /// Copies the subtree under `new_root` into `out` (cleared first) for tree reuse: children
    /// stay contiguous and the rest of this tree is left behind. No search may run meanwhile.
    pub fn extract_into(&self, new_root: u32, out: &mut Tree<A>) {
        out.clear(self.mover(new_root));
        if self.minimax.is_some() {
            out.track_minimax();
        }
        if self.scores.is_some() {
            out.track_scores();
        }
        let copy_minimax = |old: u32, new: usize| {
            if let (Some(from), Some(to)) = (&self.minimax, &out.minimax) {
                to[new].store(from[old as usize].load(Relaxed), Relaxed);
            }
        };
        // The side tables' entries of a copied node.
        let copy_sides = |old: u32, new: usize| {
            copy_minimax(old, new);
            if let (Some(from), Some(to)) = (&self.scores, &out.scores) {
                let (from, to) = (&from[old as usize], &to[new]);
                to.count.store(from.count.load(Relaxed), Relaxed);
                to.sum.store(from.sum.load(Relaxed), Relaxed);
                to.squares.store(from.squares.load(Relaxed), Relaxed);
            }
        };
        copy_sides(new_root, 0);
        let cap = out.nodes.len();
        // Breadth first: (old index, new index) of nodes whose children are still to copy.
        let mut queue = std::collections::VecDeque::new();
        copy_node(&self.nodes[new_root as usize], &out.nodes[0], None);
        queue.push_back((new_root, 0u32));
        let mut len = 1usize;
        while let Some((old, new)) = queue.pop_front() {
            let range = self.children(old);
            if range.is_empty() || len + range.len() > cap {
                // Not expanded, or no room: the copy stays a leaf, to be evaluated again (a
                // proof without its children to follow is dropped too).
                if self.is_expanded(old) {
                    out.nodes[new as usize].status.store(status::NEW, Relaxed);
                }
                continue;
            }
            let first = len;
            for (k, c) in range.clone().enumerate() {
                let src = &self.nodes[c as usize];
                copy_node(src, &out.nodes[first + k], Some(self.action(c)));
                copy_sides(c, first + k);
                queue.push_back((c, (first + k) as u32));
            }
            len += range.len();
            let dst = &out.nodes[new as usize];
            dst.first_child.store(first as u32, Relaxed);
            dst.num_children.store(range.len() as u16, Relaxed);
        }
        out.len.store(len, Relaxed);
    }
}

fn copy_node<A: Copy>(src: &Node<A>, dst: &Node<A>, action: Option<A>) {
    dst.counts.store(src.counts.load(Relaxed), Relaxed);
    dst.value.store(src.value.load(Relaxed), Relaxed);
    dst.prior.store(src.prior.load(Relaxed), Relaxed);
    dst.status.store(src.status.load(Relaxed), Relaxed);
    dst.mover.store(src.mover.load(Relaxed), Relaxed);
    if let Some(a) = action {
        // SAFETY: `dst` belongs to a tree that no other thread can see yet.
        unsafe { (*dst.action.get()).write(a) };
    }
}

#[inline]
pub(crate) fn player_from(index: u8) -> Player {
    if index == 0 {
        Player::First
    } else {
        Player::Second
    }
}

/// Whether status `s` says the game is lost from here for `chooser` (who moved into the node).
#[inline]
fn loses(s: u8, chooser: Player) -> bool {
    matches!(exact_outcome(s), Some(Outcome::Win(p)) if p != chooser)
}

/// The result of status `s` if it is a game's end or a proof.
pub(crate) fn exact_outcome(s: u8) -> Option<Outcome> {
    match s {
        status::PROVEN_DRAW => Some(Outcome::Draw),
        status::PROVEN_FIRST_WON => Some(Outcome::Win(Player::First)),
        status::PROVEN_SECOND_WON => Some(Outcome::Win(Player::Second)),
        _ => terminal_outcome(s),
    }
}

pub(crate) fn terminal_outcome(s: u8) -> Option<Outcome> {
    match s {
        status::DRAW => Some(Outcome::Draw),
        status::FIRST_WON => Some(Outcome::Win(Player::First)),
        status::SECOND_WON => Some(Outcome::Win(Player::Second)),
        _ => None,
    }
}

/// `n` all-zero nodes on the heap. All-zero is a valid `Node` (atomics at 0, status NEW, the
/// action uninitialised).
///
/// Not a `Box<[Node]>`: for an alignment above 16, Rust's system allocator zeroes with a
/// `memset`, which faults in every page of the arena at once (128 MiB for the default 2^22
/// nodes). Asked for 16-byte alignment, it calls `calloc`, whose large blocks come straight from
/// `mmap` and are mapped lazily; the 32-byte alignment is then made by hand.
struct Arena<A> {
    nodes: NonNull<Node<A>>,
    len: usize,
    block: NonNull<u8>,
    layout: Layout,
}

impl<A> Arena<A> {
    fn zeroed(n: usize) -> Self {
        let align = std::mem::align_of::<Node<A>>();
        let bytes = std::mem::size_of::<Node<A>>()
            .checked_mul(n)
            .and_then(|b| b.checked_add(align))
            .expect("arena size overflows");
        let layout = Layout::from_size_align(bytes, 16).expect("arena size overflows");
        // SAFETY: the layout has non-zero size.
        let block = unsafe { alloc_zeroed(layout) };
        let Some(block) = NonNull::new(block) else {
            std::alloc::handle_alloc_error(layout);
        };
        let offset = block.as_ptr().align_offset(align);
        debug_assert!(offset < align);
        // SAFETY: `offset < align`, so the `n` nodes after it lie inside the block.
        let nodes = unsafe { block.as_ptr().add(offset) }.cast::<Node<A>>();
        Arena {
            nodes: NonNull::new(nodes).expect("inside a non-null block"),
            len: n,
            block,
            layout,
        }
    }
}

impl<A> std::ops::Deref for Arena<A> {
    type Target = [Node<A>];
    fn deref(&self) -> &[Node<A>] {
        // SAFETY: `len` aligned, zero-initialised (so valid) nodes owned by `self`.
        unsafe { std::slice::from_raw_parts(self.nodes.as_ptr(), self.len) }
    }
}

impl<A> std::ops::DerefMut for Arena<A> {
    fn deref_mut(&mut self) -> &mut [Node<A>] {
        // SAFETY: as for `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.nodes.as_ptr(), self.len) }
    }
}

impl<A> Drop for Arena<A> {
    fn drop(&mut self) {
        // SAFETY: the block was allocated with this layout; `Node` needs no drop.
        unsafe { dealloc(self.block.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_is_compact() {
        assert_eq!(std::mem::size_of::<Node<u16>>(), 32);
        assert_eq!(std::mem::size_of::<Node<u32>>(), 32);
    }

    #[test]
    fn expand_select_backup_and_extract() {
        let mut t = Tree::<u32>::new(16, Player::Second);
        let root = t.root();
        assert!(t.try_claim(root).is_ok());
        assert_eq!(t.try_claim(root), Err(status::EXPANDING));
        let mut cur = Cursor::default();
        assert!(t.expand(root, Player::First, &[7, 8, 9], &[0.2, 0.5, 0.3], &mut cur));
        assert_eq!(t.children(root), 1..4);
        assert_eq!(t.action(2), 8);
        let p = plain_puct();
        // All unvisited: the highest prior wins.
        assert_eq!(t.select_child(root, Player::First, &p, true), 2);
        t.add_in_flight(root);
        t.add_in_flight(2);
        // A visit in flight on 2 steers the next descent elsewhere.
        assert_eq!(t.select_child(root, Player::First, &p, true), 3);
        t.backup(&[root, 2], 1.0);
        assert_eq!(t.stats(2).visits, 1);
        assert_eq!(t.stats(2).in_flight, 0);
        assert_eq!(t.stats(2).value_sum, 1.0);
        // The root was entered by Second: a win for First counts against it.
        assert_eq!(t.stats(root).value_sum, -1.0);
        t.add_in_flight(root);
        t.undo(&[root]);
        assert_eq!(t.stats(root).in_flight, 0);

        let mut sub = Tree::new(8, Player::First);
        t.extract_into(2, &mut sub);
        assert_eq!(sub.stats(sub.root()).visits, 1);
        assert_eq!(sub.mover(sub.root()), Player::First);
        assert_eq!(sub.len(), 1);
        // Node 2 was visited but never expanded: so is the copy.
        assert!(!sub.is_expanded(sub.root()));
        // Copying the root copies its children, in order.
        let mut whole = Tree::new(8, Player::First);
        t.extract_into(root, &mut whole);
        assert_eq!(whole.children(0), 1..4);
        assert_eq!(
            (1..4).map(|c| whole.action(c)).collect::<Vec<_>>(),
            [7, 8, 9]
        );
        assert_eq!(whole.stats(2), t.stats(2));
        // A cursor of the old tree is void in a cleared one.
        t.clear(Player::First);
        assert!(t.try_claim(0).is_ok());
        assert!(t.expand(0, Player::Second, &[1, 2], &[0.5; 2], &mut cur));
        assert_eq!(t.children(0), 1..3, "a cleared tree starts a new run");
    }

    /// PUCT with c = 1, a 9 × 9 board's score scale and every other term off.
    fn plain_puct() -> Puct {
        Puct {
            c_puct: 1.0,
            fpu_reduction: 0.0,
            virtual_loss: 1.0,
            minimax_weight: 0.0,
            forced: 0.0,
            score_weight: 0.0,
            dynamic_weight: 0.0,
            score_center: 0.0,
            score_scale: 18.0,
        }
    }

    /// One playout along `path` (root first) that backs up `value_first`.
    fn visit(t: &Tree<u32>, path: &[u32], value_first: f32) {
        path.iter().for_each(|&i| t.add_in_flight(i));
        t.backup(path, value_first);
    }

    /// A tree whose root (First to act) has children 1 and 2; child 1 has children 3 and 4
    /// (Second to act). Values are given from First's point of view.
    fn two_ply(minimax: bool) -> Tree<u32> {
        let mut t = Tree::<u32>::new(16, Player::Second);
        if minimax {
            t.track_minimax();
        }
        let mut cur = Cursor::default();
        assert!(t.try_claim(0).is_ok());
        assert!(t.expand(0, Player::First, &[10, 20], &[0.5, 0.5], &mut cur));
        visit(&t, &[0], 0.0);
        assert!(t.try_claim(1).is_ok());
        assert!(t.expand(1, Player::Second, &[30, 40], &[0.5, 0.5], &mut cur));
        // Child 1 looks good on its own evaluation...
        visit(&t, &[0, 1], 0.6);
        // ...but Second has a refutation (3) beside a poor reply (4).
        visit(&t, &[0, 1, 3], -0.8);
        visit(&t, &[0, 1, 4], 0.9);
        visit(&t, &[0, 2], 0.1);
        t
    }

    #[test]
    fn minimax_values_follow_each_players_best_reply() {
        let t = two_ply(true);
        // Leaves keep their own evaluations, from their movers' points of view.
        assert_eq!(t.minimax_q(3), Some(0.8));
        assert_eq!(t.minimax_q(4), Some(-0.9));
        assert_eq!(t.minimax_q(2), Some(0.1));
        // Node 1 (entered by First) is worth Second's best reply: −0.8 for First.
        assert_eq!(t.minimax_q(1), Some(-0.8));
        // The root (entered by Second) is worth First's best child, 2 (0.1), negated.
        assert_eq!(t.minimax_q(0), Some(-0.1));
        // The mean still likes child 1 ((0.6 − 0.8 + 0.9) / 3 ≈ 0.23 against 0.1).
        assert!(t.stats(1).q() > t.stats(2).q());
        let mean = Puct {
            c_puct: 0.0,
            ..plain_puct()
        };
        assert_eq!(t.select_child(0, Player::First, &mean, true), 1);
        // With the minimax in the value, the refutation steers First to child 2.
        let mixed = Puct {
            minimax_weight: 0.5,
            ..mean
        };
        assert_eq!(t.select_child(0, Player::First, &mixed, true), 2);
        // Untracked trees have none, and extracting keeps them.
        assert_eq!(two_ply(false).minimax_q(1), None);
        let mut sub = Tree::new(8, Player::First);
        t.extract_into(1, &mut sub);
        assert_eq!(sub.minimax_q(sub.root()), Some(-0.8));
        assert_eq!(sub.minimax_q(1), Some(0.8));
    }

    #[test]
    fn scores_back_up_per_mover_and_steer_selection_only_when_weighted() {
        // Root: First to act (entered by Second); children 1 and 2, entered by First, with
        // equal priors and equal values.
        let mut t = Tree::<u32>::new(16, Player::Second);
        assert_eq!(t.score(0), None, "untracked");
        t.track_scores();
        let mut cur = Cursor::default();
        assert!(t.try_claim(0).is_ok());
        assert!(t.expand(0, Player::First, &[10, 20], &[0.5, 0.5], &mut cur));
        visit(&t, &[0], 0.0);
        t.backup_score(&[0], 0.0);
        // Child 1 leads First by 2 and 4 points, child 2 by 6 and 10: same values.
        for (child, score) in [(1, 2.0), (1, 4.0), (2, 6.0), (2, 10.0)] {
            visit(&t, &[0, child], 0.2);
            t.backup_score(&[0, child], score);
        }
        let s1 = t.score(1).unwrap();
        assert_eq!((s1.count, s1.mean, s1.stdev), (2, 3.0, 1.0));
        let s2 = t.score(2).unwrap();
        assert_eq!((s2.count, s2.mean, s2.stdev), (2, 8.0, 2.0));
        // The root was entered by Second: First's leads count against it.
        let root = t.score(0).unwrap();
        assert_eq!((root.count, root.mean), (5, -22.0 / 5.0));
        assert_eq!(t.stats(1).q(), t.stats(2).q());
        let plain = plain_puct();
        // Equal values and priors: the first child, as without scores.
        assert_eq!(t.select_child(0, Player::First, &plain, true), 1);
        let weighted = Puct {
            score_weight: 0.1,
            ..plain
        };
        assert_eq!(t.select_child(0, Player::First, &weighted, true), 2);
        // The utility is bounded and odd.
        assert!(weighted.score_utility(1e6) < 1.0 && weighted.score_utility(1e6) > 0.99);
        assert_eq!(weighted.score_utility(-8.0), -weighted.score_utility(8.0));
        // Tree reuse keeps a subtree's scores; clearing drops them.
        let mut sub = Tree::new(8, Player::First);
        t.extract_into(2, &mut sub);
        assert_eq!(sub.score(sub.root()), Some(s2));
        t.clear(Player::Second);
        assert_eq!(t.score(0), None);
        assert!(t.tracks_scores());
    }

    #[test]
    fn the_dynamic_score_utility_separates_leads_the_static_one_flattens() {
        // Root: First to act; child 1 (prior 0.55) leads by 100 points, child 2 (prior 0.45) by
        // 110, equal values: a game won by far.
        let mut t = Tree::<u32>::new(16, Player::Second);
        t.track_scores();
        let mut cur = Cursor::default();
        assert!(t.try_claim(0).is_ok());
        assert!(t.expand(0, Player::First, &[10, 20], &[0.55, 0.45], &mut cur));
        visit(&t, &[0], 0.0);
        for (child, score) in [(1, 100.0), (1, 100.0), (2, 110.0), (2, 110.0)] {
            visit(&t, &[0, child], 0.2);
            t.backup_score(&[0, child], score);
        }
        let plain = Puct {
            score_weight: 0.3,
            ..plain_puct()
        };
        // Exploration favours child 1 by 0.1 · √5 / 3 ≈ 0.075; the static term adds only
        // 0.3 · 2/π · (atan(110/18) − atan(100/18)) ≈ 0.003 for child 2.
        assert_eq!(t.select_child(0, Player::First, &plain, true), 1);
        // Centred on the expected 105, the dynamic term adds 0.3 · 2/π · 2 · atan(5/18) ≈ 0.103.
        let dynamic = Puct {
            score_weight: 0.0,
            dynamic_weight: 0.3,
            score_center: 105.0,
            ..plain
        };
        assert_eq!(t.select_child(0, Player::First, &dynamic, true), 2);
        // Hand-computed terms: a score at the centre adds nothing; one scale above it adds
        // w · 2/π · atan(1) = w / 2.
        assert_eq!(dynamic.score_bonus(105.0, 105.0), 0.0);
        assert!((dynamic.score_bonus(123.0, 105.0) - 0.15).abs() < 1e-6);
        assert!((plain.score_bonus(18.0, 105.0) - 0.15).abs() < 1e-6);
    }

    #[test]
    fn full_arena_refuses_expansion() {
        let t = Tree::<u32>::new(3, Player::Second);
        assert!(t.try_claim(0).is_ok());
        assert!(!t.expand(
            0,
            Player::First,
            &[1, 2, 3],
            &[0.3; 3],
            &mut Cursor::default()
        ));
        assert!(!t.is_expanded(0));
        assert!(t.try_claim(0).is_ok(), "the claim was released");
    }
}
