//! Light random playouts: the built-in Go agent until MCTS plugs in, and the play-move
//! throughput figure for `engine bench`.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{GoRules, GoState, Move, Point};
use crate::{Game, Player};

/// Random tries at a legal non-eye point before scanning the whole board.
const RANDOM_TRIES: usize = 16;

/// A uniformly random point that is legal and not a true eye of the mover, or pass when none
/// is left. Never filling its own eyes, two such players end every game by passing.
pub fn playout_move<R: Rng + ?Sized>(state: &GoState, rng: &mut R) -> Move {
    let board = state.board();
    let n = board.size();
    let good = |p: usize| !state.is_own_eye(p) && state.legal_at_padded(p);
    for _ in 0..RANDOM_TRIES {
        let p = board.point(rng.gen_range(0..n), rng.gen_range(0..n));
        if board.color(p) == super::board::EMPTY && good(p) {
            let (r, c) = board.coords(p);
            return Move::Place(super::Point::new(r, c));
        }
    }
    // Scan row by row from a random row: every candidate is found, though not uniformly.
    let first = rng.gen_range(0..n);
    for i in 0..n {
        let row = (first + i) % n;
        for col in 0..n {
            let p = board.point(row, col);
            if board.color(p) == super::board::EMPTY && good(p) {
                return Move::Place(super::Point::new(row, col));
            }
        }
    }
    Move::Pass
}

/// A move for the cleanup phase of a game whose players disagree about dead stones (KGS's
/// `kgs-genmove_cleanup`): the game goes on until they are captured, so this never passes
/// while the player to move has a legal move that fills none of its own eyes and is not a
/// self-atari (a stone whose group is left one liberty). Among those it takes a capture first,
/// then a point next to one of the opponent's `dead` stones, then one next to any opponent
/// stone, then the first in board order. `None` when passing is all that is left. The state
/// may be one that two passes ended: the cleanup goes on from it.
pub fn cleanup_move(state: &GoState, dead: &[Point]) -> Option<Move> {
    let who = state.to_act();
    let opponent = who.opponent();
    let opponent_stones = state.stones_of(opponent).len();
    let board = state.board();
    let n = board.size();
    let next_to = |pt: Point, wanted: &dyn Fn(Point) -> bool| {
        let (r, c) = (pt.row as usize, pt.col as usize);
        [
            (r > 0).then(|| (r - 1, c)),
            (r + 1 < n).then_some((r + 1, c)),
            (c > 0).then(|| (r, c - 1)),
            (c + 1 < n).then_some((r, c + 1)),
        ]
        .into_iter()
        .flatten()
        .any(|(r, c)| wanted(Point::new(r, c)))
    };
    let mut best: Option<(u8, Move)> = None;
    for p in board.points() {
        if board.color(p) != super::board::EMPTY || state.is_own_eye(p) {
            continue;
        }
        let (r, c) = board.coords(p);
        let pt = Point::new(r, c);
        let mv = Move::Place(pt);
        let mut after = state.clone();
        if after.play_as(who, mv).is_err() {
            continue;
        }
        let captures = after.stones_of(opponent).len() < opponent_stones;
        if !captures && after.liberties(pt) <= 1 {
            continue;
        }
        let rank = if captures {
            3
        } else if next_to(pt, &|q| {
            dead.contains(&q) && state.stone_at(q) == Some(opponent)
        }) {
            2
        } else if next_to(pt, &|q| state.stone_at(q) == Some(opponent)) {
            1
        } else {
            0
        };
        if best.is_none_or(|(b, _)| rank > b) {
            best = Some((rank, mv));
        }
    }
    best.map(|(_, mv)| mv)
}

/// The result of [`play_throughput`].
#[derive(Clone, Copy, Debug)]
pub struct Throughput {
    pub size: usize,
    pub games: usize,
    pub moves: u64,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Time this thread spent on a CPU (Linux `/proc/thread-self/schedstat`), which a busy
    /// shared machine does not inflate; `None` where the kernel does not say.
    pub on_cpu: Option<Duration>,
}

impl Throughput {
    /// Average wall-clock time per move (legality checks and the move itself).
    pub fn ns_per_move(&self) -> f64 {
        self.elapsed.as_nanos() as f64 / self.moves.max(1) as f64
    }

    /// Average on-CPU time per move, where known.
    pub fn cpu_ns_per_move(&self) -> Option<f64> {
        self.on_cpu
            .map(|t| t.as_nanos() as f64 / self.moves.max(1) as f64)
    }
}

/// Nanoseconds this thread has run on a CPU, from the first field of Linux's schedstat.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Plays `games` random playouts on a `size` board (default rules) and times them: each move
/// is chosen by legality checks on random points and then played. The figure `engine bench`
/// reports for Go.
pub fn play_throughput(size: usize, games: usize, seed: u64) -> Throughput {
    let start = GoState::new(GoRules::with_size(size)).expect("valid board size");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut moves = 0u64;
    let cpu0 = thread_cpu_ns();
    let t0 = Instant::now();
    for _ in 0..games {
        let mut state = start.clone();
        while state.outcome().is_none() {
            let mv = playout_move(&state, &mut rng);
            state.play_unchecked(mv);
            moves += 1;
        }
        std::hint::black_box(&state);
    }
    let elapsed = t0.elapsed();
    let on_cpu = match (cpu0, thread_cpu_ns()) {
        // No progress at all means the kernel does not keep the figure.
        (Some(a), Some(b)) if b > a => Some(Duration::from_nanos(b - a)),
        _ => None,
    };
    Throughput {
        size,
        games,
        moves,
        elapsed,
        on_cpu,
    }
}

/// Stones judged dead and the score once they are removed: what GTP `final_score` and
/// `final_status_list` report. The rules' own outcome never uses this (area scoring counts every
/// stone on the board); it is how a finished game is read by people and other programs.
#[derive(Clone, Debug)]
pub struct ScoreEstimate {
    /// Stones the opponent owns in most playouts.
    pub dead: Vec<Point>,
    /// Black's area minus White's area and komi, dead stones removed.
    pub score: f32,
}

impl ScoreEstimate {
    /// `B+3.5`, `W+0.5` or `0`, as GTP and SGF write results.
    pub fn text(&self) -> String {
        score_text(self.score)
    }
}

pub(crate) fn score_text(score: f32) -> String {
    if score > 0.0 {
        format!("B+{score}")
    } else if score < 0.0 {
        format!("W+{}", -score)
    } else {
        "0".into()
    }
}

/// Plays `playouts` random continuations of `state` (even a finished one), both sides
/// never filling their own eyes, and calls a stone dead when the opponent owns its point at
/// the end of at least three quarters of them. Territory is then counted on the board without
/// the dead stones, by the area rule.
pub fn estimate_score(state: &GoState, playouts: usize, seed: u64) -> ScoreEstimate {
    let n = state.size();
    let mut rng = SmallRng::seed_from_u64(seed);
    // Ownership per point: +1 Black, −1 White, summed over playouts.
    let mut owned = vec![0i32; n * n];
    let start = state.continuation();
    for _ in 0..playouts {
        let mut s = start.clone();
        while s.outcome().is_none() {
            let mv = playout_move(&s, &mut rng);
            s.play_unchecked(mv);
        }
        for (i, owner) in s.ownership().into_iter().enumerate() {
            owned[i] += owner as i32;
        }
    }
    let threshold = playouts as i32 / 2;
    let mut dead = Vec::new();
    let mut alive = Vec::new();
    for who in [Player::First, Player::Second] {
        let sign = if who == Player::First { 1 } else { -1 };
        for p in state.stones_of(who) {
            let i = p.row as usize * n + p.col as usize;
            // Owned by the opponent in ≥ 3/4 of playouts: sum ≤ −playouts/2 from our side.
            if playouts > 0 && owned[i] * sign <= -threshold {
                dead.push(p);
            } else {
                alive.push((p, who));
            }
        }
    }
    let rules = GoRules {
        move_cap: super::MoveCap::Unlimited,
        ..state.rules().clone()
    };
    // Removing stones only adds liberties, so the remaining setup is always valid.
    let cleaned = GoState::from_setup(rules, &alive, state.to_act())
        .expect("removing stones leaves every group a liberty");
    ScoreEstimate {
        dead,
        score: cleaned.score(),
    }
}
