//! A tree search that hands the rest of the game to alpha-beta (`handoff=K` in a Liuzhou
//! `net` or `mcts` spec): the tree search decides until the game reaches the part where the
//! game's alpha-beta plays better, and alpha-beta, with the same time a move, decides every
//! action from there to the end. In Liuzhou that part starts when the placement has `K` or
//! fewer empty points left: the network judges the open board of the placement better than a
//! hand-written evaluation, but the last placements, the removals and the movement on a nearly
//! full board form a narrow tactical tree that alpha-beta searches far deeper than a tree
//! search of the same time, and where the network's value misjudges what follows.

use std::time::Duration;

use games::{Agent, AgentError, Analysis, Decision, Explanation, Game};

use crate::alphabeta::core::{AlphaBetaPlayer, SearchLimits, Searcher, DEFAULT_HASH_MB};

/// Where alpha-beta takes over: true from the first position of the game's alpha-beta part
/// on, given the spec's `K`.
pub type TakesOver<G> = fn(&G, u32) -> bool;

/// A tree search and the alpha-beta that finishes its games (see the module docs).
pub struct Handoff<S: Searcher> {
    tree: Box<dyn Agent<S::Game>>,
    ab: AlphaBetaPlayer<S>,
    takes_over: TakesOver<S::Game>,
    points: u32,
    decisions: u64,
    handed: u64,
    /// Whether alpha-beta made the last decision (whose account `explain` gives).
    last_by_ab: bool,
}

impl<S: Searcher> Handoff<S> {
    /// `tree` decides where `takes_over(state, points)` is false; alpha-beta, searching for
    /// `time` a move, everywhere else.
    pub fn new(
        tree: Box<dyn Agent<S::Game>>,
        time: Duration,
        points: u32,
        takes_over: TakesOver<S::Game>,
    ) -> Handoff<S> {
        let limits = SearchLimits::movetime(time);
        Handoff {
            tree,
            ab: AlphaBetaPlayer::new(limits, DEFAULT_HASH_MB),
            takes_over,
            points,
            decisions: 0,
            handed: 0,
            last_by_ab: false,
        }
    }

    /// Whether alpha-beta decides in `state`; counts the decision.
    fn by_ab(&mut self, state: &S::Game) -> bool {
        self.decisions += 1;
        self.last_by_ab = (self.takes_over)(state, self.points);
        self.handed += u64::from(self.last_by_ab);
        self.last_by_ab
    }
}

impl<S: Searcher> Agent<S::Game> for Handoff<S> {
    fn name(&self) -> String {
        format!("{}+handoff", self.tree.name())
    }

    fn select_action(&mut self, state: &S::Game) -> Result<<S::Game as Game>::Action, AgentError> {
        if self.by_ab(state) {
            self.ab.select_action(state)
        } else {
            self.tree.select_action(state)
        }
    }

    fn decide(
        &mut self,
        state: &S::Game,
    ) -> Result<Decision<<S::Game as Game>::Action>, AgentError> {
        if self.by_ab(state) {
            self.ab.decide(state)
        } else {
            self.tree.decide(state)
        }
    }

    fn forfeits(&self, error: &AgentError) -> bool {
        self.tree.forfeits(error)
    }

    fn new_game(&mut self, start: &S::Game) -> Result<(), AgentError> {
        self.last_by_ab = false;
        self.ab.new_game(start)?;
        self.tree.new_game(start)
    }

    /// Both follow the game: the tree keeps its subtree for the moves it still makes.
    fn observe(
        &mut self,
        before: &S::Game,
        action: <S::Game as Game>::Action,
    ) -> Result<(), AgentError> {
        self.ab.observe(before, action)?;
        self.tree.observe(before, action)
    }

    fn summary(&self) -> Option<String> {
        let own = format!(
            "handoff: alpha-beta made {} of {} decisions",
            self.handed, self.decisions
        );
        Some(match self.tree.summary() {
            Some(s) => format!("{s}; {own}"),
            None => own,
        })
    }

    fn set_move_time(&mut self, time: Option<Duration>) {
        self.ab.set_move_time(time);
        self.tree.set_move_time(time);
    }

    fn explain(&self) -> Option<Explanation<<S::Game as Game>::Action>> {
        if self.last_by_ab {
            self.ab.explain()
        } else {
            self.tree.explain()
        }
    }

    fn release_memory(&mut self) -> bool {
        self.tree.release_memory()
    }

    /// The tree's analysis, wherever the position lies (analysis lists what a tree weighed).
    fn analyse(
        &mut self,
        state: &S::Game,
        time: Option<Duration>,
    ) -> Result<Option<Analysis<<S::Game as Game>::Action>>, AgentError> {
        self.tree.analyse(state, time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphabeta::liuzhou::LiuzhouAlphaBeta;
    use crate::liuzhou::late_in_placement;
    use games::liuzhou::{Action, Liuzhou, Rules};

    /// Plays one fixed action.
    struct Fixed(Action);

    impl Agent<Liuzhou> for Fixed {
        fn name(&self) -> String {
            "fixed".into()
        }
        fn select_action(&mut self, _state: &Liuzhou) -> Result<Action, AgentError> {
            Ok(self.0)
        }
    }

    // Eight points empty, Black to place; c4 completes the c file (a line: two marks), d3 and
    // b2 a square (one mark), e1 nothing.
    const EIGHT_EMPTY: &str = "WBBWWW/WWB1BB/1B1BWW/W1B1W1/B1BBBW/WBBW1W b place 0 28 0";

    /// Whether alpha-beta's choice in [`EIGHT_EMPTY`] is one of the shapes (which of them
    /// depends on how deep it gets in its time).
    fn takes_a_shape(action: &str) -> bool {
        ["c4", "d3", "b2"].contains(&action)
    }

    fn position(lfen: &str) -> Liuzhou {
        Liuzhou::from_lfen(lfen, Rules::default()).unwrap()
    }

    fn handoff(state: &Liuzhou, tree_action: &str, points: u32) -> Handoff<LiuzhouAlphaBeta> {
        let fixed = Fixed(state.parse_action(tree_action).unwrap());
        let time = Duration::from_millis(100);
        Handoff::new(Box::new(fixed), time, points, late_in_placement)
    }

    #[test]
    fn the_placement_is_alpha_beta_s_from_k_empty_points_on() {
        assert!(!late_in_placement(&Liuzhou::new(Rules::default()), 35));
        let s = position(EIGHT_EMPTY);
        assert!(late_in_placement(&s, 8));
        assert!(!late_in_placement(&s, 7));
        // The marks that follow a placement are the placement's: seven points empty now.
        let mut mark = s.clone();
        mark.play(s.parse_action("c4").unwrap()).unwrap();
        assert!(late_in_placement(&mark, 7) && !late_in_placement(&mark, 6));
        // Everything after the placement is alpha-beta's, whatever K.
        let movement = position("W5/6/1B1B2/2BB2/6/6 b move 0 80 3");
        assert!(late_in_placement(&movement, 0));
    }

    #[test]
    fn the_tree_decides_before_that_point_and_alpha_beta_from_it() {
        let s = position(EIGHT_EMPTY);
        let mut agent = handoff(&s, "e1", 7);
        assert_eq!(s.format_action(agent.select_action(&s).unwrap()), "e1");
        assert!(agent.explain().is_none(), "the tree's (silent) account");

        let mut agent = handoff(&s, "e1", 8);
        let Decision::Play(a) = agent.decide(&s).unwrap() else {
            panic!("alpha-beta does not resign");
        };
        assert!(takes_a_shape(&s.format_action(a)), "{}", s.format_action(a));
        let account = agent.explain().unwrap();
        assert!(
            account.nodes.is_some() && account.visits.is_none(),
            "alpha-beta's account"
        );
        assert_eq!(agent.name(), "fixed+handoff");
        assert!(agent
            .summary()
            .unwrap()
            .contains("handoff: alpha-beta made 1 of 1 decisions"));
    }

    #[test]
    fn specs_with_a_handoff_build_for_liuzhou_alone() {
        use crate::spec::{build, preloaded, AgentSpec};
        let spec = AgentSpec::parse("mcts:time=0.05,handoff=8").unwrap();
        let mut agent = build::<Liuzhou>(&spec, "h", 1, &preloaded(None)).unwrap();
        assert!(agent.name().ends_with("+handoff"), "{}", agent.name());
        let s = position(EIGHT_EMPTY);
        let a = s.format_action(agent.select_action(&s).unwrap());
        assert!(takes_a_shape(&a), "{a}");
        for game in ["xiangqi", "go"] {
            let e = match game {
                "xiangqi" => {
                    build::<games::xiangqi::Xiangqi>(&spec, "h", 1, &preloaded(None)).err()
                }
                _ => build::<games::go::GoState>(&spec, "h", 1, &preloaded(None)).err(),
            };
            let e = e.expect(game).to_string();
            assert!(e.contains("no handoff (Liuzhou has)"), "{game}: {e}");
        }
        for (text, needle) in [
            ("net:visits=100,handoff=8", "needs time"),
            ("net:time=0.1,handoff=37", "from 0 to 36"),
            ("net:time=0.1,handoff=x", "a number of points"),
        ] {
            let e = AgentSpec::parse(text).expect_err(text).to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
