//! The MCTS agent: a [`Search`] behind the [`Agent`] trait, keeping its tree across moves.

use std::sync::Arc;

use games::{Agent, AgentError, Game};
use infer::Evaluator;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::config::{Limit, RunOptions, SearchConfig};
use crate::search::{Search, SearchReport};

/// How an [`MctsAgent`] searches each move.
#[derive(Clone, Debug)]
pub struct MctsAgentConfig {
    /// Name shown in match tables.
    pub name: String,
    pub search: SearchConfig,
    /// Visits and/or time per move.
    pub limit: Limit,
    pub run: RunOptions,
    /// Move choice: 0 plays the most visited child, > 0 samples ∝ visits^(1/temperature).
    pub temperature: f32,
    pub seed: u64,
}

/// Plays by MCTS with any evaluator: a network, a fake, or random playouts.
pub struct MctsAgent<G: Game> {
    config: MctsAgentConfig,
    evaluator: Arc<dyn Evaluator<G>>,
    search: Option<Search<G>>,
    rng: SmallRng,
    last: Option<SearchReport>,
}

impl<G: Game> MctsAgent<G> {
    pub fn new(config: MctsAgentConfig, evaluator: Arc<dyn Evaluator<G>>) -> Self {
        MctsAgent {
            rng: SmallRng::seed_from_u64(config.seed),
            config,
            evaluator,
            search: None,
            last: None,
        }
    }

    /// The report of the last search (None if the last move needed none).
    pub fn last_report(&self) -> Option<&SearchReport> {
        self.last.as_ref()
    }

    /// The search as it stands (after the last move it chose or observed).
    pub fn search(&self) -> Option<&Search<G>> {
        self.search.as_ref()
    }

    fn error(&self, reason: impl Into<String>) -> AgentError {
        AgentError {
            agent: self.config.name.clone(),
            reason: reason.into(),
        }
    }
}

impl<G: Game> Agent<G> for MctsAgent<G> {
    fn name(&self) -> String {
        self.config.name.clone()
    }

    fn new_game(&mut self, _start: &G) -> Result<(), AgentError> {
        self.search = None;
        Ok(())
    }

    fn select_action(&mut self, state: &G) -> Result<G::Action, AgentError> {
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        self.last = None;
        match actions.len() {
            0 => return Err(self.error("no legal action")),
            // Nothing to think about (common in Liuzhou: one capture target, one step).
            1 => return Ok(actions[0]),
            _ => {}
        }
        let reusable = self
            .search
            .as_ref()
            .is_some_and(|s| s.state().hash() == state.hash());
        if !reusable {
            self.search = Some(Search::new(
                state.clone(),
                self.config.search.clone(),
                self.rng_seed(),
            ));
        }
        let search = self.search.as_mut().expect("set above");
        let report = search
            .run(&*self.evaluator, self.config.limit, self.config.run)
            .map_err(|e| AgentError {
                agent: self.config.name.clone(),
                reason: e.to_string(),
            })?;
        tracing::debug!(
            agent = %self.config.name,
            playouts = report.playouts,
            playouts_per_s = report.playouts_per_second() as u64,
            batch_fill = report.batches.fill(),
            root_value = search.root_value(),
            "searched"
        );
        self.last = Some(report);
        let chosen = search
            .choose_action(self.config.temperature, &mut self.rng)
            .ok_or_else(|| self.error("the search found no action"))?;
        Ok(chosen)
    }

    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), AgentError> {
        // Follow the game so that the chosen (or replied) subtree is kept.
        if let Some(s) = &mut self.search {
            if s.state().hash() != before.hash() || s.advance(action).is_err() {
                self.search = None;
            }
        }
        Ok(())
    }
}

impl<G: Game> MctsAgent<G> {
    fn rng_seed(&mut self) -> u64 {
        use rand::Rng;
        self.rng.gen()
    }
}
