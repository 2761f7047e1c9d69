//! A stand-in network for tests and benchmarks: no model file, no ONNX Runtime.
//!
//! Its outputs are a pure function of the state's hash (and the seed), so a search driven by it
//! is reproducible and a test can recompute exactly what any leaf was given.

use std::time::{Duration, Instant};

use games::{Encoding, Player};

use crate::{AuxOutputs, EvalError, Evaluator, Heads};

/// What the fake network answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FakeOutput {
    /// All logits 0 (a uniform policy) and value 0.
    Uniform,
    /// Logits in [−1, 1) and a value in [−1, 1), pseudo-random but fixed per (seed, state hash,
    /// policy index).
    Seeded(u64),
}

/// A fake [`Evaluator`]: uniform or seeded-random outputs, a configurable batch size and an
/// optional artificial cost per batch (to stand in for a real network's latency).
#[derive(Clone, Debug)]
pub struct FakeEvaluator {
    batch_size: usize,
    output: FakeOutput,
    batch_cost: Duration,
    /// Answers ownership, score and wdl too ([`FakeEvaluator::with_aux`]).
    aux: bool,
    /// The one board it takes, standing in for a network made for one board
    /// ([`FakeEvaluator::for_board`]); `None`: every board.
    board: Option<games::TensorShape>,
}

impl FakeEvaluator {
    /// A uniform evaluator with the given batch size and no artificial cost.
    pub fn new(batch_size: usize) -> Self {
        FakeEvaluator {
            batch_size: batch_size.max(1),
            output: FakeOutput::Uniform,
            batch_cost: Duration::ZERO,
            aux: false,
            board: None,
        }
    }

    /// Takes states of `shape` only ([`Evaluator::fits`]), as a network made for one board.
    pub fn for_board(mut self, shape: games::TensorShape) -> Self {
        self.board = Some(shape);
        self
    }

    /// Has the auxiliary heads too: ownership, score and wdl (see
    /// [`FakeEvaluator::ownership_of`] and [`FakeEvaluator::score_of`]).
    pub fn with_aux(mut self) -> Self {
        self.aux = true;
        self
    }

    /// The ownership this evaluator gives `state` (`height × width` cells, for its player to
    /// act). Uniform: a ramp fixed for the first player, `(2·cell + 1)/cells − 1`, whatever the
    /// position (so a visit-weighted mean over positions gives it back); seeded: pseudo-random
    /// per (seed, state hash, cell).
    pub fn ownership_of<G: Encoding>(&self, state: &G) -> Vec<f32> {
        let shape = state.shape();
        let cells = shape.height * shape.width;
        match self.output {
            FakeOutput::Uniform => {
                let sign = if state.to_act() == Player::First {
                    1.0
                } else {
                    -1.0
                };
                (0..cells)
                    .map(|c| sign * ((2 * c + 1) as f32 / cells as f32 - 1.0))
                    .collect()
            }
            FakeOutput::Seeded(seed) => {
                let base = mix(seed ^ state.hash() ^ 0x0B5E_55ED);
                (0..cells).map(|c| unit(mix(base ^ c as u64))).collect()
            }
        }
    }

    /// The score this evaluator gives `state`, for its player to act: uniform, 2.5 points for
    /// the first player whatever the position; seeded, 10 × the value.
    pub fn score_of<G: Encoding>(&self, state: &G) -> f32 {
        match self.output {
            FakeOutput::Uniform if state.to_act() == Player::First => 2.5,
            FakeOutput::Uniform => -2.5,
            FakeOutput::Seeded(_) => 10.0 * self.value_of(state),
        }
    }

    /// Pseudo-random but reproducible outputs keyed by `seed` and the state's hash.
    pub fn seeded(mut self, seed: u64) -> Self {
        self.output = FakeOutput::Seeded(seed);
        self
    }

    /// Spends `cost` per batch (busy-waiting, like a CPU backend would) before answering.
    pub fn with_batch_cost(mut self, cost: Duration) -> Self {
        self.batch_cost = cost;
        self
    }

    /// The value this evaluator gives `state` (from the point of view of its player to act).
    /// Tests use it to recompute what the search was told.
    pub fn value_of<G: Encoding>(&self, state: &G) -> f32 {
        match self.output {
            FakeOutput::Uniform => 0.0,
            FakeOutput::Seeded(seed) => unit(mix(seed ^ state.hash())),
        }
    }
}

/// SplitMix64's finaliser: a cheap, well-spread hash of one word.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Maps a word to [−1, 1).
#[inline]
fn unit(z: u64) -> f32 {
    ((z >> 40) as f32 / (1u64 << 23) as f32) - 1.0
}

impl<G: Encoding> Evaluator<G> for FakeEvaluator {
    fn batch_size(&self) -> usize {
        self.batch_size
    }

    fn fits(&self, shape: games::TensorShape) -> bool {
        self.board.is_none_or(|b| b == shape)
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        if states.len() > self.batch_size {
            return Err(EvalError::Backend(format!(
                "fake evaluator: {} states exceed the batch size {}",
                states.len(),
                self.batch_size
            )));
        }
        let start = Instant::now();
        let policy_size = states.first().map_or(0, |s| s.shape().policy_size);
        if policy.len() < states.len() * policy_size || value.len() < states.len() {
            return Err(EvalError::Backend(format!(
                "fake evaluator: output buffers too small for {} states",
                states.len()
            )));
        }
        for (i, state) in states.iter().enumerate() {
            let logits = &mut policy[i * policy_size..(i + 1) * policy_size];
            match self.output {
                FakeOutput::Uniform => logits.fill(0.0),
                FakeOutput::Seeded(seed) => {
                    let base = mix(seed ^ state.hash());
                    for (j, l) in logits.iter_mut().enumerate() {
                        *l = unit(mix(base ^ j as u64));
                    }
                }
            }
            value[i] = self.value_of(*state);
        }
        while start.elapsed() < self.batch_cost {
            std::hint::spin_loop();
        }
        Ok(())
    }

    fn heads(&self) -> Heads {
        Heads {
            ownership: self.aux,
            score: self.aux,
            wdl: self.aux,
        }
    }

    fn evaluate_aux(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<AuxOutputs, EvalError> {
        self.evaluate(states, policy, value)?;
        if !self.aux {
            return Ok(AuxOutputs::default());
        }
        let mut wdl = Vec::with_capacity(states.len() * 3);
        for &v in &value[..states.len()] {
            // Logits whose softmax has win − loss = the value and no draws to speak of.
            let (w, l) = ((1.0 + v) / 2.0, (1.0 - v) / 2.0);
            wdl.extend([w.max(1e-6).ln(), -20.0, l.max(1e-6).ln()]);
        }
        Ok(AuxOutputs {
            ownership: Some(states.iter().flat_map(|s| self.ownership_of(*s)).collect()),
            score: Some(states.iter().map(|s| self.score_of(*s)).collect()),
            wdl: Some(wdl),
        })
    }

    fn describe(&self) -> String {
        match self.output {
            FakeOutput::Uniform => format!("fake evaluator (uniform, batch {})", self.batch_size),
            FakeOutput::Seeded(seed) => {
                format!("fake evaluator (seed {seed}, batch {})", self.batch_size)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::go::{GoRules, GoState, Move, Point};
    use games::Game;

    #[test]
    fn auxiliary_outputs_only_when_asked_for() {
        let mut white = GoState::new(GoRules::with_size(5)).unwrap();
        let black = white.clone();
        white.play(Move::Place(Point::new(2, 2))).unwrap();
        let states = [&black, &white];
        let (mut p, mut v) = (vec![0.0; 2 * 26], vec![0.0; 2]);
        let plain = FakeEvaluator::new(2).seeded(3);
        assert!(!Evaluator::<GoState>::heads(&plain).any());
        let none = plain.evaluate_aux(&states, &mut p, &mut v).unwrap();
        assert_eq!(none, AuxOutputs::default());
        let (p0, v0) = (p.clone(), v.clone());
        let aux = FakeEvaluator::new(2).seeded(3).with_aux();
        let got = aux.evaluate_aux(&states, &mut p, &mut v).unwrap();
        assert_eq!((p, v), (p0, v0), "policy and value as without the heads");
        assert_eq!(got.ownership_of(1, 25), Some(&aux.ownership_of(&white)[..]));
        assert_eq!(got.score_of(0), Some(aux.score_of(&black)));
        assert!(got.wdl_of(1).is_some() && got.wdl_of(2).is_none());
        // Uniform: one ramp for Black, seen from the side to move.
        let uniform = FakeEvaluator::new(1).with_aux();
        let (b, w) = (uniform.ownership_of(&black), uniform.ownership_of(&white));
        assert!(b.iter().zip(&w).all(|(x, y)| *x == -*y));
        assert_eq!(uniform.score_of(&white), -2.5);
    }
}
