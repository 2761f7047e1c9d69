//! Rules scenarios, a naive reference implementation the fast board must agree with, and the
//! shared conformance harness.

use super::*;
use crate::conformance::check_random_games;
use crate::{Encoding, PlayError};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

fn rules(size: usize) -> GoRules {
    GoRules::with_size(size)
}

/// A position from a diagram (rows from the top, `/`-separated, `.` empty) under `rules`.
fn pos(rules: GoRules, diagram: &str, side: &str) -> GoState {
    let base = GoState::new(rules).unwrap();
    let text = format!("{} {side}", diagram.replace(' ', ""));
    base.parse_position(&text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn mv(s: &GoState, text: &str) -> Move {
    s.parse_action(text).unwrap()
}

fn play(s: &mut GoState, text: &str) {
    let m = mv(s, text);
    s.play(m)
        .unwrap_or_else(|e| panic!("{text} in {}: {e}", s.to_text()));
    s.board.validate();
}

fn board_part(s: &GoState) -> String {
    s.to_text().split(' ').next().unwrap().to_string()
}

#[test]
fn single_stone_capture() {
    let mut s = pos(rules(5), "...../..X../.XO../..X../.....", "b");
    play(&mut s, "D3");
    assert_eq!(s.stone_at(Point::new(2, 2)), None, "C3 captured");
    assert_eq!(board_part(&s), "5/2X2/1X1X1/2X2/5");
    assert_eq!(s.area(), (25, 0));
}

#[test]
fn multi_stone_capture_in_the_corner() {
    // White A1, B1, A2 have two liberties, A3 and C1.
    let mut s = pos(rules(5), "...../...../...../OX.../OO.X.", "b");
    play(&mut s, "A3");
    play(&mut s, "pass");
    assert_eq!(s.stones_of(Player::Second).len(), 3);
    play(&mut s, "C1");
    assert!(
        s.stones_of(Player::Second).is_empty(),
        "three stones captured"
    );
    assert_eq!(s.stones_of(Player::First).len(), 4);
    assert_eq!(s.to_text(), "5/5/X4/1X3/2XX1 w 0 - 3");
}

#[test]
fn diagrams_without_liberties_are_refused() {
    let base = GoState::with_size(5);
    let e = base.parse_position("5/5/X4/OX3/OOX2 b").unwrap_err();
    assert!(e.to_string().contains("without liberties"), "{e}");
}

#[test]
fn capture_saves_a_group_from_suicide() {
    // Black B1's last liberty is A1, which is also the last liberty of White A2-B2: playing A1
    // would leave A1-B1 without liberties, but White's pair is captured first.
    let mut s = pos(rules(4), "..../XX../OOX./.XO.", "b");
    assert!(s.is_legal(mv(&s, "A1")));
    play(&mut s, "A1");
    assert_eq!(s.stone_at(Point::new(1, 0)), None, "A2 captured");
    assert_eq!(s.stone_at(Point::new(1, 1)), None, "B2 captured");
    assert_eq!(s.stone_at(Point::new(0, 0)), Some(Player::First));
    assert_eq!(s.stone_at(Point::new(0, 1)), Some(Player::First));
}

#[test]
fn single_stone_suicide() {
    let diagram = "..../..../O.../.O..";
    let s = pos(rules(4), diagram, "b");
    let a1 = mv(&s, "A1");
    assert!(!s.is_legal(a1), "suicide is illegal by default");
    let mut t = s.clone();
    match t.play(a1) {
        Err(PlayError::Illegal { reason, .. }) => assert_eq!(reason, "suicide"),
        other => panic!("{other:?}"),
    }
    assert_eq!(t.to_text(), s.to_text());

    // Allowed suicide: a lone stone that dies recreates the position, which superko forbids …
    let allow = GoRules {
        allow_suicide: true,
        ..rules(4)
    };
    let s = pos(allow.clone(), diagram, "b");
    assert!(!s.is_legal(a1), "single-stone suicide repeats the position");
    // … and simple ko lets it through as a move that changes nothing but the turn.
    let simple = GoRules {
        ko: KoRule::Simple,
        ..allow
    };
    let mut s = pos(simple, diagram, "b");
    let before = board_part(&s);
    assert!(s.is_legal(a1));
    play(&mut s, "A1");
    assert_eq!(board_part(&s), before);
    assert_eq!(s.to_act(), Player::Second);
}

#[test]
fn multi_stone_suicide() {
    // Black B1 has only A1; White surrounds. Black A1 would leave {A1, B1} without liberties.
    let diagram = "..../..../OO../.XO.";
    let s = pos(rules(4), diagram, "b");
    let a1 = mv(&s, "A1");
    assert!(!s.is_legal(a1), "illegal by default");
    for ko in [KoRule::PositionalSuperko, KoRule::Simple] {
        let r = GoRules {
            allow_suicide: true,
            ko,
            ..rules(4)
        };
        let mut s = pos(r, diagram, "b");
        assert!(s.is_legal(a1), "{ko:?}");
        play(&mut s, "A1");
        assert!(s.stones_of(Player::First).is_empty(), "both stones removed");
        assert_eq!(s.stones_of(Player::Second).len(), 3);
    }
}

#[test]
fn snapback() {
    // White A2-B2-C2-C1 has two liberties, A1 and B1. Black throws in at B1; White takes it
    // with A1, which leaves White's whole group on the single liberty B1; Black retakes there.
    let mut s = pos(rules(5), "...../...../XXXX./OOOX./..OX.", "b");
    play(&mut s, "B1");
    play(&mut s, "A1");
    assert_eq!(s.stone_at(Point::new(0, 1)), None, "B1 captured");
    assert_eq!(s.stones_of(Player::Second).len(), 5);
    assert_eq!(s.to_text().split(' ').nth(3), Some("-"), "not a ko");
    assert!(s.is_legal(mv(&s, "B1")));
    play(&mut s, "B1");
    assert!(
        s.stones_of(Player::Second).is_empty(),
        "snapback takes all five"
    );
}

#[test]
fn simple_ko_forbids_the_immediate_recapture() {
    for ko in [KoRule::Simple, KoRule::PositionalSuperko] {
        let r = GoRules { ko, ..rules(5) };
        // Ko shape around C3/D3: Black to capture at D3.
        let mut s = pos(r, "...../..XO./.XO.O/..XO./.....", "b");
        play(&mut s, "D3");
        assert_eq!(s.stone_at(Point::new(2, 2)), None, "C3 captured");
        let recapture = mv(&s, "C3");
        assert!(!s.is_legal(recapture), "{ko:?}: immediate recapture");
        assert!(
            s.to_text().contains(" C3 "),
            "ko point in the text: {}",
            s.to_text()
        );
        // A move elsewhere (and the answer) lifts the ban.
        play(&mut s, "A1");
        play(&mut s, "A5");
        assert!(s.is_legal(recapture), "{ko:?}: after a ko threat");
        play(&mut s, "C3");
        assert_eq!(s.stone_at(Point::new(2, 3)), None, "D3 captured back");
    }
}

/// A cycle on 2×2 found by search: after these moves, Black's next stone would recreate an
/// earlier position that is not the one just before (so simple ko does not see it).
#[test]
fn positional_superko_cycle_that_simple_ko_allows() {
    let (moves, last) = find_superko_cycle();
    for ko in [KoRule::Simple, KoRule::PositionalSuperko] {
        let r = GoRules { ko, ..rules(2) };
        let mut s = GoState::new(r).unwrap();
        let mut seen = vec![board_part(&s)];
        for &m in &moves {
            s.play(m).unwrap();
            seen.push(board_part(&s));
        }
        let legal = s.is_legal(last);
        let mut after = s.clone();
        after.play_unchecked(last);
        let repeats = seen[..seen.len() - 1].contains(&board_part(&after));
        assert!(repeats, "the last move recreates an earlier position");
        match ko {
            KoRule::Simple => assert!(legal, "simple ko allows it"),
            KoRule::PositionalSuperko => assert!(!legal, "superko forbids it"),
        }
    }
}

/// Searches short games on 2×2 (simple ko) for a stone that recreates a position older than
/// the previous one; deterministic, so the test always sees the same cycle.
fn find_superko_cycle() -> (Vec<Move>, Move) {
    let start = GoState::new(GoRules {
        ko: KoRule::Simple,
        ..rules(2)
    })
    .unwrap();
    let mut stack = vec![(start, Vec::new(), vec![])];
    while let Some((s, moves, seen)) = stack.pop() {
        let mut seen: Vec<String> = seen;
        seen.push(board_part(&s));
        let mut legal = Vec::new();
        s.legal_actions(&mut legal);
        for &m in &legal {
            if m == Move::Pass {
                continue;
            }
            let mut t = s.clone();
            t.play_unchecked(m);
            let b = board_part(&t);
            if seen[..seen.len() - 1].contains(&b) {
                return (moves, m);
            }
            if moves.len() < 8 {
                let mut mv2 = moves.clone();
                mv2.push(m);
                stack.push((t, mv2, seen.clone()));
            }
        }
    }
    panic!("no superko cycle on 2x2 within 9 moves");
}

#[test]
fn scoring_with_dame() {
    // Black owns columns A–B, White D–E, column C is dame.
    let r = GoRules {
        komi: 0.5,
        ..rules(5)
    };
    let mut s = pos(r, ".X.O./.X.O./.X.O./.X.O./.X.O.", "b");
    assert_eq!(s.area(), (10, 10));
    play(&mut s, "pass");
    assert_eq!(s.outcome(), None);
    play(&mut s, "pass");
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::Second)));
    assert_eq!(s.score_text(), "W+0.5");
    assert_eq!(s.end_reason().as_deref(), Some("both passed: W+0.5"));
    let mut legal = Vec::new();
    s.legal_actions(&mut legal);
    assert!(legal.is_empty());
}

#[test]
fn scoring_with_seki() {
    // Black {B4 A3 B3 A2 A1 B1} with eye A4 and White {C4 … D1} with eye D4 share B2:
    // neither may fill B2 without being captured, and B2 belongs to nobody.
    let r = GoRules {
        komi: 0.0,
        ..rules(4)
    };
    let mut s = pos(r, ".XO./XXOO/X.OO/XXOO", "b");
    assert_eq!(s.area(), (7, 8));
    // The seki holds: Black may fill B2 only as a self-atari that White punishes.
    let mut t = s.clone();
    play(&mut t, "B2");
    assert!(t.is_legal(mv(&t, "A4")), "White captures through the eye");
    play(&mut t, "A4");
    assert!(t.stones_of(Player::First).is_empty());
    // And White's eye is no move for Black.
    assert!(!s.is_legal(mv(&s, "D4")));
    play(&mut s, "pass");
    play(&mut s, "pass");
    assert_eq!(s.score(), -1.0);
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::Second)));
    // An integer komi can draw.
    let drawn = pos(
        GoRules {
            komi: -1.0,
            ..rules(4)
        },
        ".XO./XXOO/X.OO/XXOO",
        "b",
    )
    .parse_position(".XO./XXOO/X.OO/XXOO b 2")
    .unwrap();
    assert_eq!(drawn.outcome(), Some(Outcome::Draw));
}

#[test]
fn move_cap_ends_the_game() {
    let r = GoRules {
        move_cap: MoveCap::Moves(3),
        ..rules(5)
    };
    let mut s = GoState::new(r).unwrap();
    play(&mut s, "C3");
    play(&mut s, "D4");
    assert_eq!(s.outcome(), None);
    play(&mut s, "pass");
    // One stone each, the rest dame: komi decides.
    assert_eq!(s.area(), (1, 1));
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::Second)));
    assert_eq!(
        s.end_reason().as_deref(),
        Some("move cap of 3 reached: W+7.5")
    );
    assert_eq!(GoRules::with_size(9).cap(), Some(162));
}

#[test]
fn gtp_coordinates_skip_i() {
    let s = GoState::with_size(19);
    assert_eq!(mv(&s, "J1"), Move::Place(Point::new(0, 8)));
    assert_eq!(mv(&s, "t19"), Move::Place(Point::new(18, 18)));
    assert_eq!(mv(&s, "PASS"), Move::Pass);
    for bad in ["I5", "A0", "A20", "Z1", "", "A", "A1x", "A+1"] {
        assert!(s.parse_action(bad).is_err(), "{bad}");
    }
    let small = GoState::with_size(9);
    assert!(small.parse_action("K9").is_err());
    assert!(small.parse_action("J10").is_err());
}

#[test]
fn text_format_round_trips_and_rejects_nonsense() {
    let s = GoState::with_size(9);
    assert_eq!(s.to_text(), "9/9/9/9/9/9/9/9/9 b 0 - 0");
    for bad in [
        "",
        "9/9 b",
        "10/9/9/9/9/9/9/9/9 b",
        "9/9/9/9/9/9/9/9/9 x",
        "9/9/9/9/9/9/9/9/9 b 3",
        "9/9/9/9/9/9/9/9/9 b 0 Z9",
        "9/9/9/9/9/9/9/9/9 b 0 - -1",
        "9/9/9/9/9/9/9/9/8Q b",
        "9/9/9/9/9/9/9/9/0X8 b",
        "9/9/9/9/9/9/9/9/X7 b",
        "X8/9/9/9/9/9/9/9/9 b 0 A9 0",
        "9/9/9/9/9/9/9/9/9 b 0 - 0 extra",
    ] {
        assert!(s.parse_position(bad).is_err(), "{bad:?} accepted");
    }
    // Black's B1 has just taken a white stone on A1: the ko point.
    let t = s.parse_position("3/XO1/1XO w 0 A1 7").unwrap();
    assert_eq!(t.size(), 3);
    assert_eq!(t.to_text(), "3/XO1/1XO w 0 A1 7");
    assert_eq!(t.komi(), s.komi());
}

#[test]
fn a_ko_point_must_be_where_a_stone_was_just_taken() {
    let s = GoState::with_size(3);
    for (text, reason) in [
        ("3/3/3 b 0 B2 0", "not surrounded by stones"),
        ("3/XO1/1XO w 1 A1 7", "a pass clears the ko point"),
        ("3/XO1/1XO w 0 B1 7", "occupied"),
        // A2 black, B1 white: no capture leaves walls of two colours.
        ("3/XO1/1OO w 0 A1 7", "one colour"),
        // Black walls, but both have liberties besides A1: no single stone was taken.
        ("3/X2/1X1 w 0 A1 7", "last liberty"),
    ] {
        let e = s.parse_position(text).expect_err(text).to_string();
        assert!(e.contains(reason) && e.contains("ko point"), "{text}: {e}");
    }
}

#[test]
fn encoding_planes_follow_the_mover_and_the_past() {
    let mut s = GoState::with_size(5);
    play(&mut s, "A1"); // black at index 0
    play(&mut s, "E5"); // white at index 24
    let shape = s.shape();
    assert_eq!(shape.planes, 17);
    assert_eq!(shape.policy_size, 26);
    let mut x = vec![0.0; shape.input_len()];
    s.encode(&mut x);
    let a = 25;
    // Black to move: own plane 0 has A1, opponent plane 1 has E5.
    assert_eq!(x[0], 1.0);
    assert_eq!(x[a + 24], 1.0);
    // One move ago (t = 1): only A1 was on the board.
    assert_eq!(x[2 * a], 1.0);
    assert_eq!(x[3 * a + 24], 0.0);
    // Two moves ago: empty.
    assert!(x[4 * a..6 * a].iter().all(|&v| v == 0.0));
    assert!(x[16 * a..].iter().all(|&v| v == 1.0), "Black to move");
    assert_eq!(x.iter().filter(|&&v| v == 1.0).count(), 3 + 25);
    play(&mut s, "C3");
    s.encode(&mut x);
    // White to move: own plane holds E5, opponent plane A1 and C3; colour plane zero.
    assert_eq!(x[24], 1.0);
    assert_eq!(x[a] + x[a + 12], 2.0);
    assert!(x[16 * a..].iter().all(|&v| v == 0.0));
}

#[test]
fn conformance_on_several_sizes() {
    for (size, games, plies) in [
        (2, 40, 60),
        (3, 30, 80),
        (5, 12, 80),
        (9, 3, 200),
        (19, 1, 120),
    ] {
        let cov = check_random_games(&GoState::with_size(size), games, plies, size as u64);
        assert!(cov.actions_checked > 0);
        assert_eq!(cov.games, games);
    }
    // Variants: simple ko and suicide on a small board, where both matter.
    let r = GoRules {
        allow_suicide: true,
        ko: KoRule::Simple,
        ..rules(3)
    };
    let cov = check_random_games(&GoState::new(r).unwrap(), 30, 100, 7);
    assert!(cov.finished_games > 0);
}

#[test]
fn symmetric_states_hash_alike_only_when_equal() {
    let mut s = GoState::with_size(5);
    play(&mut s, "B2");
    let t = s.transform(Symmetry::TRANSPOSE);
    assert_eq!(s.hash(), t.hash(), "B2 is on the diagonal");
    let u = s.transform(Symmetry::MIRROR_FILES);
    assert_ne!(s.hash(), u.hash());
    assert_eq!(u.to_text(), "5/5/5/3X1/5 w 0 - 1");
}

/// Random games with captures, kos and suicides (where allowed): after every move the
/// incremental groups, liberties, hash and bitsets equal a recomputation from scratch.
#[test]
fn incremental_board_matches_a_recomputation() {
    let mut rng = SmallRng::seed_from_u64(11);
    for size in [2, 3, 5, 9, 19] {
        for suicide in [false, true] {
            let r = GoRules {
                ko: KoRule::Simple,
                allow_suicide: suicide,
                move_cap: MoveCap::Moves(3 * (size * size) as u32),
                ..rules(size)
            };
            for _ in 0..20 {
                let mut s = GoState::new(r.clone()).unwrap();
                while s.outcome().is_none() {
                    let mut legal = Vec::new();
                    s.legal_actions(&mut legal);
                    let m = if rng.gen_bool(0.02) {
                        Move::Pass
                    } else {
                        *legal.choose(&mut rng).unwrap()
                    };
                    s.play(m).unwrap();
                    s.board.validate();
                }
            }
        }
    }
}

#[test]
fn ownership_matches_the_area_count() {
    let mut rng = SmallRng::seed_from_u64(5);
    for size in [2, 5, 9] {
        let mut s = GoState::with_size(size);
        while s.outcome().is_none() {
            let m = super::playout::playout_move(&s, &mut rng);
            s.play(m).unwrap();
            let own = s.ownership();
            let black = own.iter().filter(|&&o| o == 1).count() as u32;
            let white = own.iter().filter(|&&o| o == -1).count() as u32;
            assert_eq!((black, white), s.area(), "{}", s.to_text());
        }
    }
}

#[test]
fn score_estimate_removes_dead_stones() {
    // A lone black stone inside White's two-eyed wall: dead, though the area rule counts it.
    let s = pos(rules(5), "OOOOO/O.O.O/OOOOO/O.X.O/OOOOO", "b");
    assert_eq!(s.area(), (1, 22), "B2 and D2 are dame while C2 stands");
    let est = super::playout::estimate_score(&s, 100, 1);
    assert_eq!(est.dead, vec![Point::new(1, 2)]);
    assert_eq!(est.score, -25.0 - 7.5);
    assert_eq!(est.text(), "W+32.5");
    // Nothing is dead on an empty board, whatever the playouts do.
    let empty = super::playout::estimate_score(&GoState::with_size(5), 50, 1);
    assert!(empty.dead.is_empty());
    assert_eq!(empty.text(), "W+7.5");
}

#[test]
fn komi_changes_only_the_score() {
    let mut s = pos(rules(5), ".X.O./.X.O./.X.O./.X.O./.X.O.", "b 2");
    let text = s.to_text();
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::Second)));
    s.set_komi(-0.5).unwrap();
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::First)));
    s.set_komi(0.0).unwrap();
    assert_eq!(s.outcome(), Some(Outcome::Draw));
    assert!(s.set_komi(f32::NAN).is_err());
    assert_eq!(s.komi(), 0.0);
    assert_eq!(s.to_text(), text);
}

#[test]
fn a_handicap_game_starts_with_white_and_survives_transforms_and_sgf() {
    let stones = handicap::fixed_handicap(9, 4).unwrap();
    let s = GoState::with_handicap(rules(9), &stones).unwrap();
    assert_eq!(s.to_act(), Player::Second);
    assert_eq!(s.stones_of(Player::First).len(), 4);
    assert!(s.moves_since_start().is_empty());
    let mut sorted = stones.clone();
    sorted.sort();
    assert_eq!(s.handicap_stones(), sorted);
    let mut after = s.clone();
    play(&mut after, "E5");
    assert_eq!(after.start().handicap_stones().len(), 4);
    for &sym in s.symmetries() {
        assert_eq!(after.transform(sym).handicap_stones().len(), 4);
    }
    // SGF keeps it: HA, the stones, White first.
    let text = sgf::SgfGame::from_state(&after).to_sgf();
    assert!(text.contains("HA[4]"), "{text}");
    let back = sgf::SgfGame::parse(&text)
        .unwrap()
        .replay(&rules(9), None)
        .unwrap();
    assert_eq!(back.to_text(), after.to_text());
    assert_eq!(back.handicap_stones(), sorted);
    // A setup that is not a handicap stays a setup.
    let setup = GoState::from_setup(rules(9), &[(stones[0], Player::First)], Player::Second);
    assert!(setup.unwrap().handicap_stones().is_empty());
    assert!(GoState::with_handicap(rules(9), &stones[..1]).is_err());
}

/// Every stone the cleanup plays is legal, fills no own eye and is no self-atari unless it
/// captures; it passes only when no such point is left.
#[test]
fn cleanup_moves_keep_the_game_going_without_harm() {
    let mut rng = SmallRng::seed_from_u64(11);
    for game in 0..30 {
        let size = [5, 7, 9][game % 3];
        let mut s = GoState::with_size(size);
        let length = rng.gen_range(0..size * size * 2);
        for _ in 0..length {
            if s.outcome().is_some() {
                break;
            }
            let mv = playout::playout_move(&s, &mut rng);
            s.play(mv).unwrap();
        }
        let who = s.to_act();
        let good = |s: &GoState, pt: Point| {
            let p = s.board.point(pt.row as usize, pt.col as usize);
            if s.board.color(p) != board::EMPTY || s.is_own_eye(p) {
                return false;
            }
            let mut after = s.clone();
            let before = s.stones_of(who.opponent()).len();
            after.play_as(who, Move::Place(pt)).is_ok()
                && (after.liberties(pt) >= 2 || after.stones_of(who.opponent()).len() < before)
        };
        let any = (0..size * size).any(|i| good(&s, Point::new(i / size, i % size)));
        match playout::cleanup_move(&s, &[]) {
            Some(Move::Place(pt)) => assert!(good(&s, pt), "{} {}", s.to_text(), pt.to_gtp()),
            Some(Move::Pass) => panic!("cleanup never returns a pass"),
            None => assert!(!any, "passes in {}", s.to_text()),
        }
    }
}

#[test]
fn liberties_count_each_point_once() {
    let s = pos(rules(5), "...../.XX../.X.../...../.....", "b");
    assert_eq!(s.liberties(Point::new(3, 1)), 7);
    assert_eq!(s.liberties(Point::new(0, 0)), 0);
}
