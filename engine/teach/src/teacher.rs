//! Teachers: programs that know a game better than a fresh network and say, for a position,
//! which actions are good (a policy over the legal actions) and, when they can, how the game
//! stands (a value for the player to act). `bootstrap` turns their games into training shards.
//!
//! - [`GtpTeacher`](crate::gtp_teacher::GtpTeacher): GNU Go over GTP (`top_moves`,
//!   `estimate_score`).
//! - [`UciTeacher`](crate::uci_teacher::UciTeacher): a UCI Xiangqi engine (Fairy-Stockfish) with
//!   MultiPV.
//! - [`AgentTeacher`]: any [`Agent`] (alpha-beta, MCTS, a network, random): its chosen move, or
//!   the visit distribution when the agent analyses, and the value it explains its choice by.

use games::{Agent, AgentError, Decision, Game};

/// Why a teacher could not advise.
#[derive(Debug, thiserror::Error)]
pub enum TeachError {
    /// The spec that names the teacher is wrong.
    #[error("teacher {spec:?}: {reason}")]
    Spec { spec: String, reason: String },
    /// Talking to the teacher failed (it could not start, died or timed out).
    #[error("{engine}: {reason}")]
    Engine { engine: String, reason: String },
    /// The teacher answered something this reader cannot use.
    #[error("{engine} answered `{request}` with {line:?}: {reason}")]
    Garbage {
        engine: String,
        request: String,
        line: String,
        reason: String,
    },
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// What a teacher says about one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Advice<A> {
    /// Legal actions with their probabilities: no action twice, each probability in [0, 1],
    /// together 1.
    pub policy: Vec<(A, f32)>,
    /// Expected result for the player to act, in [−1, 1], when the teacher estimates one.
    pub value: Option<f32>,
    /// What the teacher would do here.
    pub decision: Decision<A>,
}

/// A program that advises on positions of `G` and plays the games it advises on.
///
/// The bootstrap driver calls `new_game` once per game, then for every position `advise`
/// followed by `observe` with the action actually played (the teacher's, a sampled one, or an
/// opponent's), so a teacher that keeps its own board stays in step.
pub trait Teacher<G: Game>: Send {
    /// A short name for logs and shard metadata.
    fn name(&self) -> String;

    /// A new game from `start`. `seed` varies the teacher between games (a level drawn from a
    /// range, the engine's random seed); the same seed gives the same game.
    fn new_game(&mut self, start: &G, seed: u64) -> Result<(), TeachError>;

    /// The teacher's advice for the player to act in `state`, which is not finished.
    fn advise(&mut self, state: &G) -> Result<Advice<G::Action>, TeachError>;

    /// `action` was played in `before`.
    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), TeachError>;

    /// What the teacher is set to in the current game, for the closing line (`level 7`).
    fn game_setting(&self) -> Option<String> {
        None
    }
}

/// A boxed teacher is a teacher, so factories can return `Box<dyn Teacher<G>>`.
impl<G: Game> Teacher<G> for Box<dyn Teacher<G>> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn new_game(&mut self, start: &G, seed: u64) -> Result<(), TeachError> {
        (**self).new_game(start, seed)
    }
    fn advise(&mut self, state: &G) -> Result<Advice<G::Action>, TeachError> {
        (**self).advise(state)
    }
    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), TeachError> {
        (**self).observe(before, action)
    }
    fn game_setting(&self) -> Option<String> {
        (**self).game_setting()
    }
}

/// Probabilities from scores: softmax of `score / temperature`. A temperature of 0 puts
/// everything on the first best score. Scores may be large (mates as centipawns): the maximum
/// is subtracted first, so nothing overflows.
pub fn softmax(scores: &[f32], temperature: f32) -> Vec<f32> {
    if scores.is_empty() {
        return Vec::new();
    }
    let best = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if temperature <= 0.0 {
        let first = scores.iter().position(|&s| s == best).unwrap_or(0);
        return (0..scores.len())
            .map(|i| if i == first { 1.0 } else { 0.0 })
            .collect();
    }
    let weights: Vec<f32> = scores
        .iter()
        .map(|&s| ((s - best) / temperature).exp())
        .collect();
    let sum: f32 = weights.iter().sum();
    weights.iter().map(|w| w / sum).collect()
}

/// Any agent as a teacher: the policy is the visit distribution of [`Agent::analyse`] when the
/// agent searches a tree, else all on the move it chooses. The value is the one the agent
/// explains its choice by (alpha-beta's score, a tree search's root value); an agent that
/// explains none (random) leaves the game's result alone as the value target.
pub struct AgentTeacher<G: Game> {
    agent: Box<dyn Agent<G>>,
}

impl<G: Game> AgentTeacher<G> {
    pub fn new(agent: Box<dyn Agent<G>>) -> Self {
        AgentTeacher { agent }
    }
}

impl<G: Game> Teacher<G> for AgentTeacher<G> {
    fn name(&self) -> String {
        self.agent.name()
    }

    fn new_game(&mut self, start: &G, _seed: u64) -> Result<(), TeachError> {
        Ok(self.agent.new_game(start)?)
    }

    fn advise(&mut self, state: &G) -> Result<Advice<G::Action>, TeachError> {
        let visited: Vec<(G::Action, f32)> = match self.agent.analyse(state, None)? {
            Some(analysis) => analysis
                .candidates
                .iter()
                .filter(|c| c.visits > 0 && state.is_legal(c.action))
                .map(|c| (c.action, c.visits as f32))
                .collect(),
            None => Vec::new(),
        };
        let decision = self.agent.decide(state)?;
        // A resignation leaves the explanation of the agent's previous move in place.
        let value = match decision {
            Decision::Play(_) => self.agent.explain().and_then(|e| e.value),
            Decision::Resign => None,
        };
        let total: f32 = visited.iter().map(|(_, v)| v).sum();
        let policy = if total > 0.0 {
            visited.into_iter().map(|(a, v)| (a, v / total)).collect()
        } else {
            match decision {
                Decision::Play(a) => vec![(a, 1.0)],
                // A resignation without a search says nothing about the moves.
                Decision::Resign => Vec::new(),
            }
        };
        Ok(Advice {
            policy,
            value,
            decision,
        })
    }

    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), TeachError> {
        Ok(self.agent.observe(before, action)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_sums_to_one_and_survives_huge_scores() {
        let p = softmax(&[75.0, 74.0, 74.0], 1.0);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(p[0] > p[1] && p[1] == p[2]);
        let p = softmax(&[99_000.0, 20.0, -99_000.0], 100.0);
        assert_eq!(p[0], 1.0);
        assert!(p.iter().all(|x| x.is_finite()));
        assert_eq!(softmax(&[1.0, 3.0, 3.0], 0.0), [0.0, 1.0, 0.0]);
        assert!(softmax(&[], 1.0).is_empty());
    }
}
