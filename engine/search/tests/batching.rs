//! The fake evaluator and the shared batcher: every state gets its own answer back.

mod common;

use std::time::Duration;

use common::Mnk;
use eval::fake::FakeEvaluator;
use eval::Evaluator;
use games::Game;
use search::Batcher;

fn positions(n: usize) -> Vec<Mnk> {
    (0..n)
        .map(|i| {
            let mut g = Mnk::new(4, 4, 4);
            g.play_unchecked((i % 16) as u8);
            g.play_unchecked(((i / 16 + i % 16 + 1) % 16) as u8);
            g
        })
        .collect()
}

#[test]
fn the_fake_evaluator_is_a_function_of_the_position() {
    let fake = FakeEvaluator::new(4).seeded(7);
    let ps = positions(4);
    let refs: Vec<&Mnk> = ps.iter().collect();
    let mut p1 = vec![0.0; 4 * 16];
    let mut v1 = vec![0.0; 4];
    fake.evaluate(&refs, &mut p1, &mut v1).unwrap();
    // Alone, in another order: the same answers.
    let mut p2 = vec![0.0; 16];
    let mut v2 = vec![0.0; 1];
    fake.evaluate(&refs[2..3], &mut p2, &mut v2).unwrap();
    assert_eq!(v2[0], v1[2]);
    assert_eq!(p2, p1[32..48]);
    assert_eq!(v1[0], fake.value_of(&ps[0]));
    assert!(v1.iter().all(|v| (-1.0..1.0).contains(v)));
    assert!(p1.iter().any(|&l| l != p1[0]), "seeded logits vary");
    // More states than the batch holds is an error, not a panic.
    let five: Vec<&Mnk> = ps.iter().chain(ps.iter()).take(5).collect();
    let mut p = vec![0.0; 5 * 16];
    let mut v = vec![0.0; 5];
    assert!(fake.evaluate(&five, &mut p, &mut v).is_err());
    // Uniform: zero logits and values.
    let uniform = FakeEvaluator::new(4);
    uniform.evaluate(&refs, &mut p1, &mut v1).unwrap();
    assert!(p1.iter().all(|&l| l == 0.0) && v1.iter().all(|&v| v == 0.0));
}

#[test]
fn a_batcher_routes_answers_to_the_threads_that_asked() {
    let fake = FakeEvaluator::new(16)
        .seeded(3)
        .with_batch_cost(Duration::from_micros(300));
    // A long wait: batches close when full, so combining is near certain even on a busy box.
    let batcher = Batcher::new(&fake, 16, Duration::from_millis(20));
    let all = positions(64);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (batcher, all, fake) = (&batcher, &all, &fake);
            s.spawn(move || {
                for round in 0..20 {
                    // Odd sizes, so batches mix threads and requests split across batches.
                    let n = 1 + (t * 3 + round) % 7;
                    let start = (t * 16 + round) % 48;
                    let mine = &all[start..start + n];
                    let mut policy = vec![0.0; n * 16];
                    let mut value = vec![0.0; n];
                    batcher
                        .evaluate(mine, &mut policy, &mut value, &mut Vec::new())
                        .unwrap();
                    for (k, state) in mine.iter().enumerate() {
                        assert_eq!(value[k], fake.value_of(state));
                        let mut alone = vec![0.0; 16];
                        let mut v = [0.0];
                        fake.evaluate(&[state], &mut alone, &mut v).unwrap();
                        assert_eq!(policy[k * 16..(k + 1) * 16], alone[..]);
                    }
                }
            });
        }
    });
    let r = batcher.stats().report();
    assert!(r.batches > 0);
    assert!(r.states >= 4 * 20);
    // Four threads together fill batches better than one request each would.
    assert!(r.fill() > 0.3, "fill {}", r.fill());
}

#[test]
fn a_batch_that_does_not_fill_is_sent_after_the_wait() {
    let fake = FakeEvaluator::new(16).seeded(5);
    let batcher = Batcher::new(&fake, 16, Duration::from_millis(5));
    let mine = positions(3);
    let mut policy = vec![0.0; 3 * 16];
    let mut value = vec![0.0; 3];
    let start = std::time::Instant::now();
    batcher
        .evaluate(&mine, &mut policy, &mut value, &mut Vec::new())
        .unwrap();
    assert!(start.elapsed() >= Duration::from_millis(5));
    assert_eq!(value[1], fake.value_of(&mine[1]));
    let r = batcher.stats().report();
    assert_eq!((r.batches, r.states, r.capacity), (1, 3, 16));
    // More states than one batch holds are split across batches.
    let many = positions(40);
    let mut policy = vec![0.0; 40 * 16];
    let mut value = vec![0.0; 40];
    batcher
        .evaluate(&many, &mut policy, &mut value, &mut Vec::new())
        .unwrap();
    assert_eq!(value[39], fake.value_of(&many[39]));
    assert_eq!(batcher.stats().report().states, 43);
}
