//! The final ownership and score of finished games (`Game::final_ownership`,
//! `Game::final_score`): the auxiliary targets self-play stores, on positions whose answer is
//! known, and laid out like the input planes.

use games::go::{GoState, Move};
use games::liuzhou::{Liuzhou, Rules};
use games::xiangqi::Xiangqi;
use games::{Encoding, Game, Outcome, Player};
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// 5×5: Black holds file b, White file d; file a is Black's territory, file e White's, and
/// file c touches both (dame).
#[test]
fn go_area_with_dame_and_komi() {
    let mut s = GoState::with_size(5)
        .parse_position("1X1O1/1X1O1/1X1O1/1X1O1/1X1O1 b")
        .unwrap();
    s.play(Move::Pass).unwrap();
    s.play(Move::Pass).unwrap();
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::Second)));
    let komi = s.komi();
    assert_eq!(s.final_score(Player::First), Some(10.0 - 10.0 - komi));
    assert_eq!(s.final_score(Player::Second), Some(komi));
    let black = s.final_ownership(Player::First).unwrap();
    let row = [1.0, 1.0, 0.0, -1.0, -1.0];
    assert_eq!(black, row.repeat(5));
    let white = s.final_ownership(Player::Second).unwrap();
    assert_eq!(white, row.map(|o: f32| -o).repeat(5));
}

/// A lone Black stone in a corner owns the whole board by area; the score counts it all.
#[test]
fn go_one_stone_owns_the_empty_board() {
    let mut s = GoState::with_size(4);
    s.play(Move::parse_gtp("A1", 4).unwrap()).unwrap();
    s.play(Move::Pass).unwrap();
    s.play(Move::Pass).unwrap();
    assert_eq!(s.final_ownership(Player::First), Some(vec![1.0; 16]));
    assert_eq!(s.final_score(Player::First), Some(16.0 - s.komi()));
}

/// Movement phase, White without stones: Black's four stones are all that is owned.
#[test]
fn liuzhou_finished_position() {
    let s = Liuzhou::from_lfen("6/6/6/6/BB4/BB4 w move 0 50 0", Rules::default()).unwrap();
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::First)));
    let mut want = vec![0.0; 36];
    for p in [0, 1, 6, 7] {
        want[p] = 1.0;
    }
    assert_eq!(s.final_ownership(Player::First), Some(want.clone()));
    let theirs: Vec<f32> = want.iter().map(|o| -o).collect();
    assert_eq!(s.final_ownership(Player::Second), Some(theirs));
    assert_eq!(s.final_score(Player::First), Some(4.0));
    assert_eq!(s.final_score(Player::Second), Some(-4.0));
}

#[test]
fn xiangqi_has_no_ownership_or_score() {
    let mate = Xiangqi::from_fen("3k5/4R4/3R5/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
    assert_eq!(mate.outcome(), Some(Outcome::Win(Player::First)));
    for p in [Player::First, Player::Second] {
        assert_eq!(mate.final_ownership(p), None);
        assert_eq!(mate.final_score(p), None);
    }
}

/// Plays random games to their end and checks that a point the mover's stone-plane (plane 0)
/// marks is owned +1 by the mover and one the opponent's plane (1) marks is owned −1: the
/// ownership is laid out like the input planes.
fn ownership_follows_the_planes<G: Encoding>(start: &G, games: usize, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let shape = start.shape();
    let area = shape.height * shape.width;
    let mut finished = 0;
    for _ in 0..games {
        let mut s = start.clone();
        while s.outcome().is_none() {
            let a = games::random_action(&s, &mut rng).unwrap();
            s.play(a).unwrap();
        }
        finished += 1;
        let me = s.to_act();
        let mut planes = vec![0.0; shape.input_len()];
        s.encode(&mut planes);
        let own = s.final_ownership(me).unwrap();
        for i in 0..area {
            if planes[i] == 1.0 {
                assert_eq!(own[i], 1.0, "point {i} in {}", s.to_text());
            }
            if planes[area + i] == 1.0 {
                assert_eq!(own[i], -1.0, "point {i} in {}", s.to_text());
            }
        }
    }
    assert_eq!(finished, games);
}

#[test]
fn go_ownership_is_laid_out_like_the_planes() {
    ownership_follows_the_planes(&GoState::with_size(5), 20, 1);
    ownership_follows_the_planes(&GoState::with_size(7), 5, 2);
}

#[test]
fn liuzhou_ownership_is_laid_out_like_the_planes() {
    ownership_follows_the_planes(&Liuzhou::default(), 20, 3);
}
