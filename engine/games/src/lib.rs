//! The rules of every game the engine plays, behind one [`Game`] trait.
//!
//! Search, inference, self-play and the protocol faces see games only through this trait and
//! the network's view of it ([`Encoding`]), so a game added here joins all of them. Every game
//! runs the shared [`conformance`] harness.

pub mod agent;
pub mod bench;
pub mod conformance;
pub mod encoding;
pub mod go;
pub mod liuzhou;
pub mod record;
pub mod symmetry;
pub mod xiangqi;

use std::fmt::{self, Debug, Display};
use std::hash::Hash;

pub use agent::{Agent, AgentError, Analysis, Candidate, Decision, Explanation, RandomAgent};
pub use encoding::{shape_of, symmetry_maps, Encoding, TensorShape, NO_INDEX};
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

/// A game state: the position plus everything the rules need to continue from it.
///
/// Contracts every implementation keeps (checked by [`conformance`]):
/// - `legal_actions` is empty exactly when `outcome` is `Some`;
/// - `play` accepts exactly the legal actions and leaves the state unchanged on error;
/// - `to_act` may stay the same after an action (a Liuzhou turn spans several actions): callers
///   must never assume that players alternate;
/// - each symmetry maps legal actions to legal actions and commutes with `play`.
///
/// The trait holds the rules only. The network's view of a state is [`Encoding`]; the search's
/// per-game defaults and self-play's shaping of training targets are traits of the crates that
/// use them (`search::Tactics`, `selfplay::Shaping`).
pub trait Game: Clone + Debug + Send + Sync + 'static {
    /// One atomic decision. Small and `Copy`: the search stores one per tree edge.
    type Action: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// Short lowercase name used in configs, shards and model metadata (`liuzhou`).
    const NAME: &'static str;

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

    /// Who owns each point by the game's own count, from `player`'s point of view, were the game
    /// to end in this state (Go's area, Liuzhou's stones): one number per point in [−1, 1] (+1
    /// `player`'s, −1 the opponent's, 0 nobody's), row by row as a plane of
    /// [`Encoding::encode`]. It stays with the rules because it is their count; self-play and
    /// imported records take it as a training target. `None` (the default) where the game has
    /// no such count (Xiangqi).
    fn final_ownership(&self, _player: Player) -> Option<Vec<f32>> {
        None
    }

    /// The score margin by the game's own count, from `player`'s point of view, were the game
    /// to end in this state, in its own units (Go: area margin with komi; Liuzhou: stone
    /// difference). GTP's `final_score`, the search's scores of finished games and self-play's
    /// score target all read it. `None` (the default) where the game has no score.
    fn final_score(&self, _player: Player) -> Option<f32> {
        None
    }

    /// A human-readable board, for the terminal faces.
    fn render(&self) -> String {
        self.to_text()
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

/// Picks uniformly among the legal actions: the weakest opponent and a source of random games.
pub fn random_action<G: Game, R: rand::Rng + ?Sized>(state: &G, rng: &mut R) -> Option<G::Action> {
    use rand::seq::SliceRandom;
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    actions.choose(rng).copied()
}
