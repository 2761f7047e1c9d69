//! The MCTS agent: a [`Search`] behind the [`Agent`] trait, keeping its tree across moves.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::Playable;
use eval::Evaluator;
use games::{Agent, AgentError, Analysis, Decision, Explanation};
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
    /// Move choice. PUCT: 0 plays the most visited child, > 0 samples ∝
    /// visits^(1/temperature). Gumbel: the scale of the Gumbel noise (0: greedy).
    pub temperature: f32,
    pub seed: u64,
    /// Resign (in [`Agent::decide`]) when the searched value of the chosen action, for the
    /// player to act, is below this; `None` never resigns. Forced moves are not searched and
    /// never resign.
    pub resign_below: Option<f32>,
}

/// Plays by MCTS with any evaluator: a network, a fake, or random playouts.
pub struct MctsAgent<G: Playable> {
    config: MctsAgentConfig,
    evaluator: Arc<dyn Evaluator<G>>,
    search: Option<Search<G>>,
    rng: SmallRng,
    last: Option<SearchReport>,
    /// Every search so far, added up.
    total: SearchReport,
    searches: u64,
    /// Ends a running search early (see [`MctsAgent::set_halt`]).
    halt: Option<Arc<AtomicBool>>,
    /// A protocol's time for the next moves (see [`Agent::set_move_time`]), within the
    /// configured limit.
    move_time: Option<Duration>,
    /// A search filled the arena (said once: later searches would repeat it).
    warned_full: bool,
    /// The action the last search chose (None when the last move needed no search).
    chosen: Option<G::Action>,
}

impl<G: Playable> MctsAgent<G> {
    /// The agent's searches gather scores where `evaluator` has a score head
    /// ([`SearchConfig::track_scores`]): its analyses report them.
    pub fn new(mut config: MctsAgentConfig, evaluator: Arc<dyn Evaluator<G>>) -> Self {
        config.search.track_scores = true;
        MctsAgent {
            rng: SmallRng::seed_from_u64(config.seed),
            config,
            evaluator,
            search: None,
            last: None,
            total: SearchReport::default(),
            searches: 0,
            halt: None,
            move_time: None,
            warned_full: false,
            chosen: None,
        }
    }

    /// Changes the visits and time of the searches to come (a protocol's per-move budget).
    pub fn set_limit(&mut self, limit: Limit) {
        self.config.limit = limit;
    }

    /// The visits and time the next search gets: the configured limit, its time shortened to a
    /// protocol's move time when that is shorter.
    pub fn limit(&self) -> Limit {
        let mut limit = self.config.limit;
        if let Some(t) = self.move_time {
            limit.time = Some(limit.time.map_or(t, |own| own.min(t)));
        }
        limit
    }

    /// A flag that ends the running search at once when set (a protocol's `stop`); see
    /// [`Search::set_halt`].
    pub fn set_halt(&mut self, flag: Option<Arc<AtomicBool>>) {
        if let Some(s) = &mut self.search {
            s.set_halt(flag.clone());
        }
        self.halt = flag;
    }

    /// The value below which [`Agent::decide`] resigns, if any.
    pub fn resign_below(&self) -> Option<f32> {
        self.config.resign_below
    }

    /// Changes when [`Agent::decide`] resigns (`None`: never).
    pub fn set_resign_below(&mut self, below: Option<f32>) {
        self.config.resign_below = below;
    }

    /// The value of the action the last search chose, for the player who chose: exact when
    /// proven, its mean otherwise, the root's before any visit. `None` when the last move
    /// needed no search.
    fn chosen_value(&self) -> Option<f32> {
        let (search, action, _) = (self.search.as_ref()?, self.chosen?, self.last?);
        let chosen = search
            .root_children()
            .into_iter()
            .find(|c| c.action == action && c.visits > 0);
        Some(match chosen {
            Some(c) => c
                .proven
                .map_or(c.q as f32, |o| o.value_for(search.state().to_act())),
            None => search.root_value(),
        })
    }

    /// The report of the last search (None if the last move needed none).
    /// How it searches: threads, leaves per evaluator call.
    pub fn run_options(&self) -> RunOptions {
        self.config.run
    }

    /// Its search settings (exploration, arena size, cache).
    pub fn search_config(&self) -> &SearchConfig {
        &self.config.search
    }

    pub fn last_report(&self) -> Option<&SearchReport> {
        self.last.as_ref()
    }

    /// Gives the search's memory back (its arenas and cache); the next move searches a fresh
    /// tree. Returns whether there was any to give. For idle games of a server.
    pub fn release(&mut self) -> bool {
        self.search.take().is_some()
    }

    /// The search as it stands (after the last move it chose or observed).
    pub fn search(&self) -> Option<&Search<G>> {
        self.search.as_ref()
    }

    /// The evaluator it searches with (for analysis heads beside the search's own outputs).
    pub fn evaluator(&self) -> &Arc<dyn Evaluator<G>> {
        &self.evaluator
    }

    fn error(&self, reason: impl Into<String>) -> AgentError {
        AgentError {
            agent: self.config.name.clone(),
            reason: reason.into(),
        }
    }
}

impl<G: Playable> Agent<G> for MctsAgent<G> {
    fn name(&self) -> String {
        self.config.name.clone()
    }

    fn new_game(&mut self, start: &G) -> Result<(), AgentError> {
        if let Some(s) = &mut self.search {
            s.reset(start.clone());
        }
        Ok(())
    }

    fn select_action(&mut self, state: &G) -> Result<G::Action, AgentError> {
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        self.last = None;
        self.chosen = None;
        match actions.len() {
            0 => return Err(self.error("no legal action")),
            // Nothing to think about (common in Liuzhou: one capture target, one step).
            1 => return Ok(actions[0]),
            _ => {}
        }
        self.search_from(state)?;
        let search = self.search.as_ref().expect("search_from keeps its search");
        let chosen = search
            .choose_action(self.config.temperature, &mut self.rng)
            .ok_or_else(|| self.error("the search found no action"))?;
        self.chosen = Some(chosen);
        Ok(chosen)
    }

    fn decide(&mut self, state: &G) -> Result<Decision<G::Action>, AgentError> {
        let action = self.select_action(state)?;
        // The value is read only when a threshold asks for it: no work for agents that never
        // resign.
        let hopeless = self
            .resign_below()
            .is_some_and(|below| self.chosen_value().is_some_and(|v| v < below));
        Ok(if hopeless {
            Decision::Resign
        } else {
            Decision::Play(action)
        })
    }

    /// The chosen action's value (see [`MctsAgent::chosen_value`]), its line, and the
    /// playouts.
    fn explain(&self) -> Option<Explanation<G::Action>> {
        let (search, action, report) = (self.search.as_ref()?, self.chosen?, self.last?);
        Some(Explanation {
            value: self.chosen_value(),
            pv: search.principal_variation(action),
            visits: Some(report.playouts),
            nodes: None,
        })
    }

    fn release_memory(&mut self) -> bool {
        self.release()
    }

    fn summary(&self) -> Option<String> {
        let t = &self.total;
        let mut line = format!(
            "{}: {} searches, {} playouts, {:.0} playouts/s, {:.0} evals/s in search ({})",
            self.config.name,
            self.searches,
            t.playouts,
            t.playouts_per_second(),
            t.batches.states as f64 / t.elapsed.as_secs_f64().max(1e-9),
            self.evaluator.describe()
        );
        if t.batches.batches > 0 {
            line += &format!(
                ", batch fill {:.1} % over {} batches",
                100.0 * t.batches.fill(),
                t.batches.batches
            );
        }
        if t.tree_full > 0 {
            line += &format!(", {} leaves not expanded (tree full)", t.tree_full);
        }
        Some(line)
    }

    fn set_move_time(&mut self, time: Option<Duration>) {
        self.move_time = time;
    }

    fn visit_limit(&self) -> Option<u64> {
        self.config.limit.visits
    }

    /// Searches as a move would (the kept tree included; `time` in place of the configured
    /// limit when given), but a position with one legal action is searched too, and nothing
    /// is chosen.
    fn analyse(
        &mut self,
        state: &G,
        time: Option<Duration>,
    ) -> Result<Option<Analysis<G::Action>>, AgentError> {
        if state.outcome().is_some() {
            return Err(self.error("the game is over"));
        }
        self.last = None;
        self.chosen = None;
        let configured = self.config.limit;
        if let Some(t) = time {
            self.config.limit = Limit::time(t);
        }
        let searched = self.search_from(state);
        self.config.limit = configured;
        searched?;
        let (Some(search), Some(report)) = (&self.search, &self.last) else {
            return Err(self.error("the search made no report"));
        };
        Ok(Some(Analysis {
            playouts: report.playouts,
            visits: u64::from(search.root_visits()),
            value: search.root_value(),
            candidates: search.candidates(),
        }))
    }

    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), AgentError> {
        // Follow the game so that the chosen (or replied) subtree is kept; a search that lost
        // track is reset at the next `select_action`.
        if let Some(s) = &mut self.search {
            if s.state().hash() == before.hash() {
                let _ = s.advance(action);
            }
        }
        Ok(())
    }
}

impl<G: Playable> MctsAgent<G> {
    /// Runs one search from `state`, reusing the tree when it stands there, and records its
    /// report.
    fn search_from(&mut self, state: &G) -> Result<(), AgentError> {
        let seed = self.rng_seed();
        let limit = self.limit();
        let search = match &mut self.search {
            // Usually the tree followed the game through `observe`: keep it.
            Some(s) if s.state().hash() == state.hash() => s,
            // Keep the arena and the cache (still valid: keyed by position).
            Some(s) => {
                s.reset(state.clone());
                s
            }
            None => {
                let mut s = Search::new(state.clone(), self.config.search.clone(), seed);
                s.set_halt(self.halt.clone());
                // A Gumbel search draws its move with noise at the move's temperature.
                s.set_gumbel_noise(self.config.temperature);
                self.search.insert(s)
            }
        };
        let report = search
            .run(&*self.evaluator, limit, self.config.run)
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
        if report.tree_full > 0 && !self.warned_full {
            self.warned_full = true;
            tracing::warn!(
                agent = %self.config.name,
                leaves = report.tree_full,
                nodes = search.tree().capacity(),
                "the search tree is full: later leaves are evaluated but not expanded, so more time adds little"
            );
        }
        self.last = Some(report);
        self.searches += 1;
        let t = &mut self.total;
        t.playouts += report.playouts;
        t.terminal += report.terminal;
        t.cache_hits += report.cache_hits;
        t.collisions += report.collisions;
        t.tree_full += report.tree_full;
        t.elapsed += report.elapsed;
        t.batches.merge(&report.batches);
        Ok(())
    }

    fn rng_seed(&mut self) -> u64 {
        use rand::Rng;
        self.rng.gen()
    }
}
