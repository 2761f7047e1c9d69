//! Each game's search defaults ([`search::Tactics`]): Xiangqi's mates in one and material
//! scale on positions whose answer is known.

use games::xiangqi::{EndReason, Xiangqi};
use games::{Game, Outcome, Player};
use search::Tactics;

#[test]
fn the_winning_action_is_a_mate_in_one_and_none_without_one() {
    // The rook on b8 holds d8, so black's king has only e9: a0a9 mates, and f0e0 leaves it
    // no move at all (no move loses in Xiangqi, in check or not).
    let mate = Xiangqi::from_fen("3k5/1R7/9/9/9/9/9/9/9/R4K3 w - - 0 1").unwrap();
    let m = mate.winning_action().expect("a mate in one");
    assert!(["a0a9", "f0e0"].contains(&mate.format_action(m).as_str()));
    for m in [m, mate.parse_action("a0a9").unwrap()] {
        let mut after = mate.clone();
        after.play(m).unwrap();
        assert_eq!(after.outcome(), Some(Outcome::Win(Player::First)));
        assert_eq!(after.end_rule(), Some(EndReason::NoMoves));
    }
    // Black to move there has no mate; nor has anyone at the start.
    let black = Xiangqi::from_fen("3k5/1R7/9/9/9/9/9/9/9/R4K3 b - - 0 1").unwrap();
    assert_eq!(black.winning_action(), None);
    assert_eq!(Xiangqi::start().winning_action(), None);
}

#[test]
fn capture_gains_follow_the_material_scale() {
    let game = Xiangqi::from_fen("r2k5/9/9/p8/9/9/9/9/9/R3K4 w - - 0 1").unwrap();
    let gain = |m: &str| game.capture_gain(game.parse_action(m).unwrap());
    assert_eq!(gain("a0a6"), 1.0, "a pawn on its own side of the river");
    assert_eq!(gain("a0a5"), 0.0, "a quiet move");
    let deep = Xiangqi::from_fen("3k5/9/9/9/9/9/R1p6/9/9/4K4 w - - 0 1").unwrap();
    assert_eq!(
        deep.capture_gain(deep.parse_action("a3c3").unwrap()),
        2.0,
        "across the river"
    );
    let rook = Xiangqi::from_fen("3k5/9/9/9/9/9/R1r6/9/9/4K4 w - - 0 1").unwrap();
    assert_eq!(rook.capture_gain(rook.parse_action("a3c3").unwrap()), 9.0);
}
