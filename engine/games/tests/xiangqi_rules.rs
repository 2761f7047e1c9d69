//! Xiangqi rules beyond perft: the shared conformance harness, the end-of-game rules by
//! scenario, text formats and their errors, the policy index, the encoding and the mirror.

use games::conformance::check_random_games;
use games::xiangqi::{encode, fen, EndReason, Move, Xiangqi, START_FEN};
use games::{Encoding, Game, Outcome, Player, Symmetry};

fn play(game: &mut Xiangqi, moves: &str) {
    for t in moves.split_whitespace() {
        let m = game.parse_action(t).unwrap();
        game.play(m)
            .unwrap_or_else(|e| panic!("{t} in {}: {e}", game.to_text()));
    }
}

#[test]
fn conformance_from_the_start() {
    let cov = check_random_games(&Xiangqi::start(), 6, 160, 7);
    assert!(cov.positions > 500, "{cov:?}");
    assert!(cov.actions_checked > 10_000, "{cov:?}");
}

#[test]
fn conformance_from_endgames_that_finish() {
    // Few pieces: random games end by mate, stalemate, repetition or the natural limit.
    let mut finished = 0;
    for (i, f) in [
        "3k5/9/4P4/2P3P2/9/9/9/9/9/4K4 b - - 0 1",
        "3aka3/9/4b4/p1r1p3p/2c6/6R2/P3P3P/4C4/9/3AKAB2 w - - 0 30",
        "4k4/9/5N3/9/9/9/9/9/9/3K5 b - - 100 1",
        "3ak4/4a4/9/9/4r4/9/4N4/9/4A4/4K4 w - - 0 1",
    ]
    .iter()
    .enumerate()
    {
        let cov = check_random_games(&Xiangqi::from_fen(f).unwrap(), 6, 200, i as u64);
        finished += cov.finished_games;
    }
    assert!(finished >= 12, "only {finished} random games finished");
}

#[test]
fn threefold_repetition_without_checks_is_a_draw() {
    let mut g = Xiangqi::start();
    play(&mut g, "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0");
    assert_eq!(g.outcome(), None, "two occurrences are not yet a draw");
    assert_eq!(g.occurrences(), 2);
    play(&mut g, "c7b9");
    assert_eq!(g.outcome(), Some(Outcome::Draw));
    assert_eq!(g.end_rule(), Some(EndReason::Repetition));
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    assert!(legal.is_empty());
}

#[test]
fn perpetual_check_loses() {
    // Red's rook checks from i9 and i8 in turn; Black's general steps between d9 and d8.
    let mut g = Xiangqi::from_fen("3k4R/9/9/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
    assert!(g.in_check());
    play(&mut g, "d9d8 i9i8 d8d9 i8i9 d9d8 i9i8 d8d9");
    assert_eq!(g.outcome(), None);
    play(&mut g, "i8i9");
    assert_eq!(g.end_rule(), Some(EndReason::PerpetualCheck));
    assert_eq!(g.outcome(), Some(Outcome::Win(Player::Second)));
    assert_eq!(
        Game::end_reason(&g).as_deref(),
        Some("perpetual check by Red")
    );
}

#[test]
fn perpetual_check_by_black_loses_too() {
    // The mirror image in colours: Black's rook checks Red's general.
    let mut g = Xiangqi::from_fen("4k4/9/9/9/9/9/9/9/9/3K4r w - - 0 1").unwrap();
    play(&mut g, "d0d1 i0i1 d1d0 i1i0 d0d1 i0i1 d1d0 i1i0");
    assert_eq!(g.end_rule(), Some(EndReason::PerpetualCheck));
    assert_eq!(g.outcome(), Some(Outcome::Win(Player::First)));
    assert_eq!(
        Game::end_reason(&g).as_deref(),
        Some("perpetual check by Black")
    );
}

#[test]
fn repetition_with_checks_on_only_some_moves_is_a_draw() {
    let mut g = Xiangqi::from_fen("3k4R/9/9/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
    // i9i5 does not give check, i5i9 does.
    play(&mut g, "d9d8 i9i5 d8d9 i5i9 d9d8 i9i5 d8d9 i5i9");
    assert_eq!(g.end_rule(), Some(EndReason::Repetition));
    assert_eq!(g.outcome(), Some(Outcome::Draw));
    assert_eq!(
        Game::end_reason(&g).as_deref(),
        Some("threefold repetition")
    );
}

#[test]
fn a_capture_forgets_the_earlier_positions() {
    let mut g = Xiangqi::start();
    play(&mut g, "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0");
    assert_eq!(g.occurrences(), 2);
    // A capture makes the earlier positions unreachable: the count starts again.
    play(&mut g, "b7b0");
    assert_eq!(g.halfmove_clock(), 0);
    assert_eq!(g.occurrences(), 1);
}

#[test]
fn natural_limit_draws_after_120_quiet_plies() {
    let mut g = Xiangqi::from_fen("3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 119 70").unwrap();
    assert_eq!(g.outcome(), None);
    play(&mut g, "e1e2");
    assert_eq!(g.halfmove_clock(), 120);
    assert_eq!(g.outcome(), Some(Outcome::Draw));
    assert_eq!(g.end_rule(), Some(EndReason::NaturalLimit));
    assert_eq!(
        Game::end_reason(&g).as_deref(),
        Some("120 plies without a capture")
    );
}

#[test]
fn a_capture_on_ply_120_resets_the_clock() {
    let mut g = Xiangqi::from_fen("3k5/9/9/9/4p4/9/9/9/4R4/4K4 w - - 119 70").unwrap();
    play(&mut g, "e1e5");
    assert_eq!(g.halfmove_clock(), 0);
    assert_eq!(g.outcome(), None);
}

#[test]
fn checkmate_on_ply_120_wins() {
    let mut g = Xiangqi::from_fen("3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 119 80").unwrap();
    play(&mut g, "a7d7");
    assert_eq!(g.outcome(), Some(Outcome::Win(Player::First)));
    assert_eq!(g.end_rule(), Some(EndReason::NoMoves));
}

#[test]
fn checkmate_and_stalemate_lose() {
    let mate = Xiangqi::from_fen("3k5/4R4/3R5/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
    assert!(mate.in_check());
    assert_eq!(mate.outcome(), Some(Outcome::Win(Player::First)));
    assert_eq!(Game::end_reason(&mate).as_deref(), Some("checkmate"));
    let stalemate = Xiangqi::from_fen("3k5/R8/9/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
    assert!(!stalemate.in_check());
    assert_eq!(stalemate.outcome(), Some(Outcome::Win(Player::First)));
    assert_eq!(
        Game::end_reason(&stalemate).as_deref(),
        Some("Black has no legal move")
    );
}

#[test]
fn fen_round_trips_and_reads_alternative_letters() {
    let g = Xiangqi::from_fen(START_FEN).unwrap();
    assert_eq!(g.to_text(), START_FEN);
    let alt =
        Xiangqi::from_fen("rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w").unwrap();
    assert_eq!(alt.to_text(), START_FEN);
}

#[test]
fn bad_fens_are_typed_errors_naming_the_place() {
    let cases = [
        ("", "placement"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9 w", "10"),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNRR w",
            "rank 0",
        ),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABN w",
            "rank 0",
        ),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w",
            "unknown piece",
        ),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x",
            "side to move",
        ),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - x 1",
            "halfmove",
        ),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 4294967296 1",
            "halfmove clock: '4294967296' is out of range",
        ),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 99999999999",
            "fullmove number: '99999999999' is out of range",
        ),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 9",
            "trailing",
        ),
        ("4k4/9/9/9/9/9/9/9/9/4K4 w", "in check"),
        ("3k5/9/9/9/9/9/9/9/9/9 w", "general"),
        ("3k5/9/9/9/9/9/9/9/9/K8 w", "cannot stand"),
        ("3k5/9/9/9/9/9/9/9/9/3KA4 w", "cannot stand"),
        ("3k5/9/9/9/9/B8/9/9/9/3K5 w", "cannot stand"),
        ("3k5/9/9/9/9/9/9/9/P8/3K5 w", "cannot stand"),
        ("3k5/9/9/9/PPPPPP3/9/9/9/9/3K5 w", "too many"),
        ("3k5/9/9/9/9/9/9/9/9/3K05 w", "0"),
    ];
    for (text, needle) in cases {
        let err = Xiangqi::from_fen(text).expect_err(text);
        assert_eq!(err.format, "FEN");
        let msg = err.to_string();
        assert!(msg.contains(needle), "{text}: '{msg}' lacks '{needle}'");
    }
}

#[test]
fn move_text_errors_and_rank_bases() {
    let g = Xiangqi::start();
    for bad in [
        "",
        "h2",
        "h2e",
        "j2e2",
        "h2e10",
        "h-1e2",
        "h2e2e2e2",
        "炮二平五",
        "H2E2",
    ] {
        let err = g.parse_action(bad).expect_err(bad);
        assert_eq!(err.format, "ICCS move");
    }
    let m = g.parse_action("h2e2").unwrap();
    assert_eq!(fen::format_move_with_base(m, 1), "h3e3");
    assert_eq!(
        fen::parse_move_with_base("b3b10", 1).unwrap(),
        g.parse_action("b2b9").unwrap()
    );
    // Parsed but illegal: play refuses it and leaves the state alone.
    let mut g2 = g.clone();
    let illegal = g.parse_action("h2h8").unwrap();
    assert!(g2.play(illegal).is_err());
    assert_eq!(g2.to_text(), g.to_text());
}

#[test]
fn policy_index_is_compact_and_round_trips_every_pair() {
    // 1 530 rank/file pairs, 508 knight jumps, 8 advisor and 16 bishop steps of the mover's
    // half (in a fixed frame both halves would add 24 more: 2 086).
    assert_eq!(encode::POLICY_SIZE, 2062);
    for black in [false, true] {
        let mut seen = std::collections::HashSet::new();
        for i in 0..encode::POLICY_SIZE {
            let m = encode::index_move(i, black).unwrap();
            assert_eq!(encode::move_index(m, black), Some(i));
            assert!(seen.insert(m), "index {i} names a move twice");
        }
        assert_eq!(encode::index_move(encode::POLICY_SIZE, black), None);
    }
}

#[test]
fn encoding_is_the_same_for_either_colour_of_a_colour_symmetric_board() {
    let red = Xiangqi::from_fen(
        "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C4NC1/9/RNBAKAB1R w - - 2 2",
    )
    .unwrap();
    let black = Xiangqi::from_fen(
        "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C4NC1/9/RNBAKAB1R b - - 2 2",
    )
    .unwrap();
    let n = red.shape().input_len();
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    red.encode(&mut a);
    black.encode(&mut b);
    assert_eq!(a, b);
    // The same move seen from each side has the same index: h2e2 for Red is h7e7 for Black.
    let r = red.action_index(red.parse_action("h2e2").unwrap());
    let bl = black.action_index(black.parse_action("h7e7").unwrap());
    assert_eq!(r, bl);
    // 14 piece planes hold the 32 pieces.
    assert_eq!(a[..14 * 90].iter().sum::<f32>(), 32.0);
}

#[test]
fn mirror_maps_moves_hashes_and_outcomes() {
    let mut g = Xiangqi::start();
    play(&mut g, "h2e2 h9g7 h0g2 i9h9");
    let m = g.transform(Symmetry::MIRROR_FILES);
    assert_eq!(
        g.to_text(),
        "rnbakabr1/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R w - - 4 3"
    );
    assert_eq!(
        m.to_text(),
        "1rbakabnr/9/1cn4c1/p1p1p1p1p/9/9/P1P1P1P1P/2N1C2C1/9/R1BAKABNR w - - 4 3"
    );
    assert_eq!(m.transform(Symmetry::MIRROR_FILES).to_text(), g.to_text());
    let mv = g.parse_action("b0c2").unwrap();
    assert_eq!(
        g.transform_action(Symmetry::MIRROR_FILES, mv),
        g.parse_action("h0g2").unwrap()
    );
    // The mirrored game keeps its repetition history: the mirror of a repetition repeats.
    let mut a = Xiangqi::start();
    let mut b = a.transform(Symmetry::MIRROR_FILES);
    for t in "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0 c7b9".split_whitespace() {
        let mv: Move = a.parse_action(t).unwrap();
        b.play(a.transform_action(Symmetry::MIRROR_FILES, mv))
            .unwrap();
        a.play(mv).unwrap();
    }
    assert_eq!(a.outcome(), Some(Outcome::Draw));
    assert_eq!(b.outcome(), Some(Outcome::Draw));
}

#[test]
fn hash_follows_position_and_history() {
    let mut a = Xiangqi::start();
    let mut b = Xiangqi::start();
    play(&mut a, "b0c2 b9c7");
    play(&mut b, "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7");
    // Same board and side, but b has seen it before: the encoding differs, so must the hash.
    assert_eq!(a.position().key(), b.position().key());
    assert_ne!(a.hash(), b.hash());
    let c = Xiangqi::from_fen(&a.to_text()).unwrap();
    assert_eq!(a.hash(), c.hash());
}

#[test]
fn fuzz_corpus_runs_clean() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/xiangqi_text"
    );
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("the fuzz corpus exists") {
        let path = entry.unwrap().path();
        games::xiangqi::fuzzing::check_text(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 10, "corpus has only {n} files");
}

#[test]
fn random_text_never_panics() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
    let alphabet = b"rnbakcpRNBAKCPeEhH0123456789/ -wb\nabcdefghi";
    let base = START_FEN.as_bytes();
    for _ in 0..3000 {
        let mut data = base.to_vec();
        data.extend_from_slice(b"\nh2e2 h9g7 b0c2 i9i8 e2e6");
        for _ in 0..rng.gen_range(1..6) {
            let i = rng.gen_range(0..data.len());
            data[i] = alphabet[rng.gen_range(0..alphabet.len())];
        }
        games::xiangqi::fuzzing::check_text(&data);
    }
}
