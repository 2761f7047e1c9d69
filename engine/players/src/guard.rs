//! A tactical check on a tree search's move (`guard=SHARE` in a `net` or `mcts` spec): the
//! tree search gets the move's time less `SHARE` of it; in that share, Xiangqi's alpha-beta
//! searches the whole position and then the tree's move alone to the same depth, and when the
//! tree's move scores more than `guard_margin` centipawns below alpha-beta's best, alpha-beta's
//! move is played instead. A network judges positions better than a hand-written evaluation
//! but misses the short tactics that alpha-beta sees at once; the check keeps the first and
//! covers the second.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use games::xiangqi::{Move, Xiangqi};
use games::{Agent, AgentError, Analysis, Decision, Explanation};

use crate::alphabeta::{score_value, AlphaBeta, SearchLimits, SearchResult};

/// What the check may spend and when it overrides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuardSpec {
    /// Share of each move's time given to the check (`guard=S`, 0 < S < 1).
    pub share: f64,
    /// How far below alpha-beta's best the tree's move may score, in centipawns
    /// (`guard_margin=CP`).
    pub margin: i32,
}

/// Default `guard_margin`: about two thirds of a pawn across the river; a smaller gap is
/// within the noise of a hand-written evaluation, which the network judges better.
pub const DEFAULT_MARGIN: i32 = 50;

/// Transposition table of the check, in MiB (the `alphabeta` agent's default).
const HASH_MB: usize = 16;

/// The check itself: alpha-beta with its table, and its counts.
pub struct Guard {
    ab: AlphaBeta,
    margin: i32,
    checks: u64,
    overrides: u64,
}

impl Guard {
    /// A check that overrides a move scoring more than `margin` centipawns below the best.
    pub fn new(margin: i32) -> Guard {
        Guard {
            ab: AlphaBeta::new(HASH_MB),
            margin,
            checks: 0,
            overrides: 0,
        }
    }

    /// Forgets the table (a new game).
    pub fn clear(&mut self) {
        self.ab.clear();
    }

    /// Makes `flag` stop the check's searches (UCI `stop`).
    pub fn set_stop_handle(&mut self, flag: Arc<AtomicBool>) {
        self.ab.set_stop_handle(flag);
    }

    /// `guard: N of M moves changed`.
    pub fn summary(&self) -> String {
        format!("guard: {} of {} moves changed", self.overrides, self.checks)
    }

    /// Alpha-beta's search, when it finds `tree_move` worse than its best move by more than
    /// the margin within `budget`; `None` keeps `tree_move`. Neither plays a `banned` move.
    pub fn check(
        &mut self,
        state: &Xiangqi,
        tree_move: Move,
        budget: Duration,
        banned: &[Move],
    ) -> Option<SearchResult> {
        let start = Instant::now();
        self.checks += 1;
        // Two thirds for the whole position; its iterations stop early when the next could
        // not finish, so the tree's move usually gets more than the rest.
        let mut whole = Vec::new();
        self.ab.set_excluded(banned);
        let best = self
            .ab
            .search(state, SearchLimits::movetime(budget * 2 / 3), |info| {
                whole.push(info.score)
            });
        if best.best.is_none_or(|m| m == tree_move) {
            return None;
        }
        let others: Vec<Move> = state
            .legal_moves()
            .as_slice()
            .iter()
            .copied()
            .filter(|&m| m != tree_move)
            .collect();
        self.ab.set_excluded(&others);
        let mut alone = Vec::new();
        let limits = SearchLimits {
            depth: Some(best.depth),
            movetime: Some(budget.saturating_sub(start.elapsed())),
            nodes: None,
        };
        self.ab.search(state, limits, |info| alone.push(info.score));
        self.ab.set_excluded(&[]);
        // Compare at the deepest iteration both completed.
        let depth = whole.len().min(alone.len());
        if depth == 0 || whole[depth - 1] - alone[depth - 1] <= self.margin {
            return None;
        }
        self.overrides += 1;
        Some(best)
    }
}

/// A tree search whose moves alpha-beta checks (see the module docs).
pub struct Guarded {
    inner: Box<dyn Agent<Xiangqi>>,
    guard: Guard,
    share: f64,
    /// The move's time in the spec, and as a protocol's clock shortens it.
    own_time: Duration,
    time: Duration,
    /// Alpha-beta's account when it overrode the last move.
    last_override: Option<Explanation<Move>>,
}

impl Guarded {
    /// Wraps `inner`, which searches for at most `time` a move.
    pub fn new(inner: Box<dyn Agent<Xiangqi>>, time: Duration, spec: GuardSpec) -> Guarded {
        let mut guarded = Guarded {
            inner,
            guard: Guard::new(spec.margin),
            share: spec.share,
            own_time: time,
            time,
            last_override: None,
        };
        guarded.set_move_time(None);
        guarded
    }

    /// `tree_move`, or alpha-beta's move when the check overrides it.
    fn check(&mut self, state: &Xiangqi, tree_move: Move, start: Instant) -> Move {
        let budget = self.time.saturating_sub(start.elapsed());
        let Some(found) = self.guard.check(state, tree_move, budget, &[]) else {
            return tree_move;
        };
        let m = found.best.expect("an override has a move");
        self.last_override = Some(Explanation {
            value: Some(score_value(found.score)),
            pv: vec![m],
            visits: None,
            nodes: Some(found.nodes),
        });
        m
    }
}

impl Agent<Xiangqi> for Guarded {
    fn name(&self) -> String {
        format!("{}+guard", self.inner.name())
    }

    fn select_action(&mut self, state: &Xiangqi) -> Result<Move, AgentError> {
        let start = Instant::now();
        self.last_override = None;
        let tree_move = self.inner.select_action(state)?;
        Ok(self.check(state, tree_move, start))
    }

    fn decide(&mut self, state: &Xiangqi) -> Result<Decision<Move>, AgentError> {
        let start = Instant::now();
        self.last_override = None;
        let Decision::Play(tree_move) = self.inner.decide(state)? else {
            return Ok(Decision::Resign);
        };
        Ok(Decision::Play(self.check(state, tree_move, start)))
    }

    fn forfeits(&self, error: &AgentError) -> bool {
        self.inner.forfeits(error)
    }

    fn new_game(&mut self, start: &Xiangqi) -> Result<(), AgentError> {
        self.guard.clear();
        self.inner.new_game(start)
    }

    fn observe(&mut self, before: &Xiangqi, action: Move) -> Result<(), AgentError> {
        self.inner.observe(before, action)
    }

    fn summary(&self) -> Option<String> {
        let guard = self.guard.summary();
        Some(match self.inner.summary() {
            Some(s) => format!("{s}; {guard}"),
            None => guard,
        })
    }

    /// The tree search gets the time less the check's share.
    fn set_move_time(&mut self, time: Option<Duration>) {
        self.time = time.map_or(self.own_time, |t| t.min(self.own_time));
        let tree = self.time.mul_f64(1.0 - self.share);
        self.inner.set_move_time(Some(tree));
    }

    fn explain(&self) -> Option<Explanation<Move>> {
        self.last_override.clone().or_else(|| self.inner.explain())
    }

    fn release_memory(&mut self) -> bool {
        self.inner.release_memory()
    }

    fn analyse(
        &mut self,
        state: &Xiangqi,
        time: Option<Duration>,
    ) -> Result<Option<Analysis<Move>>, AgentError> {
        self.inner.analyse(state, time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::Game;

    /// Plays one fixed move, whatever the position.
    struct Scripted(Move);

    impl Agent<Xiangqi> for Scripted {
        fn name(&self) -> String {
            "scripted".into()
        }
        fn select_action(&mut self, _state: &Xiangqi) -> Result<Move, AgentError> {
            Ok(self.0)
        }
    }

    fn guarded(fen: &str, tree_move: &str, margin: i32) -> (Xiangqi, Guarded) {
        let game = Xiangqi::from_fen(fen).unwrap();
        let m = game.parse_action(tree_move).unwrap();
        let spec = GuardSpec { share: 0.5, margin };
        let agent = Guarded::new(Box::new(Scripted(m)), Duration::from_millis(400), spec);
        (game, agent)
    }

    // Red's rook on a0 takes the free knight on a5; the general's step d0d1 leaves it.
    const FREE_KNIGHT: &str = "3aka3/9/9/9/n8/9/9/9/9/R2K5 w - - 0 1";

    #[test]
    fn a_move_that_leaves_material_is_replaced_by_alpha_beta_s() {
        let (game, mut agent) = guarded(FREE_KNIGHT, "d0d1", DEFAULT_MARGIN);
        let m = agent.select_action(&game).unwrap();
        assert_eq!(game.format_action(m), "a0a5");
        assert_eq!(
            agent.explain().unwrap().pv,
            vec![m],
            "the account is the check's"
        );
        assert!(agent
            .summary()
            .unwrap()
            .contains("guard: 1 of 1 moves changed"));
        assert_eq!(agent.name(), "scripted+guard");
    }

    #[test]
    fn within_the_margin_or_agreeing_the_tree_s_move_stands() {
        // (Alpha-beta finds a mate after a0a5 within the time: no margin short of that of a
        // mate would keep d0d1.)
        let (game, mut agent) = guarded(FREE_KNIGHT, "d0d1", i32::MAX);
        assert_eq!(
            game.format_action(agent.select_action(&game).unwrap()),
            "d0d1"
        );
        let (game, mut agent) = guarded(FREE_KNIGHT, "a0a5", DEFAULT_MARGIN);
        let decision = agent.decide(&game).unwrap();
        assert_eq!(decision, Decision::Play(game.parse_action("a0a5").unwrap()));
        assert!(agent
            .summary()
            .unwrap()
            .contains("guard: 0 of 1 moves changed"));
    }

    #[test]
    fn the_tree_search_gets_the_time_less_the_share() {
        use std::sync::{Arc, Mutex};
        /// Keeps the time it is given where the test can read it.
        struct Clocked(Arc<Mutex<Option<Duration>>>);
        impl Agent<Xiangqi> for Clocked {
            fn name(&self) -> String {
                "clocked".into()
            }
            fn select_action(&mut self, state: &Xiangqi) -> Result<Move, AgentError> {
                Ok(state.legal_moves().as_slice()[0])
            }
            fn set_move_time(&mut self, time: Option<Duration>) {
                *self.0.lock().unwrap() = time;
            }
        }
        let given = Arc::new(Mutex::new(None));
        let spec = GuardSpec {
            share: 0.25,
            margin: DEFAULT_MARGIN,
        };
        let ms = Duration::from_millis;
        let mut agent = Guarded::new(Box::new(Clocked(given.clone())), ms(1000), spec);
        assert_eq!(*given.lock().unwrap(), Some(ms(750)));
        // A protocol's clock shortens the move, never lengthens it.
        agent.set_move_time(Some(ms(400)));
        assert_eq!(*given.lock().unwrap(), Some(ms(300)));
        agent.set_move_time(Some(ms(5000)));
        assert_eq!(*given.lock().unwrap(), Some(ms(750)));
    }

    #[test]
    fn specs_with_a_guard_build_for_xiangqi_alone() {
        use crate::spec::{build, preloaded, AgentSpec};
        let spec = AgentSpec::parse("mcts:time=0.2,guard=0.5").unwrap();
        let mut agent = build::<Xiangqi>(&spec, "g", 1, &preloaded(None)).unwrap();
        assert!(agent.name().ends_with("+guard"), "{}", agent.name());
        let start = Xiangqi::start();
        let m = agent.select_action(&start).unwrap();
        assert!(start.legal_moves().as_slice().contains(&m));
        let e = build::<games::liuzhou::Liuzhou>(&spec, "g", 1, &preloaded(None))
            .err()
            .unwrap();
        assert!(e.to_string().contains("no guard"), "{e}");
    }
}
