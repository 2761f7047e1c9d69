//! Self-play's shaping of drawn games' targets ([`selfplay::Shaping`]) on positions whose
//! answer is known.

use games::liuzhou::{Liuzhou, Rules};
use games::Player;
use selfplay::Shaping;

fn pos(lfen: &str) -> Liuzhou {
    Liuzhou::from_lfen(lfen, Rules::default()).unwrap_or_else(|e| panic!("{lfen}: {e}"))
}

#[test]
fn draw_tiebreak_is_the_stone_balance() {
    let s = pos("WW4/6/6/6/BB4/BBBB2 w move 0 90 0");
    assert_eq!(s.draw_tiebreak(Player::First), 4.0 / 18.0);
    assert_eq!(s.draw_tiebreak(Player::Second), -4.0 / 18.0);
}
