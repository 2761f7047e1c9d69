//! Liuzhou scenarios written from the rules (`docs/rules/liuzhou.md`), one or more per rule and
//! phase transition, plus the shared conformance harness and property tests over random games.

use games::liuzhou::{Action, ActionKind, Liuzhou, Phase, Rules, STONES_PER_PLAYER};
use games::{conformance, Encoding, Game, Outcome, Player};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

fn pos(lfen: &str) -> Liuzhou {
    Liuzhou::from_lfen(lfen, Rules::default()).unwrap_or_else(|e| panic!("{lfen}: {e}"))
}

fn pos_lb(lfen: &str, lose_below: u8) -> Liuzhou {
    Liuzhou::from_lfen(lfen, Rules { lose_below }).unwrap()
}

fn play(s: &mut Liuzhou, moves: &str) {
    for m in moves.split_whitespace() {
        let a = s.parse_action(m).unwrap();
        s.play(a)
            .unwrap_or_else(|e| panic!("{m} in {}: {e}", s.lfen()));
    }
}

fn legal(s: &Liuzhou) -> Vec<String> {
    let mut v = Vec::new();
    s.legal_actions(&mut v);
    let mut t: Vec<String> = v.iter().map(|&a| s.format_action(a)).collect();
    t.sort();
    t
}

fn names(list: &str) -> Vec<String> {
    let mut v: Vec<String> = list.split_whitespace().map(String::from).collect();
    v.sort();
    v
}

/// A full board in a checkerboard pattern (no square or line anywhere) but for f6.
const CHECKER_F6_EMPTY: &str = "WBWBW1/BWBWBW/WBWBWB/BWBWBW/WBWBWB/BWBWBW";
/// The same with colours swapped: Black has 18 stones, White 17, and White's last placement
/// on f6 (next to black e6 and f5) completes nothing.
const CHECKER_WHITE_LAST: &str = "BWBWB1/WBWBWB/BWBWBW/WBWBWB/BWBWBW/WBWBWB";

#[test]
fn line_beats_square_and_marks_prefer_stones_outside_shapes() {
    // Black's a1 completes rank 1 and the square a1 b1 a2 b2: a line, so 2 marks.
    let mut s = pos("6/6/WWW3/WWWW2/BB4/1BBBBB b place 0 14 0");
    play(&mut s, "a1");
    assert_eq!(
        (s.phase(), s.pending(), s.to_act()),
        (Phase::Mark, 2, Player::First)
    );
    // White's squares a3-b4 and b3-c4 cover everything but d3: only d3 may be marked.
    assert_eq!(legal(&s), names("xd3"));
    play(&mut s, "xd3");
    // Now every unmarked white stone is in a shape, so all of them are targets.
    assert_eq!((s.phase(), s.pending()), (Phase::Mark, 1));
    assert_eq!(legal(&s), names("xa3 xb3 xc3 xa4 xb4 xc4"));
    play(&mut s, "xb3");
    assert_eq!(
        (s.phase(), s.pending(), s.to_act()),
        (Phase::Place, 0, Player::Second)
    );
    assert_eq!(s.lfen(), "6/6/WWW3/WwWw2/BB4/BBBBBB w place 0 17 0");
}

#[test]
fn two_squares_at_once_give_one() {
    let mut s = pos("6/6/6/WWW3/BBB3/B1B3 b place 0 8 0");
    play(&mut s, "b1");
    assert_eq!((s.phase(), s.pending()), (Phase::Mark, 1));
    assert_eq!(legal(&s), names("xa3 xb3 xc3"));
}

#[test]
fn a_row_and_a_column_at_once_give_two() {
    let mut s = pos("B4W/B5/B5/B5/B5/1BBBBB b place 0 18 0");
    assert_eq!(s.stone_count(Player::First), 10);
    play(&mut s, "a1");
    assert_eq!((s.phase(), s.pending()), (Phase::Mark, 2));
}

#[test]
fn square_through_another_point_does_not_reward() {
    // a1 b1 a2 b2 is already complete; placing f6 completes nothing through f6.
    let mut s = pos("6/6/6/W5/BB4/BB1W2 b place 0 8 0");
    play(&mut s, "f6");
    assert_eq!((s.phase(), s.to_act()), (Phase::Place, Player::Second));
}

#[test]
fn a_marked_stone_breaks_shapes_for_both_sides() {
    // Black's c3 is marked: completing c3 d3 c4 d4 with d4 gives nothing.
    let mut s = pos("6/6/2B3/2bB2/6/W5 b place 0 3 0");
    play(&mut s, "d4");
    assert_eq!(s.phase(), Phase::Place);
    assert_eq!(s.to_act(), Player::Second);
    // White's a5 b5 a6 b6 with a6 marked is no square: its other stones are free targets, so
    // Black's square reward must choose among them and the unshaped e1 equally.
    let mut s = pos("wW4/WW4/6/6/BB4/BB2W1 w place 0 9 0");
    play(&mut s, "f1");
    let mut s2 = pos("wW4/WW4/6/6/B5/BB2WW b place 0 10 0");
    play(&mut s2, "b2");
    assert_eq!(legal(&s2), names("xb6 xa5 xb5 xe1 xf1"));
    let _ = s;
}

#[test]
fn marks_without_targets_are_forfeited() {
    // Black completes a line (2 marks owed) but White has one unmarked stone: one mark is
    // made, the second forfeited, and White places next.
    let mut s = pos("ww4/w5/6/6/6/1BBBBB b place 0 9 0");
    play(&mut s, "xa1".trim_start_matches('x'));
    assert_eq!(
        s.phase(),
        Phase::Place,
        "no unmarked white stone: both marks forfeited"
    );
    let mut s = pos("ww4/wW4/6/6/6/1BBBBB b place 0 9 0");
    play(&mut s, "a1");
    assert_eq!((s.phase(), s.pending()), (Phase::Mark, 2));
    play(&mut s, "xb5");
    assert_eq!(
        (s.phase(), s.pending(), s.to_act()),
        (Phase::Place, 0, Player::Second)
    );
}

#[test]
fn removal_with_marks_removes_them_and_white_moves() {
    // a4 is a marked black stone.
    let mut s = pos("BWBWB1/WBWBWB/bWBWBW/WBWBWB/BWBWBW/WBWBWB w place 0 40 0");
    assert_eq!(s.marked().count_ones(), 1);
    play(&mut s, "f6");
    assert_eq!((s.phase(), s.to_act()), (Phase::Move, Player::Second));
    assert_eq!(s.marked(), 0);
    assert_eq!(s.stone_count(Player::First), 17);
    assert_eq!(s.stone_count(Player::Second), 18);
    assert_eq!(s.move_count(), 41, "REMOVAL is not an action");
    assert_eq!(s.stones_placed(Player::First), STONES_PER_PLAYER);
}

#[test]
fn removal_without_marks_starts_forced_removal_white_then_black() {
    let mut s = pos(&format!("{CHECKER_WHITE_LAST} w place 0 35 0"));
    play(&mut s, "f6");
    assert_eq!((s.phase(), s.to_act()), (Phase::Forced, Player::Second));
    assert_eq!(
        s.lfen(),
        "BWBWBW/WBWBWB/BWBWBW/WBWBWB/BWBWBW/WBWBWB w forced 0 36 0"
    );
    // No shapes: every black stone is a target.
    assert_eq!(legal(&s).len(), 18);
    play(&mut s, "xb1");
    assert_eq!((s.phase(), s.to_act()), (Phase::Forced, Player::First));
    assert_eq!(legal(&s).len(), 18, "Black removes any of White's 18");
    play(&mut s, "xa1");
    assert_eq!((s.phase(), s.to_act()), (Phase::Move, Player::Second));
    assert_eq!(
        s.lfen(),
        "BWBWBW/WBWBWB/BWBWBW/WBWBWB/BWBWBW/2WBWB w move 0 38 0"
    );
}

#[test]
fn no_move_removal_then_counter_removal_then_the_stuck_player_moves() {
    // Black's stones are all blocked: the only empty point f6 touches white e6 and f5.
    let mut s = pos(&format!("{CHECKER_F6_EMPTY} b move 0 50 3"));
    assert_eq!(legal(&s).len(), 18, "every white stone is a no-move target");
    play(&mut s, "xe6");
    assert_eq!(
        (s.phase(), s.to_act(), s.moves_since_capture()),
        (Phase::Counter, Player::Second, 0)
    );
    assert_eq!(
        legal(&s).len(),
        17,
        "White removes one of Black's 17 stones"
    );
    play(&mut s, "xa1");
    assert_eq!((s.phase(), s.to_act()), (Phase::Move, Player::First));
    assert!(legal(&s).contains(&"d6-e6".to_string()));
}

#[test]
fn move_limit_draws() {
    let mut s = pos("5W/4W1/6/6/B5/BB4 b move 0 143 0");
    assert_eq!(s.outcome(), None);
    play(&mut s, "a2-a3");
    assert_eq!(s.outcome(), Some(Outcome::Draw));
    assert_eq!(
        s.end_reason().as_deref(),
        Some("the move limit of 144 actions")
    );
    assert!(legal(&s).is_empty());
}

#[test]
fn no_capture_limit_ends_the_game_before_the_capture() {
    // c2-b2 completes the square a1 b1 a2 b2; at 35 steps without capture it reaches the limit.
    let mut s = pos("5W/4W1/6/6/B1B3/BB4 b move 0 100 35");
    play(&mut s, "c2-b2");
    assert_eq!(s.outcome(), Some(Outcome::Draw));
    assert_eq!(
        s.end_reason().as_deref(),
        Some("36 actions without a capture")
    );
    assert_eq!(
        (s.phase(), s.pending()),
        (Phase::Capture, 1),
        "capture owed but not taken"
    );
    // One step earlier the capture is taken and resets the count.
    let mut s = pos("5W/4W1/6/6/B1B3/BB4 b move 0 100 34");
    play(&mut s, "c2-b2");
    assert_eq!(s.outcome(), None);
    play(&mut s, "xf6");
    assert_eq!(
        (s.moves_since_capture(), s.phase(), s.to_act()),
        (0, Phase::Move, Player::Second)
    );
}

#[test]
fn lose_below_one_needs_every_stone_captured() {
    let mut s = pos("5W/6/6/6/BB4/BB4 b capture 1 100 0");
    assert_eq!(s.end_reason(), None);
    play(&mut s, "xf6");
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::First)));
    assert_eq!(s.end_reason().as_deref(), Some("White has no stones left"));
    let mut s = pos("4WW/6/6/6/BB4/BB4 b capture 1 100 0");
    play(&mut s, "xf6");
    assert_eq!(s.outcome(), None);
}

#[test]
fn lose_below_four_ends_at_three_stones() {
    let lfen = "2WWWW/6/6/6/BB4/BB4 b capture 1 100 0";
    let mut s = pos_lb(lfen, 4);
    play(&mut s, "xf6");
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::First)));
    let mut s = pos_lb(lfen, 1);
    play(&mut s, "xf6");
    assert_eq!(s.outcome(), None);
    // A position already below the limit is over when read.
    let s = pos_lb("WWW3/6/6/6/BB4/BB4 w move 0 90 0", 4);
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::First)));
    assert_eq!(
        s.end_reason().as_deref(),
        Some("White has fewer than 4 stones")
    );
}

#[test]
fn a_win_lapses_pending_captures() {
    // Line through f1: two captures owed, White has one stone: the first capture wins at once.
    let mut s = pos("W5/6/6/6/6/BBBBB1 b move 0 80 0");
    let _ = &mut s;
    let mut s = pos("W5/6/6/6/5B/BBBBB1 b move 0 80 0");
    play(&mut s, "f2-f1");
    assert_eq!((s.phase(), s.pending()), (Phase::Capture, 2));
    play(&mut s, "xa6");
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::First)));
}

#[test]
fn captures_prefer_stones_outside_shapes() {
    // White has a square (a5 b5 a6 b6) and a loose stone f6: only f6 may be captured.
    let mut s = pos("WW3W/WW4/6/6/B1B3/BB4 b move 0 60 5");
    play(&mut s, "c2-b2");
    assert_eq!(legal(&s), names("xf6"));
    play(&mut s, "xf6");
    assert_eq!((s.phase(), s.to_act()), (Phase::Move, Player::Second));
}

#[test]
fn malformed_lfen_names_the_field() {
    let cases = [
        ("", "position"),
        ("6/6/6/6/6 b place 0 0 0", "board"),
        ("7/6/6/6/6/6 b place 0 0 0", "board rank 6"),
        ("6/6/5X/6/6/6 b place 0 0 0", "board rank 4"),
        ("6/6/6/6/6/BBBBBBB b place 0 0 0", "board rank 1"),
        ("6/6/6/6/6/6 x place 0 0 0", "to_move"),
        ("6/6/6/6/6/6 b play 0 0 0", "phase"),
        ("6/6/6/6/6/6 b place 1 0 0", "pending"),
        ("6/6/6/6/6/6 b place 0 -1 0", "move_count"),
        ("6/6/6/6/6/6 b place 0 0 zz", "moves_since_capture"),
        ("6/6/6/6/6/6 b mark 0 0 0", "pending"),
        ("5b/6/6/6/6/6 w move 0 40 0", "board"),
    ];
    for (text, field) in cases {
        let err = Liuzhou::from_lfen(text, Rules::default()).expect_err(text);
        assert_eq!(err.format, "LFEN");
        assert_eq!(err.field, field, "{text}: {err}");
    }
    assert!(Liuzhou::from_lfen(games::liuzhou::START_LFEN, Rules { lose_below: 0 }).is_err());
    // A count too large is said to be too large, not to be no number.
    for (text, reason) in [
        ("6/6/6/6/6/6 b place 0 4294967296 0", "4294967296 exceeds"),
        ("6/6/6/6/6/6 b place 0 70000 0", "70000 exceeds"),
        ("6/6/6/6/6/6 b place 0 +5 0", "not a whole number"),
    ] {
        let err = Liuzhou::from_lfen(text, Rules::default()).expect_err(text);
        assert!(err.to_string().contains(reason), "{text}: {err}");
    }
}

#[test]
fn malformed_action_text_is_an_error() {
    let mut s = Liuzhou::default();
    for bad in [
        "", "g1", "a7", "a", "xx", "a1-a3", "a1-b2", "a1-", "x", "c3c4",
    ] {
        assert!(s.parse_action(bad).is_err(), "{bad:?}");
    }
    assert!(s.play(s.parse_action("xa1").unwrap()).is_err());
}

#[test]
fn action_notation() {
    assert_eq!(
        Action::from_index(0).map(|a| a.kind()),
        Some(ActionKind::Place(0))
    );
    let s = Liuzhou::default();
    assert_eq!(s.format_action(s.parse_action("c3-c4").unwrap()), "c3-c4");
    assert_eq!(s.format_action(s.parse_action("xf6").unwrap()), "xf6");
    assert_eq!(s.format_action(s.parse_action("a1").unwrap()), "a1");
    // Steps off the board name no action.
    assert!(
        (72..216)
            .filter(|&i| Action::from_index(i).is_none())
            .count()
            == 24
    );
}

#[test]
fn conformance_harness_default_rules() {
    let cov = conformance::check_random_games(&Liuzhou::default(), 300, 200, 7);
    assert_eq!(cov.games, 300);
    assert!(cov.finished_games > 250, "{cov:?}");
    assert!(cov.positions > 20_000, "{cov:?}");
}

#[test]
fn conformance_harness_lose_below_four() {
    let cov = conformance::check_random_games(&Liuzhou::new(Rules { lose_below: 4 }), 150, 200, 8);
    assert!(cov.finished_games > 100, "{cov:?}");
}

/// Plays a random game from `seed`, calling `check(before, action, after)` on every action.
fn random_game(seed: u64, lose_below: u8, mut check: impl FnMut(&Liuzhou, Action, &Liuzhou)) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut s = Liuzhou::new(Rules { lose_below });
    let mut actions = Vec::new();
    loop {
        actions.clear();
        s.legal_actions(&mut actions);
        let Some(&a) = actions.choose(&mut rng) else {
            break;
        };
        let before = s.clone();
        s.play(a).unwrap();
        check(&before, a, &s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn stones_on_board_plus_removed_equal_placed(seed in any::<u64>(), lb in prop_oneof![Just(1u8), Just(4u8)]) {
        let mut removed = [0u32; 2];
        random_game(seed, lb, |before, a, after| {
            let placing = matches!(before.phase(), Phase::Place | Phase::Mark);
            if placing && !matches!(after.phase(), Phase::Place | Phase::Mark) {
                // REMOVAL ran: every marked stone left the board.
                // The action itself may have been the last mark.
                let marked_now = match a.kind() {
                    ActionKind::Select(q) if before.phase() == Phase::Mark => before.marked() | 1 << q,
                    _ => before.marked(),
                };
                for p in [Player::First, Player::Second] {
                    let marked = before.stones(p) & marked_now;
                    removed[p.index()] += marked.count_ones();
                }
            }
            if let ActionKind::Select(_) = a.kind() {
                if before.phase() != Phase::Mark {
                    removed[before.to_act().opponent().index()] += 1;
                }
            }
            for p in [Player::First, Player::Second] {
                assert_eq!(after.stone_count(p) + removed[p.index()], after.stones_placed(p), "{}", after.lfen());
            }
        });
    }

    #[test]
    fn lfen_round_trips(seed in any::<u64>(), lb in prop_oneof![Just(1u8), Just(4u8)]) {
        random_game(seed, lb, |_, _, after| {
            let back = Liuzhou::from_lfen(&after.lfen(), after.rules()).unwrap();
            assert_eq!(&back, after);
        });
    }

    #[test]
    fn move_count_counts_every_action(seed in any::<u64>()) {
        random_game(seed, 1, |before, _, after| {
            assert_eq!(after.move_count(), before.move_count() + 1);
        });
    }

    #[test]
    fn phase_invariants(seed in any::<u64>(), lb in prop_oneof![Just(1u8), Just(4u8)]) {
        random_game(seed, lb, |_, _, s| {
            let selecting = matches!(s.phase(), Phase::Mark | Phase::Capture);
            assert_eq!(selecting, s.pending() > 0, "{}", s.lfen());
            assert!(s.pending() <= 2);
            if !matches!(s.phase(), Phase::Place | Phase::Mark) {
                assert_eq!(s.marked(), 0, "marks outlive placement in {}", s.lfen());
            }
            assert_eq!(s.stones(Player::First) & s.stones(Player::Second), 0);
            assert_eq!(s.marked() & !(s.stones(Player::First) | s.stones(Player::Second)), 0);
            if s.phase() == Phase::Place {
                // Black places first and placements alternate.
                let (b, w) = (s.stone_count(Player::First), s.stone_count(Player::Second));
                let expected = if b == w { Player::First } else { Player::Second };
                assert_eq!(s.to_act(), expected, "{}", s.lfen());
            }
            if s.outcome().is_none() {
                assert!(s.move_count() < 144 && s.moves_since_capture() < 36);
            }
        });
    }
}

/// Every square and line of the board, as point sets: the oracle for the shape planes.
fn all_shapes() -> Vec<u64> {
    let mut shapes = Vec::new();
    for r in 0..5 {
        for f in 0..5 {
            let s = 6 * r + f;
            shapes.push(1u64 << s | 1 << (s + 1) | 1 << (s + 6) | 1 << (s + 7));
        }
    }
    for i in 0..6 {
        shapes.push(0x3Fu64 << (6 * i));
        shapes.push((0..6).fold(0u64, |b, r| b | 1 << (6 * r + i)));
    }
    shapes
}

fn members(stones: u64) -> u64 {
    all_shapes()
        .into_iter()
        .filter(|&s| stones & s == s)
        .fold(0, |b, s| b | s)
}

/// The points `state`'s player to act completes a shape on, found by playing each legal
/// placement or step and looking for a complete shape through its point.
fn completing_by_play(state: &Liuzhou) -> u64 {
    let mover = state.to_act();
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    let mut out = 0;
    for a in actions {
        let p = match a.kind() {
            ActionKind::Place(p) | ActionKind::Step { to: p, .. } => p,
            ActionKind::Select(_) => continue,
        };
        let mut after = state.clone();
        after.play(a).unwrap();
        let own = after.stones(mover) & !after.marked();
        if all_shapes()
            .into_iter()
            .any(|s| s & 1 << p != 0 && own & s == s)
        {
            out |= 1 << p;
        }
    }
    out
}

fn plane(planes: &[f32], i: usize) -> u64 {
    (0..36).fold(0, |b, s| {
        let x = planes[i * 36 + s];
        assert!(x == 0.0 || x == 1.0, "plane {i} holds {x}");
        b | u64::from(x == 1.0) << s
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// Planes 15–18 (where each side's next placement or step completes a shape, and the
    /// stones in shapes) agree with playing the actions and with a plain list of shapes.
    #[test]
    fn shape_planes_agree_with_play(seed in any::<u64>(), lb in prop_oneof![Just(1u8), Just(4u8)]) {
        let shape = Liuzhou::default().shape();
        let mut planes = vec![0.0; shape.input_len()];
        random_game(seed, lb, |before, _, _| {
            if !matches!(before.phase(), Phase::Place | Phase::Move) {
                return;
            }
            before.encode(&mut planes);
            let me = before.to_act();
            let unmarked = |p: Player| before.stones(p) & !before.marked();
            assert_eq!(plane(&planes, 17), members(unmarked(me)), "{}", before.lfen());
            assert_eq!(plane(&planes, 18), members(unmarked(me.opponent())), "{}", before.lfen());
            assert_eq!(plane(&planes, 15), completing_by_play(before), "{}", before.lfen());
            // The opponent's points: the same position with the opponent to act and both
            // counters at 0, so that no draw rule ends it.
            let lfen = before.lfen();
            let f: Vec<&str> = lfen.split(' ').collect();
            let turned = format!("{} {} {} 0 0 0", f[0], if f[1] == "b" { "w" } else { "b" }, f[2]);
            let turned = Liuzhou::from_lfen(&turned, Rules { lose_below: lb }).unwrap();
            if turned.outcome().is_none() {
                assert_eq!(plane(&planes, 16), completing_by_play(&turned), "{lfen}");
            }
        });
    }
}
