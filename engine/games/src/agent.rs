//! Something that chooses actions: the random agent here; MCTS, alpha-beta and external
//! programs (UCI, GTP) elsewhere. `engine match` and the protocol faces drive agents only
//! through this trait.

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::{random_action, Game};

/// Why an agent could not choose (an external engine died, a model failed, …).
#[derive(Debug, thiserror::Error)]
#[error("{agent}: {reason}")]
pub struct AgentError {
    pub agent: String,
    pub reason: String,
}

impl AgentError {
    /// The agent named by `spec` (or the spec itself) failed for `reason`.
    pub fn new(spec: &str, reason: impl Into<String>) -> Self {
        AgentError {
            agent: spec.to_string(),
            reason: reason.into(),
        }
    }
}

/// An agent spec's kind and its `KEY=VALUE` pairs.
pub type SpecParts<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// Splits an agent spec `KIND[:KEY=VALUE[,KEY=VALUE…]]` into its kind and its pairs (trimmed),
/// for the games' own agent factories. Values may hold spaces (a command line) but not commas.
pub fn split_spec(spec: &str) -> Result<SpecParts<'_>, AgentError> {
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let mut params = Vec::new();
    if !rest.is_empty() {
        for item in rest.split(',') {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| AgentError::new(spec, format!("'{item}' is not KEY=VALUE")))?;
            params.push((k.trim(), v.trim()));
        }
    }
    Ok((kind, params))
}

/// A spec's `timeout=S` value: a positive, finite number of seconds; else the reason.
pub fn parse_timeout(value: &str) -> Result<std::time::Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|t| *t > 0.0)
        .and_then(|t| std::time::Duration::try_from_secs_f64(t).ok())
        .ok_or_else(|| format!("timeout '{value}' is not a positive number of seconds"))
}

/// Chooses actions in games of `G`.
///
/// A match calls `new_game` once, then for every action of the game either `select_action`
/// (when this agent is to act) followed by `observe`, or only `observe` (the opponent's
/// actions), so agents that keep a tree or talk to another program can follow the game.
pub trait Agent<G: Game>: Send {
    /// A short name for match tables and logs.
    fn name(&self) -> String;

    /// Chooses an action for the player to act in `state`, which is not finished.
    fn select_action(&mut self, state: &G) -> Result<G::Action, AgentError>;

    /// Chooses an action or resigns. Matches and protocol faces call this; by default an agent
    /// never resigns and this is `select_action`. After a resignation nothing is observed: the
    /// game is over.
    fn decide(&mut self, state: &G) -> Result<Decision<G::Action>, AgentError> {
        self.select_action(state).map(Decision::Play)
    }

    /// Whether `error`, returned by this agent's last `decide`, is an answer of its own that
    /// the game refuses (an external program's illegal or unreadable move) rather than a
    /// breakdown (a dead process, a failed model). A match scores such a forfeit as a loss for
    /// the agent and goes on; a breakdown stops the match. By default nothing is a forfeit.
    fn forfeits(&self, _error: &AgentError) -> bool {
        false
    }

    /// A new game starts from `start`.
    fn new_game(&mut self, _start: &G) -> Result<(), AgentError> {
        Ok(())
    }

    /// `action` was played in `before` (by either side).
    fn observe(&mut self, _before: &G, _action: G::Action) -> Result<(), AgentError> {
        Ok(())
    }

    /// A one-line account of the work done so far (searches, speed, batch fill), for the end
    /// of a match; `None` for agents with nothing to report.
    fn summary(&self) -> Option<String> {
        None
    }

    /// The time the next decisions may take (a protocol's clock), or `None` for the agent's own
    /// limit alone. Agents that do not search ignore it.
    fn set_move_time(&mut self, _time: Option<std::time::Duration>) {}

    /// What the last `select_action` saw, for faces that show it (the web page's evaluation
    /// bar); `None` for agents that do not say.
    fn explain(&self) -> Option<Explanation<G::Action>> {
        None
    }

    /// Gives back memory kept between moves (a search tree), at the cost of the next move
    /// starting afresh; a server calls it for idle sessions. Returns whether there was any.
    fn release_memory(&mut self) -> bool {
        false
    }

    /// Whether it answers at once, without searching (a server need not ration its moves).
    fn is_instant(&self) -> bool {
        false
    }

    /// Searches `state` without choosing (for `time` more when given, else under the agent's
    /// own limit), keeping what it learns for the move that follows, and lists the actions it
    /// weighed. `None` for agents that search no tree. Analysis faces call it again and again
    /// on one position to watch the search grow.
    fn analyse(
        &mut self,
        _state: &G,
        _time: Option<std::time::Duration>,
    ) -> Result<Option<Analysis<G::Action>>, AgentError> {
        Ok(None)
    }

    /// The playouts one move's search spends at most (its visits), for faces that search a
    /// move in slices of [`Agent::analyse`] (`kata-genmove_analyze`); `None` where it has none.
    fn visit_limit(&self) -> Option<u64> {
        None
    }
}

/// What a search found in one position (see [`Agent::analyse`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis<A> {
    /// Playouts of the search just made.
    pub playouts: u64,
    /// Visits of the position so far (a kept tree's included).
    pub visits: u64,
    /// Expected result for the player to act, −1..=1 (exact when proven).
    pub value: f32,
    /// Every legal action, in the order the search prefers them: a proven win first, a proven
    /// loss last, else by visits (ties by prior).
    pub candidates: Vec<Candidate<A>>,
}

/// One action of an [`Analysis`].
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate<A> {
    pub action: A,
    pub visits: u32,
    /// Expected result for the player to act after this action, −1..=1: exact when proven,
    /// else the mean of its visits; `None` when unvisited.
    pub value: Option<f32>,
    /// The prior the search gave it (the network's, or uniform).
    pub prior: f32,
    /// The result with best play after it, when the game ends there or the search proved it.
    pub proven: Option<crate::Outcome>,
    /// Actions from this one (included) to the game's end along the proof of a win or loss.
    pub proof_length: Option<u32>,
    /// The line the search expects, starting with `action`.
    pub pv: Vec<A>,
    /// Mean and standard deviation of the scores backed up through it (final margins in
    /// points for the player to act), when the search gathered scores.
    pub score: Option<(f32, f32)>,
}

/// What an agent does on its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision<A> {
    Play(A),
    /// Gives the game up: the opponent wins.
    Resign,
}

/// An agent's account of its last decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation<A> {
    /// Expected result for the player who chose, in −1..=1.
    pub value: Option<f32>,
    /// The line it expects, starting with its choice.
    pub pv: Vec<A>,
    /// Playouts of a tree search.
    pub visits: Option<u64>,
    /// Positions an alpha-beta search visited.
    pub nodes: Option<u64>,
}

/// A boxed agent is an agent (so that factories returning `Box<dyn Agent<G>>` plug in wherever
/// an agent is wanted).
impl<G: Game> Agent<G> for Box<dyn Agent<G>> {
    fn name(&self) -> String {
        (**self).name()
    }

    fn select_action(&mut self, state: &G) -> Result<G::Action, AgentError> {
        (**self).select_action(state)
    }

    fn decide(&mut self, state: &G) -> Result<Decision<G::Action>, AgentError> {
        (**self).decide(state)
    }

    fn forfeits(&self, error: &AgentError) -> bool {
        (**self).forfeits(error)
    }

    fn new_game(&mut self, start: &G) -> Result<(), AgentError> {
        (**self).new_game(start)
    }

    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), AgentError> {
        (**self).observe(before, action)
    }

    fn summary(&self) -> Option<String> {
        (**self).summary()
    }

    fn explain(&self) -> Option<Explanation<G::Action>> {
        (**self).explain()
    }

    fn release_memory(&mut self) -> bool {
        (**self).release_memory()
    }

    fn is_instant(&self) -> bool {
        (**self).is_instant()
    }

    fn set_move_time(&mut self, time: Option<std::time::Duration>) {
        (**self).set_move_time(time)
    }

    fn visit_limit(&self) -> Option<u64> {
        (**self).visit_limit()
    }

    fn analyse(
        &mut self,
        state: &G,
        time: Option<std::time::Duration>,
    ) -> Result<Option<Analysis<G::Action>>, AgentError> {
        (**self).analyse(state, time)
    }
}

/// Plays uniformly at random among the legal actions.
pub struct RandomAgent {
    rng: SmallRng,
}

impl RandomAgent {
    pub fn new(seed: u64) -> Self {
        RandomAgent {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl<G: Game> Agent<G> for RandomAgent {
    fn name(&self) -> String {
        "random".into()
    }

    fn is_instant(&self) -> bool {
        true
    }

    fn select_action(&mut self, state: &G) -> Result<G::Action, AgentError> {
        random_action(state, &mut self.rng).ok_or_else(|| AgentError {
            agent: "random".into(),
            reason: "no legal action".into(),
        })
    }
}
