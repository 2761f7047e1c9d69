//! Random playouts as an evaluator: pure MCTS, a baseline that needs no network.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::{EvalError, Evaluator};
use games::Game;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Plays each state out at random to the end: the value is the result for the state's player
/// to act; the policy is uniform (all logits 0).
pub struct RolloutEvaluator<G> {
    seed: u64,
    /// Calls so far: each call draws from its own generator, so threads never share one.
    calls: AtomicU64,
    batch_size: usize,
    /// A playout longer than this counts as a draw (the games here all end on their own).
    max_plies: usize,
    _game: PhantomData<fn() -> G>,
}

impl<G: Game> RolloutEvaluator<G> {
    pub fn new(seed: u64) -> Self {
        RolloutEvaluator {
            seed,
            calls: AtomicU64::new(0),
            batch_size: 1,
            max_plies: 100_000,
            _game: PhantomData,
        }
    }

    /// Accepts up to `n` states per call (leaf-parallel playouts; the default is 1, plain
    /// sequential MCTS).
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// The value of one random playout from `state` for its player to act.
    pub fn playout(
        state: &G,
        rng: &mut SmallRng,
        actions: &mut Vec<G::Action>,
        max_plies: usize,
    ) -> f32 {
        let me = state.to_act();
        let mut s = state.clone();
        for _ in 0..max_plies {
            if let Some(outcome) = s.outcome() {
                return outcome.value_for(me);
            }
            actions.clear();
            s.legal_actions(actions);
            match actions.choose(rng) {
                Some(&a) => s.play_unchecked(a),
                None => break,
            }
        }
        s.outcome().map_or(0.0, |o| o.value_for(me))
    }
}

impl<G: Game> Evaluator<G> for RolloutEvaluator<G> {
    fn batch_size(&self) -> usize {
        self.batch_size
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        let call = self.calls.fetch_add(1, Relaxed);
        let mut rng = SmallRng::seed_from_u64(self.seed ^ call.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        policy.fill(0.0);
        let mut actions = Vec::new();
        for (v, s) in value.iter_mut().zip(states) {
            *v = Self::playout(s, &mut rng, &mut actions, self.max_plies);
        }
        Ok(())
    }

    fn describe(&self) -> String {
        "random playouts".into()
    }
}
