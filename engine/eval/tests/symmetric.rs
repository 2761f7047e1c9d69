//! The symmetric average: over all of a game's symmetries it answers the same for every image
//! of a position (whatever the network it wraps), with one view it is the network itself, and
//! it keeps to the wrapped network's batch size.

use std::sync::Arc;

use eval::fake::FakeEvaluator;
use eval::{Evaluator, Symmetric};
use games::go::{GoRules, GoState};
use games::liuzhou::Liuzhou;
use games::xiangqi::Xiangqi;
use games::{Encoding, Game, NO_INDEX};
use rand::SeedableRng;

/// Positions a few random actions from `start`, one per length up to `plies`.
fn positions<G: Encoding>(start: &G, plies: usize, seed: u64) -> Vec<G> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut state = start.clone();
    let mut out = vec![state.clone()];
    for _ in 0..plies {
        if state.outcome().is_some() {
            break;
        }
        let Some(a) = games::random_action(&state, &mut rng) else {
            break;
        };
        state.play_unchecked(a);
        out.push(state.clone());
    }
    out
}

/// `states` evaluated in calls of `e`'s batch size.
fn evaluate<G: Encoding>(e: &dyn Evaluator<G>, states: &[G]) -> (Vec<f32>, Vec<f32>) {
    let size = states[0].shape().policy_size;
    let mut policy = vec![0.0; states.len() * size];
    let mut value = vec![0.0; states.len()];
    let batch = e.batch_size();
    for (c, part) in states.chunks(batch).enumerate() {
        let refs: Vec<&G> = part.iter().collect();
        let at = c * batch;
        e.evaluate(
            &refs,
            &mut policy[at * size..(at + part.len()) * size],
            &mut value[at..at + part.len()],
        )
        .unwrap();
    }
    (policy, value)
}

fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = logits.iter().map(|&x| (x - max).exp()).collect();
    let total: f32 = exp.iter().sum();
    exp.iter().map(|e| e / total).collect()
}

/// Every image of every position gets the same value and the same policy, moved by the
/// symmetry, from the average over all views; the fake network alone (its outputs keyed by
/// the state's hash) answers each image differently. The fake's batch of 3 makes the wrapper
/// split its images into many calls.
fn all_views_are_equivariant<G: Encoding>(start: &G, plies: usize) {
    let inner: Arc<dyn Evaluator<G>> = Arc::new(FakeEvaluator::new(3).seeded(11));
    let count = start.symmetries().len();
    let averaged = Symmetric::new(inner.clone(), count);
    let maps = games::symmetry_maps(start);
    let states = positions(start, plies, 5);
    let size = start.shape().policy_size;
    let (policy, value) = evaluate(&averaged, &states);
    let mut raw_differs = false;
    for (sym, map) in &maps {
        let images: Vec<G> = states.iter().map(|s| s.transform(*sym)).collect();
        let (policy2, value2) = evaluate(&averaged, &images);
        let (_, raw2) = evaluate(inner.as_ref(), &images);
        let (_, raw) = evaluate(inner.as_ref(), &states);
        raw_differs |= raw != raw2;
        for k in 0..states.len() {
            assert!(
                (value[k] - value2[k]).abs() < 1e-5,
                "{sym:?}, position {k}: {} against {}",
                value[k],
                value2[k]
            );
            let p = softmax(&policy[k * size..(k + 1) * size]);
            let p2 = softmax(&policy2[k * size..(k + 1) * size]);
            for (i, &j) in map.iter().enumerate() {
                if j != NO_INDEX {
                    assert!(
                        (p[i] - p2[j as usize]).abs() < 1e-5,
                        "{sym:?}, position {k}, index {i}: {} against {}",
                        p[i],
                        p2[j as usize]
                    );
                }
            }
        }
    }
    assert!(
        raw_differs,
        "the fake network should not be symmetric itself"
    );
}

#[test]
fn liuzhou_averaged_over_its_eight_symmetries_is_equivariant() {
    all_views_are_equivariant(&Liuzhou::default(), 60);
}

#[test]
fn xiangqi_averaged_with_its_mirror_is_equivariant() {
    all_views_are_equivariant(&Xiangqi::start(), 30);
}

#[test]
fn go_averaged_over_its_eight_symmetries_is_equivariant() {
    let start = GoState::new(GoRules::with_size(5)).unwrap();
    all_views_are_equivariant(&start, 20);
}

#[test]
fn one_view_is_the_network_itself() {
    let inner: Arc<dyn Evaluator<Liuzhou>> = Arc::new(FakeEvaluator::new(4).seeded(3));
    let one = Symmetric::new(inner.clone(), 1);
    let states = positions(&Liuzhou::default(), 40, 9);
    let size = states[0].shape().policy_size;
    // The indices that name an action (the search's softmax never sees the others).
    let named: Vec<usize> = (0..size)
        .filter(|&i| states[0].index_action(i).is_some())
        .collect();
    assert!(
        named.len() < size,
        "Liuzhou has indices that name no action"
    );
    let over_named =
        |logits: &[f32]| softmax(&named.iter().map(|&i| logits[i]).collect::<Vec<_>>());
    for chunk in states.chunks(4) {
        let (policy, value) = evaluate(&one, chunk);
        let (raw_policy, raw_value) = evaluate(inner.as_ref(), chunk);
        assert_eq!(value, raw_value);
        for k in 0..chunk.len() {
            let p = over_named(&policy[k * size..(k + 1) * size]);
            let q = over_named(&raw_policy[k * size..(k + 1) * size]);
            assert!(p.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-6));
        }
    }
}

#[test]
fn some_views_average_the_position_and_others_fixed_per_position() {
    // Four views of eight: the value is the mean of the fake's values on the position itself
    // and three of its images, the same three every time the position is evaluated.
    let inner: Arc<dyn Evaluator<Liuzhou>> = Arc::new(FakeEvaluator::new(16).seeded(21));
    let four = Symmetric::new(inner.clone(), 4);
    let states = positions(&Liuzhou::default(), 50, 13);
    let (_, value) = evaluate(&four, &states);
    let (_, again) = evaluate(&four, &states);
    assert_eq!(value, again);
    let fake = FakeEvaluator::new(1).seeded(21);
    for (k, state) in states.iter().enumerate() {
        let images: Vec<f32> = state
            .symmetries()
            .iter()
            .map(|&s| fake.value_of(&state.transform(s)))
            .collect();
        let own = images[0];
        // Some three of the other seven, with the position's own value, make the mean.
        let others = &images[1..];
        let found = (0..7).any(|a| {
            (a + 1..7).any(|b| {
                (b + 1..7).any(|c| {
                    let mean = (own + others[a] + others[b] + others[c]) / 4.0;
                    (mean - value[k]).abs() < 1e-5
                })
            })
        });
        assert!(found, "position {k}: {} is no such mean", value[k]);
    }
    assert_eq!(
        Evaluator::<Liuzhou>::batch_size(&four),
        16,
        "the wrapper gathers as many leaves a call as the network it wraps"
    );
}

#[test]
fn more_views_than_the_game_has_are_all_of_them() {
    let inner: Arc<dyn Evaluator<Xiangqi>> = Arc::new(FakeEvaluator::new(8).seeded(5));
    let eight = Symmetric::new(inner.clone(), 8);
    let two = Symmetric::new(inner, 2);
    let states = positions(&Xiangqi::start(), 12, 17);
    assert_eq!(evaluate(&eight, &states), evaluate(&two, &states));
    assert!(
        eight.describe().ends_with("2 symmetric views"),
        "{}",
        eight.describe()
    );
}

/// Counts the images the wrapped evaluator is asked for.
struct Counting {
    inner: FakeEvaluator,
    images: std::sync::atomic::AtomicUsize,
}

impl Evaluator<GoState> for Counting {
    fn batch_size(&self) -> usize {
        Evaluator::<GoState>::batch_size(&self.inner)
    }

    fn evaluate(
        &self,
        states: &[&GoState],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), eval::EvalError> {
        self.images
            .fetch_add(states.len(), std::sync::atomic::Ordering::Relaxed);
        self.inner.evaluate(states, policy, value)
    }

    fn heads(&self) -> eval::Heads {
        Evaluator::<GoState>::heads(&self.inner)
    }

    fn evaluate_aux(
        &self,
        states: &[&GoState],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<eval::AuxOutputs, eval::EvalError> {
        self.images
            .fetch_add(states.len(), std::sync::atomic::Ordering::Relaxed);
        self.inner.evaluate_aux(states, policy, value)
    }

    fn describe(&self) -> String {
        "counting".into()
    }
}

/// With the auxiliary heads asked for, each image is evaluated once (not the state as given a
/// second time); policy and value are those of `evaluate`, ownership and win/draw/loss the
/// state's own, the score the mean over its images as the value is (a seeded fake's score is
/// ten times its value on each image).
#[test]
fn auxiliary_outputs_come_from_the_same_views() {
    let start = GoState::new(GoRules::with_size(5)).unwrap();
    let states = positions(&start, 6, 11);
    let fake = FakeEvaluator::new(8).seeded(5).with_aux();
    let counting = Arc::new(Counting {
        inner: FakeEvaluator::new(8).seeded(5).with_aux(),
        images: Default::default(),
    });
    let views = 4;
    let sym = Symmetric::new(counting.clone(), views);
    let (p0, v0) = evaluate(&sym, &states);
    let plain = counting
        .images
        .swap(0, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(plain, states.len() * views);
    let refs: Vec<&GoState> = states.iter().collect();
    let size = start.shape().policy_size;
    let (mut p, mut v) = (vec![0.0; states.len() * size], vec![0.0; states.len()]);
    let aux = sym.evaluate_aux(&refs, &mut p, &mut v).unwrap();
    assert_eq!(
        counting.images.load(std::sync::atomic::Ordering::Relaxed),
        plain
    );
    assert_eq!((&p, &v), (&p0, &v0));
    for (i, s) in states.iter().enumerate() {
        assert_eq!(aux.ownership_of(i, 25), Some(&fake.ownership_of(s)[..]));
        assert!((aux.score_of(i).unwrap() - 10.0 * v[i]).abs() < 1e-4);
        assert!(aux.wdl_of(i).is_some());
    }
    assert!(aux.score_of(states.len()).is_none());
}
