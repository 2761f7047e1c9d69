//! The engine's opponents for the faces a person plays against (`engine play`, `engine serve`):
//! one factory that turns an agent name and a strength into something that thinks, and reports
//! what it thought when it can (visits, value, principal variation).

use std::sync::Arc;

use eval::Evaluator;
use games::{Agent, AgentError, Game, RandomAgent};
use search::{Limit, MctsAgent, MctsAgentConfig, RunOptions, SearchConfig};

/// The agents a person can choose, by the name the CLI flags and the web API use: `mcts` is
/// Monte Carlo tree search with random playouts, `net` the same search guided by a trained
/// network (where a model is configured), `random` plays any legal action. Visits = strength.
pub const AGENT_NAMES: &[&str] = &["mcts", "net", "random"];

/// The agents available for a game: `net` only where a network is loaded.
pub fn available_agents(has_net: bool) -> Vec<&'static str> {
    AGENT_NAMES
        .iter()
        .copied()
        .filter(|&n| n != "net" || has_net)
        .collect()
}

/// Most visits per move and threads per tree the protocol faces (GTP, UCI) accept.
pub const MAX_VISITS: u64 = 100_000_000;
pub const MAX_THREADS: usize = 256;

/// Arena nodes of an unbounded search (GTP, UCI): 2^24, 512 MiB of address space at 32 bytes a
/// node, touched only as used. A 19 × 19 expansion takes 362 nodes, so this holds about 46 000
/// expanded positions, many seconds of search.
const PROTOCOL_NODES: usize = 1 << 24;

/// Arena nodes allowed per visit: an expansion adds one node per legal action (362 on 19 × 19),
/// and the subtree kept from the moves before can hold as many again, so twice the largest
/// expansion. This bounds a session's tree (32 bytes a node) by its strength rather than by the
/// search's default; pages are touched only as used, so games with fewer actions use less.
/// (At 128, the browser test's 9 × 9 game at 100 visits filled its arena.)
const NODES_PER_VISIT: u64 = 768;

/// What the engine decided, with the search's figures when the agent has them.
#[derive(Clone, Debug)]
pub struct Thought<A> {
    pub action: A,
    /// Playouts the search made for this decision (tree search).
    pub visits: Option<u64>,
    /// Positions searched for this decision (alpha-beta).
    pub nodes: Option<u64>,
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

    /// Gives back memory kept between moves (a search tree), at the cost of the next move
    /// starting afresh. Returns whether there was any.
    fn release_memory(&mut self) -> bool {
        false
    }

    /// Whether it answers at once, without searching (a server need not ration its moves).
    fn is_instant(&self) -> bool {
        false
    }
}

/// Any [`Agent`] as a [`Thinker`] that reports what the agent explains of its choice (Xiangqi's
/// alpha-beta: its score, line and nodes; the random agent: nothing): the random agent, or a
/// game's own agent under a label that gives its strength.
pub struct Plain<A> {
    agent: A,
    /// The name for records; the agent's own name when `None`.
    label: Option<String>,
    /// The agent does not search (see [`Thinker::is_instant`]).
    instant: bool,
}

impl<A> Plain<A> {
    pub fn new(agent: A) -> Self {
        Plain {
            agent,
            label: None,
            instant: false,
        }
    }

    /// An agent that answers at once (the random agent).
    pub fn instant(agent: A) -> Self {
        Plain {
            instant: true,
            ..Plain::new(agent)
        }
    }

    /// Names the agent `label` in records.
    pub fn labelled(agent: A, label: String) -> Self {
        Plain {
            label: Some(label),
            ..Plain::new(agent)
        }
    }
}

impl<G: Game, A: Agent<G>> Thinker<G> for Plain<A> {
    fn name(&self) -> String {
        self.label.clone().unwrap_or_else(|| self.agent.name())
    }

    fn new_game(&mut self, start: &G) -> Result<(), AgentError> {
        self.agent.new_game(start)
    }

    fn think(&mut self, state: &G) -> Result<Thought<G::Action>, AgentError> {
        let action = self.agent.select_action(state)?;
        let said = self.agent.explain();
        Ok(Thought {
            action,
            visits: None,
            nodes: said.as_ref().and_then(|e| e.nodes),
            value: said.as_ref().and_then(|e| e.value),
            pv: said
                .map(|e| e.pv)
                .filter(|pv| pv.first() == Some(&action))
                .unwrap_or_else(|| vec![action]),
        })
    }

    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), AgentError> {
        self.agent.observe(before, action)
    }

    fn is_instant(&self) -> bool {
        self.instant
    }
}

/// An [`MctsAgent`] that reports its visits, its root value and its principal variation.
pub struct Mcts<G: Game> {
    agent: MctsAgent<G>,
    visits: u64,
}

impl<G: Game> Mcts<G> {
    /// Pure MCTS: `visits` playouts per decision, each leaf valued by one random playout.
    pub fn rollouts(visits: u64, seed: u64) -> Self {
        Mcts {
            agent: mcts_agent(None, visits, 1, seed, true),
            visits,
        }
    }

    /// MCTS guided by a network: `visits` per decision, leaves evaluated a few at a time.
    pub fn network(evaluator: Arc<dyn Evaluator<G>>, visits: u64, seed: u64) -> Self {
        Mcts {
            agent: mcts_agent(Some(evaluator), visits, 1, seed, true),
            visits,
        }
    }
}

/// The engine's tree search as a match-play agent, for every face: guided by `network`, or
/// (`None`) valuing leaves by random playouts; `visits` per decision (a protocol may add a
/// time limit through [`games::Agent::set_move_time`]) on `threads` threads in one tree.
/// `bounded`: the arena is sized by the visits (a server's many sessions), else it holds
/// `PROTOCOL_NODES`, room for the long searches a clock allows (memory is touched as used).
pub fn mcts_agent<G: Game>(
    network: Option<Arc<dyn Evaluator<G>>>,
    visits: u64,
    threads: usize,
    seed: u64,
    bounded: bool,
) -> MctsAgent<G> {
    let threads = threads.max(1);
    let default_nodes = SearchConfig::default().max_nodes as u64;
    let mut search = SearchConfig {
        max_nodes: if bounded {
            (visits.saturating_mul(NODES_PER_VISIT) + 1024).min(default_nodes) as usize
        } else {
            PROTOCOL_NODES
        },
        ..SearchConfig::default()
    };
    let (name, evaluator, run): (_, Arc<dyn Evaluator<G>>, _) = match network {
        Some(net) => {
            let leaves = net.batch_size().clamp(1, 8);
            let run = RunOptions {
                threads,
                // Several threads fill the network's batch together.
                combine: threads > 1,
                ..RunOptions::single(leaves)
            };
            ("net", net, run)
        }
        None => {
            // One random playout per position is a noisy value: a transposition should draw
            // its own rather than reuse a cached one.
            search.cache_entries = 0;
            let run = RunOptions {
                threads,
                ..RunOptions::single(1)
            };
            (
                "mcts",
                Arc::new(eval::RolloutEvaluator::<G>::new(seed)),
                run,
            )
        }
    };
    MctsAgent::new(
        MctsAgentConfig {
            name: name.into(),
            search,
            limit: Limit::visits(visits),
            run,
            temperature: 0.0,
            seed,
            resign_below: None,
        },
        evaluator,
    )
}

impl<G: Game> Thinker<G> for Mcts<G> {
    fn release_memory(&mut self) -> bool {
        self.agent.release()
    }

    fn name(&self) -> String {
        format!("{} ({} visits)", self.agent.name(), self.visits)
    }

    fn new_game(&mut self, start: &G) -> Result<(), AgentError> {
        self.agent.new_game(start)
    }

    fn think(&mut self, state: &G) -> Result<Thought<G::Action>, AgentError> {
        let action = self.agent.select_action(state)?;
        let mut thought = Thought {
            action,
            visits: None,
            nodes: None,
            value: None,
            pv: vec![action],
        };
        // No report when the move was forced (one legal action): no figures then.
        let Some(report) = self.agent.last_report() else {
            return Ok(thought);
        };
        thought.visits = Some(report.playouts);
        if let Some(search) = self.agent.search() {
            thought.value = Some(search.root_value());
            thought.pv = search.principal_variation(action);
        }
        Ok(thought)
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
    #[error("agent `net` needs a model for {game}, and none is loaded")]
    NoModel { game: &'static str },
    #[error("agent {name:?} could not start: {reason}")]
    Native { name: String, reason: String },
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
    /// Checks that the strength lies in `1..=max_visits` (the name is checked by building).
    pub fn validate(&self, max_visits: u64) -> Result<(), AgentSpecError> {
        if self.visits == 0 || self.visits > max_visits {
            return Err(AgentSpecError::Strength {
                got: self.visits,
                max: max_visits,
            });
        }
        Ok(())
    }

    /// Builds the thinker for games of `G`; `net` is the game's network, if one is loaded.
    pub fn build<G: Game>(
        &self,
        net: Option<&Arc<dyn Evaluator<G>>>,
    ) -> Result<Box<dyn Thinker<G>>, AgentSpecError> {
        match self.name.as_str() {
            "mcts" => Ok(Box::new(Mcts::<G>::rollouts(self.visits, self.seed))),
            "net" => match net {
                Some(e) => Ok(Box::new(Mcts::network(e.clone(), self.visits, self.seed))),
                None => Err(AgentSpecError::NoModel { game: G::NAME }),
            },
            "random" => Ok(Box::new(Plain::instant(RandomAgent::new(self.seed)))),
            // Thinks until the test opens the gate: proves the server answers meanwhile.
            #[cfg(test)]
            "gate" => Ok(Box::new(Plain::new(tests::Gate))),
            other => Err(AgentSpecError::Unknown {
                name: other.to_string(),
                known: AGENT_NAMES.join(", "),
            }),
        }
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use games::liuzhou::Liuzhou;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// While false, the `gate` agent does not answer.
    pub static GATE_OPEN: AtomicBool = AtomicBool::new(false);

    /// An agent that waits for [`GATE_OPEN`], then plays randomly.
    pub struct Gate;

    impl<G: Game> Agent<G> for Gate {
        fn name(&self) -> String {
            "gate".into()
        }

        fn select_action(&mut self, state: &G) -> Result<G::Action, AgentError> {
            let t0 = std::time::Instant::now();
            while !GATE_OPEN.load(Ordering::SeqCst) {
                if t0.elapsed() > std::time::Duration::from_secs(30) {
                    return Err(AgentError {
                        agent: "gate".into(),
                        reason: "never opened".into(),
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            RandomAgent::new(0).select_action(state)
        }
    }

    #[test]
    fn random_thinker_chooses_legal_actions_and_reports_no_search() {
        let spec = AgentSpec {
            name: "random".into(),
            visits: 10,
            seed: 3,
        };
        spec.validate(100).unwrap();
        let mut t = spec.build::<Liuzhou>(None).unwrap();
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
    fn mcts_reports_visits_value_and_a_legal_line() {
        let spec = AgentSpec {
            name: "mcts".into(),
            visits: 200,
            seed: 5,
        };
        spec.validate(1000).unwrap();
        let mut t = spec.build::<Liuzhou>(None).unwrap();
        let s = Liuzhou::default();
        t.new_game(&s).unwrap();
        let th = t.think(&s).unwrap();
        assert!(s.is_legal(th.action));
        assert!(th.visits.unwrap() >= 200);
        let v = th.value.unwrap();
        assert!((-1.0..=1.0).contains(&v), "{v}");
        assert_eq!(th.pv[0], th.action);
        assert!(
            th.pv.len() >= 2 && th.pv.len() <= search::PV_MAX,
            "{:?}",
            th.pv
        );
        // The line is playable from the position.
        let mut line = s.clone();
        for &a in &th.pv {
            line.play(a).unwrap();
        }
    }

    #[test]
    fn mcts_wins_against_random_at_liuzhou() {
        // A behaviour check of the wiring: more visits must mean stronger play.
        let (mut wins, mut losses) = (0, 0);
        for g in 0..4u64 {
            let mut mcts = AgentSpec {
                name: "mcts".into(),
                visits: 200,
                seed: g,
            }
            .build::<Liuzhou>(None)
            .unwrap();
            let mut random = AgentSpec {
                name: "random".into(),
                visits: 1,
                seed: g,
            }
            .build::<Liuzhou>(None)
            .unwrap();
            let mcts_side = if g % 2 == 0 {
                games::Player::First
            } else {
                games::Player::Second
            };
            let mut s = Liuzhou::default();
            while s.outcome().is_none() {
                let t = if s.to_act() == mcts_side {
                    &mut mcts
                } else {
                    &mut random
                };
                let a = t.think(&s).unwrap().action;
                mcts.observe(&s, a).unwrap();
                random.observe(&s, a).unwrap();
                s.play(a).unwrap();
            }
            match s.outcome() {
                Some(games::Outcome::Win(p)) if p == mcts_side => wins += 1,
                Some(games::Outcome::Win(_)) => losses += 1,
                _ => {}
            }
        }
        // Random rarely loses quickly as White, so some games end at the move limit.
        assert_eq!(losses, 0, "mcts lost to random");
        assert!(wins >= 2, "mcts won {wins} of 4 against random");
    }

    #[test]
    fn the_network_agent_needs_a_network_and_reports_its_search() {
        let spec = AgentSpec {
            name: "net".into(),
            visits: 64,
            seed: 1,
        };
        spec.validate(100).unwrap();
        assert_eq!(
            spec.build::<Liuzhou>(None).err(),
            Some(AgentSpecError::NoModel { game: "liuzhou" })
        );
        let net: Arc<dyn Evaluator<Liuzhou>> = Arc::new(eval::fake::FakeEvaluator::new(8));
        let mut t = spec.build::<Liuzhou>(Some(&net)).unwrap();
        assert_eq!(t.name(), "net (64 visits)");
        let s = Liuzhou::default();
        t.new_game(&s).unwrap();
        let th = t.think(&s).unwrap();
        assert!(s.is_legal(th.action));
        assert!(th.visits.unwrap() >= 64);
        assert!(th.value.is_some());
        assert_eq!(available_agents(false), ["mcts", "random"]);
        assert_eq!(available_agents(true), ["mcts", "net", "random"]);
    }

    #[test]
    fn bad_specs_are_refused_with_reasons() {
        let mut spec = AgentSpec {
            name: "alphabeta9000".into(),
            visits: 10,
            seed: 0,
        };
        assert!(matches!(
            spec.build::<Liuzhou>(None),
            Err(AgentSpecError::Unknown { .. })
        ));
        assert!(spec.build::<Liuzhou>(None).is_err());
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
