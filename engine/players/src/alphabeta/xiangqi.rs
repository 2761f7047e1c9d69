//! An alpha-beta searcher in the spirit of elephantfish (tables and code written here afresh):
//! iterative deepening, principal-variation search, a transposition table, null-move pruning,
//! late-move reductions, quiescence on captures, and an evaluation of material plus
//! piece-square bonuses. It is the yardstick the learned models must beat, and an [`Agent`].
//!
//! Repetitions inside the search are judged at the second occurrence by the game's own
//! verdict ([`games::xiangqi::repetition::judge`], under the game's [`RepetitionRule`]) on the
//! moves of the cycle: perpetual check loses, and under the Asian rules perpetual chase too;
//! any other repetition scores as a draw, and so does the natural limit.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use games::xiangqi::board::*;
use games::xiangqi::repetition::{self, CycleMove};
use games::xiangqi::{Move, RepetitionRule, Side, Verdict, Xiangqi, NATURAL_LIMIT};
use games::Explanation;

use super::core::{
    alloc_table, explanation, from_tt, to_tt, AlphaBetaPlayer, Budget, FirstSearch, Searcher,
};
pub use super::core::{HashError, SearchLimits, MAX_HASH_MB, MAX_PLY};

/// Scores at or beyond `MATE - MAX_PLY` are mates (in `MATE - score` plies).
pub const MATE: i32 = super::core::DECISIVE;
/// A win by the perpetual check or chase rules (not a mate, but as final).
pub const RULE_WIN: i32 = 25_000;
const INF: i32 = 32_000;

/// Progress after one completed iteration.
#[derive(Clone, Debug)]
pub struct SearchInfo {
    pub depth: u32,
    /// From the mover's point of view, in centipawns (see [`MATE`]).
    pub score: i32,
    pub nodes: u64,
    pub time: Duration,
    pub pv: Vec<Move>,
}

impl SearchInfo {
    /// `Some(n)`: mate in n moves (negative: being mated).
    pub fn mate_in(&self) -> Option<i32> {
        if self.score.abs() >= MATE - MAX_PLY as i32 {
            let plies = MATE - self.score.abs();
            let moves = (plies + 1) / 2;
            Some(if self.score > 0 { moves } else { -moves })
        } else {
            None
        }
    }
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub best: Option<Move>,
    pub score: i32,
    pub depth: u32,
    pub nodes: u64,
}

#[derive(Clone, Copy, Default)]
struct TtEntry {
    key: u64,
    mv: Move,
    score: i16,
    depth: i8,
    bound: u8,
}

const EXACT: u8 = 1;
const LOWER: u8 = 2;
const UPPER: u8 = 3;

/// One position on the path from the game's last capture to the current node.
#[derive(Clone, Copy)]
struct PathEntry {
    key: u64,
    in_check: bool,
    /// The move into this position ([`Move::NULL`] for none, or a null move).
    mv: Move,
    /// Plies since the last capture at this position.
    clock: u32,
}

// ---- evaluation ----

/// Base value of each kind (index = kind).
const VALUE: [i32; 8] = [0, 0, 120, 120, 270, 600, 285, 30];

/// A piece's value on `(r, f)` in its own frame (rank 0 = its back rank).
const fn piece_square(kind: u8, r: i32, f: i32) -> i32 {
    let cf = if f > 4 { f - 4 } else { 4 - f };
    let central = 4 - cf;
    match kind {
        KING => {
            if r == 0 {
                0
            } else {
                -8 * r
            }
        }
        ADVISOR | BISHOP => VALUE[kind as usize] + if f == 4 { 6 } else { 0 },
        KNIGHT => {
            let adv = if r > 7 { 14 - r } else { r };
            VALUE[KNIGHT as usize] + 6 * central + 7 * adv - if f == 0 || f == 8 { 12 } else { 0 }
        }
        ROOK => VALUE[ROOK as usize] + 3 * r + if r == 6 || r == 7 { 12 } else { 0 } + central,
        CANNON => {
            VALUE[CANNON as usize]
                + if f == 4 { 16 } else { 0 }
                + if r == 2 || r == 9 { 6 } else { 0 }
                + 2 * central
        }
        _ => {
            if r < 5 {
                VALUE[PAWN as usize] + if r == 4 { 8 } else { 0 }
            } else if r == 9 {
                VALUE[PAWN as usize] + 20
            } else {
                let palace = if r >= 6 && cf <= 1 { 25 } else { 0 };
                VALUE[PAWN as usize] + 45 + 6 * central + palace
            }
        }
    }
}

const fn pst_table() -> [[[i32; 256]; 8]; 2] {
    let mut t = [[[0; 256]; 8]; 2];
    let mut kind = 1;
    while kind < 8 {
        let mut r = 0;
        while r < 10 {
            let mut f = 0;
            while f < 9 {
                let v = piece_square(kind as u8, r as i32, f as i32);
                t[0][kind][square(r, f) as usize] = v;
                t[1][kind][square(9 - r, f) as usize] = v;
                f += 1;
            }
            r += 1;
        }
        kind += 1;
    }
    t
}

static PST: [[[i32; 256]; 8]; 2] = pst_table();

/// Static evaluation from the point of view of the side to move.
pub fn evaluate(pos: &Position) -> i32 {
    let mut score = [0i32; 2];
    for side in [Side::Red, Side::Black] {
        for sq in pos.pieces(side) {
            score[side as usize] +=
                PST[side as usize][kind_of(pos.piece_at(sq)) as usize][sq as usize];
        }
    }
    let us = pos.side() as usize;
    // A small bonus for the move keeps odd and even iterations closer.
    score[us] - score[us ^ 1] + 10
}

fn mvv_lva(pos: &Position, m: Move) -> i32 {
    let victim = VALUE[kind_of(pos.piece_at(m.to())) as usize];
    let attacker = VALUE[kind_of(pos.piece_at(m.from())) as usize];
    victim * 8 - attacker / 8
}

/// The searcher. Keeps its transposition table between searches of one game.
pub struct AlphaBeta {
    tt: Vec<TtEntry>,
    killers: [[Move; 2]; MAX_PLY],
    history: Vec<i32>,
    path: Vec<PathEntry>,
    /// The game's repetition rule, taken at the start of each search.
    rule: RepetitionRule,
    /// Scratch space for the moves of a repetition cycle.
    cycle: Vec<CycleMove>,
    nodes: u64,
    budget: Budget,
    /// Root moves the next searches must not play (UCCI's `banmoves`).
    excluded: Vec<Move>,
    /// A root move searched first, in the full window (see [`Searcher::search_with_first`]).
    first: Move,
    /// Its score in the running iteration, and at the last completed one.
    first_score: Option<i32>,
    first_completed: Option<i32>,
}

impl AlphaBeta {
    /// A searcher with a transposition table of about `hash_mb` MiB, clamped to
    /// 1..=[`MAX_HASH_MB`]. Panics if even that cannot be allocated; faces that take a size
    /// from a user call [`AlphaBeta::try_new`].
    pub fn new(hash_mb: usize) -> AlphaBeta {
        AlphaBeta::try_new(hash_mb.clamp(1, MAX_HASH_MB))
            .expect("a transposition table of this size")
    }

    /// A searcher with a `hash_mb` MiB table, or why there cannot be one.
    pub fn try_new(hash_mb: usize) -> Result<AlphaBeta, HashError> {
        if !(1..=MAX_HASH_MB).contains(&hash_mb) {
            return Err(HashError::Range(hash_mb));
        }
        let tt = alloc_table(hash_mb << 20).ok_or(HashError::Alloc(hash_mb))?;
        Ok(AlphaBeta::with_table(tt))
    }

    fn with_table(tt: Vec<TtEntry>) -> AlphaBeta {
        AlphaBeta {
            tt,
            killers: [[Move::NULL; 2]; MAX_PLY],
            history: vec![0; 8100],
            path: Vec::with_capacity(256),
            rule: RepetitionRule::default(),
            cycle: Vec::with_capacity(128),
            nodes: 0,
            budget: Budget::new(),
            excluded: Vec::new(),
            first: Move::NULL,
            first_score: None,
            first_completed: None,
        }
    }

    /// Root moves the searches to come must not play (empty: none); a position whose legal
    /// moves are all excluded gets no best move.
    pub fn set_excluded(&mut self, moves: &[Move]) {
        self.excluded = moves.to_vec();
    }

    /// A flag that stops the running search when set (UCI `stop`). Whoever sets it clears it
    /// before the next search.
    pub fn stop_handle(&self) -> Arc<AtomicBool> {
        self.budget.stop_handle()
    }

    /// Makes `flag` the stop flag (shared with a protocol loop).
    pub fn set_stop_handle(&mut self, flag: Arc<AtomicBool>) {
        self.budget.set_stop_handle(flag);
    }

    /// Forgets everything learned (new game).
    pub fn clear(&mut self) {
        self.tt.fill(TtEntry::default());
        self.history.fill(0);
        self.killers = [[Move::NULL; 2]; MAX_PLY];
    }

    /// Searches `game` within `limits`, reporting each completed iteration to `on_info`.
    /// `best` is `None` only when the game is over.
    pub fn search(
        &mut self,
        game: &Xiangqi,
        limits: SearchLimits,
        mut on_info: impl FnMut(&SearchInfo),
    ) -> SearchResult {
        self.nodes = 0;
        self.budget.start(limits);
        let max_depth = limits.depth.unwrap_or(64).clamp(1, MAX_PLY as u32 - 8);
        for h in self.history.iter_mut() {
            *h /= 8;
        }

        let mut root_moves = game.legal_moves();
        root_moves.retain(|m| !self.excluded.contains(&m));
        let mut result = SearchResult {
            best: root_moves.as_slice().first().copied(),
            score: 0,
            depth: 0,
            nodes: 0,
        };
        if root_moves.is_empty() {
            return result;
        }
        let mut pos = game.position().clone();
        self.path.clear();
        let clock0 = game.halfmove_clock();
        self.rule = game.repetition_rule();
        let hist: Vec<((u64, bool), Move)> = game.history().zip(game.history_moves()).collect();
        let len = hist.len() as u32;
        for (i, &((key, in_check), mv)) in hist.iter().enumerate() {
            self.path.push(PathEntry {
                key,
                in_check,
                mv,
                clock: clock0.saturating_sub(len - 1 - i as u32),
            });
        }

        for depth in 1..=max_depth {
            self.first_score = None;
            let score = self.root(&mut pos, depth as i32, clock0);
            if self.budget.aborted && depth > 1 {
                break;
            }
            self.first_completed = self.first_score;
            let mut pv = self.pv(&mut pos, depth as usize);
            // The table's root move may be an excluded one left by an earlier search.
            if pv.first().is_some_and(|m| self.excluded.contains(m)) {
                pv.clear();
            }
            if let Some(&m) = pv.first() {
                result.best = Some(m);
            }
            result.score = score;
            result.depth = depth;
            on_info(&SearchInfo {
                depth,
                score,
                nodes: self.nodes,
                time: self.budget.elapsed(),
                pv,
            });
            if self.budget.aborted || score.abs() >= MATE - depth as i32 {
                break;
            }
            if self.budget.no_time_for_another() {
                break;
            }
        }
        result.nodes = self.nodes;
        result
    }

    /// The principal variation, read from the transposition table.
    fn pv(&self, pos: &mut Position, max: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut undos = Vec::new();
        let mut seen = Vec::new();
        while pv.len() < max {
            let e = self.tt[(pos.key() as usize) & (self.tt.len() - 1)];
            if e.key != pos.key() || e.mv == Move::NULL || seen.contains(&pos.key()) {
                break;
            }
            let m = e.mv;
            if !pos.is_legal(m) {
                break;
            }
            seen.push(pos.key());
            undos.push((m, pos.make(m)));
            pv.push(m);
        }
        while let Some((m, u)) = undos.pop() {
            pos.unmake(m, u);
        }
        pv
    }

    fn root(&mut self, pos: &mut Position, depth: i32, clock: u32) -> i32 {
        self.negamax(pos, depth, -INF, INF, 0, clock, true)
    }

    #[inline]
    fn out_of_time(&mut self) -> bool {
        self.budget.spent(self.nodes)
    }

    /// The rules' verdict on a repetition of the current position `pos` (the last path entry),
    /// from the mover's point of view, if the position occurred before since the last capture.
    fn repetition(&mut self, pos: &Position, ply: usize) -> Option<i32> {
        let n = self.path.len() - 1;
        let cur = self.path[n];
        let back = (cur.clock as usize).min(n);
        let mut i = n;
        while i >= 2 && n - i + 2 <= back {
            i -= 2;
            if self.path[i].key == cur.key {
                // The moves into positions i+1..=n, none a capture or a null move (the clock
                // counts from both).
                self.cycle.clear();
                self.cycle
                    .extend(self.path[i + 1..].iter().map(|e| CycleMove {
                        mv: e.mv,
                        gave_check: e.in_check,
                    }));
                return Some(match repetition::judge(self.rule, pos, &self.cycle) {
                    Verdict::Draw => 0,
                    Verdict::PerpetualCheck { loser } | Verdict::PerpetualChase { loser } => {
                        if loser == pos.side() {
                            -RULE_WIN + ply as i32
                        } else {
                            RULE_WIN - ply as i32
                        }
                    }
                });
            }
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        pos: &mut Position,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        clock: u32,
        allow_null: bool,
    ) -> i32 {
        self.nodes += 1;
        if self.out_of_time() {
            return 0;
        }
        let us = pos.side();
        let in_check = self.path.last().is_some_and(|e| e.in_check);
        if ply > 0 {
            if let Some(score) = self.repetition(pos, ply) {
                return score;
            }
            if clock >= NATURAL_LIMIT {
                return 0;
            }
            // Mate-distance pruning.
            let alpha2 = alpha.max(-MATE + ply as i32);
            let beta2 = beta.min(MATE - ply as i32 - 1);
            if alpha2 >= beta2 {
                return alpha2;
            }
        }
        if ply >= MAX_PLY - 2 {
            return evaluate(pos);
        }
        let depth = if in_check { depth.max(0) + 1 } else { depth };
        if depth <= 0 {
            return self.quiesce(pos, alpha, beta, ply);
        }
        let pv_node = beta - alpha > 1;

        let slot = (pos.key() as usize) & (self.tt.len() - 1);
        let entry = self.tt[slot];
        let mut tt_move = Move::NULL;
        if entry.key == pos.key() {
            tt_move = entry.mv;
            if ply > 0 && !pv_node && entry.depth as i32 >= depth {
                let s = from_tt(entry.score as i32, ply);
                let cut = match entry.bound {
                    EXACT => true,
                    LOWER => s >= beta,
                    _ => s <= alpha,
                };
                if cut {
                    return s;
                }
            }
        }

        // Null move: if passing still holds beta, a real move will too (not in check, not
        // in bare endgames where zugzwang is common).
        if allow_null && !in_check && !pv_node && depth >= 3 && beta.abs() < RULE_WIN - 200 {
            let big = pos
                .pieces(us)
                .filter(|&s| matches!(kind_of(pos.piece_at(s)), ROOK | KNIGHT | CANNON))
                .count();
            if big > 0 && evaluate(pos) >= beta {
                let r = if depth >= 6 { 3 } else { 2 };
                pos.make_null();
                self.path.push(PathEntry {
                    key: pos.key(),
                    in_check: false,
                    mv: Move::NULL,
                    clock: 0,
                });
                let s = -self.negamax(pos, depth - 1 - r, -beta, -beta + 1, ply + 1, 0, false);
                self.path.pop();
                pos.unmake_null();
                if self.budget.aborted {
                    return 0;
                }
                if s >= beta {
                    return if s >= RULE_WIN - 200 { beta } else { s };
                }
            }
        }

        let mut list = MoveList::new();
        pos.gen_legal(&mut list);
        if list.is_empty() {
            // Checkmate and stalemate both lose.
            return -MATE + ply as i32;
        }
        if ply == 0 && !self.excluded.is_empty() {
            list.retain(|m| !self.excluded.contains(&m));
            if list.is_empty() {
                return -MATE;
            }
        }
        let mut scores = [0i32; 160];
        for (i, &m) in list.as_slice().iter().enumerate() {
            scores[i] = if ply == 0 && m == self.first {
                i32::MAX
            } else if m == tt_move {
                1 << 30
            } else if pos.is_capture(m) {
                (1 << 20) + mvv_lva(pos, m)
            } else if ply < MAX_PLY && self.killers[ply][0] == m {
                (1 << 19) + 1
            } else if ply < MAX_PLY && self.killers[ply][1] == m {
                1 << 19
            } else {
                self.history[index90(m.from()) * 90 + index90(m.to())]
            };
        }

        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = Move::NULL;
        let n = list.len();
        for k in 0..n {
            let m = pick_next(&mut list, &mut scores[..n], k);
            let capture = pos.is_capture(m);

            let undo = pos.make(m);
            let gives_check = pos.in_check(pos.side());
            self.path.push(PathEntry {
                key: pos.key(),
                in_check: gives_check,
                mv: m,
                clock: if capture { 0 } else { clock + 1 },
            });
            let child_clock = if capture { 0 } else { clock + 1 };
            let mut s;
            if k == 0 {
                s = -self.negamax(pos, depth - 1, -beta, -alpha, ply + 1, child_clock, true);
            } else {
                // Late quiet moves are searched shallower first.
                let reduce = if depth >= 3 && k >= 4 && !capture && !gives_check && !in_check {
                    1 + (k >= 12) as i32
                } else {
                    0
                };
                s = -self.negamax(
                    pos,
                    depth - 1 - reduce,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    child_clock,
                    true,
                );
                if s > alpha && (reduce > 0 || s < beta) {
                    s = -self.negamax(pos, depth - 1, -beta, -alpha, ply + 1, child_clock, true);
                }
            }
            self.path.pop();
            pos.unmake(m, undo);
            if self.budget.aborted {
                return 0;
            }
            if ply == 0 && m == self.first {
                self.first_score = Some(s);
            }
            if s > best {
                best = s;
                best_move = m;
                if s > alpha {
                    alpha = s;
                    if ply == 0 {
                        // Keep the root's best move in the table even if a later iteration is
                        // cut short.
                        self.store(slot, pos.key(), m, s, depth, LOWER, ply);
                    }
                    if s >= beta {
                        if !capture && ply < MAX_PLY {
                            if self.killers[ply][0] != m {
                                self.killers[ply][1] = self.killers[ply][0];
                                self.killers[ply][0] = m;
                            }
                            let h = &mut self.history[index90(m.from()) * 90 + index90(m.to())];
                            *h = (*h + depth * depth).min(1 << 18);
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            LOWER
        } else if best > alpha0 {
            EXACT
        } else {
            UPPER
        };
        self.store(slot, pos.key(), best_move, best, depth, bound, ply);
        best
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        slot: usize,
        key: u64,
        mv: Move,
        score: i32,
        depth: i32,
        bound: u8,
        ply: usize,
    ) {
        let e = &mut self.tt[slot];
        if e.key != key || depth >= e.depth as i32 - 2 || bound == EXACT {
            *e = TtEntry {
                key,
                mv,
                score: to_tt(score, ply) as i16,
                depth: depth.clamp(-1, 100) as i8,
                bound,
            };
        }
    }

    fn quiesce(&mut self, pos: &mut Position, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.nodes += 1;
        if self.out_of_time() {
            return 0;
        }
        let in_check = self.path.last().is_some_and(|e| e.in_check);
        let mut list = MoveList::new();
        let mut best;
        if in_check && ply < MAX_PLY - 2 {
            // In check every evasion is searched; none means mate.
            pos.gen_legal(&mut list);
            if list.is_empty() {
                return -MATE + ply as i32;
            }
            best = -INF;
        } else {
            best = evaluate(pos);
            if best >= beta || ply >= MAX_PLY - 2 {
                return best;
            }
            alpha = alpha.max(best);
            pos.gen_captures(&mut list);
            list.retain(|m| pos.is_safe(m, false));
        }
        let mut scores = [0i32; 160];
        for (i, &m) in list.as_slice().iter().enumerate() {
            scores[i] = if pos.is_capture(m) {
                mvv_lva(pos, m)
            } else {
                -1000
            };
        }
        let n = list.len();
        for k in 0..n {
            let m = pick_next(&mut list, &mut scores[..n], k);
            let undo = pos.make(m);
            let gives_check = pos.in_check(pos.side());
            self.path.push(PathEntry {
                key: pos.key(),
                in_check: gives_check,
                mv: m,
                clock: 0,
            });
            let s = -self.quiesce(pos, -beta, -alpha, ply + 1);
            self.path.pop();
            pos.unmake(m, undo);
            if self.budget.aborted {
                return 0;
            }
            if s > best {
                best = s;
                if s > alpha {
                    alpha = s;
                    if s >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

/// The alpha-beta searcher as an [`Agent`].
pub type AlphaBetaAgent = AlphaBetaPlayer<AlphaBeta>;

/// A score as an expected result in −1..=1: ±1 for a mate or a rule win; otherwise a tanh of
/// the material-and-position score that makes a rook up (600) about 0.94 and a pawn across the
/// river (about 75) about 0.2.
pub fn score_value(score: i32) -> f32 {
    if score.abs() >= RULE_WIN - MAX_PLY as i32 {
        score.signum() as f32
    } else {
        (score as f32 / SCORE_SCALE).tanh()
    }
}

/// The inverse of [`score_value`] short of certainty: an expected result as a score in the
/// same units (what a UCI `score cp` reports for a search that yields values).
pub fn value_score(value: f32) -> i32 {
    (SCORE_SCALE * value.clamp(-0.999, 0.999).atanh()).round() as i32
}

/// Score units per unit of `atanh(value)`.
const SCORE_SCALE: f32 = 350.0;

impl Searcher for AlphaBeta {
    type Game = Xiangqi;

    fn try_new(hash_mb: usize) -> Result<AlphaBeta, HashError> {
        AlphaBeta::try_new(hash_mb)
    }

    fn clear(&mut self) {
        AlphaBeta::clear(self)
    }

    fn choose(&mut self, state: &Xiangqi, limits: SearchLimits) -> Option<Explanation<Move>> {
        let mut pv = Vec::new();
        let result = self.search(state, limits, |info| pv.clone_from(&info.pv));
        let value = score_value(result.score);
        Some(explanation(result.best?, pv, value, result.nodes))
    }

    fn search_with_first(
        &mut self,
        state: &Xiangqi,
        limits: SearchLimits,
        first: Move,
        banned: &[Move],
    ) -> FirstSearch<Move> {
        let excluded = std::mem::replace(&mut self.excluded, banned.to_vec());
        self.first = first;
        self.first_completed = None;
        let result = self.search(state, limits, |_| {});
        self.first = Move::NULL;
        self.excluded = excluded;
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

/// Moves the best-scored of the moves from `k` on to place `k` and returns it: one step of a
/// selection sort, since the first moves usually cut and sorting them all would be wasted.
fn pick_next(list: &mut MoveList, scores: &mut [i32], k: usize) -> Move {
    let mut best = k;
    for j in k + 1..scores.len() {
        if scores[j] > scores[best] {
            best = j;
        }
    }
    list.as_mut_slice().swap(k, best);
    scores.swap(k, best);
    list.as_slice()[k]
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::{Agent, Game};
    use std::sync::atomic::Ordering;

    #[test]
    fn the_agent_explains_its_score_line_and_nodes() {
        let mut agent = AlphaBetaAgent::new(SearchLimits::depth(3), 1);
        assert_eq!(agent.explain(), None);
        // Red's rooks on e8 and a7 against the general on d9: a7a9 and a7d7 both mate.
        let mate = Xiangqi::from_fen("3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 0 1").unwrap();
        let best = agent.select_action(&mate).unwrap();
        let e = agent.explain().unwrap();
        assert!(["a7a9", "a7d7"].contains(&mate.format_action(best).as_str()));
        assert_eq!(e.value, Some(1.0), "a mate is a sure win");
        assert_eq!(e.pv.first(), Some(&best));
        assert!(e.nodes.unwrap() > 0);
        // Material decides the sign and the size.
        assert!(score_value(600) > 0.9 && score_value(-600) < -0.9);
        assert!(score_value(75).abs() < 0.25 && score_value(0) == 0.0);
        for cp in [-1000, -600, -75, 0, 75, 600, 1000] {
            assert!((value_score(score_value(cp)) - cp).abs() <= 2, "{cp}");
        }
        agent.new_game(&Xiangqi::start()).unwrap();
        assert_eq!(agent.explain(), None, "a new game forgets the last one");
    }

    #[test]
    fn a_table_too_large_is_an_error_not_an_abort() {
        assert!(alloc_table::<TtEntry>(usize::MAX).is_none());
        assert!(alloc_table::<TtEntry>(isize::MAX as usize).is_none());
        assert_eq!(AlphaBeta::try_new(0).err(), Some(HashError::Range(0)));
        assert_eq!(
            AlphaBeta::try_new(MAX_HASH_MB + 1).err(),
            Some(HashError::Range(MAX_HASH_MB + 1))
        );
        let tt = AlphaBeta::try_new(1).unwrap().tt;
        assert!(tt.len().is_power_of_two() && tt.len() * std::mem::size_of::<TtEntry>() <= 1 << 20);
    }

    fn best(fen: &str, limits: SearchLimits) -> (String, SearchResult) {
        let g = Xiangqi::from_fen(fen).unwrap();
        let r = AlphaBeta::new(4).search(&g, limits, |_| {});
        (g.format_action(r.best.unwrap()), r)
    }

    #[test]
    fn excluded_root_moves_are_never_chosen() {
        // Mate in one by a7a9 (and a7d7); excluded, the search finds another move (and a table
        // that still holds a7a9 from the first search does not bring it back).
        let g = Xiangqi::from_fen("3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 0 1").unwrap();
        let mut ab = AlphaBeta::new(4);
        let mate = ab.search(&g, SearchLimits::depth(4), |_| {}).best.unwrap();
        assert_eq!(g.format_action(mate), "a7a9");
        ab.set_excluded(&[mate]);
        let r = ab.search(&g, SearchLimits::depth(4), |_| {});
        assert!(r.best.is_some_and(|m| m != mate), "{:?}", r.best);
        let all = g.legal_moves();
        ab.set_excluded(all.as_slice());
        assert_eq!(ab.search(&g, SearchLimits::depth(3), |_| {}).best, None);
        ab.set_excluded(&[]);
        let r = ab.search(&g, SearchLimits::depth(4), |_| {});
        assert!(r.best.is_some() && r.score == MATE - 1, "{r:?}");
    }

    #[test]
    fn a_move_searched_first_gets_its_exact_score() {
        // Red's rook takes the free knight (a0a5) and mates soon after; the general's step
        // d0d1 leaves the knight.
        let g = Xiangqi::from_fen("3aka3/9/9/9/n8/9/9/9/9/R2K5 w - - 0 1").unwrap();
        let step = g.parse_action("d0d1").unwrap();
        let mut ab = AlphaBeta::new(4);
        let r = ab.search_with_first(&g, SearchLimits::depth(5), step, &[]);
        assert_eq!(g.format_action(r.best.unwrap()), "a0a5");
        let first = r.first.unwrap();
        assert!(r.score - first > 300, "best {} first {first}", r.score);
        // The step's score is the one a search of it alone finds at that depth.
        let others: Vec<Move> = g
            .legal_moves()
            .as_slice()
            .iter()
            .copied()
            .filter(|&m| m != step)
            .collect();
        let mut alone = AlphaBeta::new(4);
        alone.set_excluded(&others);
        let r = alone.search(&g, SearchLimits::depth(5), |_| {});
        assert_eq!(r.score, first);
        // The best move searched first scores as the search; a banned best move is not
        // chosen; an illegal move gets no score.
        let take = g.parse_action("a0a5").unwrap();
        let r = AlphaBeta::new(4).search_with_first(&g, SearchLimits::depth(5), take, &[]);
        assert_eq!((r.best, r.first), (Some(take), Some(r.score)));
        let r = ab.search_with_first(&g, SearchLimits::depth(5), step, &[take]);
        assert!(r.best.is_some_and(|m| m != take), "{r:?}");
        let r = ab.search_with_first(&g, SearchLimits::depth(3), Move::NULL, &[]);
        assert_eq!(r.first, None);
    }

    #[test]
    fn finds_mate_in_one_and_reports_it() {
        let (m, r) = best(
            "3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 0 1",
            SearchLimits::depth(4),
        );
        assert!(m == "a7a9" || m == "a7d7", "{m}");
        assert_eq!(r.score, MATE - 1);
    }

    #[test]
    fn takes_a_hanging_rook() {
        let (m, r) = best(
            "3k5/9/9/9/9/4r4/9/9/4R4/4K4 w - - 0 1",
            SearchLimits::depth(3),
        );
        assert_eq!(m, "e1e4");
        assert!(r.score > 400, "{}", r.score);
    }

    #[test]
    fn stops_on_node_limit_and_stop_flag() {
        let g = Xiangqi::start();
        let mut s = AlphaBeta::new(4);
        let r = s.search(
            &g,
            SearchLimits {
                nodes: Some(5_000),
                ..Default::default()
            },
            |_| {},
        );
        assert!(r.nodes < 20_000, "{}", r.nodes);
        assert!(r.best.is_some());
        s.stop_handle().store(true, Ordering::Relaxed);
        let r = s.search(&g, SearchLimits::default(), |_| {});
        // The flag is polled every 1 024 nodes; the first iteration always completes.
        assert!(r.nodes <= 3_000 && r.best.is_some(), "{}", r.nodes);
    }

    #[test]
    fn a_finished_game_has_no_best_move() {
        let g = Xiangqi::from_fen("3k5/4R4/3R5/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
        let r = AlphaBeta::new(1).search(&g, SearchLimits::depth(3), |_| {});
        assert_eq!(r.best, None);
    }

    #[test]
    fn the_checking_side_does_not_walk_into_a_perpetual() {
        // Red is a rook up and could check forever with i9i8/i8i9; the rules make that a loss,
        // so the search scores the repeating line as lost for Red.
        let mut g = Xiangqi::from_fen("3k4R/9/9/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
        for t in ["d9d8", "i9i8", "d8d9", "i8i9", "d9d8"] {
            g.play(g.parse_action(t).unwrap()).unwrap();
        }
        let r = AlphaBeta::new(4).search(&g, SearchLimits::depth(4), |_| {});
        let m = g.format_action(r.best.unwrap());
        assert_ne!(m, "i8i9", "repeats the perpetual check");
    }
}

#[cfg(test)]
mod chase_tests {
    use super::*;
    use games::Game;

    /// Red's rook has chased the unprotected horse round the cycle once; chasing it again
    /// repeats the position. The Asian rules make that a loss for Red, the simple rule a draw.
    #[test]
    fn the_search_scores_a_repeated_chase_by_the_games_rule() {
        let mut g = Xiangqi::from_fen("4k4/9/1n7/9/9/9/9/2R6/9/3K5 w").unwrap();
        for t in ["c2b2", "b7c9", "b2c2", "c9b7"] {
            g.play(g.parse_action(t).unwrap()).unwrap();
        }
        let chase = g.parse_action("c2b2").unwrap();
        let others: Vec<Move> = g
            .legal_moves()
            .as_slice()
            .iter()
            .copied()
            .filter(|&m| m != chase)
            .collect();
        let mut scores = Vec::new();
        for rule in RepetitionRule::ALL {
            g.set_repetition_rule(rule);
            let mut ab = AlphaBeta::new(1);
            ab.set_excluded(&others);
            let r = ab.search(&g, SearchLimits::depth(3), |_| {});
            assert_eq!(r.best, Some(chase));
            scores.push(r.score);
            // Free to choose, Red keeps its extra rook instead.
            let free = AlphaBeta::new(1).search(&g, SearchLimits::depth(3), |_| {});
            assert!(free.score > 300, "{rule}: {free:?}");
        }
        assert_eq!(scores, [-RULE_WIN + 1, 0]);
    }
}

#[cfg(test)]
mod repetition_tests {
    use super::*;

    /// A path A B C D A (keys), the side to move at the end being the one to move at A; `checks`
    /// says for each of the four moves whether it gave check.
    fn verdict(checks: [bool; 4]) -> Option<i32> {
        let mut s = AlphaBeta::new(1);
        // Made-up keys and no moves: only the check flags are there to judge.
        s.rule = RepetitionRule::Simple;
        let keys = [1u64, 2, 3, 4, 1];
        s.path.push(PathEntry {
            key: keys[0],
            in_check: false,
            mv: Move::NULL,
            clock: 10,
        });
        for (i, &k) in keys[1..].iter().enumerate() {
            s.path.push(PathEntry {
                key: k,
                in_check: checks[i],
                mv: Move::NULL,
                clock: 11 + i as u32,
            });
        }
        s.repetition(Xiangqi::start().position(), 4)
    }

    #[test]
    fn repetition_verdicts_follow_the_rules() {
        // Moves 1 and 3 were made by the side to move at the end ("us": it is to move at A and
        // again at A), moves 2 and 4 by the opponent.
        assert_eq!(verdict([false; 4]), Some(0));
        assert_eq!(verdict([true, false, true, false]), Some(-RULE_WIN + 4));
        assert_eq!(verdict([false, true, false, true]), Some(RULE_WIN - 4));
        assert_eq!(verdict([true; 4]), Some(0));
        assert_eq!(verdict([true, false, false, false]), Some(0));
    }

    #[test]
    fn no_repetition_across_a_capture() {
        let mut s = AlphaBeta::new(1);
        for (k, clock) in [(1u64, 5), (2, 0), (3, 1), (4, 2), (1, 3)] {
            s.path.push(PathEntry {
                key: k,
                in_check: false,
                mv: Move::NULL,
                clock,
            });
        }
        assert_eq!(s.repetition(Xiangqi::start().position(), 4), None);
    }

    /// The search's verdict at the second occurrence (one cycle) has the winner the game's
    /// verdict at the third gives (two cycles), under either rule.
    #[test]
    fn the_search_judges_a_cycle_as_the_game_does() {
        use games::{Game, Outcome};
        let cases = [
            // Red chases an unprotected horse; the same with the horse protected; a rook
            // chases a cannon that answers with a check and a chase; perpetual check.
            ("4k4/9/1n7/9/9/9/9/2R6/9/3K5 w", "c2b2 b7c9 b2c2 c9b7"),
            ("1r2k4/9/1n7/9/9/9/9/2R6/9/3K5 w", "c2b2 b7c9 b2c2 c9b7"),
            ("5k3/9/9/9/9/9/9/c1NA5/1RN1K4/9 w", "b1b2 a2a1 b2b1 a1a2"),
            ("3k4R/9/9/9/9/9/9/9/9/4K4 b", "d9d8 i9i8 d8d9 i8i9"),
        ];
        let mut decisive = 0;
        for rule in RepetitionRule::ALL {
            for (fen, moves) in cases {
                let mut game = Xiangqi::from_fen(fen).unwrap();
                game.set_repetition_rule(rule);
                let mut s = AlphaBeta::new(1);
                s.rule = rule;
                let mut pos = game.position().clone();
                let push = |s: &mut AlphaBeta, pos: &Position, mv, clock| {
                    s.path.push(PathEntry {
                        key: pos.key(),
                        in_check: pos.in_check(pos.side()),
                        mv,
                        clock,
                    })
                };
                push(&mut s, &pos, Move::NULL, 0);
                let moves: Vec<Move> = moves
                    .split_whitespace()
                    .map(|t| game.parse_action(t).unwrap())
                    .collect();
                for (i, &m) in moves.iter().enumerate() {
                    pos.make(m);
                    push(&mut s, &pos, m, i as u32 + 1);
                }
                let score = s.repetition(&pos, 4).expect("a repetition");
                for &m in moves.iter().cycle().take(8) {
                    game.play(m).unwrap();
                }
                let mover = game.to_act();
                let expected = match game.outcome().unwrap() {
                    Outcome::Draw => 0,
                    Outcome::Win(p) if p == mover => RULE_WIN - 4,
                    Outcome::Win(_) => -RULE_WIN + 4,
                };
                assert_eq!(score, expected, "{fen} {moves:?} under {rule}");
                decisive += (score != 0) as usize;
            }
        }
        assert_eq!(
            decisive, 4,
            "three chases under Asian, the check under both"
        );
    }
}
