//! The search's defaults for each game: its tactics, which the rules do not need.
//!
//! [`Tactics`] lives here, beside the search that reads it, so that [`Game`] holds the rules
//! only: whether to look for a winning action at each expansion, how much of the prior to give
//! to captures and what a capture takes, and the first-play urgency a game's tactics ask for.
//! `players::spec` and self-play read the defaults from it; a spec may override each one.
//! [`Playable`] names what every generic player needs: the rules, their network encoding
//! ([`Encoding`]) and these defaults.

use games::go::GoState;
use games::liuzhou::Liuzhou;
use games::xiangqi::{board, Move, Xiangqi};
use games::{Encoding, Game, Outcome};

/// A game's defaults for tree searches. Every method has a default that leaves the search as
/// it is; a game overrides what its tactics ask for.
///
/// Contract (checked by [`check_position`], which the shared conformance test runs on every
/// game): `winning_action` names a legal action that wins at once exactly when one exists.
pub trait Tactics: Game {
    /// Whether tree searches look for a winning action (see [`Tactics::winning_action`]) at
    /// each expansion by default: right where games often end on one move that a weak policy
    /// rates low (Xiangqi's checkmates), and where the test costs little beside a network call.
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
    /// [`Tactics::capture_gain`]): a network that learned from good play rarely saw a piece
    /// left hanging and may not rate taking it, which the search must still look at.
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
}

/// A game the engine's players can play: its rules, its network encoding and its search
/// defaults. Implemented for every game that has all three, so generic code names one bound.
pub trait Playable: Encoding + Tactics {}

impl<G: Encoding + Tactics> Playable for G {}

// Liuzhou's captures come from shapes rather than from taking a piece, and a placement rarely
// wins at once: the search's own defaults serve it.
impl Tactics for Liuzhou {}

// Go's captures are rarely the point of a move and no single move ends a game: the defaults.
impl Tactics for GoState {}

impl Tactics for Xiangqi {
    // Checkmates decide most games, and a weak policy misses one-move mates on either side.
    const DECISIVE_SEARCH: bool = true;

    /// A move after which the opponent has no legal move ([`Xiangqi::mate_in_one`]).
    fn winning_action(&self) -> Option<Move> {
        self.mate_in_one()
    }

    const CAPTURE_PRIOR: f32 = 0.25;

    // A short tactic often hides behind a move the policy rates low: a search that values
    // unvisited moves at their parent's mean looks at more of them before it commits.
    const FPU_REDUCTION: Option<f32> = Some(0.0);

    /// The usual material scale: rook 9, cannon 4.5, knight 4, advisor and bishop 2, pawn 1
    /// (2 once across the river, where it also moves sideways).
    fn capture_gain(&self, action: Move) -> f32 {
        let victim = self.position().piece_at(action.to());
        match board::kind_of(victim) {
            board::ROOK => 9.0,
            board::CANNON => 4.5,
            board::KNIGHT => 4.0,
            board::ADVISOR | board::BISHOP => 2.0,
            board::PAWN => {
                // A red pawn has crossed on ranks 5–9, a black one on ranks 0–4.
                let red = victim & board::RED_BIT != 0;
                if (board::rank_of(action.to()) >= 5) == red {
                    2.0
                } else {
                    1.0
                }
            }
            _ => 0.0,
        }
    }
}

/// Checks the contract of [`Tactics`] in one position: `winning_action` names a legal action
/// that wins at once exactly when one exists. Panics with the position's text if not. Run it on
/// every position of [`games::conformance::check_random_games_with`].
pub fn check_position<G: Tactics>(state: &G) {
    let text = state.to_text();
    let me = state.to_act();
    let mut legal = Vec::new();
    state.legal_actions(&mut legal);
    let wins = legal.iter().any(|&a| {
        let mut next = state.clone();
        next.play_unchecked(a);
        next.outcome() == Some(Outcome::Win(me))
    });
    match state.winning_action() {
        Some(a) => {
            assert!(
                legal.contains(&a),
                "winning action {a:?} not legal in {text}"
            );
            let mut next = state.clone();
            next.play_unchecked(a);
            assert_eq!(
                next.outcome(),
                Some(Outcome::Win(me)),
                "winning action {a:?} does not win in {text}"
            );
        }
        None => assert!(!wins, "a winning action exists but none is named in {text}"),
    }
}
