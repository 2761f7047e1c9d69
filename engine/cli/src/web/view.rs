//! What the page sees of a game: the JSON views, the per-game [`WebGame`] hooks, and the
//! object-safe [`WebSession`] that lets one store hold games of every kind.

use std::sync::Arc;

use eval::Evaluator;
use games::{Agent, AgentError, Game, Outcome, Player};
use serde::Serialize;

use crate::thinkers::{available_agents, AgentSpec, AgentSpecError, Plain, Thinker};

use crate::session::{result_tag, Evaluation, Match, MatchError, Played};

/// What a game adds to [`Game`] for the page: its board as cells, the points its actions touch,
/// and its game record. One implementation per game, each in its own file of this module.
pub trait WebGame: Game {
    /// Shown in the page's title and the record.
    const TITLE: &'static str;
    /// The two sides in the game's own words, first player first.
    const SIDES: [&'static str; 2];

    /// The board as rows of cells, top row first.
    fn board(&self) -> BoardView;

    /// The points an action touches, for clicks on the board: a one-click action has only `to`,
    /// a move has `from` and `to`, an action on no point (a pass) has neither.
    fn action_points(&self, action: Self::Action) -> (Option<String>, Option<String>);

    /// The game record for download.
    fn record(game: &RecordInput<'_, Self>) -> Record;

    /// The action as players of the game write it, where that differs from the notation the API
    /// reads (Xiangqi: 炮二平五 for ICCS h2e2); played in `self`.
    fn display_action(&self, _action: Self::Action) -> Option<String> {
        None
    }

    /// Agents only this game has (beside the generic ones), its preferred one first.
    const NATIVE_AGENTS: &'static [&'static str] = &[];

    /// Builds the native agent `name` (one of `NATIVE_AGENTS`) at `strength`.
    fn native_agent(
        name: &str,
        _strength: u64,
        _seed: u64,
    ) -> Result<Box<dyn Agent<Self>>, AgentError> {
        Err(AgentError {
            agent: name.to_string(),
            reason: format!("{} has no agents of its own", Self::NAME),
        })
    }
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

/// The thinker `spec` names for `G`: one of the game's own agents, or a generic one.
pub fn build_thinker<G: WebGame>(
    spec: &AgentSpec,
    net: Option<&Arc<dyn Evaluator<G>>>,
) -> Result<Box<dyn Thinker<G>>, AgentSpecError> {
    if G::NATIVE_AGENTS.contains(&spec.name.as_str()) {
        let agent = G::native_agent(&spec.name, spec.visits, spec.seed).map_err(|e| {
            AgentSpecError::Native {
                name: spec.name.clone(),
                reason: e.reason,
            }
        })?;
        let label = format!("{} (strength {})", spec.name, spec.visits);
        return Ok(Box::new(Plain::labelled(agent, label)));
    }
    spec.build(net)
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

/// What a record is made from.
pub struct RecordInput<'a, G: Game> {
    pub start: &'a G,
    pub end: &'a G,
    pub actions: &'a [Played<G::Action>],
    /// The players' names, first player first.
    pub names: [String; 2],
    /// The result, which a resignation decides before the position does.
    pub outcome: Option<Outcome>,
    /// Why the game ended, if it did.
    pub reason: Option<String>,
    /// The player who resigned, if one did.
    pub resigned: Option<Player>,
}

impl<G: Game> RecordInput<'_, G> {
    /// PGN's result tag.
    pub fn result(&self) -> &'static str {
        result_tag(self.outcome)
    }
}

/// Writes PGN-style tag pairs, escaping what PGN escapes.
pub fn tag_pairs(tags: &[(&str, String)]) -> String {
    tags.iter()
        .map(|(k, v)| {
            format!(
                "[{k} \"{}\"]\n",
                v.replace('\\', "\\\\").replace('"', "\\\"")
            )
        })
        .collect()
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
        G::record(&RecordInput {
            start: self.game.start(),
            end: self.game.state(),
            actions: self.game.history(),
            names: self.names(),
            outcome: self.game.outcome(),
            reason: self.game.end_reason(G::SIDES),
            resigned: self.game.resigned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::go::GoState;
    use games::liuzhou::Liuzhou;
    use games::xiangqi::Xiangqi;

    #[test]
    fn default_agents_prefer_the_network_then_the_game_own() {
        assert_eq!(default_agent::<Liuzhou>("mcts", false), "mcts");
        assert_eq!(default_agent::<Liuzhou>("random", true), "random");
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
