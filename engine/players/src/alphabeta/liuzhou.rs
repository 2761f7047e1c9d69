//! Alpha-beta for Liuzhou: iterative deepening, principal-variation search, a transposition
//! table keyed by [`Game::hash`], move ordering (table move, shapes and blocks, killers,
//! history), late-move reductions of quiet actions, and a quiescence search that settles what
//! is pending (marks, captures, removals) and plays out the actions that complete a shape.
//!
//! Every atomic action is one ply. The same player may act several times in a row (a placement
//! and its marks, a step and its captures), so a score changes sign only where the player to
//! act changes: a child acted by the same player is searched with the same window and its
//! score kept as it is. Scores are from the point of view of the player to act; a finished
//! game scores exactly: ±([`WIN`] − plies to the end), 0 for a draw.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use games::liuzhou::{Action, ActionKind, Liuzhou, Phase, POLICY_SIZE, STONES_PER_PLAYER};
use games::{Explanation, Game, Outcome, Player};

use super::core::{
    alloc_table, explanation, from_tt, to_tt, AlphaBetaPlayer, Budget, FirstSearch, Searcher,
};
pub use super::core::{HashError, SearchLimits, MAX_HASH_MB, MAX_PLY};

/// A won game scores `WIN − plies to its end`; scores beyond `WIN − MAX_PLY` are decisive.
pub const WIN: i32 = super::core::DECISIVE;
const INF: i32 = 32_000;
/// Actions the quiescence search plays beyond the horizon before it only evaluates.
const QUIESCENCE_PLIES: u32 = 8;
/// Deepest iteration when no limit names one.
const DEFAULT_DEPTH: u32 = 64;

// ---- the board (as the rules crate lays it out: bit `s` is point `s = 6·(rank−1) + file`) ----

const BOARD: u64 = (1 << 36) - 1;
const FILE_A: u64 = 0x0000_4104_1041;
const FILE_F: u64 = FILE_A << 5;
const RANK_1: u64 = 0x3F;
/// Bottom-left corners of the 25 squares.
const SQUARE_CORNERS: u64 = (BOARD >> 6) & !FILE_F;

const fn windows() -> ([u64; 25], [u64; 12]) {
    let mut squares = [0u64; 25];
    let mut i = 0;
    let mut c = 0;
    while c < 36 {
        if SQUARE_CORNERS & (1 << c) != 0 {
            squares[i] = 0b11 << c | 0b11 << (c + 6);
            i += 1;
        }
        c += 1;
    }
    let mut lines = [0u64; 12];
    let mut k = 0;
    while k < 6 {
        lines[k] = RANK_1 << (6 * k);
        lines[6 + k] = FILE_A << k;
        k += 1;
    }
    (squares, lines)
}

/// The 25 squares and the 12 lines (6 ranks, then 6 files), as point sets.
static SQUARES: [u64; 25] = windows().0;
static LINES: [u64; 12] = windows().1;

/// Stones of `stones` in a complete square or line of `stones` (one colour's unmarked stones).
fn shape_members(stones: u64) -> u64 {
    let corners = stones & (stones >> 1) & (stones >> 6) & (stones >> 7) & SQUARE_CORNERS;
    let mut members = corners | corners << 1 | corners << 6 | corners << 7;
    for line in LINES {
        if stones & line == line {
            members |= line;
        }
    }
    members
}

/// Whether a stone put on `p` (one of `stones`) completes a square or a line through `p`.
fn completes(stones: u64, p: u8) -> bool {
    let (rank, file) = (p / 6, p % 6);
    if stones & LINES[rank as usize] == LINES[rank as usize]
        || stones & LINES[6 + file as usize] == LINES[6 + file as usize]
    {
        return true;
    }
    let bit = 1u64 << p;
    let corners = SQUARE_CORNERS & (bit | bit >> 1 | bit >> 6 | bit >> 7);
    corners & stones & (stones >> 1) & (stones >> 6) & (stones >> 7) != 0
}

/// Orthogonal neighbours of the points of `b`.
fn neighbours(b: u64) -> u64 {
    ((b << 6) | (b >> 6) | ((b << 1) & !FILE_A) | ((b >> 1) & !FILE_F)) & BOARD
}

/// Stones of `own` that can step in each direction (up, down, left, right) onto `empty`, and
/// how far the step moves the bit.
fn movers(own: u64, empty: u64) -> [(u64, i8); 4] {
    [
        (own & (empty >> 6), 6),
        (own & (empty << 6), -6),
        (own & (empty << 1) & !FILE_A, -1),
        (own & (empty >> 1) & !FILE_F, 1),
    ]
}

/// Legal steps of `own` onto `empty`, and the points a step onto completes a shape.
fn steps_and_holes(own: u64, empty: u64) -> (u32, u64) {
    let mut count = 0;
    let mut holes = 0;
    for (m, delta) in movers(own, empty) {
        count += m.count_ones();
        let mut b = m;
        while b != 0 {
            let from = b.trailing_zeros() as u8;
            b &= b - 1;
            let to = (from as i8 + delta) as u8;
            if holes & (1 << to) == 0 && completes(own ^ (1 << from) ^ (1 << to), to) {
                holes |= 1 << to;
            }
        }
    }
    (count, holes)
}

/// Empty points where a placement would complete a shape of `own` (unmarked stones).
fn placement_holes(own: u64, empty: u64) -> u64 {
    let mut holes = 0;
    for w in SQUARES.iter().chain(LINES.iter()) {
        let missing = w & !own;
        if missing.count_ones() == 1 && missing & empty != 0 {
            holes |= missing;
        }
    }
    holes
}

// ---- evaluation ----

/// The evaluation's weights, in hundredths of a stone.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// A stone on the board after placement; during placement, a stone not marked.
    pub stone: i32,
    /// Each mark, capture or removal the player to act still makes at once.
    pub pending: i32,
    /// Each unmarked stone in a square or line (safe from selection while others are not).
    pub shape_member: i32,
    /// During placement, a square with no opponent or marked stone, by own stones in it (0–3).
    pub open_square: [i32; 4],
    /// During placement, a line with no opponent or marked stone, by own stones in it (0–5).
    pub open_line: [i32; 6],
    /// Points where the player's next placement or step completes a shape (counted to 3).
    pub hole: i32,
    /// The same for the player not to act when it has two or more: one can rarely stop both.
    pub double_threat: i32,
    /// After placement, a stone of a shape with an empty neighbour: it can step out and back to
    /// form the shape again.
    pub open_shape: i32,
    /// After placement, each legal step.
    pub mobility: i32,
    /// After placement, per stone short of three spare above `lose_below`, squared.
    pub danger: i32,
    /// After placement, fewer than four stones: no shape can ever be formed again.
    pub few_stones: i32,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            stone: 100,
            pending: 90,
            shape_member: 6,
            open_square: [0, 1, 4, 14],
            open_line: [0, 0, 0, 2, 6, 16],
            hole: 20,
            double_threat: 60,
            open_shape: 8,
            mobility: 3,
            danger: 12,
            few_stones: 80,
        }
    }
}

impl Weights {
    /// The static value of `s` for the player to act.
    pub fn evaluate(&self, s: &Liuzhou) -> i32 {
        let me = s.to_act();
        let placing = matches!(s.phase(), Phase::Place | Phase::Mark);
        let mut v = self.side(s, me, placing, true) - self.side(s, me.opponent(), placing, false);
        v += self.pending * owed(s) as i32;
        v
    }

    /// What `who` has: material, shapes, threats, mobility.
    fn side(&self, s: &Liuzhou, who: Player, placing: bool, to_act: bool) -> i32 {
        let own = s.stones(who);
        let opp = s.stones(who.opponent());
        let marked = s.marked();
        let unmarked = own & !marked;
        let empty = !(own | opp) & BOARD;
        let mut v = self.shape_member * shape_members(unmarked).count_ones() as i32;
        let holes = if placing {
            v += self.stone * (STONES_PER_PLAYER - (own & marked).count_ones()) as i32;
            let blocked = opp | marked;
            for w in SQUARES {
                if w & blocked == 0 {
                    v += self.open_square[((unmarked & w).count_ones() as usize).min(3)];
                }
            }
            for w in LINES {
                if w & blocked == 0 {
                    v += self.open_line[((unmarked & w).count_ones() as usize).min(5)];
                }
            }
            placement_holes(unmarked, empty).count_ones()
        } else {
            let n = own.count_ones() as i32;
            v += self.stone * n;
            let spare = n - s.rules().lose_below as i32;
            if spare < 3 {
                v -= self.danger * (3 - spare) * (3 - spare);
            }
            if n < 4 {
                v -= self.few_stones;
            }
            let (steps, step_holes) = steps_and_holes(own, empty);
            v += self.mobility * steps as i32;
            v += self.open_shape * (shape_members(own) & neighbours(empty)).count_ones() as i32;
            step_holes.count_ones()
        };
        v += self.hole * holes.min(3) as i32;
        if !to_act && holes >= 2 {
            v += self.double_threat;
        }
        v
    }
}

/// Selections the player to act owes at once: pending marks or captures, one forced, counter
/// or no-move removal.
fn owed(s: &Liuzhou) -> u32 {
    match s.phase() {
        Phase::Mark | Phase::Capture => s.pending() as u32,
        Phase::Forced | Phase::Counter => 1,
        Phase::Place | Phase::Move => 0,
    }
}

// ---- the searcher ----

const NO_ACTION: u8 = u8::MAX;

#[derive(Clone, Copy)]
struct TtEntry {
    key: u64,
    action: u8,
    depth: i8,
    bound: u8,
    score: i16,
}

impl Default for TtEntry {
    fn default() -> Self {
        TtEntry {
            key: 0,
            action: NO_ACTION,
            depth: 0,
            bound: 0,
            score: 0,
        }
    }
}

const EXACT: u8 = 1;
const LOWER: u8 = 2;
const UPPER: u8 = 3;

/// Ordering keys: the table's action, then actions that complete a shape, then blocks, then
/// killers, then history.
const ORDER_TT: i32 = 1 << 30;
const ORDER_SHAPE: i32 = 1 << 24;
const ORDER_BLOCK: i32 = 1 << 23;
const ORDER_KILLER: i32 = 1 << 22;

/// Progress after one completed iteration.
#[derive(Clone, Debug)]
pub struct SearchInfo {
    pub depth: u32,
    /// For the player to act at the root, in hundredths of a stone (see [`WIN`]).
    pub score: i32,
    pub nodes: u64,
    pub time: Duration,
    pub pv: Vec<Action>,
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `None` only when the game is over.
    pub best: Option<Action>,
    pub score: i32,
    /// Deepest completed iteration.
    pub depth: u32,
    pub nodes: u64,
}

/// `Some(n)`: the player to act wins (n > 0) or loses (n < 0) in n actions with best play.
pub fn plies_to_end(score: i32) -> Option<i32> {
    (score.abs() >= WIN - MAX_PLY as i32).then(|| score.signum() * (WIN - score.abs()))
}

/// The searcher. Keeps its transposition table between the searches of one game.
pub struct LiuzhouAlphaBeta {
    tt: Vec<TtEntry>,
    killers: [[u8; 2]; MAX_PLY],
    /// By player and action index.
    history: Vec<[i32; POLICY_SIZE]>,
    /// Per ply, reused: the legal actions, and the ones searched with their ordering keys.
    actions: Vec<Vec<Action>>,
    lists: Vec<Vec<(Action, i32)>>,
    weights: Weights,
    nodes: u64,
    budget: Budget,
    /// A root action searched first, and root actions not to choose
    /// ([`Searcher::search_with_first`]).
    first: Option<Action>,
    banned: Vec<Action>,
    /// The first action's score at the last completed iteration.
    first_completed: Option<i32>,
}

impl LiuzhouAlphaBeta {
    /// A searcher with a `hash_mb` MiB table and the default [`Weights`], or why there cannot
    /// be one.
    pub fn try_new(hash_mb: usize) -> Result<LiuzhouAlphaBeta, HashError> {
        if !(1..=MAX_HASH_MB).contains(&hash_mb) {
            return Err(HashError::Range(hash_mb));
        }
        let tt = alloc_table(hash_mb << 20).ok_or(HashError::Alloc(hash_mb))?;
        Ok(LiuzhouAlphaBeta {
            tt,
            killers: [[NO_ACTION; 2]; MAX_PLY],
            history: vec![[0; POLICY_SIZE]; 2],
            actions: (0..MAX_PLY + 1).map(|_| Vec::with_capacity(64)).collect(),
            lists: (0..MAX_PLY + 1).map(|_| Vec::with_capacity(64)).collect(),
            weights: Weights::default(),
            nodes: 0,
            budget: Budget::new(),
            first: None,
            banned: Vec::new(),
            first_completed: None,
        })
    }

    /// A searcher with a table of `hash_mb` MiB clamped to 1..=[`MAX_HASH_MB`]; panics if even
    /// that cannot be allocated.
    pub fn new(hash_mb: usize) -> LiuzhouAlphaBeta {
        LiuzhouAlphaBeta::try_new(hash_mb.clamp(1, MAX_HASH_MB))
            .expect("a transposition table of this size")
    }

    /// Evaluates with `weights` from now on.
    pub fn set_weights(&mut self, weights: Weights) {
        self.weights = weights;
        self.clear();
    }

    pub fn weights(&self) -> &Weights {
        &self.weights
    }

    /// A flag that stops the running search when set; whoever sets it clears it before the
    /// next search.
    pub fn stop_handle(&self) -> Arc<AtomicBool> {
        self.budget.stop_handle()
    }

    /// Forgets everything learned (a new game).
    pub fn clear(&mut self) {
        self.tt.fill(TtEntry::default());
        for h in self.history.iter_mut() {
            h.fill(0);
        }
        self.killers = [[NO_ACTION; 2]; MAX_PLY];
    }

    /// Searches `state` within `limits` (none set: depth 64), reporting each completed
    /// iteration to `on_info`. The first iteration always completes unless `nodes` or the stop
    /// flag ends it.
    pub fn search(
        &mut self,
        state: &Liuzhou,
        limits: SearchLimits,
        mut on_info: impl FnMut(&SearchInfo),
    ) -> SearchResult {
        self.nodes = 0;
        self.budget.start(limits);
        let max_depth = limits
            .depth
            .unwrap_or(DEFAULT_DEPTH)
            .clamp(1, MAX_PLY as u32 - 8);
        for h in self.history.iter_mut() {
            h.iter_mut().for_each(|v| *v /= 8);
        }
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        actions.retain(|a| !self.banned.contains(a));
        let mut result = SearchResult {
            best: actions.first().copied(),
            score: 0,
            depth: 0,
            nodes: 0,
        };
        if actions.is_empty() {
            return result;
        }
        let me = state.to_act();
        let mut root = Vec::new();
        self.order(state, &actions, 0, NO_ACTION, &mut root);
        result.best = Some(root[0].0);
        // A single legal action needs no search beyond a value for it.
        let max_depth = if root.len() == 1 { 1 } else { max_depth };

        for depth in 1..=max_depth {
            let d = depth as i32;
            if let Some(i) = root.iter().position(|e| Some(e.0) == self.first) {
                let e = root.remove(i);
                root.insert(0, e);
            }
            let mut first_score = None;
            let mut alpha = -INF;
            let mut best: Option<(usize, i32)> = None;
            for (i, entry) in root.iter_mut().enumerate() {
                let mut child = state.clone();
                child.play_unchecked(entry.0);
                let s = if i == 0 {
                    self.child(me, &child, d - 1, -INF, INF, 1)
                } else {
                    let s = self.child(me, &child, d - 1, alpha, alpha + 1, 1);
                    if s > alpha && !self.budget.aborted {
                        self.child(me, &child, d - 1, alpha, INF, 1)
                    } else {
                        s
                    }
                };
                if self.budget.aborted {
                    break;
                }
                if i == 0 && Some(entry.0) == self.first {
                    first_score = Some(s);
                }
                entry.1 = s;
                if s > alpha {
                    alpha = s;
                    best = Some((i, s));
                }
            }
            let complete = !self.budget.aborted;
            // An iteration cut short still counts for a move that beat the previous best
            // (searched first unless `first` is) in full.
            let beat_best = |i: usize| i > 0 && first_score.is_none();
            if complete {
                self.first_completed = first_score;
            }
            if let Some((i, s)) = best.filter(|&(i, _)| complete || beat_best(i) || depth == 1) {
                let a = root.remove(i).0;
                root.insert(0, (a, s));
                result.best = Some(a);
                result.score = s;
                if complete {
                    result.depth = depth;
                    let slot = self.slot(state.hash());
                    self.store(slot, state.hash(), a, s, d, EXACT, 0);
                }
            }
            if !complete {
                break;
            }
            // Later moves keep this iteration's order, best first.
            root[1..].sort_by_key(|&(_, s)| std::cmp::Reverse(s));
            on_info(&SearchInfo {
                depth,
                score: result.score,
                nodes: self.nodes,
                time: self.budget.elapsed(),
                pv: self.pv(state, depth as usize + 8),
            });
            if plies_to_end(result.score).is_some_and(|n| n.unsigned_abs() <= depth) {
                break;
            }
            if self.budget.no_time_for_another() {
                break;
            }
        }
        result.nodes = self.nodes;
        result
    }

    /// The principal variation, read from the table.
    fn pv(&self, state: &Liuzhou, max: usize) -> Vec<Action> {
        let mut pv = Vec::new();
        let mut s = state.clone();
        while pv.len() < max && s.outcome().is_none() {
            let e = self.tt[self.slot(s.hash())];
            let Some(a) = (e.key == s.hash())
                .then(|| Action::from_index(e.action as usize))
                .flatten()
                .filter(|&a| s.is_legal(a))
            else {
                break;
            };
            pv.push(a);
            s.play_unchecked(a);
        }
        pv
    }

    fn slot(&self, key: u64) -> usize {
        (key as usize) & (self.tt.len() - 1)
    }

    #[inline]
    fn out_of_time(&mut self) -> bool {
        self.budget.spent(self.nodes)
    }

    /// Searches `child` of a node where `parent` acted, and returns its score for `parent`:
    /// negated only when the child's player to act is the other one.
    #[inline]
    fn child(
        &mut self,
        parent: Player,
        child: &Liuzhou,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        if child.to_act() == parent {
            self.negamax(child, depth, alpha, beta, ply)
        } else {
            -self.negamax(child, depth, -beta, -alpha, ply)
        }
    }

    /// As [`Self::child`], in the quiescence search.
    #[inline]
    fn child_quiet(
        &mut self,
        parent: Player,
        child: &Liuzhou,
        alpha: i32,
        beta: i32,
        ply: usize,
        q: u32,
    ) -> i32 {
        if child.to_act() == parent {
            self.quiesce(child, alpha, beta, ply, q)
        } else {
            -self.quiesce(child, -beta, -alpha, ply, q)
        }
    }

    fn negamax(&mut self, s: &Liuzhou, depth: i32, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        if let Some(o) = s.outcome() {
            self.nodes += 1;
            return terminal(o, s.to_act(), ply);
        }
        if depth <= 0 {
            return self.quiesce(s, alpha, beta, ply, 0);
        }
        self.nodes += 1;
        if self.out_of_time() {
            return 0;
        }
        if ply >= MAX_PLY - 1 {
            return self.weights.evaluate(s);
        }
        let key = s.hash();
        let slot = self.slot(key);
        let e = self.tt[slot];
        let mut tt_action = NO_ACTION;
        if e.key == key {
            tt_action = e.action;
            if e.depth as i32 >= depth {
                let score = from_tt(e.score as i32, ply);
                let cut = match e.bound {
                    EXACT => true,
                    LOWER => score >= beta,
                    UPPER => score <= alpha,
                    _ => false,
                };
                if cut {
                    return score;
                }
            }
        }
        let me = s.to_act();
        let quiet_phase = matches!(s.phase(), Phase::Place | Phase::Move);
        let mut list = std::mem::take(&mut self.lists[ply]);
        let mut actions = std::mem::take(&mut self.actions[ply]);
        actions.clear();
        s.legal_actions(&mut actions);
        self.order(s, &actions, ply, tt_action, &mut list);
        self.actions[ply] = actions;
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_action = list[0].0;
        for (i, &(a, key)) in list.iter().enumerate() {
            let mut c = s.clone();
            c.play_unchecked(a);
            let quiet = key < ORDER_KILLER;
            let score = if i == 0 {
                self.child(me, &c, depth - 1, alpha, beta, ply + 1)
            } else {
                // Late quiet actions are searched one ply shallower first.
                let r = i32::from(quiet_phase && quiet && depth >= 3 && i >= 4);
                let mut score = self.child(me, &c, depth - 1 - r, alpha, alpha + 1, ply + 1);
                if r > 0 && score > alpha && !self.budget.aborted {
                    score = self.child(me, &c, depth - 1, alpha, alpha + 1, ply + 1);
                }
                if score > alpha && score < beta && !self.budget.aborted {
                    score = self.child(me, &c, depth - 1, alpha, beta, ply + 1);
                }
                score
            };
            if self.budget.aborted {
                self.lists[ply] = list;
                return 0;
            }
            if score > best {
                best = score;
                best_action = a;
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        if key < ORDER_BLOCK {
                            self.note_cutoff(me, a, depth, ply);
                        }
                        break;
                    }
                }
            }
        }
        self.lists[ply] = list;
        let bound = if best >= beta {
            LOWER
        } else if best > alpha0 {
            EXACT
        } else {
            UPPER
        };
        self.store(slot, key, best_action, best, depth, bound, ply);
        best
    }

    /// Remembers an action that cut and neither came from the table nor completes or blocks a
    /// shape: a killer of its ply (placements and steps), and history.
    fn note_cutoff(&mut self, me: Player, a: Action, depth: i32, ply: usize) {
        let idx = a.index() as u8;
        if !matches!(a.kind(), ActionKind::Select(_)) && self.killers[ply][0] != idx {
            self.killers[ply][1] = self.killers[ply][0];
            self.killers[ply][0] = idx;
        }
        let h = &mut self.history[me.index()][a.index()];
        *h = (*h + depth * depth).min(1 << 20);
    }

    /// Settles what is pending and plays out the actions that complete a shape, `q` actions
    /// past the horizon. Where a player places or steps it may stand on the static value;
    /// where it owes a selection it must make one (the same player acting again is no horizon).
    fn quiesce(&mut self, s: &Liuzhou, mut alpha: i32, beta: i32, ply: usize, q: u32) -> i32 {
        self.nodes += 1;
        if let Some(o) = s.outcome() {
            return terminal(o, s.to_act(), ply);
        }
        if self.out_of_time() {
            return 0;
        }
        let me = s.to_act();
        let mut actions = std::mem::take(&mut self.actions[ply]);
        actions.clear();
        s.legal_actions(&mut actions);
        let selecting = matches!(actions[0].kind(), ActionKind::Select(_));
        let mut best = -INF;
        if !selecting || q >= QUIESCENCE_PLIES || ply >= MAX_PLY - 1 {
            let stand = self.weights.evaluate(s);
            if selecting || stand >= beta || q >= QUIESCENCE_PLIES || ply >= MAX_PLY - 1 {
                self.actions[ply] = actions;
                return stand;
            }
            best = stand;
            alpha = alpha.max(stand);
        }
        let mut list = std::mem::take(&mut self.lists[ply]);
        self.order(s, &actions, ply, NO_ACTION, &mut list);
        self.actions[ply] = actions;
        // Beyond the horizon a placement or step is searched only if it completes a shape.
        if !selecting {
            list.retain(|&(_, k)| k >= ORDER_SHAPE);
        }
        for &(a, _) in list.iter() {
            let mut c = s.clone();
            c.play_unchecked(a);
            let score = self.child_quiet(me, &c, alpha, beta, ply + 1, q + 1);
            if self.budget.aborted {
                self.lists[ply] = list;
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        self.lists[ply] = list;
        best
    }

    /// `actions` of `s` with their ordering keys, best first (see the `ORDER_` constants).
    fn order(
        &self,
        s: &Liuzhou,
        actions: &[Action],
        ply: usize,
        tt_action: u8,
        list: &mut Vec<(Action, i32)>,
    ) {
        list.clear();
        let me = s.to_act();
        let own = s.stones(me);
        let opp = s.stones(me.opponent());
        let marked = s.marked();
        let history = &self.history[me.index()];
        let killers = self.killers.get(ply).copied().unwrap_or([NO_ACTION; 2]);
        let selecting = actions
            .first()
            .is_some_and(|a| matches!(a.kind(), ActionKind::Select(_)));
        // Points next to which the victim of a selection can step into a shape.
        let victim_holes = if selecting && s.phase() != Phase::Mark {
            steps_and_holes(opp, !(own | opp) & BOARD).1
        } else {
            0
        };
        for &a in actions {
            let idx = a.index() as u8;
            let h = history[a.index()];
            let quiet = || {
                if killers.contains(&idx) {
                    ORDER_KILLER + h
                } else {
                    h
                }
            };
            let key = if idx == tt_action {
                ORDER_TT
            } else {
                match a.kind() {
                    ActionKind::Place(p) => {
                        let bit = 1u64 << p;
                        if completes((own & !marked) | bit, p) {
                            ORDER_SHAPE
                        } else if completes((opp & !marked) | bit, p) {
                            ORDER_BLOCK
                        } else {
                            quiet()
                        }
                    }
                    ActionKind::Step { from, to } => {
                        if completes(own ^ (1 << from) ^ (1 << to), to) {
                            ORDER_SHAPE
                        } else if completes(opp | (1 << to), to) {
                            ORDER_BLOCK
                        } else {
                            quiet()
                        }
                    }
                    ActionKind::Select(p) => {
                        ORDER_KILLER + target_weight(s, p, victim_holes) * 64 + h / 16
                    }
                }
            };
            list.push((a, key));
        }
        list.sort_unstable_by_key(|&(_, k)| std::cmp::Reverse(k));
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        slot: usize,
        key: u64,
        a: Action,
        score: i32,
        depth: i32,
        bound: u8,
        ply: usize,
    ) {
        let e = &mut self.tt[slot];
        if e.key != key || depth >= e.depth as i32 - 2 || bound == EXACT {
            *e = TtEntry {
                key,
                action: a.index() as u8,
                depth: depth.clamp(-1, 100) as i8,
                bound,
                score: to_tt(score, ply) as i16,
            };
        }
    }
}

/// How much taking (or marking) the opponent's stone on `p` hurts them: the shapes it could
/// still help form, and (after placement) whether it stands next to `victim_holes`, the points
/// where the victim's next step completes a shape.
fn target_weight(s: &Liuzhou, p: u8, victim_holes: u64) -> i32 {
    let me = s.to_act();
    let victim = s.stones(me.opponent());
    let blocked = s.stones(me) | s.marked();
    let usable = victim & !s.marked();
    let bit = 1u64 << p;
    let mut w = 0;
    for win in SQUARES {
        if win & bit != 0 && win & blocked == 0 {
            let n = (usable & win).count_ones() as i32;
            w += n * n;
        }
    }
    for line in LINES {
        if line & bit != 0 && line & blocked == 0 {
            let n = (usable & line).count_ones() as i32;
            w += n * n / 3;
        }
    }
    if s.phase() != Phase::Mark {
        let empty = !(victim | s.stones(me)) & BOARD;
        if neighbours(bit) & victim_holes != 0 {
            w += 12;
        }
        w += (neighbours(bit) & empty).count_ones() as i32;
    }
    w
}

fn terminal(o: Outcome, to_act: Player, ply: usize) -> i32 {
    match o {
        Outcome::Draw => 0,
        Outcome::Win(p) if p == to_act => WIN - ply as i32,
        Outcome::Win(_) => -(WIN - ply as i32),
    }
}

/// A score as an expected result in −1..=1: ±1 for a decided game, otherwise a tanh that
/// makes a stone up about 0.32 and three stones up about 0.76.
pub fn score_value(score: i32) -> f32 {
    if plies_to_end(score).is_some() {
        score.signum() as f32
    } else {
        (score as f32 / SCORE_SCALE).tanh()
    }
}

/// Score units per unit of `atanh(value)`.
const SCORE_SCALE: f32 = 300.0;

// ---- the agent ----

/// The searcher as an [`Agent`].
pub type LiuzhouAlphaBetaAgent = AlphaBetaPlayer<LiuzhouAlphaBeta>;

impl LiuzhouAlphaBetaAgent {
    /// Evaluates with `weights` (tuning matches).
    pub fn with_weights(mut self, weights: Weights) -> Self {
        self.searcher_mut().set_weights(weights);
        self
    }
}

impl Searcher for LiuzhouAlphaBeta {
    type Game = Liuzhou;

    fn try_new(hash_mb: usize) -> Result<LiuzhouAlphaBeta, HashError> {
        LiuzhouAlphaBeta::try_new(hash_mb)
    }

    fn clear(&mut self) {
        LiuzhouAlphaBeta::clear(self)
    }

    fn choose(&mut self, state: &Liuzhou, limits: SearchLimits) -> Option<Explanation<Action>> {
        let mut pv = Vec::new();
        let result = self.search(state, limits, |info| pv.clone_from(&info.pv));
        let value = score_value(result.score);
        Some(explanation(result.best?, pv, value, result.nodes))
    }

    fn search_with_first(
        &mut self,
        state: &Liuzhou,
        limits: SearchLimits,
        first: Action,
        banned: &[Action],
    ) -> FirstSearch<Action> {
        self.first = Some(first);
        self.banned = banned.to_vec();
        self.first_completed = None;
        let result = self.search(state, limits, |_| {});
        self.first = None;
        self.banned.clear();
        FirstSearch {
            best: result.best,
            score: result.score,
            first: self.first_completed.take(),
            depth: result.depth,
            nodes: result.nodes,
        }
    }

    fn value(score: i32) -> f32 {
        score_value(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(names: &[&str]) -> u64 {
        names.iter().fold(0, |b, n| {
            let n = n.as_bytes();
            b | 1u64 << ((n[1] - b'1') * 6 + (n[0] - b'a'))
        })
    }

    #[test]
    fn windows_and_shapes() {
        assert_eq!(SQUARES[0], pts(&["a1", "b1", "a2", "b2"]));
        assert_eq!(SQUARES[24], pts(&["e5", "f5", "e6", "f6"]));
        assert_eq!(LINES[6], pts(&["a1", "a2", "a3", "a4", "a5", "a6"]));
        let sq = pts(&["c3", "d3", "c4", "d4", "f6"]);
        assert_eq!(shape_members(sq), pts(&["c3", "d3", "c4", "d4"]));
        assert!(completes(sq, 14));
        assert!(!completes(sq, 35));
        // No wrap-around between files f and a.
        assert_eq!(shape_members(pts(&["f1", "a2", "f2", "a3"])), 0);
        assert_eq!(
            placement_holes(pts(&["c3", "d3", "c4"]), BOARD & !pts(&["c3", "d3", "c4"])),
            pts(&["d4"])
        );
        // b4 steps right onto c4 and completes c3 d3 c4 d4.
        let own = pts(&["c3", "d3", "d4", "b4"]);
        let (steps, holes) = steps_and_holes(own, BOARD & !own);
        assert_eq!(holes, pts(&["c4"]));
        assert_eq!(steps, 4 + 2 + 3 + 3);
        assert_eq!(neighbours(pts(&["a1"])), pts(&["a2", "b1"]));
    }

    #[test]
    fn decisive_scores_round_trip_through_the_table() {
        for (score, ply) in [(WIN - 5, 3), (-WIN + 7, 2), (120, 9)] {
            assert_eq!(from_tt(to_tt(score, ply), ply), score);
        }
        assert_eq!(plies_to_end(WIN - 3), Some(3));
        assert_eq!(plies_to_end(-WIN + 4), Some(-4));
        assert_eq!(plies_to_end(500), None);
        assert_eq!(score_value(WIN - 1), 1.0);
        assert!(score_value(100) > 0.3 && score_value(100) < 0.35);
    }
}
