//! Fits the constants of `UCI_ShowWDL`'s model (`faces::uci::wdl`: win = 1 / (1 + e^((A − s) /
//! B)), loss = 1 / (1 + e^((A + s) / B)), draw the rest) to alpha-beta's own games (minutes):
//!
//! ```text
//! cargo run --release -p faces --example uci_wdl_fit
//! ```
//!
//! Alpha-beta at depth 5 plays alpha-beta at depth 4, colours alternating, each game from its
//! own opening of four uniformly random moves; every move's score (the mover's search, from the
//! mover's view, as `info score cp` shows it) is paired with the game's result for the mover.
//! A and B maximise the likelihood of those results. It prints one line: the games counted and
//! their results for the first mover, the number of scored moves, the fitted A and B with their
//! mean log-loss, and the shipped pair's mean log-loss on the same moves. It exits with status 1
//! when the shipped constants explain the games worse than the fit by 0.005 or more.

use faces::uci::wdl;
use games::xiangqi::Xiangqi;
use games::{Game, Outcome};
use players::alphabeta::xiangqi::{AlphaBeta, RULE_WIN};
use players::alphabeta::{SearchLimits, MAX_PLY};

/// Games played: pairs from one opening, each side taking each colour once.
const GAMES: u64 = 400;
/// A game still running after this many moves is left out.
const MOST_PLIES: usize = 400;

/// A small xorshift generator: the openings must differ, not be good.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// One game's scores (each move's, from its mover's view) and results for those movers: 1 a
/// win, 0.5 a draw, 0 a loss. Empty for a game that did not end.
fn play(game_index: u64) -> Vec<(i32, f64)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (game_index / 2 + 1));
    let mut game = Xiangqi::start();
    for _ in 0..4 {
        let moves = game.legal_moves();
        let m = moves.as_slice()[rng.below(moves.as_slice().len())];
        game.play(m).unwrap();
    }
    // The deeper search plays Red in even games, Black in odd ones.
    let mut searchers = [AlphaBeta::new(16), AlphaBeta::new(16)];
    let depths = if game_index.is_multiple_of(2) {
        [5, 4]
    } else {
        [4, 5]
    };
    let mut scored = Vec::new();
    while game.outcome().is_none() {
        if scored.len() > MOST_PLIES {
            return Vec::new();
        }
        let side = game.to_act();
        let i = side.index();
        let found = searchers[i].search(&game, SearchLimits::depth(depths[i]), |_| {});
        scored.push((found.score, side));
        game.play(found.best.unwrap()).unwrap();
    }
    let outcome = game.outcome().unwrap();
    scored
        .into_iter()
        .map(|(score, side)| {
            let result = match outcome {
                Outcome::Draw => 0.5,
                Outcome::Win(p) if p == side => 1.0,
                Outcome::Win(_) => 0.0,
            };
            (score, result)
        })
        .collect()
}

/// Mean negative log-likelihood of the results under the model with `a` and `b`.
fn loss(points: &[(i32, f64)], a: f64, b: f64) -> f64 {
    let total: f64 = points
        .iter()
        .map(|&(s, r)| {
            let s = s as f64;
            let win = 1.0 / (1.0 + ((a - s) / b).exp());
            let lose = 1.0 / (1.0 + ((a + s) / b).exp());
            let p = if r == 1.0 {
                win
            } else if r == 0.0 {
                lose
            } else {
                1.0 - win - lose
            };
            -p.max(1e-12).ln()
        })
        .sum();
    total / points.len() as f64
}

/// The (a, b) of least loss on a grid of `step` over the ranges, then around it in steps of 1.
fn fit(points: &[(i32, f64)]) -> (f64, f64) {
    let best_on = |a_range: (i32, i32), b_range: (i32, i32), step: usize| {
        let mut best = (f64::INFINITY, 0.0, 0.0);
        for a in (a_range.0..=a_range.1).step_by(step) {
            for b in (b_range.0.max(5)..=b_range.1).step_by(step) {
                let l = loss(points, a as f64, b as f64);
                if l < best.0 {
                    best = (l, a as f64, b as f64);
                }
            }
        }
        (best.1, best.2)
    };
    let (a, b) = best_on((0, 1000), (10, 800), 20);
    best_on(
        (a as i32 - 20, a as i32 + 20),
        (b as i32 - 20, b as i32 + 20),
        1,
    )
}

fn main() {
    let mut points = Vec::new();
    let mut results = [0u32; 3];
    for g in 0..GAMES {
        let game = play(g);
        if let Some(&(_, r)) = game.first() {
            // The first mover's result: 1, 0.5 or 0.
            results[(r * 2.0) as usize] += 1;
        }
        // Decisive scores are certain in the model: they say nothing of A and B.
        points.extend(
            game.into_iter()
                .filter(|&(s, _)| s.abs() < RULE_WIN - MAX_PLY as i32),
        );
    }
    let (a, b) = fit(&points);
    let (fitted, shipped) = (loss(&points, a, b), loss(&points, wdl::A, wdl::B));
    let draws = points.iter().filter(|p| p.1 == 0.5).count();
    println!(
        "{GAMES} games (first mover: {} losses, {} draws, {} wins), {} scored moves ({draws} in \
         drawn games): A = {a}, B = {b}, mean log-loss {fitted:.4}; shipped A = {}, B = {}: \
         {shipped:.4}",
        results[0],
        results[1],
        results[2],
        points.len(),
        wdl::A,
        wdl::B
    );
    if shipped - fitted >= 0.005 {
        eprintln!("the shipped constants fit {shipped:.4} against the best {fitted:.4}");
        std::process::exit(1);
    }
}
