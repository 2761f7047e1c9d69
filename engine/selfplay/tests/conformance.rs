//! The shared conformance harness (`games::conformance`) over every game, with the contracts of
//! the traits that sit beside the rules: the search's `Tactics` and self-play's `Shaping`.

use games::conformance::{check_random_games_with, Coverage};
use games::go::GoState;
use games::liuzhou::{Liuzhou, Rules};
use games::xiangqi::Xiangqi;
use selfplay::Trainable;

/// Runs the harness from `start` with the checks of both traits on every position; returns the
/// coverage and how many positions had a winning action.
fn check<G: Trainable>(start: &G, games: usize, plies: usize, seed: u64) -> (Coverage, usize) {
    let mut winnable = 0;
    let cov = check_random_games_with(start, games, plies, seed, |s| {
        search::tactics::check_position(s);
        selfplay::shaping::check_position(s);
        winnable += usize::from(s.winning_action().is_some());
    });
    (cov, winnable)
}

#[test]
fn liuzhou_passes_with_tactics_and_shaping() {
    for (lose_below, seed) in [(Rules::default().lose_below, 1), (4, 2)] {
        let (cov, _) = check(&Liuzhou::new(Rules { lose_below }), 30, 200, seed);
        assert!(cov.finished_games > 20, "{cov:?}");
    }
}

#[test]
fn xiangqi_passes_with_tactics_and_shaping() {
    // Few pieces, so that random games reach mates and the winning action is exercised.
    let mut winnable = 0;
    for (i, f) in [
        "3k5/9/4P4/2P3P2/9/9/9/9/9/4K4 b - - 0 1",
        "3ak4/4a4/9/9/4r4/9/4N4/9/4A4/4K4 w - - 0 1",
    ]
    .iter()
    .enumerate()
    {
        let (cov, w) = check(&Xiangqi::from_fen(f).unwrap(), 4, 200, i as u64);
        assert!(cov.positions > 0, "{cov:?}");
        winnable += w;
    }
    assert!(winnable > 0, "no position with a mate in one");
    let (cov, _) = check(&Xiangqi::start(), 2, 60, 3);
    assert!(cov.actions_checked > 1_000, "{cov:?}");
}

#[test]
fn go_passes_with_tactics_and_shaping() {
    for (size, games, plies) in [(2, 20, 60), (3, 20, 80), (5, 4, 80)] {
        let (cov, _) = check(&GoState::with_size(size), games, plies, size as u64);
        assert_eq!(cov.games, games);
        assert!(cov.actions_checked > 0);
    }
}
