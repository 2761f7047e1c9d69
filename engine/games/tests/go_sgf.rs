//! SGF records: round trips through the writer and the reader, the corpus files' expected
//! verdicts, and the reader's handling of variations, setup and escapes.

use std::fs;
use std::path::Path;

use games::go::playout::playout_move;
use games::go::sgf::{game_record, SgfGame};
use games::go::{GoRules, GoState, Move, Point};
use games::record::write_file;
use games::{Game, Player};
use rand::rngs::SmallRng;
use rand::SeedableRng;

fn random_game(size: usize, seed: u64) -> GoState {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut s = GoState::with_size(size);
    while s.outcome().is_none() {
        let mv = playout_move(&s, &mut rng);
        s.play(mv).unwrap();
    }
    s
}

#[test]
fn finished_games_round_trip() {
    for (size, seed) in [(2, 1), (5, 2), (9, 3), (19, 4)] {
        let s = random_game(size, seed);
        let text = game_record(&s, "engine [a]", "gnu\\go", None);
        let game = SgfGame::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(game.size, size);
        assert_eq!(game.komi, Some(7.5));
        assert_eq!(game.black_name.as_deref(), Some("engine [a]"));
        assert_eq!(game.white_name.as_deref(), Some("gnu\\go"));
        assert_eq!(game.result.as_deref(), Some(s.score_text().as_str()));
        assert_eq!(game.moves, s.moves_since_start());
        let replayed = game.replay(&GoRules::default(), None).unwrap();
        assert_eq!(replayed.to_text(), s.to_text());
        assert_eq!(replayed.outcome(), s.outcome());
        assert!(text.starts_with("(;FF[4]GM[1]"), "{text}");
    }
}

#[test]
fn setup_and_handicap_round_trip() {
    let stones = [
        (Point::new(3, 3), Player::First),
        (Point::new(15, 15), Player::First),
        (Point::new(2, 16), Player::Second),
    ];
    let mut s = GoState::from_setup(GoRules::with_size(19), &stones, Player::Second).unwrap();
    s.play(Move::Place(Point::new(9, 9))).unwrap();
    let game = SgfGame::parse(&SgfGame::from_state(&s).to_sgf()).unwrap();
    assert_eq!(game.first_player, Some(Player::Second));
    assert_eq!(game.setup.len(), 3);
    let replayed = game.replay(&GoRules::default(), None).unwrap();
    assert_eq!(replayed.to_text(), s.to_text());
}

#[test]
fn reader_follows_the_main_line_and_unescapes() {
    let text = "(;GM[1]FF[4]SZ[5]PB[a \\] b]C[x\\\ny]AB[aa:bb]AW[dd]\n(;B[cc];W[ce])(;B[ee]))";
    let game = SgfGame::parse(text).unwrap();
    assert_eq!(game.black_name.as_deref(), Some("a ] b"));
    assert_eq!(game.setup.len(), 5);
    assert!(
        game.setup.contains(&(Point::new(4, 0), Player::First)),
        "aa = A5"
    );
    assert!(
        game.setup.contains(&(Point::new(3, 1), Player::First)),
        "bb = B4"
    );
    assert!(
        game.setup.contains(&(Point::new(1, 3), Player::Second)),
        "dd = D2"
    );
    assert_eq!(
        game.moves,
        vec![
            (Player::First, Move::Place(Point::new(2, 2))),
            (Player::Second, Move::Place(Point::new(0, 2))),
        ]
    );
    // `loadsgf FILE 2` stops before move 2.
    let first = game.replay(&GoRules::default(), Some(1)).unwrap();
    assert_eq!(first.moves_played(), 1);
}

#[test]
fn errors_name_the_place() {
    let e = SgfGame::parse("(;FF[4]GM[1]SZ[9];B[ee];W[zz])").unwrap_err();
    assert!(e.reason.contains("zz"), "{e}");
    assert_eq!(e.offset, 24);
    let game = SgfGame::parse("(;FF[4]GM[1]SZ[9];B[ee];W[ee])").unwrap();
    let e = game.replay(&GoRules::default(), None).unwrap_err();
    assert!(e.reason.contains("move 2"), "{e}");
    assert!(e.reason.contains("occupied"), "{e}");
    // One point set up twice in a node: SGF forbids it, and which colour wins would be a guess.
    for text in [
        "(;FF[4]GM[1]SZ[9]AB[ee]AW[ee])",
        "(;FF[4]GM[1]SZ[9]AB[ee][ee])",
        "(;FF[4]GM[1]SZ[9]AW[dd:ff]AE[ee])",
    ] {
        let e = SgfGame::parse(text).unwrap_err();
        assert!(e.reason.contains("ee (E5)"), "{text}: {e}");
    }
    // Across nodes a later setup replaces an earlier one.
    let game = SgfGame::parse("(;FF[4]GM[1]SZ[9]AB[ee];AW[ee])").unwrap();
    assert_eq!(game.setup, vec![(Point::new(4, 4), Player::Second)]);
}

/// Every corpus file: `bad_*` must be refused (by the reader or on replay), the rest must
/// read, replay and round-trip.
#[test]
fn corpus_verdicts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/go_sgf");
    let mut n = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = fs::read(&path).unwrap();
        let verdict = std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|t| SgfGame::parse(t).map_err(|e| e.to_string()))
            .and_then(|g| {
                g.replay(&GoRules::default(), None)
                    .map_err(|e| e.to_string())
            });
        if name.starts_with("bad_") {
            assert!(verdict.is_err(), "{name} accepted");
        } else {
            let state = verdict.unwrap_or_else(|e| panic!("{name}: {e}"));
            let again = SgfGame::parse(&SgfGame::from_state(&state).to_sgf()).unwrap();
            assert_eq!(
                again.replay(&GoRules::default(), None).unwrap().to_text(),
                state.to_text(),
                "{name}"
            );
        }
        n += 1;
    }
    assert!(n >= 10, "corpus has {n} files");
}

#[test]
fn files_are_written_whole() {
    let dir = std::env::temp_dir().join(format!("go_sgf_test_{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("game.sgf");
    let text = game_record(&random_game(5, 9), "a", "b", Some("B+R"));
    write_file(&path, &text).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
    assert!(!dir.join("game.sgf.tmp").exists());
    let game = SgfGame::parse(&text).unwrap();
    assert_eq!(game.result.as_deref(), Some("B+R"));
    fs::remove_dir_all(&dir).unwrap();
}
