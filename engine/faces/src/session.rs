//! One game between a person and the engine, as the faces a person plays through (`engine play`,
//! `engine serve`) keep it: the start, the actions so far with who played them, undo, and the
//! engine's last thought. The faces only translate it to text or JSON.

use games::{Agent, AgentError, Explanation, Game, Outcome, ParseError, PlayError, Player};

/// Why a request on a game was refused. Each variant names what the person did wrong or what
/// failed; none leaves the game changed.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error("the game is over")]
    GameOver,
    #[error("it is the engine's turn, not yours")]
    NotYourTurn,
    #[error("it is your turn, not the engine's")]
    NotEngineTurn,
    #[error("cannot read action {text:?}: {source}")]
    Parse { text: String, source: ParseError },
    #[error(transparent)]
    Illegal(#[from] PlayError),
    #[error("nothing to undo: you have not played yet")]
    NothingToUndo,
    #[error("the game reached the limit of {max} actions kept per game")]
    TooLong { max: usize },
    #[error("the engine failed: {0}")]
    Agent(#[from] AgentError),
    #[error("nobody to resign for: the engine plays both sides")]
    NoPerson,
    #[error("nobody to give a hint to: the engine plays both sides")]
    NoPersonToHelp,
}

/// The engine's last decision as the faces show it.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Playouts behind the decision, when the agent searched a tree.
    pub visits: Option<u64>,
    /// Positions searched, when the agent searched alpha-beta.
    pub nodes: Option<u64>,
    /// Expected result for the first player (Black in Liuzhou and Go, Red in Xiangqi), −1..=1.
    pub value_first: Option<f32>,
    /// The expected line in the game's notation, from the decision on.
    pub pv: Vec<String>,
}

/// What the engine would play in the person's place, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Hint<A> {
    pub action: A,
    /// The action in the game's notation.
    pub text: String,
    /// The figures behind it, as for the engine's own moves.
    pub evaluation: Evaluation,
}

/// One action of the game so far.
#[derive(Clone, Debug)]
pub struct Played<A> {
    pub action: A,
    /// The action in the game's notation, as written in the state it was played in.
    pub text: String,
    pub player: Player,
    pub by_engine: bool,
}

/// A game of `G` with a person on one side (or none: the engine plays both).
pub struct Match<G: Game> {
    start: G,
    state: G,
    history: Vec<Played<G::Action>>,
    human: Option<Player>,
    agent: Box<dyn Agent<G>>,
    /// The engine's name as records show it.
    engine_name: String,
    evaluation: Option<Evaluation>,
    /// Bound on `history`, so that a session's memory stays bounded.
    max_actions: usize,
    /// The person resigned: the game is over whatever the position says. Final (undo refuses).
    resigned: Option<Player>,
}

impl<G: Game> Match<G> {
    /// A new game from `start`; the engine plays every side but `human`.
    pub fn new(
        start: G,
        human: Option<Player>,
        mut agent: Box<dyn Agent<G>>,
        max_actions: usize,
    ) -> Result<Self, MatchError> {
        agent.new_game(&start)?;
        Ok(Match {
            state: start.clone(),
            start,
            history: Vec::new(),
            human,
            engine_name: agent.name(),
            agent,
            evaluation: None,
            max_actions,
            resigned: None,
        })
    }

    pub fn start(&self) -> &G {
        &self.start
    }

    pub fn state(&self) -> &G {
        &self.state
    }

    pub fn history(&self) -> &[Played<G::Action>] {
        &self.history
    }

    pub fn human(&self) -> Option<Player> {
        self.human
    }

    pub fn engine_name(&self) -> &str {
        &self.engine_name
    }

    pub fn evaluation(&self) -> Option<&Evaluation> {
        self.evaluation.as_ref()
    }

    /// The result: by resignation, or by the rules of the position.
    pub fn outcome(&self) -> Option<Outcome> {
        match self.resigned {
            Some(p) => Some(Outcome::Win(p.opponent())),
            None => self.state.outcome(),
        }
    }

    /// Why the game ended, in words; `sides` names the players, first player first.
    pub fn end_reason(&self, sides: [&str; 2]) -> Option<String> {
        match self.resigned {
            Some(p) => Some(format!("{} resigned", sides[p.index()])),
            None => self.state.end_reason(),
        }
    }

    /// Whether the engine answers without thinking (see [`Agent::is_instant`]).
    pub fn engine_is_instant(&self) -> bool {
        self.agent.is_instant()
    }

    /// Gives back the engine's memory kept between moves (see [`Agent::release_memory`]).
    pub fn release_memory(&mut self) -> bool {
        self.agent.release_memory()
    }

    /// The player who resigned, if one did.
    pub fn resigned(&self) -> Option<Player> {
        self.resigned
    }

    pub fn human_to_act(&self) -> bool {
        self.outcome().is_none() && self.human == Some(self.state.to_act())
    }

    pub fn engine_to_act(&self) -> bool {
        self.outcome().is_none() && self.human != Some(self.state.to_act())
    }

    /// Whether [`Match::undo`] would do something.
    pub fn can_undo(&self) -> bool {
        self.resigned.is_none() && self.undo_len().is_some()
    }

    /// The person gives up: the engine wins. Allowed at any moment of an unfinished game.
    pub fn resign(&mut self) -> Result<Player, MatchError> {
        if self.outcome().is_some() {
            return Err(MatchError::GameOver);
        }
        let p = self.human.ok_or(MatchError::NoPerson)?;
        self.resigned = Some(p);
        Ok(p)
    }

    /// The person's action, in the game's notation.
    pub fn play_text(&mut self, text: &str) -> Result<(), MatchError> {
        if self.outcome().is_some() {
            return Err(MatchError::GameOver);
        }
        if !self.human_to_act() {
            return Err(MatchError::NotYourTurn);
        }
        let action = self
            .state
            .parse_action(text.trim())
            .map_err(|source| MatchError::Parse {
                text: text.to_string(),
                source,
            })?;
        self.push(action, false)
    }

    /// The engine thinks and plays one action. Blocks for as long as the agent thinks.
    pub fn engine_move(&mut self) -> Result<&Played<G::Action>, MatchError> {
        if self.outcome().is_some() {
            return Err(MatchError::GameOver);
        }
        if !self.engine_to_act() {
            return Err(MatchError::NotEngineTurn);
        }
        if self.history.len() >= self.max_actions {
            return Err(MatchError::TooLong {
                max: self.max_actions,
            });
        }
        let (action, said) = self.think()?;
        let evaluation = self.describe(action, said);
        self.push(action, true)?;
        self.evaluation = Some(evaluation);
        Ok(self.history.last().expect("just pushed"))
    }

    /// The engine thinks in the person's place, at its own strength, and says what it would
    /// play; nothing is played. Blocks for as long as the agent thinks. The engine's tree
    /// stays where it is, so the move that follows (the hint or another) keeps the search.
    pub fn hint(&mut self) -> Result<Hint<G::Action>, MatchError> {
        if self.outcome().is_some() {
            return Err(MatchError::GameOver);
        }
        if self.human.is_none() {
            return Err(MatchError::NoPersonToHelp);
        }
        if !self.human_to_act() {
            return Err(MatchError::NotYourTurn);
        }
        let (action, said) = self.think()?;
        Ok(Hint {
            action,
            text: self.state.format_action(action),
            evaluation: self.describe(action, said),
        })
    }

    /// Takes back the person's last action and every engine action after it. Returns how many
    /// actions were taken back. With no person in the game, takes back one action.
    pub fn undo(&mut self) -> Result<usize, MatchError> {
        if self.resigned.is_some() {
            return Err(MatchError::GameOver);
        }
        let keep = self.undo_len().ok_or(MatchError::NothingToUndo)?;
        let taken = self.history.len() - keep;
        self.history.truncate(keep);
        // Replaying from the start is cheap next to a search, and keeps every game's own
        // history (repetition, superko) exactly as if the undone actions never happened.
        let mut state = self.start.clone();
        self.agent.new_game(&self.start)?;
        for p in &self.history {
            self.agent.observe(&state, p.action)?;
            state.play_unchecked(p.action);
        }
        self.state = state;
        self.evaluation = None;
        Ok(taken)
    }

    /// The history length after an undo, if there is anything to undo.
    fn undo_len(&self) -> Option<usize> {
        match self.human {
            None => self.history.len().checked_sub(1),
            Some(_) => self.history.iter().rposition(|p| !p.by_engine),
        }
    }

    fn push(&mut self, action: G::Action, by_engine: bool) -> Result<(), MatchError> {
        if self.history.len() >= self.max_actions {
            return Err(MatchError::TooLong {
                max: self.max_actions,
            });
        }
        let before = self.state.clone();
        self.state.play(action)?;
        self.agent.observe(&before, action)?;
        self.history.push(Played {
            action,
            text: before.format_action(action),
            player: before.to_act(),
            by_engine,
        });
        Ok(())
    }

    /// The agent's choice here and what it says of it (nothing when it does not say, or when
    /// its account is of another move).
    fn think(&mut self) -> Result<Thought<G::Action>, MatchError> {
        let action = self.agent.select_action(&self.state)?;
        let said = self
            .agent
            .explain()
            .filter(|e| e.pv.first() == Some(&action));
        Ok((action, said))
    }

    fn describe(&self, action: G::Action, said: Option<Explanation<G::Action>>) -> Evaluation {
        let mover = self.state.to_act();
        let said = said.unwrap_or(Explanation {
            value: None,
            pv: vec![action],
            visits: None,
            nodes: None,
        });
        let pv = line_text(&self.state, &said.pv);
        Evaluation {
            visits: said.visits,
            nodes: said.nodes,
            value_first: said.value.map(|v| match mover {
                Player::First => v,
                Player::Second => -v,
            }),
            pv,
        }
    }
}

/// An agent's action and what it says of it, if anything.
type Thought<A> = (A, Option<Explanation<A>>);

/// `line` in the game's notation, each action written in the state it is played in (up to
/// the first that is not legal there).
pub fn line_text<G: Game>(state: &G, line: &[G::Action]) -> Vec<String> {
    let mut s = state.clone();
    let mut out = Vec::with_capacity(line.len());
    for &a in line {
        if !s.is_legal(a) {
            break;
        }
        out.push(s.format_action(a));
        s.play_unchecked(a);
    }
    out
}

/// The person's side named in `text`: `first`/`second`, a side's name in the game's own words
/// (`sides`, first player first; any case), or `none` for no person.
pub fn parse_side(text: &str, sides: [&str; 2]) -> Result<Option<Player>, String> {
    let t = text.trim().to_ascii_lowercase();
    match t.as_str() {
        "first" => Ok(Some(Player::First)),
        "second" => Ok(Some(Player::Second)),
        "none" => Ok(None),
        _ if t == sides[0].to_ascii_lowercase() => Ok(Some(Player::First)),
        _ if t == sides[1].to_ascii_lowercase() => Ok(Some(Player::Second)),
        _ => Err(format!(
            "side {text:?} is not one of first, second, {}, {}, none",
            sides[0].to_ascii_lowercase(),
            sides[1].to_ascii_lowercase()
        )),
    }
}

/// A finished game's result from the first player's point of view, in PGN's words.
pub fn result_tag(outcome: Option<Outcome>) -> &'static str {
    match outcome {
        Some(Outcome::Win(Player::First)) => "1-0",
        Some(Outcome::Win(Player::Second)) => "0-1",
        Some(Outcome::Draw) => "1/2-1/2",
        None => "*",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::liuzhou::Liuzhou;
    use players::spec::build_text;

    /// Random play, seeded with 7, as the one builder makes it.
    fn random() -> Box<dyn Agent<Liuzhou>> {
        build_text("random:seed=7", 7).unwrap()
    }

    fn liuzhou(human: Option<Player>) -> Match<Liuzhou> {
        Match::new(Liuzhou::default(), human, random(), 1000).unwrap()
    }

    #[test]
    fn turns_are_enforced_and_recorded() {
        let mut m = liuzhou(Some(Player::First));
        assert!(m.human_to_act());
        assert!(matches!(m.engine_move(), Err(MatchError::NotEngineTurn)));
        m.play_text("c3").unwrap();
        assert!(matches!(m.play_text("d4"), Err(MatchError::NotYourTurn)));
        let e = m.engine_move().unwrap();
        assert!(e.by_engine);
        assert_eq!(e.player, Player::Second);
        assert_eq!(m.history().len(), 2);
        assert_eq!(m.history()[0].text, "c3");
        assert!(m.human_to_act());
    }

    #[test]
    fn bad_actions_leave_the_game_unchanged() {
        let mut m = liuzhou(Some(Player::First));
        assert!(matches!(m.play_text("z9"), Err(MatchError::Parse { .. })));
        assert!(matches!(m.play_text("xc3"), Err(MatchError::Illegal(_))));
        assert!(m.history().is_empty());
        assert_eq!(m.state(), &Liuzhou::default());
    }

    #[test]
    fn undo_takes_back_the_person_action_and_the_replies() {
        let mut m = liuzhou(Some(Player::Second));
        assert!(matches!(m.undo(), Err(MatchError::NothingToUndo)));
        m.engine_move().unwrap();
        let after_engine = m.state().clone();
        assert!(!m.can_undo());
        m.play_text(
            if m.state().is_legal(m.state().parse_action("a1").unwrap()) {
                "a1"
            } else {
                "b1"
            },
        )
        .unwrap();
        while m.engine_to_act() {
            m.engine_move().unwrap();
        }
        let n = m.history().len();
        assert!(n >= 3, "the person's placement and at least one reply");
        assert_eq!(m.undo().unwrap(), n - 1);
        assert_eq!(m.history().len(), 1);
        assert_eq!(m.state(), &after_engine);
        assert!(m.human_to_act());
    }

    #[test]
    fn engine_alone_plays_a_whole_game_within_the_bound() {
        let mut m = liuzhou(None);
        while m.state().outcome().is_none() {
            m.engine_move().unwrap();
        }
        assert!(m.history().len() <= 144);
        assert!(matches!(m.engine_move(), Err(MatchError::GameOver)));
        // Undo with nobody human takes back one action at a time.
        let n = m.history().len();
        assert_eq!(m.undo().unwrap(), 1);
        assert_eq!(m.history().len(), n - 1);
        assert!(m.state().outcome().is_none());
    }

    #[test]
    fn sides_are_read_by_number_and_by_name() {
        let sides = ["Red", "Black"];
        assert_eq!(parse_side("first", sides), Ok(Some(Player::First)));
        assert_eq!(parse_side(" BLACK ", sides), Ok(Some(Player::Second)));
        assert_eq!(parse_side("red", sides), Ok(Some(Player::First)));
        assert_eq!(parse_side("none", sides), Ok(None));
        let e = parse_side("white", sides).unwrap_err();
        assert!(e.contains("\"white\"") && e.contains("red, black"), "{e}");
    }

    #[test]
    fn resigning_ends_the_game_for_the_engine() {
        let mut m = liuzhou(Some(Player::Second));
        m.engine_move().unwrap();
        m.play_text("a1").or_else(|_| m.play_text("b1")).unwrap();
        assert_eq!(m.resign().unwrap(), Player::Second);
        assert_eq!(m.outcome(), Some(Outcome::Win(Player::First)));
        assert_eq!(m.state().outcome(), None, "the position itself goes on");
        assert_eq!(
            m.end_reason(["Black", "White"]).as_deref(),
            Some("White resigned")
        );
        assert!(!m.human_to_act() && !m.engine_to_act() && !m.can_undo());
        assert!(matches!(m.resign(), Err(MatchError::GameOver)));
        assert!(matches!(m.engine_move(), Err(MatchError::GameOver)));
        assert!(matches!(m.play_text("c3"), Err(MatchError::GameOver)));
        assert!(matches!(m.undo(), Err(MatchError::GameOver)));
        // Watching the engine play itself, nobody can resign.
        let mut w = liuzhou(None);
        assert!(matches!(w.resign(), Err(MatchError::NoPerson)));
        assert_eq!(w.end_reason(["Black", "White"]), None);
    }

    #[test]
    fn values_are_given_for_the_first_player_whoever_chose() {
        use games::xiangqi::Xiangqi;
        // Black to move with a rook more: good for Black, so bad for Red, the first player.
        let start = Xiangqi::from_fen("3k4r/9/9/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
        let agent = build_text::<Xiangqi>("alphabeta:depth=3,hash=1", 0).unwrap();
        let mut m = Match::new(start, Some(Player::First), agent, 100).unwrap();
        m.engine_move().unwrap();
        let e = m.evaluation().unwrap();
        assert!(e.value_first.unwrap() < -0.5, "{e:?}");
        assert!(e.nodes.unwrap() > 0 && e.visits.is_none(), "{e:?}");
        assert!(!m.engine_is_instant());
        assert!(liuzhou(None).engine_is_instant(), "the random agent");
    }

    #[test]
    fn history_is_bounded() {
        let mut m = Match::new(Liuzhou::default(), None, random(), 3).unwrap();
        for _ in 0..3 {
            m.engine_move().unwrap();
        }
        assert!(matches!(
            m.engine_move(),
            Err(MatchError::TooLong { max: 3 })
        ));
    }
}
