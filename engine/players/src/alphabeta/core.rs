//! What the alpha-beta searchers of Xiangqi ([`super::xiangqi`]) and Liuzhou
//! ([`super::liuzhou`]) share: their limits, the budget that stops a search, the
//! transposition table's memory and its decisive scores, and the agent that plays either.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use games::{Agent, AgentError, Explanation, Game};

/// A game won at the root's ply scores this; one won `n` plies later scores `DECISIVE − n`.
pub const DECISIVE: i32 = 30_000;
/// Deepest ply from the root, quiescence included; decisive scores count plies up to it.
pub const MAX_PLY: usize = 128;

/// The largest transposition table offered, in MiB: more than any game here fills, and few
/// machines spare more.
pub const MAX_HASH_MB: usize = 4096;

/// Transposition table of an `alphabeta` spec without `hash`, and of the guard and handoff, in
/// MiB.
pub const DEFAULT_HASH_MB: usize = 16;

/// Why a transposition table of the asked size cannot be had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HashError {
    #[error("hash size {0} MiB is outside 1..={MAX_HASH_MB}")]
    Range(usize),
    #[error("cannot allocate a {0} MiB transposition table")]
    Alloc(usize),
}

/// When to stop searching. Any limit that is set stops the search; none set means depth 64.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Deepest iteration to complete.
    pub depth: Option<u32>,
    /// Wall-clock time for the whole search.
    pub movetime: Option<Duration>,
    /// Nodes (search + quiescence) after which to stop.
    pub nodes: Option<u64>,
}

impl SearchLimits {
    pub fn depth(d: u32) -> Self {
        SearchLimits {
            depth: Some(d),
            ..Default::default()
        }
    }

    pub fn movetime(t: Duration) -> Self {
        SearchLimits {
            movetime: Some(t),
            ..Default::default()
        }
    }

    /// The name of an agent searching within these limits: its depth, else its time, else
    /// its nodes.
    pub fn agent_name(&self) -> String {
        match (self.depth, self.movetime, self.nodes) {
            (Some(d), _, _) => format!("alphabeta-d{d}"),
            (None, Some(t), _) => format!("alphabeta-{}ms", t.as_millis()),
            (None, None, Some(n)) => format!("alphabeta-{n}n"),
            _ => "alphabeta".into(),
        }
    }
}

/// The time, nodes and stop flag one search may spend, looked at every 1024 nodes (the clock
/// is too dear to read at each).
pub(crate) struct Budget {
    start: Instant,
    deadline: Option<Instant>,
    node_limit: Option<u64>,
    next_check: u64,
    /// Set once the budget is spent: every node then returns at once, and the iteration
    /// under way does not count.
    pub(crate) aborted: bool,
    stop: Arc<AtomicBool>,
}

impl Budget {
    pub(crate) fn new() -> Self {
        Budget {
            start: Instant::now(),
            deadline: None,
            node_limit: None,
            next_check: 0,
            aborted: false,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Starts the clock of a search within `limits`.
    pub(crate) fn start(&mut self, limits: SearchLimits) {
        self.start = Instant::now();
        self.deadline = limits.movetime.map(|t| self.start + t);
        self.node_limit = limits.nodes;
        self.next_check = 0;
        self.aborted = false;
    }

    /// Whether the search must stop, `nodes` nodes into it.
    #[inline]
    pub(crate) fn spent(&mut self, nodes: u64) -> bool {
        if !self.aborted && nodes >= self.next_check {
            self.next_check = nodes + 1024;
            let late = self.deadline.is_some_and(|d| Instant::now() >= d);
            let many = self.node_limit.is_some_and(|n| nodes >= n);
            if late || many || self.stop.load(Ordering::Relaxed) {
                self.aborted = true;
            }
        }
        self.aborted
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// An iteration rarely takes less than all the ones before it: true when the next could
    /// not finish in the time left.
    pub(crate) fn no_time_for_another(&self) -> bool {
        self.deadline.is_some_and(|dl| {
            let now = Instant::now();
            now + (now - self.start) > dl
        })
    }

    /// The flag that stops the running search when set.
    pub(crate) fn stop_handle(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    pub(crate) fn set_stop_handle(&mut self, flag: Arc<AtomicBool>) {
        self.stop = flag;
    }
}

/// A table of about `bytes` (the largest power of two of entries that fits, so a key masks to
/// a slot; at least 1024), or `None` when the memory cannot be had: the allocation is
/// fallible so a protocol can refuse a size and go on.
pub(crate) fn alloc_table<T: Clone + Default>(bytes: usize) -> Option<Vec<T>> {
    let entries = (bytes / std::mem::size_of::<T>()).max(1024);
    let entries = 1usize << (usize::BITS - 1 - entries.leading_zeros());
    let mut tt = Vec::new();
    tt.try_reserve_exact(entries).ok()?;
    tt.resize(entries, T::default());
    Some(tt)
}

/// Decisive scores are stored relative to the node, not the root.
pub(crate) fn to_tt(score: i32, ply: usize) -> i32 {
    if score >= DECISIVE - MAX_PLY as i32 {
        score + ply as i32
    } else if score <= -DECISIVE + MAX_PLY as i32 {
        score - ply as i32
    } else {
        score
    }
}

/// The inverse of [`to_tt`].
pub(crate) fn from_tt(score: i32, ply: usize) -> i32 {
    if score >= DECISIVE - MAX_PLY as i32 {
        score - ply as i32
    } else if score <= -DECISIVE + MAX_PLY as i32 {
        score + ply as i32
    } else {
        score
    }
}

/// An agent's account of a search that chose `best`: its value, and the line of the last
/// completed iteration when that line starts with `best` (else `best` alone).
pub(crate) fn explanation<A: PartialEq>(
    best: A,
    mut pv: Vec<A>,
    value: f32,
    nodes: u64,
) -> Explanation<A> {
    if pv.first() != Some(&best) {
        pv = vec![best];
    }
    Explanation {
        value: Some(value),
        pv,
        visits: None,
        nodes: Some(nodes),
    }
}

/// A search with one root action searched first ([`Searcher::search_with_first`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FirstSearch<A> {
    /// The best action (`None` when the game is over or every action is banned) and its score
    /// at `depth`, the deepest iteration completed.
    pub best: Option<A>,
    pub score: i32,
    /// The exact score of the action searched first at `depth`; `None` when it is not a
    /// legal, allowed action or no iteration completed.
    pub first: Option<i32>,
    pub depth: u32,
    pub nodes: u64,
}

/// What [`AlphaBetaPlayer`] and [`crate::guard`] need of a game's searcher.
pub trait Searcher: Sized + Send {
    type Game: Game;

    /// A searcher with a `hash_mb` MiB table, or why there cannot be one.
    fn try_new(hash_mb: usize) -> Result<Self, HashError>;

    /// Forgets what earlier searches learned (a new game).
    fn clear(&mut self);

    /// Searches `state` within `limits`: the action chosen and the account of it, or `None`
    /// when the game is over.
    fn choose(
        &mut self,
        state: &Self::Game,
        limits: SearchLimits,
    ) -> Option<Explanation<<Self::Game as Game>::Action>>;

    /// Searches `state` within `limits`, never choosing a `banned` root action, with `first`
    /// searched first at the root in the full window, so that each iteration gives its exact
    /// score beside the best action's.
    fn search_with_first(
        &mut self,
        state: &Self::Game,
        limits: SearchLimits,
        first: <Self::Game as Game>::Action,
        banned: &[<Self::Game as Game>::Action],
    ) -> FirstSearch<<Self::Game as Game>::Action>;

    /// A score as a value in [−1, 1] for the player to act.
    fn value(score: i32) -> f32;
}

/// A searcher as an [`Agent`]: searches each decision within its spec's limits, the time
/// shortened by a protocol's clock.
pub struct AlphaBetaPlayer<S: Searcher> {
    searcher: S,
    /// The limits of its spec.
    own: SearchLimits,
    /// The limits of the next search: `own`, its time shortened by a protocol's clock.
    limits: SearchLimits,
    last: Option<Explanation<<S::Game as Game>::Action>>,
}

impl<S: Searcher> AlphaBetaPlayer<S> {
    /// An agent searching within `limits` with a `hash_mb` MiB table, or why there cannot be
    /// such a table.
    pub fn try_new(limits: SearchLimits, hash_mb: usize) -> Result<Self, HashError> {
        Ok(AlphaBetaPlayer {
            searcher: S::try_new(hash_mb)?,
            own: limits,
            limits,
            last: None,
        })
    }

    /// An agent with a table of about `hash_mb` MiB, clamped to 1..=[`MAX_HASH_MB`]. Panics if
    /// even that cannot be had; faces that take a size from a user call
    /// [`AlphaBetaPlayer::try_new`].
    pub fn new(limits: SearchLimits, hash_mb: usize) -> Self {
        Self::try_new(limits, hash_mb.clamp(1, MAX_HASH_MB))
            .expect("a transposition table of this size")
    }

    /// The limits the next search runs under.
    pub fn limits(&self) -> SearchLimits {
        self.limits
    }

    pub fn searcher_mut(&mut self) -> &mut S {
        &mut self.searcher
    }
}

impl<S: Searcher> Agent<S::Game> for AlphaBetaPlayer<S> {
    fn name(&self) -> String {
        self.own.agent_name()
    }

    fn select_action(&mut self, state: &S::Game) -> Result<<S::Game as Game>::Action, AgentError> {
        let Some(account) = self.searcher.choose(state, self.limits) else {
            return Err(AgentError {
                agent: self.own.agent_name(),
                reason: "no legal action: the game is over".into(),
            });
        };
        let best = account.pv[0];
        self.last = Some(account);
        Ok(best)
    }

    fn new_game(&mut self, _start: &S::Game) -> Result<(), AgentError> {
        self.searcher.clear();
        self.last = None;
        Ok(())
    }

    /// A protocol's time shortens the spec's own, never lengthens it; `None` restores it.
    fn set_move_time(&mut self, time: Option<Duration>) {
        self.limits = self.own;
        if let Some(t) = time {
            self.limits.movetime = Some(self.own.movetime.map_or(t, |own| own.min(t)));
        }
    }

    fn explain(&self) -> Option<Explanation<<S::Game as Game>::Action>> {
        self.last.clone()
    }
}
