//! The engine's opponents for the faces a person plays against (`engine play`, `engine serve`):
//! one factory that turns an agent name and a strength into something that thinks, and reports
//! what it thought when it can (visits, value, principal variation).

use games::{Agent, AgentError, Game, RandomAgent};

/// The agents a person can choose, by the name the CLI flags and the web API use.
pub const AGENT_NAMES: &[&str] = &["random"];

/// What the engine decided, with the search's figures when the agent has them.
#[derive(Clone, Debug)]
pub struct Thought<A> {
    pub action: A,
    /// Playouts the search made for this decision.
    pub visits: Option<u64>,
    /// Expected result for the player who chose, in −1..=1.
    pub value: Option<f32>,
    /// The line the search expects, starting with `action`.
    pub pv: Vec<A>,
}

/// An agent as a person's opponent: it chooses and says why when it can.
pub trait Thinker<G: Game>: Send {
    /// The agent's name with its strength, for records and the page.
    fn name(&self) -> String;

    /// A game starts (or restarts after an undo) from `start`.
    fn new_game(&mut self, start: &G) -> Result<(), AgentError>;

    /// Chooses an action for the player to act in `state`, which is not finished.
    fn think(&mut self, state: &G) -> Result<Thought<G::Action>, AgentError>;

    /// `action` was played in `before`, by either side.
    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), AgentError>;
}

/// Any [`Agent`] as a [`Thinker`] that reports nothing but its choice.
pub struct Plain<A> {
    agent: A,
}

impl<G: Game, A: Agent<G>> Thinker<G> for Plain<A> {
    fn name(&self) -> String {
        self.agent.name()
    }

    fn new_game(&mut self, start: &G) -> Result<(), AgentError> {
        self.agent.new_game(start)
    }

    fn think(&mut self, state: &G) -> Result<Thought<G::Action>, AgentError> {
        let action = self.agent.select_action(state)?;
        Ok(Thought {
            action,
            visits: None,
            value: None,
            pv: vec![action],
        })
    }

    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), AgentError> {
        self.agent.observe(before, action)
    }
}

/// Why no thinker could be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgentSpecError {
    #[error("unknown agent {name:?}; known: {known}")]
    Unknown { name: String, known: String },
    #[error("strength {got} is outside 1..={max} visits")]
    Strength { got: u64, max: u64 },
}

/// Which agent to build and how strong: the factory's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSpec {
    /// One of [`AGENT_NAMES`].
    pub name: String,
    /// Visits per decision for searching agents; ignored by the others.
    pub visits: u64,
    /// Seed of the agent's random choices.
    pub seed: u64,
}

impl AgentSpec {
    /// Checks the name and that the strength lies in `1..=max_visits`.
    pub fn validate(&self, max_visits: u64) -> Result<(), AgentSpecError> {
        if !AGENT_NAMES.contains(&self.name.as_str()) {
            return Err(AgentSpecError::Unknown {
                name: self.name.clone(),
                known: AGENT_NAMES.join(", "),
            });
        }
        if self.visits == 0 || self.visits > max_visits {
            return Err(AgentSpecError::Strength {
                got: self.visits,
                max: max_visits,
            });
        }
        Ok(())
    }

    /// Builds the thinker for games of `G`. A searching agent plugs in here as one more arm.
    pub fn build<G: Game>(&self) -> Result<Box<dyn Thinker<G>>, AgentSpecError> {
        match self.name.as_str() {
            "random" => Ok(Box::new(Plain {
                agent: RandomAgent::new(self.seed),
            })),
            other => Err(AgentSpecError::Unknown {
                name: other.to_string(),
                known: AGENT_NAMES.join(", "),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::liuzhou::Liuzhou;

    #[test]
    fn random_thinker_chooses_legal_actions_and_reports_no_search() {
        let spec = AgentSpec {
            name: "random".into(),
            visits: 10,
            seed: 3,
        };
        spec.validate(100).unwrap();
        let mut t = spec.build::<Liuzhou>().unwrap();
        let mut s = Liuzhou::default();
        t.new_game(&s).unwrap();
        for _ in 0..20 {
            let th = t.think(&s).unwrap();
            assert!(s.is_legal(th.action));
            assert_eq!(th.pv, vec![th.action]);
            assert!(th.visits.is_none() && th.value.is_none());
            t.observe(&s, th.action).unwrap();
            s.play(th.action).unwrap();
        }
    }

    #[test]
    fn bad_specs_are_refused_with_reasons() {
        let mut spec = AgentSpec {
            name: "alphabeta9000".into(),
            visits: 10,
            seed: 0,
        };
        assert!(matches!(
            spec.validate(100),
            Err(AgentSpecError::Unknown { .. })
        ));
        assert!(spec.build::<Liuzhou>().is_err());
        spec.name = "random".into();
        spec.visits = 0;
        assert_eq!(
            spec.validate(100),
            Err(AgentSpecError::Strength { got: 0, max: 100 })
        );
        spec.visits = 101;
        assert!(spec.validate(100).is_err());
    }
}
