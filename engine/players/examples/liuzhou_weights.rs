//! Liuzhou's evaluation weights, each variant against the defaults at a fixed node budget:
//!
//! ```text
//! cargo run --release -p players --example liuzhou_weights
//! ```
//!
//! Each opening (six random placements) is played twice, colours swapped, both sides with a
//! 4 MiB table. It prints one line per variant: its score against the defaults (1 a
//! win, 0.5 a draw) over the games, and the budget. `LZ_NODES` sets the nodes a decision
//! (20 000), `LZ_OPENINGS` the number of openings (20).

use games::liuzhou::Liuzhou;
use games::{Agent, Game, Outcome, Player};
use players::alphabeta::liuzhou::{LiuzhouAlphaBetaAgent, SearchLimits, Weights};
use players::matchplay::play_game;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn main() {
    let d = Weights::default();
    let variants: Vec<(&str, Weights)> = vec![
        (
            "threats x2",
            Weights {
                hole: 2 * d.hole,
                double_threat: 2 * d.double_threat,
                ..d.clone()
            },
        ),
        (
            "no mobility",
            Weights {
                mobility: 0,
                ..d.clone()
            },
        ),
        (
            "open shapes x3",
            Weights {
                open_shape: 3 * d.open_shape,
                ..d.clone()
            },
        ),
        (
            "shape members x3",
            Weights {
                shape_member: 3 * d.shape_member,
                ..d.clone()
            },
        ),
        (
            "open windows x2",
            Weights {
                open_square: d.open_square.map(|w| 2 * w),
                open_line: d.open_line.map(|w| 2 * w),
                ..d.clone()
            },
        ),
        (
            "material only",
            Weights {
                shape_member: 0,
                open_square: [0; 4],
                open_line: [0; 6],
                hole: 0,
                double_threat: 0,
                open_shape: 0,
                mobility: 0,
                ..d.clone()
            },
        ),
    ];
    let nodes: u64 = std::env::var("LZ_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let openings: u64 = std::env::var("LZ_OPENINGS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let limits = SearchLimits {
        nodes: Some(nodes),
        ..Default::default()
    };
    for (name, w) in variants {
        let (mut score, mut games) = (0.0, 0);
        for k in 0..openings {
            let mut rng = SmallRng::seed_from_u64(1000 + k);
            let mut start = Liuzhou::default();
            let mut actions = Vec::new();
            for _ in 0..6 {
                actions.clear();
                start.legal_actions(&mut actions);
                start.play_unchecked(actions[rng.gen_range(0..actions.len())]);
            }
            for variant_first in [true, false] {
                let mut a = LiuzhouAlphaBetaAgent::try_new(limits, 4)
                    .unwrap()
                    .with_weights(w.clone());
                let mut b = LiuzhouAlphaBetaAgent::try_new(limits, 4).unwrap();
                let (first, second): (&mut dyn Agent<Liuzhou>, &mut dyn Agent<Liuzhou>) =
                    if variant_first {
                        (&mut a, &mut b)
                    } else {
                        (&mut b, &mut a)
                    };
                let record = play_game(&start, first, second, 1000).unwrap();
                let me = if variant_first {
                    Player::First
                } else {
                    Player::Second
                };
                score += match record.outcome {
                    Outcome::Win(p) if p == me => 1.0,
                    Outcome::Win(_) => 0.0,
                    Outcome::Draw => 0.5,
                };
                games += 1;
            }
        }
        println!(
            "{name}: {:.3} over {games} games against the defaults ({nodes} nodes a decision)",
            score / games as f64
        );
    }
}
