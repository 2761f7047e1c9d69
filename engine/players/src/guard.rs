//! A tactical check on a tree search's move (`guard=SHARE` in a `net` or `mcts` spec): the
//! tree search gets the move's time less `SHARE` of it; in that share, the game's alpha-beta
//! searches the position with the tree's move first (which gives that move's exact score at
//! each depth without a second search), and when the tree's move scores more than
//! `guard_margin` below alpha-beta's best at the deepest depth completed, alpha-beta's move is
//! played instead. A network judges positions better than a hand-written evaluation but misses
//! the short tactics that alpha-beta sees at once; the check keeps the first and covers the
//! second.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use games::{Agent, AgentError, Analysis, Decision, Explanation, Game};

use crate::alphabeta::core::{FirstSearch, SearchLimits, Searcher, DEFAULT_HASH_MB};
use crate::alphabeta::xiangqi::AlphaBeta;

/// What the check may spend and when it overrides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuardSpec {
    /// Share of each move's time given to the check (`guard=S`, 0 < S < 1).
    pub share: f64,
    /// How far below alpha-beta's best the tree's move may score, in the searcher's units
    /// (`guard_margin=CP`: centipawns for Xiangqi, hundredths of a stone for Liuzhou).
    pub margin: i32,
}

impl GuardSpec {
    /// What the tree search keeps of a move's `time`: all but the check's share.
    pub fn tree_time(&self, time: Duration) -> Duration {
        time.mul_f64(1.0 - self.share)
    }
}

/// Default `guard_margin`: about two thirds of a Xiangqi pawn across the river, half a
/// Liuzhou stone; a smaller gap is within the noise of a hand-written evaluation, which the
/// network judges better.
pub const DEFAULT_MARGIN: i32 = 50;

/// The check itself: the game's alpha-beta with its table, and its counts.
pub struct Guard<S: Searcher> {
    ab: S,
    margin: i32,
    checks: u64,
    overrides: u64,
}

type Action<S> = <<S as Searcher>::Game as Game>::Action;

impl<S: Searcher> Guard<S> {
    /// A check that overrides a move scoring more than `margin` below the best.
    pub fn new(margin: i32) -> Guard<S> {
        Guard {
            ab: S::try_new(DEFAULT_HASH_MB).expect("a 16 MiB transposition table"),
            margin,
            checks: 0,
            overrides: 0,
        }
    }

    /// Forgets the table (a new game).
    pub fn clear(&mut self) {
        self.ab.clear();
    }

    /// `guard: N of M moves changed`.
    pub fn summary(&self) -> String {
        format!("guard: {} of {} moves changed", self.overrides, self.checks)
    }

    /// Alpha-beta's search, when it finds `tree_move` worse than its best move by more than
    /// the margin within `budget`; `None` keeps `tree_move`. Neither plays a `banned` move.
    pub fn check(
        &mut self,
        state: &S::Game,
        tree_move: Action<S>,
        budget: Duration,
        banned: &[Action<S>],
    ) -> Option<FirstSearch<Action<S>>> {
        self.checks += 1;
        let limits = SearchLimits::movetime(budget);
        let found = self.ab.search_with_first(state, limits, tree_move, banned);
        let worse = found.best.is_some_and(|m| m != tree_move)
            && found.first.is_some_and(|s| found.score - s > self.margin);
        if !worse {
            return None;
        }
        self.overrides += 1;
        Some(found)
    }
}

impl Guard<AlphaBeta> {
    /// Makes `flag` stop the check's searches (UCI `stop`).
    pub fn set_stop_handle(&mut self, flag: Arc<AtomicBool>) {
        self.ab.set_stop_handle(flag);
    }
}

/// A tree search whose moves alpha-beta checks (see the module docs).
pub struct Guarded<S: Searcher> {
    inner: Box<dyn Agent<S::Game>>,
    guard: Guard<S>,
    spec: GuardSpec,
    /// The move's time in the spec, and as a protocol's clock shortens it.
    own_time: Duration,
    time: Duration,
    /// Alpha-beta's account when it overrode the last move.
    last_override: Option<Explanation<Action<S>>>,
}

impl<S: Searcher> Guarded<S> {
    /// Wraps `inner`, which searches for at most `time` a move.
    pub fn new(inner: Box<dyn Agent<S::Game>>, time: Duration, spec: GuardSpec) -> Guarded<S> {
        let mut guarded = Guarded {
            inner,
            guard: Guard::new(spec.margin),
            spec,
            own_time: time,
            time,
            last_override: None,
        };
        guarded.set_move_time(None);
        guarded
    }

    /// `tree_move`, or alpha-beta's move when the check overrides it.
    fn check(&mut self, state: &S::Game, tree_move: Action<S>, start: Instant) -> Action<S> {
        let budget = self.time.saturating_sub(start.elapsed());
        let Some(found) = self.guard.check(state, tree_move, budget, &[]) else {
            return tree_move;
        };
        let m = found.best.expect("an override has a move");
        self.last_override = Some(Explanation {
            value: Some(S::value(found.score)),
            pv: vec![m],
            visits: None,
            nodes: Some(found.nodes),
        });
        m
    }
}

impl<S: Searcher> Agent<S::Game> for Guarded<S> {
    fn name(&self) -> String {
        format!("{}+guard", self.inner.name())
    }

    fn select_action(&mut self, state: &S::Game) -> Result<Action<S>, AgentError> {
        let start = Instant::now();
        self.last_override = None;
        let tree_move = self.inner.select_action(state)?;
        Ok(self.check(state, tree_move, start))
    }

    fn decide(&mut self, state: &S::Game) -> Result<Decision<Action<S>>, AgentError> {
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

    fn new_game(&mut self, start: &S::Game) -> Result<(), AgentError> {
        self.guard.clear();
        self.inner.new_game(start)
    }

    fn observe(&mut self, before: &S::Game, action: Action<S>) -> Result<(), AgentError> {
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
        self.inner
            .set_move_time(Some(self.spec.tree_time(self.time)));
    }

    fn explain(&self) -> Option<Explanation<Action<S>>> {
        self.last_override.clone().or_else(|| self.inner.explain())
    }

    fn release_memory(&mut self) -> bool {
        self.inner.release_memory()
    }

    fn analyse(
        &mut self,
        state: &S::Game,
        time: Option<Duration>,
    ) -> Result<Option<Analysis<Action<S>>>, AgentError> {
        self.inner.analyse(state, time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::xiangqi::{Move, Xiangqi};

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

    fn guarded(fen: &str, tree_move: &str, margin: i32) -> (Xiangqi, Guarded<AlphaBeta>) {
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
        let mut agent: Guarded<AlphaBeta> =
            Guarded::new(Box::new(Clocked(given.clone())), ms(1000), spec);
        assert_eq!(*given.lock().unwrap(), Some(ms(750)));
        // A protocol's clock shortens the move, never lengthens it.
        agent.set_move_time(Some(ms(400)));
        assert_eq!(*given.lock().unwrap(), Some(ms(300)));
        agent.set_move_time(Some(ms(5000)));
        assert_eq!(*given.lock().unwrap(), Some(ms(750)));
    }

    #[test]
    fn liuzhou_s_alpha_beta_checks_a_tree_s_action_too() {
        use crate::alphabeta::liuzhou::LiuzhouAlphaBeta;
        use games::liuzhou::{Liuzhou, Rules};
        /// Plays one fixed action.
        struct Fixed(games::liuzhou::Action);
        impl Agent<Liuzhou> for Fixed {
            fn name(&self) -> String {
                "fixed".into()
            }
            fn select_action(
                &mut self,
                _s: &Liuzhou,
            ) -> Result<games::liuzhou::Action, AgentError> {
                Ok(self.0)
            }
        }
        // Black's b4-c4 completes a square and takes White's last stone; b4-b5 does not.
        let s = Liuzhou::from_lfen("W5/6/1B1B2/2BB2/6/6 b move 0 80 3", Rules::default()).unwrap();
        let spec = GuardSpec {
            share: 0.5,
            margin: DEFAULT_MARGIN,
        };
        let step = s.parse_action("b4-b5").unwrap();
        let mut agent: Guarded<LiuzhouAlphaBeta> =
            Guarded::new(Box::new(Fixed(step)), Duration::from_millis(200), spec);
        assert_eq!(s.format_action(agent.select_action(&s).unwrap()), "b4-c4");
        let win = s.parse_action("b4-c4").unwrap();
        let mut agent: Guarded<LiuzhouAlphaBeta> =
            Guarded::new(Box::new(Fixed(win)), Duration::from_millis(200), spec);
        assert_eq!(agent.select_action(&s).unwrap(), win);
        assert!(agent
            .summary()
            .unwrap()
            .contains("guard: 0 of 1 moves changed"));
    }

    #[test]
    fn specs_with_a_guard_build_for_xiangqi_and_liuzhou() {
        use crate::spec::{build, preloaded, AgentSpec};
        use games::liuzhou::Liuzhou;
        let spec = AgentSpec::parse("mcts:time=0.2,guard=0.5").unwrap();
        let mut agent = build::<Xiangqi>(&spec, "g", 1, &preloaded(None)).unwrap();
        assert!(agent.name().ends_with("+guard"), "{}", agent.name());
        let start = Xiangqi::start();
        let m = agent.select_action(&start).unwrap();
        assert!(start.legal_moves().as_slice().contains(&m));
        let mut agent = build::<Liuzhou>(&spec, "g", 1, &preloaded(None)).unwrap();
        assert!(agent.name().ends_with("+guard"), "{}", agent.name());
        let start = Liuzhou::new(games::liuzhou::Rules::default());
        let a = agent.select_action(&start).unwrap();
        assert!(start.is_legal(a));
        let e = build::<games::go::GoState>(&spec, "g", 1, &preloaded(None))
            .err()
            .unwrap();
        assert!(e.to_string().contains("no guard"), "{e}");
    }
}
