//! The boundary between search and networks: one [`Evaluator`] trait. Search hands in states
//! and gets policy logits and values back; it never sees a tensor, a session or a provider.
//!
//! Here are the evaluators that need no network ([`fake::FakeEvaluator`] for tests and
//! benchmarks, [`RolloutEvaluator`] for pure MCTS), and [`Symmetric`], which averages any
//! evaluator over the board's symmetries; the ONNX Runtime backend is the `infer`
//! crate, so nothing that searches builds against ONNX Runtime.

pub mod aux;
pub mod fake;
pub mod rollout;
pub mod setting;
pub mod symmetric;

use games::Game;

pub use aux::{AuxOutputs, Heads};
pub use rollout::RolloutEvaluator;
pub use setting::InvalidSetting;
pub use symmetric::Symmetric;

/// Why a batch could not be evaluated.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("inference failed: {0}")]
    Backend(String),
}

/// Evaluates batches of states with a policy/value network (or a stand-in for one).
///
/// Implementations are shared by all search threads (`&self`); those that need exclusive access
/// to a backend session lock inside.
pub trait Evaluator<G: Game>: Send + Sync {
    /// The batch size this evaluator is built for. Callers may pass fewer states (the rest of
    /// the batch is padded) but never more.
    fn batch_size(&self) -> usize;

    /// For each state, writes `policy_size` logits over policy indices into the matching slice
    /// of `policy` (states.len() × policy_size) and a value in [−1, 1] from the point of view of
    /// the state's player to act into `value`.
    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError>;

    /// The auxiliary heads this evaluator answers beside policy and value (none by default).
    fn heads(&self) -> Heads {
        Heads::default()
    }

    /// [`Evaluator::evaluate`], and the auxiliary outputs of the heads it has ([`Heads`]),
    /// each `None` where it has no such head. Search's hot path calls `evaluate` alone; this
    /// is for analysis (a face asking for ownership and score), and by default answers none.
    fn evaluate_aux(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<AuxOutputs, EvalError> {
        self.evaluate(states, policy, value)?;
        Ok(AuxOutputs::default())
    }

    /// Whether this evaluator takes states of `shape`: a network made for one board takes that
    /// board's only, one with open board dims every board of its game (Go of any size).
    fn fits(&self, shape: games::TensorShape) -> bool {
        let _ = shape;
        true
    }

    /// A short description for logs and reports (model, backend, provider really in use).
    fn describe(&self) -> String;

    /// Whether a call costs about the same however many states it holds (a GPU's fixed cost
    /// per call, TensorRT's fixed shapes): a search then gathers many leaves per call by
    /// default. On the CPU a call's cost grows with its states, and small calls play stronger.
    fn calls_cost_whole_batch(&self) -> bool {
        false
    }
}
