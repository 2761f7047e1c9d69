//! Rules throughput, measured the same way for every game: `engine bench` prints these figures
//! and the criterion benches in `benches/` time the same operations.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::{perft, Game};

/// Mean costs of the two operations a search and a perft spend their time in.
#[derive(Clone, Debug)]
pub struct RulesFigures {
    pub positions: usize,
    /// Mean nanoseconds for one `legal_actions` call (into a reused buffer).
    pub legal_ns: f64,
    /// Mean nanoseconds for one clone + `play_unchecked` of a legal action.
    pub apply_ns: f64,
}

/// Times legal-action generation and apply over `positions`, repeating for at least `budget`.
pub fn rules_figures<G: Game>(positions: &[G], budget: Duration) -> RulesFigures {
    let all: Vec<(usize, G::Action)> = positions
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let mut v = Vec::new();
            s.legal_actions(&mut v);
            v.into_iter().map(move |a| (i, a))
        })
        .collect();
    let mut buf = Vec::with_capacity(256);

    let (mut calls, start) = (0u64, Instant::now());
    while start.elapsed() < budget / 2 {
        for s in positions {
            buf.clear();
            s.legal_actions(&mut buf);
            black_box(&buf);
        }
        calls += positions.len() as u64;
    }
    let legal_ns = start.elapsed().as_nanos() as f64 / calls as f64;

    let (mut applies, start) = (0u64, Instant::now());
    while start.elapsed() < budget / 2 {
        for &(i, a) in &all {
            let mut next = positions[i].clone();
            next.play_unchecked(a);
            black_box(&next);
        }
        applies += all.len() as u64;
    }
    let apply_ns = start.elapsed().as_nanos() as f64 / applies.max(1) as f64;

    RulesFigures {
        positions: positions.len(),
        legal_ns,
        apply_ns,
    }
}

/// Perft over `cases` (state, depth): total leaves, and leaves per second.
pub fn perft_figures<G: Game>(cases: &[(G, u32)]) -> (u64, f64) {
    let start = Instant::now();
    let nodes: u64 = cases.iter().map(|(s, d)| perft(s, *d)).sum();
    (nodes, nodes as f64 / start.elapsed().as_secs_f64())
}
