//! Self-play's shaping of training targets beyond the game's result, per game.
//!
//! [`Shaping`] lives here, beside the code that builds the value targets, so that [`Game`]
//! holds the rules only: how well a player stood in a drawn game is a training aid, not a rule.
//! The count the rules make at the end (`Game::final_ownership`, `Game::final_score`) stays on
//! [`Game`]: GTP's `final_score` and the search read it too. [`Trainable`] names what self-play
//! needs of a game.

use games::go::GoState;
use games::liuzhou::{Liuzhou, STONES_PER_PLAYER};
use games::xiangqi::Xiangqi;
use games::{Game, Player};
use search::Playable;

/// How self-play shapes a game's targets.
///
/// Contract (checked by [`check_position`], which the shared conformance test runs on every
/// game): `draw_tiebreak` lies in [−1, 1] and is the negation of the opponent's.
pub trait Shaping: Game {
    /// For a game that ended in a draw (by a move limit, typically): how well `player` stood,
    /// in [−1, 1]. Self-play may mix a fraction of it into drawn games' value targets
    /// (`draw_tiebreak_weight`) so that a net learns what leads towards a win before it has
    /// seen many wins; the rules and the search never use it. Default: 0 (a draw is a draw).
    fn draw_tiebreak(&self, _player: Player) -> f32 {
        0.0
    }
}

/// A game self-play can train on: [`Playable`] (rules, encoding, search defaults) and
/// [`Shaping`]. Implemented for every game that has both.
pub trait Trainable: Playable + Shaping {}

impl<G: Playable + Shaping> Trainable for G {}

impl Shaping for Liuzhou {
    /// The stone balance: captures are what wins, so more stones is the better draw.
    fn draw_tiebreak(&self, player: Player) -> f32 {
        let mine = self.stone_count(player) as f32;
        let theirs = self.stone_count(player.opponent()) as f32;
        (mine - theirs) / STONES_PER_PLAYER as f32
    }
}

// Go and Xiangqi keep the default: their drawn games' value target is 0.
impl Shaping for GoState {}

impl Shaping for Xiangqi {}

/// Checks the contract of [`Shaping`] in one position. Panics with the position's text if
/// broken. Run it on every position of [`games::conformance::check_random_games_with`].
pub fn check_position<G: Shaping>(state: &G) {
    let me = state.to_act();
    let (mine, theirs) = (state.draw_tiebreak(me), state.draw_tiebreak(me.opponent()));
    assert!(
        (-1.0..=1.0).contains(&mine),
        "draw tiebreak {mine} outside [-1, 1] in {}",
        state.to_text()
    );
    assert_eq!(mine, -theirs, "draw tiebreak views in {}", state.to_text());
}
