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

use std::alloc::{alloc_zeroed, Layout};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicI64, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};

use games::{Outcome, Player};

/// Values are summed in fixed point so that concurrent backups add exactly (no float CAS loops,
/// no rounding that depends on the order of additions). 2^24 steps per unit: far finer than any
/// network's value, and 2^32 visits of ±1 still fit in an i64.
pub const VALUE_SCALE: f64 = 16_777_216.0;

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
}

/// One node: 32 bytes plus the action for small action types.
#[repr(C)]
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
    /// First child's arena index; meaningful once `status` is EXPANDED (read after `Acquire`).
    first_child: AtomicU32,
    /// Number of children; meaningful once `status` is EXPANDED (read after `Acquire`).
    num_children: AtomicU16,
    /// See [`status`]. Only moves NEW → EXPANDING → EXPANDED or terminal, except EXPANDING →
    /// NEW when the arena is full. Exactly one thread wins the NEW → EXPANDING exchange and owns
    /// the expansion.
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

/// PUCT parameters, copied out of the search configuration for the hot loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Puct {
    pub c_puct: f32,
    pub fpu_reduction: f32,
    pub virtual_loss: f32,
}

/// The arena. `Tree` is `Sync`: all mutation through `&Tree` follows the rules on [`Node`].
pub struct Tree<A> {
    nodes: Box<[Node<A>]>,
    /// Arena slots handed out so far. Only grows (`fetch_add`); it may pass the capacity when
    /// allocations fail, and failed allocations are abandoned, never reused.
    len: AtomicUsize,
    root: u32,
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
        let nodes = zeroed_nodes::<A>(capacity);
        nodes[0].mover.store(root_mover.index() as u8, Relaxed);
        Tree {
            nodes,
            len: AtomicUsize::new(1),
            root: 0,
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
        self.status(i) == status::EXPANDED
    }

    /// The game's outcome at this node if it is a known terminal.
    pub fn terminal(&self, i: u32) -> Option<Outcome> {
        terminal_outcome(self.status(i))
    }

    /// The node's children (empty unless expanded).
    #[inline]
    pub fn children(&self, i: u32) -> Range<u32> {
        let n = self.node(i);
        if n.status.load(Acquire) != status::EXPANDED {
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

    /// Gives a claimed node back unexpanded (evaluation failed, or the arena is full).
    pub(crate) fn release_claim(&self, i: u32) {
        self.node(i).status.store(status::NEW, Release);
    }

    /// Publishes the children of a claimed node: `actions[k]` with prior `priors[k]`, all
    /// entered by `mover`. Returns false (and releases the claim) when the arena is full.
    pub(crate) fn expand(&self, i: u32, mover: Player, actions: &[A], priors: &[f32]) -> bool {
        debug_assert_eq!(actions.len(), priors.len());
        let n = actions.len();
        debug_assert!(n > 0 && n <= usize::from(u16::MAX));
        let first = self.len.fetch_add(n, Relaxed);
        if first + n > self.nodes.len() {
            self.release_claim(i);
            return false;
        }
        let m = mover.index() as u8;
        for (k, (&a, &p)) in actions.iter().zip(priors).enumerate() {
            let child = &self.nodes[first + k];
            // SAFETY: slot `first + k` was handed out to this thread alone by the fetch_add
            // above and is not reachable by others until the Release store below.
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
    #[inline]
    pub(crate) fn select_child(&self, i: u32, chooser: Player, p: &Puct) -> u32 {
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
        let fpu = parent_q - p.fpu_reduction;
        let explore = p.c_puct * (parent_n.max(1) as f32).sqrt();
        let range = self.children(i);
        let mut best = range.start;
        let mut best_score = f32::NEG_INFINITY;
        for c in range {
            let child = self.node(c);
            let counts = child.counts.load(Relaxed);
            let done = (counts >> 32) as u32;
            let flying = counts as u32;
            let n = done + flying;
            let prior = f32::from_bits(child.prior.load(Relaxed));
            let q = if n == 0 {
                fpu
            } else {
                // Each visit in flight counts as a loss for the chooser, steering other
                // descents elsewhere until it returns.
                let w = child.value.load(Relaxed) as f32 * (1.0 / VALUE_SCALE as f32)
                    - p.virtual_loss * flying as f32;
                w / n as f32
            };
            let score = q + explore * prior / (1 + n) as f32;
            if score > best_score {
                best_score = score;
                best = c;
            }
        }
        best
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

    /// The subtree under `new_root` copied into a fresh arena (tree reuse): children stay
    /// contiguous and the abandoned rest of the old tree is freed. Needs `&mut` (no search).
    pub fn extract(&mut self, new_root: u32, capacity: usize) -> Tree<A> {
        let out = Tree::<A>::new(capacity, self.mover(new_root));
        let cap = out.nodes.len();
        // Breadth first: (old index, new index) of nodes whose children are still to copy.
        let mut queue = std::collections::VecDeque::new();
        copy_node(&self.nodes[new_root as usize], &out.nodes[0], None);
        queue.push_back((new_root, 0u32));
        let mut len = 1usize;
        while let Some((old, new)) = queue.pop_front() {
            let range = self.children(old);
            if range.is_empty() || len + range.len() > cap {
                // Not expanded, or no room: the copy stays a leaf, to be evaluated again.
                if self.status(old) == status::EXPANDED {
                    out.nodes[new as usize].status.store(status::NEW, Relaxed);
                }
                continue;
            }
            let first = len;
            for (k, c) in range.clone().enumerate() {
                let src = &self.nodes[c as usize];
                copy_node(src, &out.nodes[first + k], Some(self.action(c)));
                queue.push_back((c, (first + k) as u32));
            }
            len += range.len();
            let dst = &out.nodes[new as usize];
            dst.first_child.store(first as u32, Relaxed);
            dst.num_children.store(range.len() as u16, Relaxed);
        }
        out.len.store(len, Relaxed);
        out
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

pub(crate) fn terminal_outcome(s: u8) -> Option<Outcome> {
    match s {
        status::DRAW => Some(Outcome::Draw),
        status::FIRST_WON => Some(Outcome::Win(Player::First)),
        status::SECOND_WON => Some(Outcome::Win(Player::Second)),
        _ => None,
    }
}

/// A boxed slice of `n` all-zero nodes. All-zero is a valid `Node` (atomics at 0, status NEW,
/// the action uninitialised), and zeroed allocations are mapped lazily by the OS.
fn zeroed_nodes<A>(n: usize) -> Box<[Node<A>]> {
    let layout = Layout::array::<Node<A>>(n).expect("arena size overflows");
    // SAFETY: the layout has non-zero size (n ≥ 1, Node is not zero-sized); the memory is
    // zeroed, which is a valid bit pattern for every field of Node; the Box takes ownership
    // with the same layout it will free with.
    unsafe {
        let ptr = alloc_zeroed(layout) as *mut Node<A>;
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n))
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
        assert!(t.expand(root, Player::First, &[7, 8, 9], &[0.2, 0.5, 0.3]));
        assert_eq!(t.children(root), 1..4);
        assert_eq!(t.action(2), 8);
        let p = Puct {
            c_puct: 1.0,
            fpu_reduction: 0.0,
            virtual_loss: 1.0,
        };
        // All unvisited: the highest prior wins.
        assert_eq!(t.select_child(root, Player::First, &p), 2);
        t.add_in_flight(root);
        t.add_in_flight(2);
        // A visit in flight on 2 steers the next descent elsewhere.
        assert_eq!(t.select_child(root, Player::First, &p), 3);
        t.backup(&[root, 2], 1.0);
        assert_eq!(t.stats(2).visits, 1);
        assert_eq!(t.stats(2).in_flight, 0);
        assert_eq!(t.stats(2).value_sum, 1.0);
        // The root was entered by Second: a win for First counts against it.
        assert_eq!(t.stats(root).value_sum, -1.0);
        t.add_in_flight(root);
        t.undo(&[root]);
        assert_eq!(t.stats(root).in_flight, 0);

        let sub = t.extract(2, 8);
        assert_eq!(sub.stats(sub.root()).visits, 1);
        assert_eq!(sub.mover(sub.root()), Player::First);
        assert_eq!(sub.len(), 1);
    }

    #[test]
    fn full_arena_refuses_expansion() {
        let t = Tree::<u32>::new(3, Player::Second);
        assert!(t.try_claim(0).is_ok());
        assert!(!t.expand(0, Player::First, &[1, 2, 3], &[0.3; 3]));
        assert!(!t.is_expanded(0));
        assert!(t.try_claim(0).is_ok(), "the claim was released");
    }
}
