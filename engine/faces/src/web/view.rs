//! What the page sees of a game: the JSON views, the per-game [`WebGame`] hooks, and the
//! object-safe [`WebSession`] that lets one store hold games of every kind.

use std::sync::Arc;

use eval::Evaluator;
use games::{Agent, GameRecord, Outcome, Player, RecordFormat, RecordMeta};
use players::levels::Level;
use players::spec::{AgentSpec, OwnPlayers};
use serde::Serialize;

use super::review::RecordRefusal;
use crate::session::{Evaluation, Match, MatchError};

/// What a game adds to [`Game`] for the page: its board as cells, the points its actions touch,
/// and its game record (in the game's [`RecordFormat`]). One implementation per game, each in
/// its own file of this module.
pub trait WebGame: OwnPlayers + RecordFormat {
    /// Shown in the page's title and the record.
    const TITLE: &'static str;
    /// The two sides in the game's own words, first player first.
    const SIDES: [&'static str; 2];

    /// The board as rows of cells, top row first.
    fn board(&self) -> BoardView;

    /// The points an action touches, for clicks on the board: a one-click action has only `to`,
    /// a move has `from` and `to`, an action on no point (a pass) has neither.
    fn action_points(&self, action: Self::Action) -> (Option<String>, Option<String>);

    /// The action as players of the game write it, where that differs from the notation the API
    /// reads (Xiangqi: 炮二平五 for ICCS h2e2); played in `self`.
    fn display_action(&self, _action: Self::Action) -> Option<String> {
        None
    }

    /// Agents only this game has that a person may pick (beside the generic ones), its
    /// preferred one first.
    const NATIVE_AGENTS: &'static [&'static str] = &[];

    /// The spec of the native agent `name` (one of `NATIVE_AGENTS`) at `strength`.
    fn native_spec(_name: &str, _strength: u64) -> Option<String> {
        None
    }

    /// The first game of a record file in the game's format (the one [`RecordFormat`] writes,
    /// and the others players use), replayed in `start`'s variant.
    fn read_record(start: &Self, text: &str) -> Result<GameRecord<Self>, RecordRefusal>;

    /// Whether the network loaded for the server's variant `start` can evaluate `self`'s
    /// positions (Go's network plays one board size).
    fn network_fits(&self, _start: &Self) -> bool {
        true
    }

    /// A network's ownership output (cells in the input planes' order) as rows of the board,
    /// top row first, as [`WebGame::board`] lays them out; `None` where the game shows none.
    fn ownership_grid(&self, _cells: &[f32]) -> Option<Vec<Vec<f32>>> {
        None
    }
}

/// The generic kinds a person can pick: tree search with random playouts (`mcts`), the same
/// search guided by the game's network (`net`, where one is loaded), random moves.
pub const AGENT_NAMES: &[&str] = &["mcts", "net", "random"];

/// The generic agents available for a game: `net` only where a network is loaded.
pub fn available_agents(has_net: bool) -> Vec<&'static str> {
    AGENT_NAMES
        .iter()
        .copied()
        .filter(|&n| n != "net" || has_net)
        .collect()
}

/// The agents that can play `G`: its own first, then the generic ones (`net` with a network).
pub fn agents_for<G: WebGame>(has_net: bool) -> Vec<&'static str> {
    let mut v = G::NATIVE_AGENTS.to_vec();
    v.extend(available_agents(has_net));
    v
}

/// The agent a new game of `G` gets when it names none: `net` if configured so and there is a
/// network, else the game's own agent if it has one, else the configured default (`mcts` in
/// place of an unavailable `net`).
pub fn default_agent<G: WebGame>(configured: &str, has_net: bool) -> String {
    match (configured, G::NATIVE_AGENTS.first()) {
        ("net", _) if has_net => "net".into(),
        (_, Some(own)) => own.to_string(),
        ("net", None) => "mcts".into(),
        (c, None) => c.to_string(),
    }
}

/// The named levels ([`players::levels`]) of `G` this server can play: those that need a
/// network only where one is loaded.
pub fn offered_levels<G: WebGame>(has_net: bool) -> Vec<&'static Level> {
    players::levels::levels(G::NAME)
        .iter()
        .filter(|l| has_net || !matches!(AgentSpec::parse(&l.spec), Ok(AgentSpec::Net { .. })))
        .collect()
}

/// A level as the page lists it.
#[derive(Clone, Debug, Serialize)]
pub struct LevelView {
    pub key: String,
    pub english: String,
    pub chinese: String,
    pub elo: f64,
    /// Half the 95 % interval; 0 for an estimate.
    pub half95: f64,
    /// Whether matches measured the Elo (else it is an estimate).
    pub measured: bool,
}

impl From<&Level> for LevelView {
    fn from(l: &Level) -> Self {
        LevelView {
            key: l.key.clone(),
            english: l.english.clone(),
            chinese: l.chinese.clone(),
            elo: l.rating.elo,
            half95: l.rating.half_width95,
            measured: l.rating.measured(),
        }
    }
}

/// The player of level `name` (key, English or Chinese name) of `G`, with the kind it is and
/// the visits it searches (0 for a kind that does not count visits). Alpha-beta gets the small
/// table every live session of the page gets.
pub fn build_level<G: WebGame>(
    name: &str,
    seed: u64,
    net: Option<&Arc<dyn Evaluator<G>>>,
) -> Result<LevelPlayer<G>, ChoiceError> {
    let offered = offered_levels::<G>(net.is_some());
    let found = players::levels::level(G::NAME, name).filter(|l| offered.contains(l));
    let Some(level) = found else {
        return Err(ChoiceError::UnknownLevel {
            name: name.to_string(),
            known: offered
                .iter()
                .map(|l| l.key.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let mut text = level.spec.clone();
    if text.starts_with("alphabeta") && !text.contains("hash=") {
        text += &format!(",hash={PAGE_HASH_MIB}");
    }
    let failed = |reason: String| ChoiceError::Build {
        name: level.key.clone(),
        reason,
    };
    let spec = AgentSpec::parse(&text).map_err(|e| failed(e.to_string()))?;
    let (kind, visits) = match &spec {
        AgentSpec::Net { mcts, .. } => ("net", mcts.visits.unwrap_or(0)),
        AgentSpec::Mcts(mcts) => ("mcts", mcts.visits.unwrap_or(0)),
        AgentSpec::Random { .. } => ("random", 0),
        _ => (text.split(':').next().unwrap_or("engine"), 0),
    };
    let label = format!("{} ({})", level.english, level.key);
    let load_net = |_: Option<&std::path::Path>| -> anyhow::Result<Arc<dyn Evaluator<G>>> {
        net.cloned()
            .ok_or_else(|| anyhow::anyhow!("no network is loaded for {}", G::NAME))
    };
    let agent = players::spec::build::<G>(&spec, &label, seed, &load_net)
        .map_err(|e| failed(format!("{e:#}")))?;
    Ok((agent, level, kind.to_string(), visits))
}

/// A level's player, the level, the kind of engine it is and the visits it searches.
pub type LevelPlayer<G> = (Box<dyn Agent<G>>, &'static Level, String, u64);

/// MiB of transposition table for a level's alpha-beta: every live session holds its own.
const PAGE_HASH_MIB: u64 = 4;

/// Why no player could be made from a person's choice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    #[error("unknown agent {name:?}; known: {known}")]
    Unknown { name: String, known: String },
    #[error("strength {got} is outside 1..={max} visits")]
    Strength { got: u64, max: u64 },
    #[error("agent `net` needs a model for {game}, and none is loaded")]
    NoModel { game: &'static str },
    #[error("agent {name:?} could not start: {reason}")]
    Build { name: String, reason: String },
    #[error("unknown level {name:?}; this server plays: {known}")]
    UnknownLevel { name: String, known: String },
    #[error("a level sets the engine and its strength: give `level` or `agent`/`strength`")]
    LevelAndAgent,
}

/// A player as a person picks one (on the page, or `engine play --agent`): a kind, a strength
/// (visits per decision; a game's own kind reads it its own way) and a seed. It is turned into
/// a spec of the one grammar and built by [`players::spec::build`], so it plays as the same
/// spec does in `engine match`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub name: String,
    pub visits: u64,
    pub seed: u64,
}

impl Choice {
    /// Checks that the strength lies in `1..=max_visits` (the name is checked by building).
    pub fn validate(&self, max_visits: u64) -> Result<(), ChoiceError> {
        if self.visits == 0 || self.visits > max_visits {
            return Err(ChoiceError::Strength {
                got: self.visits,
                max: max_visits,
            });
        }
        Ok(())
    }

    /// The spec this choice stands for in `G`, and the name records give the player.
    pub fn spec<G: WebGame>(&self) -> Result<(String, String), ChoiceError> {
        let (name, v, seed) = (self.name.as_str(), self.visits, self.seed);
        if G::NATIVE_AGENTS.contains(&name) {
            if let Some(spec) = G::native_spec(name, v) {
                return Ok((spec, format!("{name} (strength {v})")));
            }
        }
        match name {
            "mcts" | "net" => Ok((
                format!("{name}:visits={v},seed={seed}"),
                format!("{name} ({v} visits)"),
            )),
            "random" => Ok((format!("random:seed={seed}"), "random".into())),
            _ => {
                let mut known = G::NATIVE_AGENTS.to_vec();
                known.extend(AGENT_NAMES);
                Err(ChoiceError::Unknown {
                    name: name.to_string(),
                    known: known.join(", "),
                })
            }
        }
    }

    /// The player for games of `G`; `net` is the game's network, if one is loaded.
    pub fn build<G: WebGame>(
        &self,
        net: Option<&Arc<dyn Evaluator<G>>>,
    ) -> Result<Box<dyn Agent<G>>, ChoiceError> {
        // Thinks until the test opens the gate: proves the server answers meanwhile.
        #[cfg(test)]
        if self.name == "gate" {
            return Ok(Box::new(tests::Gate));
        }
        if self.name == "net" && net.is_none() {
            return Err(ChoiceError::NoModel { game: G::NAME });
        }
        let (text, label) = self.spec::<G>()?;
        let failed = |reason: String| ChoiceError::Build {
            name: self.name.clone(),
            reason,
        };
        let spec = AgentSpec::parse(&text).map_err(|e| failed(e.to_string()))?;
        let load_net = |_: Option<&std::path::Path>| -> anyhow::Result<Arc<dyn Evaluator<G>>> {
            net.cloned()
                .ok_or_else(|| anyhow::anyhow!("no network is loaded for {}", G::NAME))
        };
        players::spec::build::<G>(&spec, &label, self.seed, &load_net)
            .map_err(|e| failed(format!("{e:#}")))
    }
}

/// The board for drawing: `names[r][c]` is the point's name in the game's notation (as the
/// actions' `from`/`to` use it) and `cells[r][c]` what stands on it (`""` when empty), both
/// with the top row first. `info` carries what only that game's drawing needs.
#[derive(Clone, Debug, Serialize)]
pub struct BoardView {
    pub cols: usize,
    pub rows: usize,
    pub names: Vec<Vec<String>>,
    pub cells: Vec<Vec<String>>,
    pub info: serde_json::Value,
}

/// The cells of a FEN-style board field (rows top first, `/` between rows, a number for a run of
/// empty points, `.` for one, any other character a piece): `rows` rows of `cols` cells, `""`
/// for empty. A malformed field (which the game's own writer never produces) yields empty cells
/// where it falls short and drops what overflows.
pub fn fen_cells(board: &str, cols: usize, rows: usize) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = board
        .split('/')
        .take(rows)
        .map(|row| {
            let mut cells = Vec::with_capacity(cols);
            let mut run = 0usize;
            for ch in row.chars() {
                if let Some(d) = ch.to_digit(10) {
                    run = run * 10 + d as usize;
                    continue;
                }
                cells.extend(std::iter::repeat_n(String::new(), run));
                run = 0;
                cells.push(if ch == '.' {
                    String::new()
                } else {
                    ch.to_string()
                });
            }
            cells.extend(std::iter::repeat_n(String::new(), run));
            cells.resize(cols, String::new());
            cells
        })
        .collect();
    out.resize(rows, vec![String::new(); cols]);
    out
}

/// One action, with the points a click on the board would name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ActionView {
    pub action: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// One action of the game so far.
#[derive(Clone, Debug, Serialize)]
pub struct HistoryView {
    /// In the notation the API reads.
    pub action: String,
    /// As players write it, where that differs (see [`WebGame::display_action`]); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
    /// `first` or `second`.
    pub player: &'static str,
    pub engine: bool,
}

/// The engine's last decision.
#[derive(Clone, Debug, Serialize)]
pub struct EvalView {
    /// Playouts of a tree search.
    pub visits: Option<u64>,
    /// Positions of an alpha-beta search.
    pub nodes: Option<u64>,
    /// Expected result for the first player, −1..=1.
    pub value_first: Option<f32>,
    pub pv: Vec<String>,
}

/// What the engine would play in the person's place (`POST …/hint`).
#[derive(Clone, Debug, Serialize)]
pub struct HintView {
    /// The action, with the points to mark on the board.
    pub hint: ActionView,
    /// The search's figures for it (value for the first player, as in `eval`).
    pub eval: EvalView,
}

impl From<&Evaluation> for EvalView {
    fn from(e: &Evaluation) -> Self {
        EvalView {
            visits: e.visits,
            nodes: e.nodes,
            value_first: e.value_first,
            pv: e.pv.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct OutcomeView {
    /// `first`, `second`, or null for a draw.
    pub winner: Option<&'static str>,
    pub text: String,
    /// Why the game ended: the rule that ended it ("checkmate", "both passed: W+0.5") or a
    /// resignation.
    pub reason: String,
    /// Whether a player resigned (else the rules ended the game).
    pub resigned: bool,
}

/// Everything the page draws after each request.
#[derive(Clone, Debug, Serialize)]
pub struct SessionView {
    pub id: String,
    pub game: &'static str,
    pub title: &'static str,
    pub sides: [&'static str; 2],
    /// The person's side (`first`/`second`), or null when the engine plays both.
    pub human: Option<&'static str>,
    pub agent: String,
    pub strength: u64,
    /// The named level's key, when the game was started at one.
    pub level: Option<String>,
    pub to_act: &'static str,
    pub human_to_act: bool,
    pub engine_to_act: bool,
    pub outcome: Option<OutcomeView>,
    /// The position in the game's text format (LFEN, FEN, …).
    pub position: String,
    pub board: BoardView,
    pub legal: Vec<ActionView>,
    pub history: Vec<HistoryView>,
    pub last: Option<ActionView>,
    pub eval: Option<EvalView>,
    pub can_undo: bool,
}

/// A record for download.
#[derive(Clone, Debug)]
pub struct Record {
    pub filename: String,
    pub mime: &'static str,
    pub text: String,
}

pub fn player_key(p: Player) -> &'static str {
    match p {
        Player::First => "first",
        Player::Second => "second",
    }
}

/// Who sits where and how strong the engine is: fixed when the session is made.
#[derive(Clone, Debug)]
pub struct Meta {
    pub id: String,
    pub agent: String,
    pub strength: u64,
    /// The named level the engine plays, when one was chosen.
    pub level: Option<String>,
}

/// A game of any kind, as the store and the handlers use it.
pub trait WebSession: Send {
    fn view(&self) -> SessionView;
    fn legal(&self) -> Vec<ActionView>;
    /// The person's action in the game's notation.
    fn play(&mut self, action: &str) -> Result<(), MatchError>;
    fn undo(&mut self) -> Result<usize, MatchError>;
    /// The engine thinks (blocking) and plays one action, which it returns.
    fn engine_move(&mut self) -> Result<ActionView, MatchError>;
    /// The person resigns.
    fn resign(&mut self) -> Result<(), MatchError>;
    /// The engine thinks (blocking) in the person's place and says what it would play.
    fn hint(&mut self) -> Result<HintView, MatchError>;
    /// Whether the engine's next move is too cheap to need one of the server's thinking slots.
    fn moves_instantly(&self) -> bool;
    /// Gives back the engine's memory kept between moves; whether there was any.
    fn release_memory(&mut self) -> bool;
    fn record(&self) -> Record;
}

/// A [`Match`] with the session's fixed facts.
pub struct WebMatch<G: WebGame> {
    pub game: Match<G>,
    pub meta: Meta,
}

impl<G: WebGame> WebMatch<G> {
    fn action_view(state: &G, action: G::Action) -> ActionView {
        let (from, to) = state.action_points(action);
        ActionView {
            action: state.format_action(action),
            from,
            to,
        }
    }

    fn names(&self) -> [String; 2] {
        let engine = format!("engine: {}", self.game.engine_name());
        let name = |p: Player| {
            if self.game.human() == Some(p) {
                "human".to_string()
            } else {
                engine.clone()
            }
        };
        [name(Player::First), name(Player::Second)]
    }
}

impl<G: WebGame> WebSession for WebMatch<G> {
    fn view(&self) -> SessionView {
        let state = self.game.state();
        let outcome = self.game.outcome().map(|o| {
            let (winner, text) = match o {
                Outcome::Win(p) => (Some(player_key(p)), format!("{} wins", G::SIDES[p.index()])),
                Outcome::Draw => (None, "draw".into()),
            };
            OutcomeView {
                winner,
                text,
                reason: self.game.end_reason(G::SIDES).unwrap_or_default(),
                resigned: self.game.resigned().is_some(),
            }
        });
        // Replayed for what needs the state each action was played in: the last action's
        // points and the players' notation.
        let mut before = self.game.start().clone();
        let mut history = Vec::with_capacity(self.game.history().len());
        let mut last = None;
        for p in self.game.history() {
            history.push(HistoryView {
                action: p.text.clone(),
                display: before.display_action(p.action),
                player: player_key(p.player),
                engine: p.by_engine,
            });
            last = Some(Self::action_view(&before, p.action));
            before.play_unchecked(p.action);
        }
        SessionView {
            id: self.meta.id.clone(),
            game: G::NAME,
            title: G::TITLE,
            sides: G::SIDES,
            human: self.game.human().map(player_key),
            agent: self.meta.agent.clone(),
            strength: self.meta.strength,
            level: self.meta.level.clone(),
            to_act: player_key(state.to_act()),
            human_to_act: self.game.human_to_act(),
            engine_to_act: self.game.engine_to_act(),
            outcome,
            position: state.to_text(),
            board: state.board(),
            legal: self.legal(),
            history,
            last,
            eval: self.game.evaluation().map(EvalView::from),
            can_undo: self.game.can_undo(),
        }
    }

    fn legal(&self) -> Vec<ActionView> {
        // After a resignation the position has moves, but the game has none.
        if self.game.outcome().is_some() {
            return Vec::new();
        }
        let state = self.game.state();
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        actions
            .into_iter()
            .map(|a| Self::action_view(state, a))
            .collect()
    }

    fn play(&mut self, action: &str) -> Result<(), MatchError> {
        self.game.play_text(action)
    }

    fn undo(&mut self) -> Result<usize, MatchError> {
        self.game.undo()
    }

    fn engine_move(&mut self) -> Result<ActionView, MatchError> {
        let before = self.game.state().clone();
        let action = self.game.engine_move()?.action;
        Ok(Self::action_view(&before, action))
    }

    fn resign(&mut self) -> Result<(), MatchError> {
        self.game.resign().map(|_| ())
    }

    fn hint(&mut self) -> Result<HintView, MatchError> {
        let hint = self.game.hint()?;
        Ok(HintView {
            hint: Self::action_view(self.game.state(), hint.action),
            eval: EvalView::from(&hint.evaluation),
        })
    }

    fn moves_instantly(&self) -> bool {
        self.game.engine_is_instant()
    }

    fn release_memory(&mut self) -> bool {
        self.game.release_memory()
    }

    fn record(&self) -> Record {
        let record = GameRecord {
            start: self.game.start().clone(),
            actions: self.game.history().iter().map(|p| p.action).collect(),
            result: self.game.outcome(),
            result_text: None,
        };
        let names = self.names();
        let ending = self.game.end_reason(G::SIDES);
        let meta = RecordMeta {
            names: [&names[0], &names[1]],
            ending: ending.as_deref(),
            resigned: self.game.resigned(),
        };
        Record {
            filename: format!("{}.{}", G::NAME, G::EXTENSION),
            mime: G::MIME,
            text: G::write_record(&record, &meta),
        }
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use games::go::GoState;
    use games::liuzhou::Liuzhou;
    use games::xiangqi::Xiangqi;
    use games::{AgentError, Game};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// While false, the `gate` agent does not answer.
    pub static GATE_OPEN: AtomicBool = AtomicBool::new(false);

    /// An agent that waits for [`GATE_OPEN`], then plays randomly.
    pub struct Gate;

    impl<G: OwnPlayers> Agent<G> for Gate {
        fn name(&self) -> String {
            "gate".into()
        }

        fn select_action(&mut self, state: &G) -> Result<G::Action, AgentError> {
            let t0 = std::time::Instant::now();
            while !GATE_OPEN.load(Ordering::SeqCst) {
                if t0.elapsed() > std::time::Duration::from_secs(30) {
                    return Err(AgentError::new("gate", "never opened"));
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            players::spec::build_text::<G>("random:seed=0", 0)
                .map_err(|e| AgentError::new("gate", format!("{e:#}")))?
                .select_action(state)
        }
    }

    fn choice(name: &str, visits: u64, seed: u64) -> Choice {
        Choice {
            name: name.into(),
            visits,
            seed,
        }
    }

    #[test]
    fn a_choice_is_a_spec_of_the_one_grammar() {
        assert_eq!(
            choice("net", 200, 3).spec::<Liuzhou>().unwrap(),
            ("net:visits=200,seed=3".into(), "net (200 visits)".into())
        );
        assert_eq!(
            choice("random", 9, 4).spec::<GoState>().unwrap().0,
            "random:seed=4"
        );
        assert!(choice("alphabeta", 5, 0)
            .spec::<Xiangqi>()
            .unwrap()
            .0
            .starts_with("alphabeta:nodes="));
        assert!(choice("alphabeta", 5, 0)
            .spec::<Liuzhou>()
            .unwrap()
            .0
            .starts_with("alphabeta:nodes="));
        assert!(matches!(
            choice("alphabeta", 5, 0).spec::<GoState>(),
            Err(ChoiceError::Unknown { .. })
        ));
        assert_eq!(
            choice("random", 0, 0).validate(100),
            Err(ChoiceError::Strength { got: 0, max: 100 })
        );
        assert!(choice("random", 101, 0).validate(100).is_err());
    }

    #[test]
    fn random_and_mcts_players_report_what_they_saw() {
        let mut random = choice("random", 10, 3).build::<Liuzhou>(None).unwrap();
        assert!(random.is_instant());
        let s = Liuzhou::default();
        let a = random.select_action(&s).unwrap();
        assert!(s.is_legal(a) && random.explain().is_none());

        let mut mcts = choice("mcts", 200, 5).build::<Liuzhou>(None).unwrap();
        assert_eq!(mcts.name(), "mcts (200 visits)");
        assert!(!mcts.is_instant());
        mcts.new_game(&s).unwrap();
        let a = mcts.select_action(&s).unwrap();
        let e = mcts.explain().unwrap();
        assert!(e.visits.unwrap() >= 200 && e.pv[0] == a, "{e:?}");
        assert!((-1.0..=1.0).contains(&e.value.unwrap()));
        assert!(mcts.release_memory());
    }

    #[test]
    fn the_network_player_needs_a_network() {
        assert_eq!(
            choice("net", 64, 1).build::<Liuzhou>(None).err(),
            Some(ChoiceError::NoModel { game: "liuzhou" })
        );
        let net: Arc<dyn Evaluator<Liuzhou>> = Arc::new(eval::fake::FakeEvaluator::new(8));
        let mut t = choice("net", 64, 1).build::<Liuzhou>(Some(&net)).unwrap();
        assert_eq!(t.name(), "net (64 visits)");
        let s = Liuzhou::default();
        t.new_game(&s).unwrap();
        t.select_action(&s).unwrap();
        assert!(t.explain().unwrap().visits.unwrap() >= 64);
        assert_eq!(available_agents(false), ["mcts", "random"]);
        assert_eq!(available_agents(true), ["mcts", "net", "random"]);
    }

    #[test]
    fn default_agents_prefer_the_network_then_the_game_own() {
        assert_eq!(default_agent::<GoState>("mcts", false), "mcts");
        assert_eq!(default_agent::<GoState>("random", true), "random");
        assert_eq!(default_agent::<Liuzhou>("mcts", false), "alphabeta");
        assert_eq!(default_agent::<Liuzhou>("net", true), "net");
        assert_eq!(default_agent::<GoState>("net", false), "mcts");
        assert_eq!(default_agent::<Xiangqi>("mcts", false), "alphabeta");
        assert_eq!(default_agent::<Xiangqi>("net", true), "net");
        assert_eq!(
            agents_for::<Xiangqi>(true),
            ["alphabeta", "mcts", "net", "random"]
        );
        assert_eq!(agents_for::<GoState>(false), ["mcts", "random"]);
    }

    #[test]
    fn fen_cells_reads_runs_pieces_and_short_rows() {
        let c = fen_cells("bBW3/6/1w4", 6, 4);
        assert_eq!(c.len(), 4);
        assert_eq!(c[0], ["b", "B", "W", "", "", ""]);
        assert!(c[1].iter().all(String::is_empty));
        assert_eq!(c[2][1], "w");
        assert!(c[3].iter().all(String::is_empty), "missing rows are empty");
        // Multi-digit runs (19 × 19 Go), dots, and overflow.
        let c = fen_cells("19/X17O/.X", 19, 3);
        assert!(c[0].iter().all(String::is_empty));
        assert_eq!((c[1][0].as_str(), c[1][18].as_str()), ("X", "O"));
        assert_eq!((c[2][0].as_str(), c[2][1].as_str()), ("", "X"));
        assert_eq!(fen_cells("BBBBBBBB", 6, 1)[0].len(), 6);
    }
}
