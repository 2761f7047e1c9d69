//! The rules of every game the engine plays, behind one [`Game`] trait.
//!
//! Search, inference, self-play and the protocol faces see games only through this trait, so a
//! game added here joins all of them. Every game runs the shared [`conformance`] harness.

pub mod agent;
pub mod bench;
pub mod conformance;
pub mod go;
pub mod liuzhou;
pub mod record;
pub mod symmetry;
pub mod xiangqi;

use std::fmt::{self, Debug, Display};
use std::hash::Hash;

pub use agent::{Agent, AgentError, Analysis, Candidate, Decision, Explanation, RandomAgent};
pub use record::{GameRecord, RecordError, RecordFormat, RecordMeta};
pub use symmetry::Symmetry;

/// One of the two sides. Each game names them in its own notation: Liuzhou and Go say
/// Black (`First`) and White (`Second`); Xiangqi says Red (`First`) and Black (`Second`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Player {
    First,
    Second,
}

impl Player {
    #[inline]
    pub fn opponent(self) -> Player {
        match self {
            Player::First => Player::Second,
            Player::Second => Player::First,
        }
    }

    /// 0 for `First`, 1 for `Second`: an index into per-player arrays.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win(Player),
    Draw,
}

impl Outcome {
    /// The result as seen by `player`: +1 win, 0 draw, −1 loss.
    #[inline]
    pub fn value_for(self, player: Player) -> f32 {
        match self {
            Outcome::Draw => 0.0,
            Outcome::Win(p) if p == player => 1.0,
            Outcome::Win(_) => -1.0,
        }
    }
}

/// A text that could not be read: which format, which part of it, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{format}: {field}: {reason}")]
pub struct ParseError {
    /// The format being read, such as `LFEN`, `FEN` or `action`.
    pub format: &'static str,
    /// The part of the text at fault: a field name, or a field with its position.
    pub field: String,
    pub reason: String,
}

impl ParseError {
    pub fn new(format: &'static str, field: impl Into<String>, reason: impl Into<String>) -> Self {
        ParseError {
            format,
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// Why [`Game::play`] refused an action.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    #[error("the game is over")]
    GameOver,
    #[error("illegal action {action}: {reason}")]
    Illegal { action: String, reason: String },
}

/// The shape of the network input and output a game needs. Trainer-bridge reads the same
/// numbers from shard and model metadata, so it never needs the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorShape {
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    pub policy_size: usize,
}

impl TensorShape {
    /// Number of `f32`s in one encoded state.
    pub fn input_len(&self) -> usize {
        self.planes * self.height * self.width
    }
}

/// A game state: the position plus everything the rules need to continue from it.
///
/// Contracts every implementation keeps (checked by [`conformance`]):
/// - `legal_actions` is empty exactly when `outcome` is `Some`;
/// - `play` accepts exactly the legal actions and leaves the state unchanged on error;
/// - `action_index` maps the legal actions of a state injectively into `0..shape().policy_size`,
///   and `index_action` inverts it for that state;
/// - `to_act` may stay the same after an action (a Liuzhou turn spans several actions): callers
///   must never assume that players alternate;
/// - `encode` writes `shape().input_len()` floats from the point of view of `to_act`, in the same
///   frame as `action_index`;
/// - each symmetry maps legal actions to legal actions and commutes with `play`.
pub trait Game: Clone + Debug + Send + Sync + 'static {
    /// One atomic decision. Small and `Copy`: the search stores one per tree edge.
    type Action: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// Short lowercase name used in configs, shards and model metadata (`liuzhou`).
    const NAME: &'static str;

    /// The network interface for this state's variant (Go's depends on the board size).
    fn shape(&self) -> TensorShape;

    /// The player who takes the next action.
    fn to_act(&self) -> Player;

    /// `Some` once the game has ended.
    fn outcome(&self) -> Option<Outcome>;

    /// Why the game ended, in words for people and records ("checkmate", "both passed: B+3.5");
    /// `Some` exactly when `outcome` is. The default names only the result; games say why.
    fn end_reason(&self) -> Option<String> {
        self.outcome().map(|o| match o {
            Outcome::Win(Player::First) => "the first player won".to_string(),
            Outcome::Win(Player::Second) => "the second player won".to_string(),
            Outcome::Draw => "drawn".to_string(),
        })
    }

    /// Appends the legal actions to `out` (which is not cleared). None once the game is over.
    fn legal_actions(&self, out: &mut Vec<Self::Action>);

    /// Whether `action` is legal here. The default generates all actions; games override it
    /// with a direct check.
    fn is_legal(&self, action: Self::Action) -> bool {
        let mut all = Vec::new();
        self.legal_actions(&mut all);
        all.contains(&action)
    }

    /// Plays a legal action. For hot loops that produced `action` from `legal_actions`:
    /// an illegal action here may leave a nonsensical state but never undefined behaviour.
    fn play_unchecked(&mut self, action: Self::Action);

    /// Plays `action` if it is legal, else returns why not and leaves the state unchanged.
    fn play(&mut self, action: Self::Action) -> Result<(), PlayError> {
        if self.outcome().is_some() {
            return Err(PlayError::GameOver);
        }
        if !self.is_legal(action) {
            return Err(PlayError::Illegal {
                action: self.format_action(action),
                reason: "not among the legal actions of this position".into(),
            });
        }
        self.play_unchecked(action);
        Ok(())
    }

    /// The action's index in the policy vector (`0..shape().policy_size`).
    fn action_index(&self, action: Self::Action) -> usize;

    /// The action at policy `index` in this state, if the index names one.
    fn index_action(&self, index: usize) -> Option<Self::Action>;

    /// Writes the network input for this state into `out` (`shape().input_len()` floats,
    /// planes × height × width), from the point of view of `to_act`.
    fn encode(&self, out: &mut [f32]);

    /// The board symmetries under which the rules are invariant, identity first.
    fn symmetries(&self) -> &'static [Symmetry];

    /// This state seen through `sym` (one of `symmetries()`).
    fn transform(&self, sym: Symmetry) -> Self;

    /// `action` seen through `sym`.
    fn transform_action(&self, sym: Symmetry, action: Self::Action) -> Self::Action;

    /// A hash of everything that decides the legal actions, the outcome and the encoding.
    /// Keys the search's cache of network results and repetition checks.
    fn hash(&self) -> u64;

    /// Reads an action in the game's notation, as legal or not in this state.
    fn parse_action(&self, text: &str) -> Result<Self::Action, ParseError>;

    /// Writes an action in the game's notation.
    fn format_action(&self, action: Self::Action) -> String;

    /// The position in the game's text format (LFEN, FEN, …).
    fn to_text(&self) -> String;

    /// Reads a position in the game's text format, keeping this state's variant settings
    /// (Liuzhou's `lose_below`, Go's komi and ko rule) for what the text does not say.
    fn parse_position(&self, text: &str) -> Result<Self, ParseError>;

    /// The start of this variant on a board of `size` points a side, for a game played on
    /// boards of several sizes (Go); `None` where the game has one board or `size` is not one
    /// of its boards. Self-play mixes boards with it (`train.other_boards`).
    fn on_board(&self, size: usize) -> Option<Self> {
        let _ = size;
        None
    }

    /// For a game that ended in a draw (by a move limit, typically): how well `player` stood,
    /// in [−1, 1]. Self-play may mix a fraction of it into drawn games' value targets so that a
    /// net learns what leads towards a win before it has seen many wins; the rules and the
    /// search never use it. Default: 0 (a draw is a draw).
    fn draw_tiebreak(&self, _player: Player) -> f32 {
        0.0
    }

    /// Who owns each point, from `player`'s point of view, were the game to end in this state:
    /// `shape().height × shape().width` numbers in [−1, 1] (+1 `player`'s, −1 the opponent's,
    /// 0 nobody's), in the order of a plane of [`Game::encode`]. Self-play takes it from a
    /// finished game as an auxiliary training target; the rules and the search never use it.
    /// `None` (the default) where the game has no such notion (Xiangqi).
    fn final_ownership(&self, _player: Player) -> Option<Vec<f32>> {
        None
    }

    /// The score margin from `player`'s point of view, were the game to end in this state, in
    /// the game's own units (Go: area margin with komi; Liuzhou: stone difference). An
    /// auxiliary training target like [`Game::final_ownership`]; `None` (the default) where the
    /// game has no score.
    fn final_score(&self, _player: Player) -> Option<f32> {
        None
    }

    /// Whether tree searches look for a winning action (see [`Game::winning_action`]) at each
    /// expansion by default: right where games often end on one move that a weak policy rates
    /// low (Xiangqi's checkmates), and where the test costs little beside a network call.
    const DECISIVE_SEARCH: bool = false;

    /// An action after which the game is over and won by the player to act now (checkmate in
    /// one), if there is one. The default plays each legal action on a copy.
    fn winning_action(&self) -> Option<Self::Action> {
        let me = self.to_act();
        let mut actions = Vec::new();
        self.legal_actions(&mut actions);
        actions.into_iter().find(|&a| {
            let mut next = self.clone();
            next.play_unchecked(a);
            next.outcome() == Some(Outcome::Win(me))
        })
    }

    /// Share of the prior that tree searches give to captures by default (see
    /// [`Game::capture_gain`]): a network that learned from good play rarely saw a piece left
    /// hanging and may not rate taking it, which the search must still look at.
    const CAPTURE_PRIOR: f32 = 0.0;

    /// First-play urgency that tree searches use by default (an unvisited child is valued at
    /// its parent's mean less this), where the game's tactics ask for another than the
    /// search's own default; `None` keeps the search's.
    const FPU_REDUCTION: Option<f32> = None;

    /// What `action` takes from the opponent at once, in the game's own material units (0 for
    /// an action that captures nothing). Only search heuristics use it. Default: 0.
    fn capture_gain(&self, _action: Self::Action) -> f32 {
        0.0
    }

    /// A human-readable board, for the terminal faces.
    fn render(&self) -> String {
        self.to_text()
    }
}

/// The network interface of the game called `name` (Go's depends on `board_size`), for tools
/// such as trainer-bridge that know games only by name.
pub fn shape_of(name: &str, board_size: Option<usize>) -> Option<TensorShape> {
    match name {
        liuzhou::Liuzhou::NAME => Some(liuzhou::Liuzhou::default().shape()),
        xiangqi::Xiangqi::NAME => Some(xiangqi::Xiangqi::default().shape()),
        go::GoState::NAME => {
            let rules = go::GoRules::with_size(board_size.unwrap_or(go::GoRules::default().size));
            go::GoState::new(rules).ok().map(|s| s.shape())
        }
        _ => None,
    }
}

/// Wraps an action with its state so it prints in the game's notation.
pub struct Notation<'a, G: Game>(pub &'a G, pub G::Action);

impl<G: Game> Display for Notation<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.format_action(self.1))
    }
}

/// Counts the leaves of the game tree to `depth` plies: the standard rules check.
pub fn perft<G: Game>(state: &G, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    if depth == 1 {
        return actions.len() as u64;
    }
    actions
        .iter()
        .map(|&a| {
            let mut next = state.clone();
            next.play_unchecked(a);
            perft(&next, depth - 1)
        })
        .sum()
}

/// `perft` split by first action, in the order of `legal_actions`.
pub fn perft_divide<G: Game>(state: &G, depth: u32) -> Vec<(G::Action, u64)> {
    assert!(depth >= 1, "divide needs depth ≥ 1");
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    actions
        .into_iter()
        .map(|a| {
            let mut next = state.clone();
            next.play_unchecked(a);
            (a, perft(&next, depth - 1))
        })
        .collect()
}

/// A policy index that a symmetry sends to no action.
pub const NO_INDEX: u16 = u16::MAX;

/// For each symmetry of `state` (the identity first), where it sends each policy index: entry
/// `i` is the index, in the transformed state, of the transformed action of index `i`
/// ([`NO_INDEX`] where `i` names no action). The maps depend only on the variant's shape, so
/// one state's maps serve every state of its variant.
pub fn symmetry_maps<G: Game>(state: &G) -> Vec<(Symmetry, Vec<u16>)> {
    let size = state.shape().policy_size;
    state
        .symmetries()
        .iter()
        .map(|&sym| {
            let map = (0..size)
                .map(|i| match state.index_action(i) {
                    Some(a) => state.action_index(state.transform_action(sym, a)) as u16,
                    None => NO_INDEX,
                })
                .collect();
            (sym, map)
        })
        .collect()
}

/// Picks uniformly among the legal actions: the weakest opponent and a source of random games.
pub fn random_action<G: Game, R: rand::Rng + ?Sized>(state: &G, rng: &mut R) -> Option<G::Action> {
    use rand::seq::SliceRandom;
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    actions.choose(rng).copied()
}
