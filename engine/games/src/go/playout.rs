//! Light random playouts: the built-in Go agent until MCTS plugs in, and the play-move
//! throughput figure for `engine bench`.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{GoRules, GoState, Move};
use crate::{Agent, AgentError, Game};

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
    // Scan from a random start: every candidate is found, though not quite uniformly.
    let start = rng.gen_range(0..n * n);
    for i in 0..n * n {
        let k = (start + i) % (n * n);
        let p = board.point(k / n, k % n);
        if board.color(p) == super::board::EMPTY && good(p) {
            return Move::Place(super::Point::new(k / n, k % n));
        }
    }
    Move::Pass
}

/// Plays [`playout_move`]: random, but never fills its own eyes.
pub struct PlayoutAgent {
    rng: SmallRng,
}

impl PlayoutAgent {
    pub fn new(seed: u64) -> Self {
        PlayoutAgent {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Agent<GoState> for PlayoutAgent {
    fn name(&self) -> String {
        "playout".into()
    }

    fn select_action(&mut self, state: &GoState) -> Result<Move, AgentError> {
        if state.outcome().is_some() {
            return Err(AgentError {
                agent: "playout".into(),
                reason: "the game is over".into(),
            });
        }
        Ok(playout_move(state, &mut self.rng))
    }
}

/// The result of [`play_throughput`].
#[derive(Clone, Copy, Debug)]
pub struct Throughput {
    pub size: usize,
    pub games: usize,
    pub moves: u64,
    pub elapsed: Duration,
}

impl Throughput {
    /// Average time per move (legality checks and the move itself).
    pub fn ns_per_move(&self) -> f64 {
        self.elapsed.as_nanos() as f64 / self.moves.max(1) as f64
    }
}

/// Plays `games` random playouts on a `size` board (default rules) and times them: each move
/// is chosen by legality checks on random points and then played. The figure `engine bench`
/// reports for Go.
pub fn play_throughput(size: usize, games: usize, seed: u64) -> Throughput {
    let start = GoState::new(GoRules::with_size(size)).expect("valid board size");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut moves = 0u64;
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
    Throughput {
        size,
        games,
        moves,
        elapsed: t0.elapsed(),
    }
}
