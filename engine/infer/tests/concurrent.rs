//! Calls from several threads at once (self-play's pipeline groups) get the outputs a lone
//! caller gets: each call encodes into an input buffer of its own and holds the session only
//! for the network's run.

use std::path::Path;

use eval::Evaluator;
use games::liuzhou::Liuzhou;
use games::{Encoding, Game};
use infer::{OrtEvaluator, OrtOptions};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Positions of random games from the start, a few per game.
fn positions(n: usize) -> Vec<Liuzhou> {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut out = Vec::new();
    while out.len() < n {
        let mut state = Liuzhou::default();
        for _ in 0..40 {
            if state.outcome().is_some() {
                break;
            }
            let mut actions = Vec::new();
            state.legal_actions(&mut actions);
            let Some(&a) = actions.choose(&mut rng) else {
                break;
            };
            state.play_unchecked(a);
            out.push(state.clone());
        }
    }
    out.truncate(n);
    out
}

#[test]
fn concurrent_calls_match_lone_calls() {
    testkit::onnx_runtime();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/liuzhou/best.onnx");
    let opts = OrtOptions {
        batch_size: 16,
        ..OrtOptions::default()
    };
    let start = Liuzhou::default();
    let ev = OrtEvaluator::load(&model, &start, &opts).unwrap_or_else(|e| panic!("{e}"));
    let ps = start.shape().policy_size;
    let states = positions(4 * 16);
    let calls: Vec<Vec<&Liuzhou>> = states.chunks(16).map(|c| c.iter().collect()).collect();
    let run = |call: &[&Liuzhou]| {
        let mut policy = vec![0.0; call.len() * ps];
        let mut value = vec![0.0; call.len()];
        ev.evaluate(call, &mut policy, &mut value).unwrap();
        (policy, value)
    };
    let alone: Vec<_> = calls.iter().map(|c| run(c)).collect();
    for _round in 0..3 {
        let together: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = calls.iter().map(|c| s.spawn(|| run(c))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (a, t) in alone.iter().zip(&together) {
            let worst =
                a.0.iter()
                    .chain(&a.1)
                    .zip(t.0.iter().chain(&t.1))
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0f32, f32::max);
            assert!(worst < 1e-5, "outputs differ by {worst}");
        }
    }
}
